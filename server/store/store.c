/*
 * store.c - see store.h.
 *
 * Schema (version 1): one row per record, in arrival order. There is no index
 * on CPIDs: random 16-byte keys cost SQLite three quarters of its insert rate,
 * and the graph in memory already knows which rows belong to which CPID. The
 * time indexes serve the paginated listings and grow at the end, so they are
 * cheap.
 *
 * roots holds the root mergelogs (no sources) that name an object uid: the
 * uid, time and CPID of each, under the mergelog's seq, written in the same
 * transaction and deleted with it. Rows go at its end, as in the other tables;
 * the index by uid is in memory (roots.h), because one here would cost ingest
 * a fifth of its rate. Roots are a few in a hundred mergelogs, and nothing is
 * written for the others. Added without a new schema version: an older
 * database gets the table when it is opened, and its earlier roots are not
 * indexed.
 *
 * Each row also keeps the object it names (kind, namespace, name: a
 * mergelog's object, a span's attributes), a mergelog's component and whether
 * it is a root, and a span's end: the object index (objects.h) is rebuilt
 * from them at start, and root search (store_roots) filters on them through a
 * partial index that holds the roots only. Also without a new schema version:
 * an older database gets the columns, filled from its bodies, when opened.
 *
 * A mergelog's trigger list (docs/api.md) is kept as one byte per source in
 * trig (1: that source triggered the write), NULL when the mergelog named
 * none. Again without a new schema version: an older database gets the
 * column when opened, and its rows, NULL there, mean what they meant (every
 * source a trigger); an older server ignores the column.
 */
#include "store/store.h"
#include "ripplex/clock.h"
#include "ripplex/sbuf.h"
#include "store/sqlconn.h"

#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *schema =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES('schema', '1');"
    "CREATE TABLE IF NOT EXISTS mergelogs(seq INTEGER PRIMARY KEY, cpid BLOB NOT NULL,"
    "  time INTEGER NOT NULL, sources BLOB NOT NULL, body TEXT NOT NULL,"
    "  root INTEGER, component TEXT, okind TEXT, ons TEXT, oname TEXT, trig BLOB);"
    "CREATE INDEX IF NOT EXISTS mergelogs_time ON mergelogs(time);"
    "CREATE TABLE IF NOT EXISTS spans(seq INTEGER PRIMARY KEY, cpid BLOB NOT NULL,"
    "  start INTEGER NOT NULL, body TEXT NOT NULL,"
    "  end_ns INTEGER, okind TEXT, ons TEXT, oname TEXT);"
    "CREATE INDEX IF NOT EXISTS spans_start ON spans(start);"
    "CREATE TABLE IF NOT EXISTS roots(seq INTEGER PRIMARY KEY, uid TEXT NOT NULL,"
    "  time INTEGER NOT NULL, cpid BLOB NOT NULL);";

/* Databases written before the object columns get them, filled in from the
 * stored bodies, once, in one transaction. A span's end stays NULL there
 * (start is used instead): SQL has no RFC 3339 parser at nanoseconds. */
static const char *upgrade =
    "BEGIN IMMEDIATE;"
    "ALTER TABLE mergelogs ADD COLUMN root INTEGER;"
    "ALTER TABLE mergelogs ADD COLUMN component TEXT;"
    "ALTER TABLE mergelogs ADD COLUMN okind TEXT;"
    "ALTER TABLE mergelogs ADD COLUMN ons TEXT;"
    "ALTER TABLE mergelogs ADD COLUMN oname TEXT;"
    "ALTER TABLE spans ADD COLUMN end_ns INTEGER;"
    "ALTER TABLE spans ADD COLUMN okind TEXT;"
    "ALTER TABLE spans ADD COLUMN ons TEXT;"
    "ALTER TABLE spans ADD COLUMN oname TEXT;"
    "UPDATE mergelogs SET root = length(sources) = 0,"
    "  component = nullif(json_extract(body, '$.component'), ''),"
    "  okind = nullif(json_extract(body, '$.object.kind'), ''),"
    "  ons = nullif(json_extract(body, '$.object.namespace'), ''),"
    "  oname = nullif(json_extract(body, '$.object.name'), '');"
    "UPDATE spans SET okind = nullif(json_extract(body, '$.attributes.kind'), ''),"
    "  ons = nullif(json_extract(body, '$.attributes.namespace'), ''),"
    "  oname = nullif(json_extract(body, '$.attributes.name'), '');"
    "COMMIT;";

/* Databases written before trigger lists: their mergelogs named none. */
static const char *upgrade_trig = "ALTER TABLE mergelogs ADD COLUMN trig BLOB;";

/* Only roots are in it: a few in a hundred mergelogs. */
static const char *roots_by_time =
    "CREATE INDEX IF NOT EXISTS mergelogs_roots ON mergelogs(time, seq) WHERE root = 1;";

typedef struct job {
  const dec_batch_t *b;
  uint64_t *seqs;
  int rc, done;
  struct job *next;
} job_t;

struct store {
  char *path;
  int sync_full;
  sqlite3 *w; /* the writer's connection */
  sqlite3_stmt *ins[2], *del[2];
  sqlite3_stmt *ins_root, *del_root, *hw;
  /* The next row of each table. Rows get these explicitly, never reused even
   * when the newest rows are deleted (SQLite would hand out the largest rowid
   * again), so a reader that has seen every row up to some seq (the OTLP
   * exporter's cursor) never misses a later one. Kept in meta as the table's
   * high-water mark, in the transaction that uses it. Written by the writer
   * thread only; read by others through store_last_seq. */
  atomic_uint_fast64_t next_seq[2];
  store_hooks_t hooks;

  pthread_mutex_t mu;
  pthread_cond_t work, done;
  job_t *head, *tail;
  int stop, started;
  pthread_t thread;

  sqlpool_t pool; /* reader connections */

  struct {
    atomic_uint_fast64_t groups, records, rows_deleted, write_errors;
  } st;
};

static const char *table[2] = {"mergelogs", "spans"};

/* An older database has no object columns: add them (see `upgrade`). */
static int upgrade_columns(store_t *s, char *err, size_t cap) {
  sqlite3_stmt *probe = NULL;
  int have =
      sqlite3_prepare_v2(s->w, "SELECT okind FROM spans LIMIT 0", -1, &probe, NULL) == SQLITE_OK;
  sqlite3_finalize(probe);
  char *msg = NULL;
  if (!have) {
    int64_t t0 = mono_ns();
    if (sqlite3_exec(s->w, upgrade, NULL, NULL, &msg) != SQLITE_OK) {
      snprintf(err, cap, "cannot add the object columns to %s: %s", s->path, msg ? msg : "?");
      sqlite3_free(msg);
      sqlite3_exec(s->w, "ROLLBACK", NULL, NULL, NULL);
      return RIPPLE_ESYS;
    }
    ripple_log(RIPPLE_LOG_INFO, "store_upgraded", "columns=object ms=%.1f",
               (double)(mono_ns() - t0) / 1e6);
  }
  have =
      sqlite3_prepare_v2(s->w, "SELECT trig FROM mergelogs LIMIT 0", -1, &probe, NULL) == SQLITE_OK;
  sqlite3_finalize(probe);
  if (!have) {
    if (sqlite3_exec(s->w, upgrade_trig, NULL, NULL, &msg) != SQLITE_OK) {
      snprintf(err, cap, "cannot add the trigger column to %s: %s", s->path, msg ? msg : "?");
      sqlite3_free(msg);
      return RIPPLE_ESYS;
    }
    ripple_log(RIPPLE_LOG_INFO, "store_upgraded", "columns=trig");
  }
  if (sqlite3_exec(s->w, roots_by_time, NULL, NULL, &msg) != SQLITE_OK) {
    snprintf(err, cap, "cannot index the roots of %s: %s", s->path, msg ? msg : "?");
    sqlite3_free(msg);
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

/* next_seq of each table: past its largest row and past the high-water mark
 * in meta (rows above it may have been deleted). */
static int load_high_water(store_t *s, char *err, size_t cap) {
  for (int k = 0; k < 2; k++) {
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT max(coalesce((SELECT max(seq) FROM %s), 0),"
             " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'hw_%s'), 0))",
             table[k], table[k]);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->w, sql, -1, &q, NULL) != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW) {
      snprintf(err, cap, "cannot read the high-water mark of %s: %s", table[k],
               sqlite3_errmsg(s->w));
      sqlite3_finalize(q);
      return RIPPLE_ESYS;
    }
    atomic_store(&s->next_seq[k], (uint64_t)sqlite3_column_int64(q, 0) + 1);
    sqlite3_finalize(q);
  }
  if (sqlite3_prepare_v3(s->w, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)", -1,
                         SQLITE_PREPARE_PERSISTENT, &s->hw, NULL) != SQLITE_OK) {
    snprintf(err, cap, "cannot prepare statements: %s", sqlite3_errmsg(s->w));
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

/* Record the high-water marks in the transaction being written. */
static int save_high_water(store_t *s) {
  for (int k = 0; k < 2; k++) {
    char key[32], value[32];
    snprintf(key, sizeof key, "hw_%s", table[k]);
    snprintf(value, sizeof value, "%" PRIu64, (uint64_t)atomic_load(&s->next_seq[k]) - 1);
    sqlite3_bind_text(s->hw, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s->hw, 2, value, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s->hw);
    sqlite3_reset(s->hw);
    if (rc != SQLITE_DONE) return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

uint64_t store_last_seq(store_t *st, dec_kind_t kind) {
  return (uint64_t)atomic_load(&st->next_seq[kind == DEC_MERGELOGS ? 0 : 1]) - 1;
}

int store_open(const char *path, int sync_full, store_t **out, char *err, size_t cap) {
  store_t *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    snprintf(err, cap, "out of memory");
    return RIPPLE_ENOMEM;
  }
  s->sync_full = sync_full;
  pthread_mutex_init(&s->mu, NULL);
  sqlpool_init(&s->pool, s->path, sync_full);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->done, NULL);
  int rc = sqlconn_open(path, sync_full, &s->w, err, cap);
  char *msg = NULL;
  if (rc == RIPPLE_OK && sqlite3_exec(s->w, schema, NULL, NULL, &msg) != SQLITE_OK) {
    snprintf(err, cap, "cannot create schema in %s: %s", path, msg ? msg : "?");
    sqlite3_free(msg);
    rc = RIPPLE_ESYS;
  }
  if (rc == RIPPLE_OK) rc = upgrade_columns(s, err, cap);
  sqlite3_stmt *v = NULL;
  if (rc == RIPPLE_OK &&
      sqlite3_prepare_v2(s->w, "SELECT value FROM meta WHERE key='schema'", -1, &v, NULL) ==
          SQLITE_OK &&
      sqlite3_step(v) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(v, 0), "1") != 0) {
    snprintf(err, cap, "%s has schema version %s; this ripple server reads version 1", path,
             (const char *)sqlite3_column_text(v, 0));
    rc = RIPPLE_EVERSION;
  }
  sqlite3_finalize(v);
  static const char *ins[2] = {
      "INSERT INTO mergelogs(cpid, time, sources, body, root, okind, ons, oname, component, seq,"
      " trig) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
      "INSERT INTO spans(cpid, start, body, end_ns, okind, ons, oname, seq)"
      " VALUES(?1, ?2, ?4, ?5, ?6, ?7, ?8, ?10)"};
  static const char *del[2] = {"DELETE FROM mergelogs WHERE seq = ?1",
                               "DELETE FROM spans WHERE seq = ?1"};
  for (int k = 0; k < 2 && rc == RIPPLE_OK; k++) {
    if (sqlite3_prepare_v3(s->w, ins[k], -1, SQLITE_PREPARE_PERSISTENT, &s->ins[k], NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v3(s->w, del[k], -1, SQLITE_PREPARE_PERSISTENT, &s->del[k], NULL) !=
            SQLITE_OK) {
      snprintf(err, cap, "cannot prepare statements: %s", sqlite3_errmsg(s->w));
      rc = RIPPLE_ESYS;
    }
  }
  if (rc == RIPPLE_OK &&
      (sqlite3_prepare_v3(
           s->w, "INSERT OR REPLACE INTO roots(seq, uid, time, cpid) VALUES(?1, ?2, ?3, ?4)", -1,
           SQLITE_PREPARE_PERSISTENT, &s->ins_root, NULL) != SQLITE_OK ||
       sqlite3_prepare_v3(s->w, "DELETE FROM roots WHERE seq = ?1", -1, SQLITE_PREPARE_PERSISTENT,
                          &s->del_root, NULL) != SQLITE_OK)) {
    snprintf(err, cap, "cannot prepare statements: %s", sqlite3_errmsg(s->w));
    rc = RIPPLE_ESYS;
  }
  if (rc == RIPPLE_OK) rc = load_high_water(s, err, cap);
  if (rc != RIPPLE_OK) {
    store_close(s);
    return rc;
  }
  *out = s;
  return RIPPLE_OK;
}

/* A column's text into v (absent: NULL, 0). */
static void col_str(sqlite3_stmt *q, int i, const char **v, size_t *n) {
  *v = (const char *)sqlite3_column_text(q, i);
  *n = *v ? (size_t)sqlite3_column_bytes(q, i) : 0;
}

static void row_object(sqlite3_stmt *q, int i, store_row_t *row) {
  col_str(q, i, &row->kind, &row->kind_len);
  col_str(q, i + 1, &row->ns, &row->ns_len);
  col_str(q, i + 2, &row->name, &row->name_len);
}

static int load_mergelogs(store_t *st, const store_loader_t *l) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(
      st->w, "SELECT seq, cpid, time, sources, okind, ons, oname, trig FROM mergelogs ORDER BY seq",
      -1, &q, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    int nsrc = sqlite3_column_bytes(q, 3);
    if (sqlite3_column_bytes(q, 1) != 16 || nsrc % 16) continue; /* not ours: skip */
    store_row_t row = {.seq = (uint64_t)sqlite3_column_int64(q, 0),
                       .time = sqlite3_column_int64(q, 2),
                       .src = sqlite3_column_blob(q, 3),
                       .nsrc = (size_t)nsrc / 16};
    memcpy(&row.cpid, sqlite3_column_blob(q, 1), 16);
    row.end = row.time;
    row_object(q, 4, &row);
    /* A list that does not fit its sources is not ours: every source then. */
    if (sqlite3_column_type(q, 7) == SQLITE_BLOB && row.nsrc &&
        (size_t)sqlite3_column_bytes(q, 7) == row.nsrc)
      row.trig = sqlite3_column_blob(q, 7);
    l->mergelog(l->ud, &row);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

static int load_spans(store_t *st, const store_loader_t *l) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(
      st->w, "SELECT seq, cpid, start, end_ns, okind, ons, oname, body FROM spans ORDER BY seq", -1,
      &q, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (sqlite3_column_bytes(q, 1) != 16) continue;
    store_row_t row = {.seq = (uint64_t)sqlite3_column_int64(q, 0),
                       .time = sqlite3_column_int64(q, 2)};
    memcpy(&row.cpid, sqlite3_column_blob(q, 1), 16);
    row.end = sqlite3_column_type(q, 3) == SQLITE_NULL ? row.time : sqlite3_column_int64(q, 3);
    row_object(q, 4, &row);
    col_str(q, 7, &row.body, &row.body_len);
    l->span(l->ud, &row);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

int store_load(store_t *st, const store_loader_t *l) {
  int rc = load_mergelogs(st, l);
  return rc == RIPPLE_OK ? load_spans(st, l) : rc;
}

int store_load_roots(store_t *st, store_root_fn root, void *ud) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(st->w, "SELECT seq, uid, time, cpid FROM roots ORDER BY seq", -1, &q,
                              NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (sqlite3_column_bytes(q, 3) != 16) continue; /* not ours: skip */
    ripple_cpid_t cpid;
    memcpy(&cpid, sqlite3_column_blob(q, 3), 16);
    root(ud, (uint64_t)sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1),
         (size_t)sqlite3_column_bytes(q, 1), sqlite3_column_int64(q, 2), &cpid);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

/* ---- writing -------------------------------------------------------------- */

/* OR REPLACE: a row left behind by a failed delete must not refuse the
 * mergelog that gets its seq again (SQLite reuses the largest rowid). */
static int insert_root(store_t *s, const dec_batch_t *b, const dec_rec_t *r, uint64_t seq) {
  sqlite3_stmt *q = s->ins_root;
  sqlite3_bind_int64(q, 1, (sqlite3_int64)seq);
  sqlite3_bind_text(q, 2, b->uids.p + r->uid_off, (int)r->uid_len, SQLITE_STATIC);
  sqlite3_bind_int64(q, 3, r->time);
  sqlite3_bind_blob(q, 4, r->cpid.b, 16, SQLITE_STATIC);
  int rc = sqlite3_step(q);
  sqlite3_reset(q);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

/* An absent string is NULL in its column. */
static void bind_str(sqlite3_stmt *q, int i, const dec_batch_t *b, dec_str_t v) {
  if (v.len)
    sqlite3_bind_text(q, i, dec_str(b, v), (int)v.len, SQLITE_STATIC);
  else
    sqlite3_bind_null(q, i);
}

static int insert_batch(store_t *s, const dec_batch_t *b, uint64_t *seqs) {
  int k = b->kind == DEC_MERGELOGS ? 0 : 1;
  sqlite3_stmt *q = s->ins[k];
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    sqlite3_bind_blob(q, 1, r->cpid.b, 16, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, r->time);
    if (k == 0)
      sqlite3_bind_blob(q, 3, r->nsrc ? (const void *)(b->src + r->src_off) : "",
                        (int)(r->nsrc * 16), SQLITE_STATIC);
    sqlite3_bind_text(q, 4, b->body.p + r->body_off, (int)r->body_len, SQLITE_STATIC);
    sqlite3_bind_int64(q, 5, k == 0 ? r->nsrc == 0 : r->end);
    bind_str(q, 6, b, r->kind);
    bind_str(q, 7, b, r->ns);
    bind_str(q, 8, b, r->name);
    if (k == 0) bind_str(q, 9, b, r->component);
    const uint8_t *trig = k == 0 ? dec_trigger(b, r) : NULL;
    if (trig && r->nsrc)
      sqlite3_bind_blob(q, 11, trig, (int)r->nsrc, SQLITE_STATIC);
    else if (k == 0)
      sqlite3_bind_null(q, 11);
    seqs[i] = (uint64_t)atomic_fetch_add(&s->next_seq[k], 1);
    sqlite3_bind_int64(q, 10, (sqlite3_int64)seqs[i]);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc != SQLITE_DONE) return RIPPLE_ESYS;
    if (r->uid_len && insert_root(s, b, r, seqs[i]) != RIPPLE_OK) return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

static int exec(store_t *s, const char *sql) {
  return sqlite3_exec(s->w, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Write one group of jobs in one transaction; each job in its own savepoint so
 * one failing job does not fail the others. */
static void write_group(store_t *s, job_t *jobs) {
  int ok = exec(s, "BEGIN IMMEDIATE") == 0;
  for (job_t *j = jobs; j; j = j->next) {
    if (!ok) {
      j->rc = RIPPLE_ESYS;
      continue;
    }
    exec(s, "SAVEPOINT job");
    j->rc = insert_batch(s, j->b, j->seqs);
    if (j->rc != RIPPLE_OK) {
      sqlconn_log_error("store_write_failed", sqlite3_errmsg(s->w));
      exec(s, "ROLLBACK TO job");
    }
    exec(s, "RELEASE job");
  }
  if (ok && save_high_water(s) != RIPPLE_OK) {
    sqlconn_log_error("store_write_failed", sqlite3_errmsg(s->w));
    exec(s, "ROLLBACK");
    ok = 0;
  }
  if (ok && exec(s, "COMMIT") != 0) {
    sqlconn_log_error("store_commit_failed", sqlite3_errmsg(s->w));
    exec(s, "ROLLBACK");
    ok = 0;
  }
  size_t records = 0;
  for (job_t *j = jobs; j; j = j->next) {
    if (!ok) j->rc = RIPPLE_ESYS;
    if (j->rc == RIPPLE_OK) {
      records += j->b->n;
      if (s->hooks.committed) s->hooks.committed(s->hooks.ud, j->b, j->seqs);
    } else {
      atomic_fetch_add(&s->st.write_errors, 1);
    }
  }
  atomic_fetch_add(&s->st.groups, 1);
  atomic_fetch_add(&s->st.records, records);
}

static void *writer(void *arg) {
  store_t *s = arg;
  int64_t last_tick = mono_ns();
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->head && !s->stop) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_sec += s->hooks.tick_ms / 1000 + 1;
      if (pthread_cond_timedwait(&s->work, &s->mu, &ts) != 0) break;
    }
    job_t *jobs = s->head;
    s->head = s->tail = NULL;
    int stop = s->stop && !jobs;
    pthread_mutex_unlock(&s->mu);
    if (stop) break;
    if (jobs) {
      write_group(s, jobs);
      pthread_mutex_lock(&s->mu); /* acknowledge before anything else */
      for (job_t *j = jobs; j; j = j->next) j->done = 1;
      pthread_cond_broadcast(&s->done);
      pthread_mutex_unlock(&s->mu);
    }
    if (s->hooks.tick && mono_ns() - last_tick >= (int64_t)s->hooks.tick_ms * 1000000) {
      s->hooks.tick(s->hooks.ud, s);
      last_tick = mono_ns();
    }
    pthread_mutex_lock(&s->mu);
  }
  return NULL;
}

int store_start(store_t *st, const store_hooks_t *hooks) {
  st->hooks = *hooks;
  if (!st->hooks.tick_ms) st->hooks.tick_ms = 1000;
  if (pthread_create(&st->thread, NULL, writer, st) != 0) return RIPPLE_ESYS;
  st->started = 1;
  return RIPPLE_OK;
}

int store_write(store_t *st, const dec_batch_t *b) {
  job_t j = {b, malloc((b->n ? b->n : 1) * sizeof(uint64_t)), RIPPLE_OK, 0, NULL};
  if (!j.seqs) return RIPPLE_ENOMEM;
  pthread_mutex_lock(&st->mu);
  if (st->stop) {
    pthread_mutex_unlock(&st->mu);
    free(j.seqs);
    return RIPPLE_ESTATE;
  }
  /* The job lives on this stack: this thread waits below until the writer
   * marked it done, and the writer drops it from the queue before that. */
  if (st->tail)
    st->tail->next = &j;
  else
    st->head = &j; /* cppcheck-suppress autoVariables */
  st->tail = &j;   /* cppcheck-suppress autoVariables */
  pthread_cond_signal(&st->work);
  while (!j.done) pthread_cond_wait(&st->done, &st->mu);
  pthread_mutex_unlock(&st->mu);
  free(j.seqs);
  return j.rc;
}

int store_delete(store_t *st, dec_kind_t kind, const uint64_t *seqs, size_t n) {
  if (n == 0) return RIPPLE_OK;
  sqlite3_stmt *q = st->del[kind == DEC_MERGELOGS ? 0 : 1];
  if (exec(st, "BEGIN IMMEDIATE") != 0) return RIPPLE_ESYS;
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_int64(q, 1, (sqlite3_int64)seqs[i]);
    sqlite3_step(q);
    sqlite3_reset(q);
    if (kind != DEC_MERGELOGS) continue;
    /* A root's index row goes with its mergelog (a key lookup in a small
     * table when there is none). */
    sqlite3_bind_int64(st->del_root, 1, (sqlite3_int64)seqs[i]);
    sqlite3_step(st->del_root);
    sqlite3_reset(st->del_root);
  }
  if (exec(st, "COMMIT") != 0) {
    exec(st, "ROLLBACK");
    return RIPPLE_ESYS;
  }
  atomic_fetch_add(&st->st.rows_deleted, n);
  return RIPPLE_OK;
}

/* ---- reading -------------------------------------------------------------- */

int store_bodies(store_t *st, dec_kind_t kind, const uint64_t *seqs, size_t n, sbuf_t *out,
                 int *first) {
  sqlite3 *db = sqlpool_get(&st->pool);
  if (!db) return RIPPLE_ESYS;
  char sql[64];
  snprintf(sql, sizeof sql, "SELECT body FROM %s WHERE seq = ?1",
           table[kind == DEC_MERGELOGS ? 0 : 1]);
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK ? RIPPLE_OK : RIPPLE_ESYS;
  /* One read transaction, so the answer is a consistent snapshot. */
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  for (size_t i = 0; i < n && rc == RIPPLE_OK; i++) {
    sqlite3_bind_int64(q, 1, (sqlite3_int64)seqs[i]);
    if (sqlite3_step(q) == SQLITE_ROW) {
      if (!*first) sbuf_putc(out, ',');
      *first = 0;
      sbuf_put(out, (const char *)sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0));
    }
    sqlite3_reset(q);
  }
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_finalize(q);
  sqlpool_put(&st->pool, db);
  return out->oom ? RIPPLE_ENOMEM : rc;
}

int store_scan(store_t *st, dec_kind_t kind, uint64_t after, size_t limit, store_scan_fn row,
               void *ud, uint64_t *last) {
  sqlite3 *db = sqlpool_get(&st->pool);
  if (!db) return RIPPLE_ESYS;
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT seq, body FROM %s WHERE seq > ?1 ORDER BY seq LIMIT ?2",
           table[kind == DEC_MERGELOGS ? 0 : 1]);
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK ? SQLITE_OK : SQLITE_ERROR;
  sqlite3_bind_int64(q, 1, (sqlite3_int64)after);
  sqlite3_bind_int64(q, 2, (sqlite3_int64)limit);
  *last = after;
  while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    *last = (uint64_t)sqlite3_column_int64(q, 0);
    row(ud, *last, (const char *)sqlite3_column_text(q, 1), (size_t)sqlite3_column_bytes(q, 1));
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  sqlpool_put(&st->pool, db);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

uint64_t store_max_seq(store_t *st, dec_kind_t kind) {
  sqlite3 *db = sqlpool_get(&st->pool);
  if (!db) return 0;
  char sql[64];
  snprintf(sql, sizeof sql, "SELECT max(seq) FROM %s", table[kind == DEC_MERGELOGS ? 0 : 1]);
  sqlite3_stmt *q = NULL;
  uint64_t n = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    n = (uint64_t)sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlpool_put(&st->pool, db);
  return n;
}

int store_page(store_t *st, dec_kind_t kind, int64_t after_time, int64_t after_seq, int64_t until,
               size_t limit, sbuf_t *out, size_t *count, int *more, int64_t *next_time,
               int64_t *next_seq) {
  sqlite3 *db = sqlpool_get(&st->pool);
  if (!db) return RIPPLE_ESYS;
  const char *col = kind == DEC_MERGELOGS ? "time" : "start";
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT seq, %s, body FROM %s WHERE (%s, seq) > (?1, ?2) AND %s < ?3 ORDER BY %s, seq "
           "LIMIT ?4",
           col, table[kind == DEC_MERGELOGS ? 0 : 1], col, col, col);
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK ? RIPPLE_OK : RIPPLE_ESYS;
  *count = 0;
  *more = 0;
  if (rc == RIPPLE_OK) {
    sqlite3_bind_int64(q, 1, after_time);
    sqlite3_bind_int64(q, 2, after_seq);
    sqlite3_bind_int64(q, 3, until ? until : INT64_MAX);
    sqlite3_bind_int64(q, 4, (sqlite3_int64)limit + 1);
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
      if (*count == limit) {
        *more = 1;
        break;
      }
      if (*count) sbuf_putc(out, ',');
      sbuf_put(out, (const char *)sqlite3_column_text(q, 2), (size_t)sqlite3_column_bytes(q, 2));
      *next_seq = sqlite3_column_int64(q, 0);
      *next_time = sqlite3_column_int64(q, 1);
      (*count)++;
    }
    if (r != SQLITE_ROW && r != SQLITE_DONE) rc = RIPPLE_ESYS;
  }
  sqlite3_finalize(q);
  sqlpool_put(&st->pool, db);
  return out->oom ? RIPPLE_ENOMEM : rc;
}

/* One statement for every combination of filters: a NULL parameter matches
 * anything. The partial index mergelogs_roots walks the roots newest first. */
static const char *roots_sql =
    "SELECT seq, time, cpid, body FROM mergelogs INDEXED BY mergelogs_roots"
    " WHERE root = 1 AND (time, seq) < (?1, ?2) AND time >= ?3"
    " AND (?4 IS NULL OR component = ?4) AND (?5 IS NULL OR ons = ?5)"
    " AND (?6 IS NULL OR okind = ?6) AND (?7 IS NULL OR oname = ?7)"
    " ORDER BY time DESC, seq DESC LIMIT ?8";

static void bind_opt(sqlite3_stmt *q, int i, const char *v) {
  if (v)
    sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(q, i);
}

int store_roots(store_t *st, const store_root_query_t *rq, store_found_fn row, void *ud,
                int *more) {
  *more = 0;
  sqlite3 *db = sqlpool_get(&st->pool);
  if (!db) return RIPPLE_ESYS;
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, roots_sql, -1, &q, NULL) == SQLITE_OK ? RIPPLE_OK : RIPPLE_ESYS;
  if (rc == RIPPLE_OK) {
    sqlite3_bind_int64(q, 1, rq->before_time);
    sqlite3_bind_int64(q, 2, rq->before_seq);
    sqlite3_bind_int64(q, 3, rq->since);
    bind_opt(q, 4, rq->component);
    bind_opt(q, 5, rq->ns);
    bind_opt(q, 6, rq->kind);
    bind_opt(q, 7, rq->name);
    sqlite3_bind_int64(q, 8, (sqlite3_int64)rq->limit + 1);
    size_t count = 0;
    int r = SQLITE_DONE;
    while (rc == RIPPLE_OK && (r = sqlite3_step(q)) == SQLITE_ROW) {
      if (count++ == rq->limit) {
        *more = 1;
        break;
      }
      if (sqlite3_column_bytes(q, 2) != 16) continue; /* not ours: skip */
      ripple_cpid_t cpid;
      memcpy(&cpid, sqlite3_column_blob(q, 2), 16);
      rc = row(ud, (uint64_t)sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), &cpid,
               (const char *)sqlite3_column_text(q, 3), (size_t)sqlite3_column_bytes(q, 3));
    }
    if (rc == RIPPLE_OK && r != SQLITE_ROW && r != SQLITE_DONE) rc = RIPPLE_ESYS;
  }
  sqlite3_finalize(q);
  sqlpool_put(&st->pool, db);
  return rc;
}

int64_t store_size_bytes(store_t *st) {
  char wal[4096];
  snprintf(wal, sizeof wal, "%s-wal", st->path);
  int64_t total = 0;
  FILE *f;
  const char *files[2] = {st->path, wal};
  for (int i = 0; i < 2; i++) {
    if ((f = fopen(files[i], "rb")) != NULL) {
      if (fseek(f, 0, SEEK_END) == 0) total += ftell(f);
      fclose(f);
    }
  }
  return total;
}

void store_stats(store_t *st, store_stats_t *out) {
  out->groups = atomic_load(&st->st.groups);
  out->records = atomic_load(&st->st.records);
  out->rows_deleted = atomic_load(&st->st.rows_deleted);
  out->write_errors = atomic_load(&st->st.write_errors);
}

void store_close(store_t *st) {
  if (!st) return;
  if (st->started) {
    pthread_mutex_lock(&st->mu);
    st->stop = 1;
    pthread_cond_signal(&st->work);
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->thread, NULL);
  }
  for (int k = 0; k < 2; k++) {
    sqlite3_finalize(st->ins[k]);
    sqlite3_finalize(st->del[k]);
  }
  sqlite3_finalize(st->ins_root);
  sqlite3_finalize(st->hw);
  sqlite3_finalize(st->del_root);
  sqlpool_fini(&st->pool);
  sqlite3_close(st->w);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->work);
  pthread_cond_destroy(&st->done);
  free(st->path);
  free(st);
}
