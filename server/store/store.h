/*
 * store.h - durable storage of mergelogs and spans (SQLite, WAL mode).
 *
 * One writer thread owns the write connection and commits in groups: every
 * request that arrives while a transaction is being written joins the next
 * one, so many concurrent senders share one commit. A request's records are
 * acknowledged only after their transaction committed. Readers use their own
 * connections (WAL lets them read while the writer writes), so a long query
 * never holds up ingest.
 *
 * Root mergelogs that name an object uid also get a row in the roots table
 * (uid, time, CPID), read back at start by store_load_roots.
 *
 * Durability: with sync "normal" (the default) a commit survives the process
 * being killed at any moment (kill -9); with "full" it also survives power loss,
 * at the price of an fsync per group.
 */
#ifndef RIPPLE_SERVER_STORE_H
#define RIPPLE_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/decode.h"
#include "ripplex/sbuf.h"

typedef struct store store_t;

typedef struct store_hooks {
  /* In the writer thread, after a group committed: make its records visible
   * (the graph). seqs[i] is the row of b->rec[i]. */
  void (*committed)(void *ud, const dec_batch_t *b, const uint64_t *seqs);
  /* In the writer thread, at most every tick_ms while idle or between groups:
   * retention. It may call store_delete(). */
  void (*tick)(void *ud, store_t *st);
  void *ud;
  uint32_t tick_ms;
} store_hooks_t;

typedef struct store_stats {
  uint64_t groups, records, rows_deleted, write_errors;
} store_stats_t;

/* Open (or create) the database at path. errbuf gets a message on failure. */
int store_open(const char *path, int sync_full, store_t **out, char *errbuf, size_t errcap);
/* A stored record as replayed at start. Strings are not NUL-terminated and
 * live until the callback returns; an absent one is NULL with length 0. */
typedef struct store_row {
  uint64_t seq;
  ripple_cpid_t cpid;
  int64_t time, end;        /* a mergelog's time (twice); a span's start and end */
  const ripple_cpid_t *src; /* a mergelog's sources */
  size_t nsrc;
  const uint8_t *trig;          /* its trigger flags, one per source; NULL: none named */
  const char *kind, *ns, *name; /* the object the record names */
  size_t kind_len, ns_len, name_len;
  const char *body; /* a span's record (for the stall detector's replay) */
  size_t body_len;
} store_row_t;

typedef struct store_loader {
  void (*mergelog)(void *ud, const store_row_t *row);
  void (*span)(void *ud, const store_row_t *row);
  void *ud;
} store_loader_t;

/* Replay everything into the callbacks, mergelogs first, each in row order
 * (for the graph and the object index at start). */
int store_load(store_t *st, const store_loader_t *l);
/* Replay the roots table (root mergelogs with an object uid: the row of the
 * mergelog, the uid of n bytes, its time and CPID), in row order. */
typedef void (*store_root_fn)(void *ud, uint64_t seq, const char *uid, size_t n, int64_t time,
                              const ripple_cpid_t *cpid);
int store_load_roots(store_t *st, store_root_fn root, void *ud);
/* Start the writer thread. */
int store_start(store_t *st, const store_hooks_t *hooks);
/* Write a batch durably; blocks until committed (or failed). */
int store_write(store_t *st, const dec_batch_t *b);
/* Delete rows; only from the writer thread (the tick hook). */
int store_delete(store_t *st, dec_kind_t kind, const uint64_t *seqs, size_t n);

/* Append the bodies of the given rows to out, comma-separated ("," before each
 * but the first when *first is set). Missing rows are skipped. */
int store_bodies(store_t *st, dec_kind_t kind, const uint64_t *seqs, size_t n, sbuf_t *out,
                 int *first);
/* A page of records ordered by (time, seq) after the cursor (time, seq) and
 * before `until` (0: no bound). Appends bodies to out; sets *more and the next
 * cursor. */
int store_page(store_t *st, dec_kind_t kind, int64_t after_time, int64_t after_seq, int64_t until,
               size_t limit, sbuf_t *out, size_t *count, int *more, int64_t *next_time,
               int64_t *next_seq);

/* Root search: root mergelogs, newest first (time, then seq), before the
 * cursor (before_time, before_seq), at or after since, and matching every
 * filter that is not NULL (component, object namespace, kind, name). Calls
 * row for each (at most limit), then sets *more when another would follow. */
typedef struct store_root_query {
  int64_t since, before_time, before_seq;
  const char *component, *ns, *kind, *name;
  size_t limit;
} store_root_query_t;
typedef int (*store_found_fn)(void *ud, uint64_t seq, int64_t time, const ripple_cpid_t *cpid,
                              const char *body, size_t len);
int store_roots(store_t *st, const store_root_query_t *q, store_found_fn row, void *ud, int *more);

/* Rows after seq `after`, in seq order, at most limit: row() gets each one's
 * seq and body (valid until it returns); *last is the seq of the last row
 * read (after when none). Seqs only grow and are never reused (a deleted
 * row's seq stays unused), so a reader that went up to some seq has seen
 * every row at or below it that still exists. */
typedef void (*store_scan_fn)(void *ud, uint64_t seq, const char *body, size_t len);
int store_scan(store_t *st, dec_kind_t kind, uint64_t after, size_t limit, store_scan_fn row,
               void *ud, uint64_t *last);
/* The seq of the newest row ever given out in a table (0: none yet); it may
 * belong to a transaction not committed yet. */
uint64_t store_last_seq(store_t *st, dec_kind_t kind);
/* The seq of the newest committed row there is (0: none). */
uint64_t store_max_seq(store_t *st, dec_kind_t kind);

int64_t store_size_bytes(store_t *st);
void store_stats(store_t *st, store_stats_t *out);
void store_close(store_t *st);

#endif
