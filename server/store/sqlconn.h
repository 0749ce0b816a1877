/*
 * sqlconn.h - what the trace server's two SQLite databases share: opening a
 * connection the same way (WAL, the sync level, a busy timeout), logging a
 * database error in one form, and a small pool of reader connections so
 * queries never wait for the writer (store.h: records; facts.h: details).
 *
 * Memory: a pool owns the connections it holds; sqlpool_get hands one over
 * and sqlpool_put takes it back (or closes it when the pool is full).
 * Threads: a pool may be used from any thread.
 */
#ifndef RIPPLE_SERVER_SQLCONN_H
#define RIPPLE_SERVER_SQLCONN_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>

/* Open (or create) path read-write in WAL mode; synchronous FULL when
 * sync_full, else NORMAL. RIPPLE_OK, or RIPPLE_ESYS with the reason in err. */
int sqlconn_open(const char *path, int sync_full, sqlite3 **db, char *err, size_t cap);
/* One error line: event=<event> error="<msg>". */
void sqlconn_log_error(const char *event, const char *msg);

#define SQLPOOL_MAX 16
typedef struct sqlpool {
  const char *path; /* borrowed: must outlive the pool */
  int sync_full;
  pthread_mutex_t mu;
  sqlite3 *conn[SQLPOOL_MAX];
  int n;
} sqlpool_t;

void sqlpool_init(sqlpool_t *p, const char *path, int sync_full);
/* A reader connection, NULL when none could be opened (logged). */
sqlite3 *sqlpool_get(sqlpool_t *p);
void sqlpool_put(sqlpool_t *p, sqlite3 *db);
void sqlpool_fini(sqlpool_t *p);

#endif
