/*
 * sqlconn.c - see sqlconn.h.
 */
#include "store/sqlconn.h"

#include <stdio.h>

#include "ripple/ripple.h"

void sqlconn_log_error(const char *event, const char *msg) {
  char q[512];
  ripple_log_quote(msg ? msg : "?", q, sizeof q);
  ripple_log(RIPPLE_LOG_ERROR, event, "error=%s", q);
}

int sqlconn_open(const char *path, int sync_full, sqlite3 **db, char *err, size_t cap) {
  int rc = sqlite3_open_v2(path, db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, cap, "cannot open database %s: %s", path,
             *db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
    sqlite3_close(*db);
    *db = NULL;
    return RIPPLE_ESYS;
  }
  sqlite3_busy_timeout(*db, 5000);
  /* A new database gets 16 KiB pages (an existing one keeps its own): a
   * quarter of the WAL frames, pwrite calls and b-tree splits per record of
   * 4 KiB pages; ingest did about 12% more records per CPU-second with them
   * (docs/benchmarks.md, issue 28). The checkpoint still comes every 4 MiB
   * of WAL whatever the page size (below), so it stays as short as before. */
  char pragmas[200];
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
           " PRAGMA cache_size=-65536;"
           "PRAGMA temp_store=MEMORY;",
           sync_full ? "FULL" : "NORMAL");
  char *msg = NULL;
  if (sqlite3_exec(*db, pragmas, NULL, NULL, &msg) != SQLITE_OK) {
    snprintf(err, cap, "cannot configure database %s: %s", path, msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(*db);
    *db = NULL;
    return RIPPLE_ESYS;
  }
  sqlite3_stmt *q = NULL;
  int page = 4096;
  if (sqlite3_prepare_v2(*db, "PRAGMA page_size", -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0)
    page = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  sqlite3_wal_autocheckpoint(*db, (4 << 20) / page);
  return RIPPLE_OK;
}

void sqlpool_init(sqlpool_t *p, const char *path, int sync_full) {
  p->path = path;
  p->sync_full = sync_full;
  p->n = 0;
  pthread_mutex_init(&p->mu, NULL);
}

sqlite3 *sqlpool_get(sqlpool_t *p) {
  pthread_mutex_lock(&p->mu);
  sqlite3 *db = p->n ? p->conn[--p->n] : NULL;
  pthread_mutex_unlock(&p->mu);
  if (!db) {
    char err[256];
    if (sqlconn_open(p->path, p->sync_full, &db, err, sizeof err) != RIPPLE_OK) {
      sqlconn_log_error("db_reader_failed", err);
      return NULL;
    }
  }
  return db;
}

void sqlpool_put(sqlpool_t *p, sqlite3 *db) {
  pthread_mutex_lock(&p->mu);
  if (p->n < SQLPOOL_MAX) {
    p->conn[p->n++] = db;
    db = NULL;
  }
  pthread_mutex_unlock(&p->mu);
  sqlite3_close(db);
}

void sqlpool_fini(sqlpool_t *p) {
  for (int i = 0; i < p->n; i++) sqlite3_close(p->conn[i]);
  p->n = 0;
  pthread_mutex_destroy(&p->mu);
}
