/*
 * facts.c - see facts.h.
 *
 * Schema: one table, a row per fact, with partial indexes on the keys a trace
 * is joined by. Rows are appended in arrival order; retention deletes the
 * oldest by time (and past max_rows, by seq) in short transactions from the
 * writer thread, between groups.
 */
#include "store/facts.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"
#include "ripplex/idle.h"
#include "ripplex/prom.h"
#include "store/sqlconn.h"

static const char *schema =
    "CREATE TABLE IF NOT EXISTS facts(seq INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
    "  time INTEGER NOT NULL, uid TEXT, kind TEXT, ns TEXT, name TEXT, rv TEXT, prev_rv TEXT,"
    "  span_id TEXT, cpid TEXT, op TEXT, body TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS facts_time ON facts(time);"
    "CREATE INDEX IF NOT EXISTS facts_uid ON facts(uid, time) WHERE uid IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS facts_obj ON facts(ns, name, time) WHERE type = 3;"
    "CREATE INDEX IF NOT EXISTS facts_span ON facts(span_id) WHERE span_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS facts_cpid ON facts(cpid) WHERE cpid IS NOT NULL;";

/* A writer queue whose oldest job's request waited this long refuses more
 * (RIPPLE_EFULL: 429), so a stored detail's lag stays within seconds. */
#define FACTS_BEHIND_NS 3000000000LL

#define COLS "seq, type, time, uid, kind, ns, name, rv, prev_rv, span_id, cpid, op, body"

typedef struct job {
  const fact_t *v;
  size_t n;
  int64_t since; /* mono_ns: when its request was queued, for the lag */
  int rc, done;
  struct job *next;
} job_t;

struct facts {
  facts_opts_t o;
  char *path;
  sqlite3 *w;
  sqlite3_stmt *ins;
  sqlpool_t pool;

  pthread_mutex_t mu;
  pthread_cond_t work, done;
  job_t *head, *tail;
  size_t queued; /* facts in the queue, under mu */
  int stop;
  pthread_t thread;

  atomic_uint_fast64_t stored, refused_busy, write_errors, expired;
  uint64_t lag_counts[FACTS_LAG_BUCKETS + 1], lag_count; /* under mu */
  double lag_sum;
};

const double facts_lag_bounds[FACTS_LAG_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                    1,     2.5,  5,     10,   30,  60};

static int exec(sqlite3 *db, const char *sql) {
  return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static void bind_opt(sqlite3_stmt *q, int i, const char *v) {
  if (v && *v)
    sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(q, i);
}

static int insert(facts_t *f, const fact_t *v) {
  sqlite3_stmt *q = f->ins;
  sqlite3_bind_int(q, 1, (int)v->type);
  sqlite3_bind_int64(q, 2, v->time);
  const char *s[] = {v->uid,     v->kind,    v->ns,   v->name, v->rv,
                     v->prev_rv, v->span_id, v->cpid, v->op};
  for (int i = 0; i < 9; i++) bind_opt(q, 3 + i, s[i]);
  sqlite3_bind_text(q, 12, v->body, (int)v->body_len, SQLITE_STATIC);
  int rc = sqlite3_step(q);
  sqlite3_reset(q);
  return rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

static void write_group(facts_t *f, job_t *jobs) {
  int ok = exec(f->w, "BEGIN IMMEDIATE") == 0;
  for (job_t *j = jobs; ok && j; j = j->next) {
    exec(f->w, "SAVEPOINT job");
    j->rc = RIPPLE_OK;
    for (size_t i = 0; i < j->n && j->rc == RIPPLE_OK; i++) j->rc = insert(f, &j->v[i]);
    if (j->rc != RIPPLE_OK) {
      sqlconn_log_error("facts_write_failed", sqlite3_errmsg(f->w));
      exec(f->w, "ROLLBACK TO job");
    }
    exec(f->w, "RELEASE job");
  }
  if (ok && exec(f->w, "COMMIT") != 0) {
    sqlconn_log_error("facts_commit_failed", sqlite3_errmsg(f->w));
    exec(f->w, "ROLLBACK");
    ok = 0;
  }
  for (job_t *j = jobs; j; j = j->next) {
    if (!ok) j->rc = RIPPLE_ESYS;
    if (j->rc == RIPPLE_OK)
      atomic_fetch_add(&f->stored, j->n);
    else
      atomic_fetch_add(&f->write_errors, 1);
  }
}

/* Retention, in transactions of at most 10,000 rows so the next group never
 * waits long. */
static void expire(facts_t *f) {
  char sql[200];
  int64_t before = f->o.max_age_ns ? ripple_now_ns() - f->o.max_age_ns : INT64_MIN;
  if (f->o.max_age_ns) {
    snprintf(sql, sizeof sql,
             "DELETE FROM facts WHERE seq IN (SELECT seq FROM facts WHERE time < %lld LIMIT 10000)",
             (long long)before);
    if (exec(f->w, sql) == 0) atomic_fetch_add(&f->expired, (uint64_t)sqlite3_changes(f->w));
  }
  if (f->o.max_rows) {
    snprintf(sql, sizeof sql,
             "DELETE FROM facts WHERE seq IN (SELECT seq FROM facts WHERE seq <= "
             "(SELECT max(seq) FROM facts) - %zu ORDER BY seq LIMIT 10000)",
             f->o.max_rows);
    if (exec(f->w, sql) == 0) atomic_fetch_add(&f->expired, (uint64_t)sqlite3_changes(f->w));
  }
}

/* Under mu: each of a stored job's facts waited from its request to now. */
static void observe_lag(facts_t *f, const job_t *j, int64_t now) {
  double s = now > j->since ? (double)(now - j->since) / 1e9 : 0;
  f->lag_counts[prom_bucket(facts_lag_bounds, FACTS_LAG_BUCKETS, s)] += j->n;
  f->lag_sum += s * (double)j->n;
  f->lag_count += j->n;
}

static void *writer(void *arg) {
  facts_t *f = arg;
  int64_t last_expire = 0;
  /* At nice +15 (ripplex/idle.h), like the details' parser: at the process's
   * priority it took 15-25% of ingest's rate under a flood of details on a
   * shared core (docs/benchmarks.md, "Issue 28: details lag"). The lag stays
   * bounded by time instead: a queue that is behind refuses new work
   * (FACTS_BEHIND_NS here, DWORK_BEHIND_NS in trace_details.c). */
  idle_enter();
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (!f->head && !f->stop) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_sec += 1;
      if (pthread_cond_timedwait(&f->work, &f->mu, &ts) != 0) break;
    }
    job_t *jobs = f->head;
    f->head = f->tail = NULL;
    int stop = f->stop && !jobs;
    pthread_mutex_unlock(&f->mu);
    if (stop) break;
    if (jobs) write_group(f, jobs);
    int64_t committed = mono_ns();
    pthread_mutex_lock(&f->mu);
    for (job_t *j = jobs; j; j = j->next) {
      if (j->rc == RIPPLE_OK) observe_lag(f, j, committed);
      j->done = 1;
      f->queued -= j->n;
    }
    pthread_cond_broadcast(&f->done);
    pthread_mutex_unlock(&f->mu);
    if (mono_ns() - last_expire >= 1000000000LL) {
      expire(f);
      last_expire = mono_ns();
    }
    pthread_mutex_lock(&f->mu);
  }
  return NULL;
}

int facts_open(const facts_opts_t *o, facts_t **out, char *err, size_t cap) {
  facts_t *f = calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(o->path))) {
    free(f);
    snprintf(err, cap, "out of memory");
    return RIPPLE_ENOMEM;
  }
  f->o = *o;
  f->o.path = f->path;
  if (!f->o.max_queue) f->o.max_queue = 100000;
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->work, NULL);
  pthread_cond_init(&f->done, NULL);
  sqlpool_init(&f->pool, f->path, o->sync_full);
  int rc = sqlconn_open(f->path, o->sync_full, &f->w, err, cap);
  char *msg = NULL;
  if (rc == RIPPLE_OK && sqlite3_exec(f->w, schema, NULL, NULL, &msg) != SQLITE_OK) {
    snprintf(err, cap, "cannot create schema in %s: %s", f->path, msg ? msg : "?");
    rc = RIPPLE_ESYS;
  }
  sqlite3_free(msg);
  if (rc == RIPPLE_OK &&
      sqlite3_prepare_v2(f->w,
                         "INSERT INTO facts(type, time, uid, kind, ns, name, rv, prev_rv, span_id,"
                         " cpid, op, body) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &f->ins, NULL) != SQLITE_OK) {
    snprintf(err, cap, "cannot prepare statements in %s: %s", f->path, sqlite3_errmsg(f->w));
    rc = RIPPLE_ESYS;
  }
  if (rc == RIPPLE_OK && pthread_create(&f->thread, NULL, writer, f) != 0) {
    snprintf(err, cap, "cannot start the details writer thread");
    rc = RIPPLE_ESYS;
  }
  if (rc != RIPPLE_OK) {
    sqlite3_finalize(f->ins);
    sqlite3_close(f->w);
    sqlpool_fini(&f->pool);
    free(f->path);
    free(f);
    return rc;
  }
  *out = f;
  return RIPPLE_OK;
}

int facts_put(facts_t *f, const fact_t *v, size_t n) { return facts_put_since(f, v, n, mono_ns()); }

int facts_put_since(facts_t *f, const fact_t *v, size_t n, int64_t since_ns) {
  if (n == 0) return RIPPLE_OK;
  job_t j = {v, n, since_ns, RIPPLE_OK, 0, NULL};
  pthread_mutex_lock(&f->mu);
  /* Behind: its oldest job's request waited longer than FACTS_BEHIND_NS. */
  int behind = f->head && mono_ns() - f->head->since > FACTS_BEHIND_NS;
  if (f->stop || behind || f->queued + n > f->o.max_queue) {
    int stopping = f->stop;
    pthread_mutex_unlock(&f->mu);
    if (!stopping) atomic_fetch_add(&f->refused_busy, 1);
    return stopping ? RIPPLE_ESTATE : RIPPLE_EFULL;
  }
  f->queued += n;
  /* The job lives on this stack: this thread waits below until the writer
   * marked it done, and the writer drops it from the queue before that. */
  if (f->tail)
    f->tail->next = &j;
  else
    f->head = &j; /* cppcheck-suppress autoVariables */
  f->tail = &j;   /* cppcheck-suppress autoVariables */
  pthread_cond_signal(&f->work);
  while (!j.done) pthread_cond_wait(&f->done, &f->mu);
  pthread_mutex_unlock(&f->mu);
  return j.rc;
}

/* ---- lookups --------------------------------------------------------------- */

typedef struct seen {
  uint64_t *slot;
  size_t mask, n;
} seen_t;

/* 1 the first time seq is offered, 0 after (and when out of memory: a row
 * shown twice is better than a lookup that fails). */
static int seen_first(seen_t *s, uint64_t seq) {
  if ((s->n + 1) * 2 > s->mask + 1) {
    size_t cap = (s->mask + 1) * 2;
    uint64_t *ns = calloc(cap, sizeof *ns);
    if (!ns) return 1;
    for (size_t i = 0; i <= s->mask && s->slot; i++)
      if (s->slot[i]) {
        size_t h = (s->slot[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);
        while (ns[h]) h = (h + 1) & (cap - 1);
        ns[h] = s->slot[i];
      }
    free(s->slot);
    s->slot = ns;
    s->mask = cap - 1;
  }
  size_t h = (seq * 0x9E3779B97F4A7C15ull) & s->mask;
  for (; s->slot[h]; h = (h + 1) & s->mask)
    if (s->slot[h] == seq) return 0;
  s->slot[h] = seq;
  s->n++;
  return 1;
}

static const char *col(sqlite3_stmt *q, int i) { return (const char *)sqlite3_column_text(q, i); }

typedef struct lookup {
  facts_row_fn fn;
  void *ud;
  seen_t seen;
  size_t rows, limit;
  int stop;
} lookup_t;

/* Run q (bound by the caller) and hand each new row to the callback. */
static int drain(lookup_t *l, sqlite3_stmt *q) {
  int rc;
  while (!l->stop && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    uint64_t seq = (uint64_t)sqlite3_column_int64(q, 0);
    if (!seen_first(&l->seen, seq)) continue;
    fact_t v = {(fact_type_t)sqlite3_column_int(q, 1),
                sqlite3_column_int64(q, 2),
                col(q, 3),
                col(q, 4),
                col(q, 5),
                col(q, 6),
                col(q, 7),
                col(q, 8),
                col(q, 9),
                col(q, 10),
                col(q, 11),
                col(q, 12),
                (size_t)sqlite3_column_bytes(q, 12)};
    if (l->fn(l->ud, seq, &v) || ++l->rows >= l->limit) l->stop = 1;
  }
  sqlite3_reset(q);
  return l->stop || rc == SQLITE_DONE ? RIPPLE_OK : RIPPLE_ESYS;
}

/* Each key through one prepared statement: ?1 the key (two for "ns/name"),
 * then since and until when the statement takes them. */
static int by_keys(sqlite3 *db, lookup_t *l, const char *sql, const char *const *keys, size_t n,
                   int split, int64_t since, int64_t until) {
  sqlite3_stmt *q = NULL;
  if (n == 0) return RIPPLE_OK;
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return RIPPLE_ESYS;
  int rc = RIPPLE_OK, p = 1;
  for (size_t i = 0; i < n && rc == RIPPLE_OK && !l->stop; i++, p = 1) {
    const char *k = keys[i], *slash = split ? strchr(k, '/') : NULL;
    if (split && !slash) continue;
    if (split) {
      sqlite3_bind_text(q, p++, k, (int)(slash - k), SQLITE_STATIC);
      sqlite3_bind_text(q, p++, slash + 1, -1, SQLITE_STATIC);
    } else {
      sqlite3_bind_text(q, p++, k, -1, SQLITE_STATIC);
    }
    if (sqlite3_bind_parameter_count(q) > p) {
      sqlite3_bind_int64(q, p++, since);
      sqlite3_bind_int64(q, p, until);
    }
    rc = drain(l, q);
  }
  sqlite3_finalize(q);
  return rc;
}

int facts_lookup(facts_t *f, const facts_query_t *qy, facts_row_fn fn, void *ud) {
  sqlite3 *db = sqlpool_get(&f->pool);
  if (!db) return RIPPLE_ESYS;
  lookup_t l = {fn, ud, {NULL, 0, 0}, 0, qy->limit ? qy->limit : SIZE_MAX, 0};
  seen_first(&l.seen, UINT64_MAX); /* sizes the table; no row has that seq */
  int64_t since = qy->since, until = qy->until ? qy->until : INT64_MAX;
  int rc = by_keys(db, &l, "SELECT " COLS " FROM facts WHERE span_id = ?1", qy->span_ids,
                   qy->nspan_ids, 0, since, until);
  if (rc == RIPPLE_OK)
    rc = by_keys(db, &l, "SELECT " COLS " FROM facts WHERE uid = ?1 AND time BETWEEN ?2 AND ?3",
                 qy->uids, qy->nuids, 0, since, until);
  if (rc == RIPPLE_OK)
    rc = by_keys(db, &l, "SELECT " COLS " FROM facts WHERE cpid = ?1 AND type = 1", qy->cpids,
                 qy->ncpids, 0, since, until);
  if (rc == RIPPLE_OK)
    rc = by_keys(db, &l,
                 "SELECT " COLS
                 " FROM facts WHERE ns = ?1 AND name = ?2 AND type = 3"
                 " AND time BETWEEN ?3 AND ?4",
                 qy->objects, qy->nobjects, 1, since, until);
  free(l.seen.slot);
  sqlpool_put(&f->pool, db);
  return rc;
}

void facts_stats(facts_t *f, facts_stats_t *out) {
  out->stored = atomic_load(&f->stored);
  out->refused_busy = atomic_load(&f->refused_busy);
  out->write_errors = atomic_load(&f->write_errors);
  out->expired = atomic_load(&f->expired);
  pthread_mutex_lock(&f->mu);
  out->queued = f->queued;
  memcpy(out->lag_counts, f->lag_counts, sizeof out->lag_counts);
  out->lag_count = f->lag_count;
  out->lag_sum = f->lag_sum;
  pthread_mutex_unlock(&f->mu);
}

void facts_close(facts_t *f) {
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  f->stop = 1;
  pthread_cond_signal(&f->work);
  pthread_mutex_unlock(&f->mu);
  pthread_join(f->thread, NULL);
  sqlite3_finalize(f->ins);
  sqlite3_close(f->w);
  sqlpool_fini(&f->pool);
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->work);
  pthread_cond_destroy(&f->done);
  free(f->path);
  free(f);
}
