/*
 * server.c - see server.h.
 *
 * Order of events for a POST: decode (no lock), store durably (the writer
 * thread, group commit), add to the graph (writer thread, write lock), then
 * answer. So anything acknowledged is both durable and visible to queries, and
 * a restart rebuilds exactly the acknowledged state from storage.
 */
#include "serve/server.h"
#include "analysis/fights_feed.h"
#include "ingest/otlp.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"
#include "ripplex/wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seqvec {
  uint64_t *v;
  size_t n, cap;
} seqvec_t;

static void seqvec_push(seqvec_t *a, uint64_t x) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 1024;
    uint64_t *v = realloc(a->v, cap * sizeof *v);
    if (!v) return; /* the row stays; the next pass finds its vertex gone, so it is orphaned */
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
}

/* ---- start-up: storage -> graph ------------------------------------------ */

/* A CPID has one mergelog and the first stored wins. A later one (a shipper
 * retrying a batch whose answer it never got) was acknowledged as a no-op,
 * but its row exists until deleted: `dups` collects the rows to delete. */
typedef struct loading {
  srv_t *s;
  seqvec_t dups;
} loading_t;

/* The object index learns the object a record names (when it names one). */
static void index_object(srv_t *s, const obj_name_t *k, const ripple_cpid_t *cpid, int64_t time,
                         uint64_t seq) {
  if (objects_add(s->core.objects, k, cpid, time) != RIPPLE_OK)
    ripple_log(RIPPLE_LOG_ERROR, "objects_oom", "seq=%" PRIu64, seq);
}

static obj_name_t row_name(const store_row_t *r) {
  return (obj_name_t){r->kind, r->ns, r->name, r->kind_len, r->ns_len, r->name_len};
}

static void load_mergelog(void *ud, const store_row_t *r) {
  loading_t *l = ud;
  int rc = graph_add_mergelog(l->s->core.g, &r->cpid, r->src, r->nsrc, r->trig, r->time, r->seq);
  obj_name_t k = row_name(r);
  if (rc == 0)
    seqvec_push(&l->dups, r->seq);
  else if (rc > 0)
    index_object(l->s, &k, &r->cpid, r->time, r->seq);
}

static void load_span(void *ud, const store_row_t *r) {
  loading_t *l = ud;
  obj_name_t k = row_name(r);
  (void)graph_add_span(l->s->core.g, &r->cpid, r->time, r->end, r->seq);
  index_object(l->s, &k, &r->cpid, r->end, r->seq);
  stalls_replay(&l->s->stalls, r);
}

/* Is the root at row seq the mergelog the graph keeps for its CPID? Not for a
 * retried root stored twice (until drop_duplicates deletes the second), nor
 * one whose CPID retention removed. The caller holds the lock. */
static int root_live(void *ud, uint64_t seq, const ripple_cpid_t *cpid) {
  const srv_t *s = ud;
  vid_t v = graph_find(s->core.g, cpid);
  return v && graph_mergelog_seq(s->core.g, v) == seq;
}

static void load_root(void *ud, uint64_t seq, const char *uid, size_t n, int64_t time,
                      const ripple_cpid_t *cpid) {
  loading_t *l = ud;
  if (root_live(l->s, seq, cpid) &&
      roots_add(l->s->core.roots, uid, n, time, seq, cpid) != RIPPLE_OK)
    ripple_log(RIPPLE_LOG_ERROR, "roots_oom", "seq=%" PRIu64, seq);
}

/* ---- the writer thread's hooks --------------------------------------------- */

/* Delete the rows of duplicate mergelogs (see loading_t). A crash before this
 * runs leaves them for the next start-up to find. */
static void drop_duplicates(srv_t *s, seqvec_t *dups) {
  if (!dups->n) return;
  atomic_fetch_add(&s->m.duplicate_mergelogs, dups->n);
  if (store_delete(s->core.store, DEC_MERGELOGS, dups->v, dups->n) != RIPPLE_OK)
    ripple_log(RIPPLE_LOG_WARN, "duplicate_rows_kept", "rows=%zu", dups->n);
  free(dups->v);
  memset(dups, 0, sizeof *dups);
}

static void committed(void *ud, const dec_batch_t *b, const uint64_t *seqs) {
  srv_t *s = ud;
  seqvec_t dups = {0};
  pthread_rwlock_wrlock(&s->core.lock);
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    obj_name_t k = {dec_str(b, r->kind), dec_str(b, r->ns), dec_str(b, r->name),
                    r->kind.len,         r->ns.len,         r->name.len};
    if (b->kind == DEC_MERGELOGS) {
      int rc = graph_add_mergelog(s->core.g, &r->cpid, b->src + r->src_off, r->nsrc,
                                  dec_trigger(b, r), r->time, seqs[i]);
      if (rc == 0) {
        seqvec_push(&dups, seqs[i]);
        continue;
      }
      if (rc < 0) {
        ripple_log(RIPPLE_LOG_ERROR, "graph_oom", "seq=%" PRIu64, seqs[i]);
        continue;
      }
      if (r->uid_len && roots_add(s->core.roots, b->uids.p + r->uid_off, r->uid_len, r->time,
                                  seqs[i], &r->cpid) != RIPPLE_OK)
        ripple_log(RIPPLE_LOG_ERROR, "roots_oom", "seq=%" PRIu64, seqs[i]);
    } else if (graph_add_span(s->core.g, &r->cpid, r->time, r->end, seqs[i]) != RIPPLE_OK) {
      ripple_log(RIPPLE_LOG_ERROR, "graph_oom", "seq=%" PRIu64, seqs[i]);
      continue;
    }
    index_object(s, &k, &r->cpid, r->end, seqs[i]);
  }
  /* Under the lock, so srv_on_commit knows when no call is left running. */
  void *cud = atomic_load(&s->commit_ud);
  if (cud && b->n) s->commit_fn(cud, b->kind, seqs[b->n - 1]);
  pthread_rwlock_unlock(&s->core.lock);
  /* The stall detector learns beside ingest: a copy into its queue, with no
   * lock of the graph's held (stalls.h). */
  stalls_feed(&s->stalls, b);
  fights_feed_spans(s->fights, b); /* who made each update (fights_feed.h) */
  atomic_fetch_add(&s->m.accepted[b->kind == DEC_MERGELOGS ? 0 : 1], b->n);
  drop_duplicates(s, &dups);
}

void srv_on_commit(srv_t *s, void (*fn)(void *ud, dec_kind_t kind, uint64_t last_seq), void *ud) {
  atomic_store(&s->commit_ud, NULL);
  /* The writer calls the hook under the write lock: once this has the lock,
   * no call of the old hook is still going. */
  pthread_rwlock_wrlock(&s->core.lock);
  s->commit_fn = fn;
  pthread_rwlock_unlock(&s->core.lock);
  if (fn) atomic_store(&s->commit_ud, ud);
}

typedef struct expired {
  seqvec_t ml, sp;
} expired_t;

static void gone_vertex(void *ud, const ripple_cpid_t *cpid, uint64_t seq) {
  (void)cpid;
  if (seq) seqvec_push(&((expired_t *)ud)->ml, seq);
}

static void gone_span(void *ud, uint64_t seq) { seqvec_push(&((expired_t *)ud)->sp, seq); }

/* Retention, in the writer thread. A size limit deletes down to 95% of it so
 * that the pass (which sorts the roots) does not run on every tick. */
static void tick(void *ud, store_t *st) {
  srv_t *s = ud;
  int64_t min_time = s->cfg.max_age_ns ? ripple_now_ns() - s->cfg.max_age_ns : 0;
  pthread_rwlock_rdlock(&s->core.lock);
  int over = s->cfg.max_vertices && graph_vertices(s->core.g) > s->cfg.max_vertices;
  pthread_rwlock_unlock(&s->core.lock);
  if (!over && !min_time) return;
  expired_t ex = {0};
  graph_gone_t gone = {gone_vertex, gone_span, &ex};
  size_t target = over ? s->cfg.max_vertices - s->cfg.max_vertices / 20 : s->cfg.max_vertices;
  pthread_rwlock_wrlock(&s->core.lock);
  size_t removed = graph_expire(s->core.g, target, min_time, &gone);
  if (removed) {
    roots_prune(s->core.roots, root_live, s);
    objects_prune(s->core.objects, srv_cpid_live, s);
  }
  pthread_rwlock_unlock(&s->core.lock);
  if (removed) {
    atomic_fetch_add(&s->m.deleted_vertices, removed);
    store_delete(st, DEC_MERGELOGS, ex.ml.v, ex.ml.n);
    store_delete(st, DEC_SPANS, ex.sp.v, ex.sp.n);
    ripple_log(RIPPLE_LOG_INFO, "retention", "vertices_removed=%zu mergelogs=%zu spans=%zu",
               removed, ex.ml.n, ex.sp.n);
  }
  free(ex.ml.v);
  free(ex.sp.v);
}

/* ---- lifecycle ---------------------------------------------------------------- */

/* From the detector's thread (and at start-up): the read lock per call, so
 * the writer waits for one walk at most. The detector's mutex is held: the
 * order is always stalls' mu, then the core's lock (stalls.h). */
static int stall_related(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  srv_t *s = ud;
  pthread_rwlock_rdlock(&s->core.lock);
  int r = graph_descends(s->core.g, anc, desc);
  pthread_rwlock_unlock(&s->core.lock);
  return r;
}

/* The details' database: its own file beside the records' ("<db>.details"),
 * under the same retention by age. */
static int open_details(srv_t *s, char *err, size_t errcap) {
  const char *path = s->cfg.details_path;
  if (!path) {
    size_t n = strlen(s->cfg.db_path) + sizeof ".details";
    if (!(s->details_path = malloc(n))) return RIPPLE_ENOMEM;
    snprintf(s->details_path, n, "%s.details", s->cfg.db_path);
    path = s->details_path;
  }
  facts_opts_t fo = {path, s->cfg.sync_full, s->cfg.details_queue, s->cfg.max_age_ns,
                     s->cfg.details_max_rows};
  return facts_open(&fo, &s->core.facts, err, errcap);
}

/* What the graph and its indexes hold; the caller holds the lock (or is alone). */
static size_t index_memory(const srv_t *s) {
  return graph_memory(s->core.g) + roots_memory(s->core.roots) + objects_memory(s->core.objects);
}

/* srv_on_commit as the exporter's source wants it (export.h). */
static void export_subscribe(void *owner, exp_commit_fn fn, void *ud) {
  srv_on_commit(owner, fn, ud);
}

const exp_source_t *srv_export_source(srv_t *s) {
  s->export_src.store = s->core.store; /* opened after the rest (srv_open) */
  return &s->export_src;
}

int srv_cpid_live(void *ud, const ripple_cpid_t *cpid) {
  const srv_t *s = ud;
  return graph_find(s->core.g, cpid) != 0;
}

int srv_open(srv_t *s, const srv_config_t *cfg, char *err, size_t errcap) {
  memset(s, 0, sizeof *s);
  s->cfg = *cfg;
  /* The subsystems below get the parts of the state they use, never s. */
  s->details.core = s->stalls.core = &s->core;
  s->details.limits = cfg->limits;
  s->details.query_limit = cfg->query_limit;
  s->export_src = (exp_source_t){NULL, export_subscribe, s};
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
  /* Queries arrive all the time; the writer must not starve behind them. */
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&s->core.lock, &a);
  pthread_rwlockattr_destroy(&a);
  pthread_mutex_init(&s->stalls.mu, NULL);
  if (graph_new(&s->core.g) != RIPPLE_OK || roots_new(&s->core.roots) != RIPPLE_OK ||
      objects_new(&s->core.objects) != RIPPLE_OK) {
    graph_free(s->core.g);
    roots_free(s->core.roots);
    s->core.g = NULL;
    s->core.roots = NULL;
    snprintf(err, errcap, "out of memory");
    return RIPPLE_ENOMEM;
  }
  int rc = open_details(s, err, errcap);
  if (rc == RIPPLE_OK && !cfg->fights_off &&
      (rc = fights_new(&cfg->fights, &s->fights)) != RIPPLE_OK)
    snprintf(err, errcap, "cannot start the field-fight detector: %s", ripple_strerror(rc));
  s->details.fights = s->fights;
  if (rc == RIPPLE_OK && (rc = tdet_start(&s->details)) != RIPPLE_OK)
    snprintf(err, errcap, "cannot start the details' thread");
  if (rc == RIPPLE_OK && !cfg->stall_off &&
      (rc = stall_new(&cfg->stall, stall_related, s, &s->stalls.stall)) != RIPPLE_OK)
    snprintf(err, errcap, "cannot start the stall detector: %s", ripple_strerror(rc));
  if (rc == RIPPLE_OK) rc = store_open(cfg->db_path, cfg->sync_full, &s->core.store, err, errcap);
  if (rc != RIPPLE_OK) goto fail;
  int64_t t0 = ripple_now_ns();
  loading_t l = {s, {0}};
  store_loader_t loader = {load_mergelog, load_span, &l};
  if ((rc = store_load(s->core.store, &loader)) != RIPPLE_OK ||
      (rc = store_load_roots(s->core.store, load_root, &l)) != RIPPLE_OK) {
    free(l.dups.v);
    snprintf(err, errcap, "cannot read %s to rebuild the merge graph", cfg->db_path);
    goto fail;
  }
  ripple_log(RIPPLE_LOG_INFO, "graph_rebuilt",
             "vertices=%zu edges=%zu spans=%zu roots=%zu objects=%zu memory_bytes=%zu ms=%.1f",
             graph_vertices(s->core.g), graph_edges(s->core.g), graph_spans(s->core.g),
             roots_count(s->core.roots), objects_count(s->core.objects), index_memory(s),
             (double)(ripple_now_ns() - t0) / 1e6);
  drop_duplicates(s, &l.dups);
  if ((rc = stalls_start(&s->stalls, cfg->stall_queue_bytes)) != RIPPLE_OK) {
    snprintf(err, errcap, "cannot start the stall detector's thread");
    goto fail;
  }
  store_hooks_t hooks = {committed, tick, s, 1000};
  if ((rc = store_start(s->core.store, &hooks)) != RIPPLE_OK) {
    snprintf(err, errcap, "cannot start the writer thread");
    goto fail;
  }
  atomic_store(&s->ready, 1);
  return RIPPLE_OK;
fail:
  if (s->core.store) store_close(s->core.store);
  stalls_stop(&s->stalls);
  tdet_stop(&s->details);
  facts_close(s->core.facts);
  stall_free(s->stalls.stall);
  fights_free(s->fights);
  pthread_mutex_destroy(&s->stalls.mu);
  free(s->details_path);
  graph_free(s->core.g);
  roots_free(s->core.roots);
  objects_free(s->core.objects);
  pthread_rwlock_destroy(&s->core.lock);
  return rc;
}

void srv_close(srv_t *s) {
  atomic_store(&s->ready, 0);
  store_close(s->core.store); /* finishes the group being written */
  stalls_stop(&s->stalls);    /* then nothing feeds the detector */
  tdet_stop(&s->details);
  facts_close(s->core.facts);
  stall_free(s->stalls.stall);
  fights_free(s->fights);
  pthread_mutex_destroy(&s->stalls.mu);
  free(s->details_path);
  graph_free(s->core.g);
  roots_free(s->core.roots);
  objects_free(s->core.objects);
  pthread_rwlock_destroy(&s->core.lock);
}

/* ---- ingest ------------------------------------------------------------------- */

/* A decoded batch stored (freed either way); the answer's status. */
static int ingest_batch(srv_t *s, dec_batch_t *b, size_t *accepted, dec_error_t *err) {
  int rc = store_write(s->core.store, b);
  *accepted = b->n;
  if (rc == RIPPLE_OK && b->dups) atomic_fetch_add(&s->m.duplicate_mergelogs, b->dups);
  dec_batch_free(b);
  if (rc != RIPPLE_OK) {
    snprintf(err->msg, sizeof err->msg,
             "storage failed; nothing of this request was stored, retry later");
    err->index = -1;
    return 503;
  }
  return 200;
}

int srv_ingest(srv_t *s, dec_kind_t kind, const char *body, size_t len, size_t *accepted,
               dec_error_t *err) {
  dec_batch_t b;
  *accepted = 0;
  int rc = dec_decode(kind, body, len, &s->cfg.limits, &b, err);
  if (rc == RIPPLE_ENOMEM) return 503;
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&s->m.rejected[kind == DEC_MERGELOGS ? 0 : 1], 1);
    return rc == RIPPLE_ERANGE ? 413 : 400;
  }
  return ingest_batch(s, &b, accepted, err);
}

static int otlp_known(void *ud, const ripple_cpid_t *cpid) {
  srv_t *s = ud;
  pthread_rwlock_rdlock(&s->core.lock);
  int known = graph_find(s->core.g, cpid) != 0;
  pthread_rwlock_unlock(&s->core.lock);
  return known;
}

int srv_ingest_otlp(srv_t *s, int json, const char *body, size_t len, sbuf_t *answer,
                    dec_error_t *err) {
  otlp_recv_t r = {.lim = &s->cfg.limits, .known = otlp_known, .ud = s};
  otlp_encoding_t enc = json ? OTLP_JSON : OTLP_PROTOBUF;
  otlp_result_t res;
  dec_batch_t b;
  /* Straight into records, through the checks POST /v1/spans uses. */
  int rc = otlp_receive_batch(enc, body, len, &r, &b, &res, err);
  int status = 200;
  if (rc != RIPPLE_OK) {
    status = rc == RIPPLE_ENOMEM || rc == RIPPLE_ERANGE ? 413 : 400;
    atomic_fetch_add(&s->m.rejected[1], 1);
    if (rc == RIPPLE_EINVAL) /* a converted span the checks refuse is a bug here: say so */
      ripple_log(RIPPLE_LOG_ERROR, "otlp_conversion_refused", "index=%ld field=%s", err->index,
                 err->field);
  } else if (res.accepted) {
    size_t stored;
    status = ingest_batch(s, &b, &stored, err);
  } else {
    dec_batch_free(&b);
  }
  if (status != 200) return status;
  atomic_fetch_add(&s->otlp_spans[0], res.accepted);
  atomic_fetch_add(&s->otlp_spans[1], res.rejected);
  otlp_response(enc, &res, answer);
  return 200;
}

/* ---- queries ------------------------------------------------------------------ */

static void push_span_seq(void *ud, uint64_t seq) { seqvec_push(ud, seq); }

/* Gather what the query needs under the read lock; read bodies after it. */
static int query_related(srv_t *s, query_t q, const ripple_cpid_t *cpid, graph_scope_t scope,
                         size_t limit, sbuf_t *o) {
  vid_t *vs;
  size_t n;
  int truncated;
  seqvec_t rows = {0};
  pthread_rwlock_rdlock(&s->core.lock);
  int rc = graph_cascade(s->core.g, cpid, scope, limit, &vs, &n, &truncated);
  if (rc != RIPPLE_OK) {
    pthread_rwlock_unlock(&s->core.lock);
    return rc == RIPPLE_ENOENT ? 404 : 503;
  }
  const char *key = q == Q_RELATED ? "related" : q == Q_MERGELOGS ? "mergelogs" : "spans";
  sbuf_puts(o, "{\"cpid\":");
  wire_cpid(o, cpid);
  sbuf_printf(o, ",\"scope\":\"%s\",\"truncated\":%s,\"%s\":[",
              scope == GRAPH_OWN ? "own" : "reachable", truncated ? "true" : "false", key);
  for (size_t i = 0; i < n; i++) {
    if (q == Q_RELATED) {
      if (i) sbuf_putc(o, ',');
      wire_cpid(o, graph_cpid(s->core.g, vs[i]));
    } else if (q == Q_MERGELOGS) {
      uint64_t seq = graph_mergelog_seq(s->core.g, vs[i]);
      if (seq) seqvec_push(&rows, seq);
    } else {
      graph_span_seqs(s->core.g, vs[i], push_span_seq, &rows);
    }
  }
  pthread_rwlock_unlock(&s->core.lock);
  free(vs);
  if (q != Q_RELATED) {
    int first = 1;
    rc = store_bodies(s->core.store, q == Q_MERGELOGS ? DEC_MERGELOGS : DEC_SPANS, rows.v, rows.n,
                      o, &first);
  }
  free(rows.v);
  sbuf_puts(o, "]}");
  return rc == RIPPLE_OK ? 200 : 503;
}

static int query_origins(srv_t *s, const ripple_cpid_t *cpid, size_t limit, sbuf_t *o) {
  graph_origin_t *org;
  size_t n;
  int truncated;
  pthread_rwlock_rdlock(&s->core.lock);
  int rc = graph_origins(s->core.g, cpid, limit, &org, &n, &truncated);
  if (rc == RIPPLE_OK) {
    sbuf_puts(o, "{\"cpid\":");
    wire_cpid(o, cpid);
    sbuf_printf(o, ",\"truncated\":%s,\"origins\":[", truncated ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
      if (i) sbuf_putc(o, ',');
      wire_cpid(o, graph_cpid(s->core.g, org[i].path[0]));
    }
    sbuf_puts(o, "],\"paths\":[");
    for (size_t i = 0; i < n; i++) {
      sbuf_puts(o, i ? ",[" : "[");
      for (size_t k = 0; k < org[i].len; k++) {
        if (k) sbuf_putc(o, ',');
        wire_cpid(o, graph_cpid(s->core.g, org[i].path[k]));
      }
      sbuf_putc(o, ']');
    }
    sbuf_puts(o, "]}");
    graph_origins_free(org, n);
  }
  pthread_rwlock_unlock(&s->core.lock);
  return rc == RIPPLE_OK ? 200 : rc == RIPPLE_ENOENT ? 404 : 503;
}

int srv_query(srv_t *s, query_t q, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
              sbuf_t *out) {
  if (!limit || limit > s->cfg.query_limit) limit = s->cfg.query_limit;
  return q == Q_ORIGINS ? query_origins(s, cpid, limit, out)
                        : query_related(s, q, cpid, scope, limit, out);
}

int srv_roots(srv_t *s, const char *uid, size_t limit, sbuf_t *out) {
  uint64_t seqs[100];
  if (limit > sizeof seqs / sizeof *seqs) limit = sizeof seqs / sizeof *seqs;
  pthread_rwlock_rdlock(&s->core.lock);
  long n = roots_find(s->core.roots, uid, root_live, s, seqs, limit);
  pthread_rwlock_unlock(&s->core.lock);
  if (n < 0) return 503;
  int first = 1;
  sbuf_puts(out, "{\"roots\":[");
  int rc = store_bodies(s->core.store, DEC_MERGELOGS, seqs, (size_t)n, out, &first);
  sbuf_puts(out, "]}");
  return rc == RIPPLE_OK ? 200 : 503;
}

int srv_list(srv_t *s, dec_kind_t kind, int64_t since, int64_t until, const char *cursor,
             size_t limit, sbuf_t *out, char *err, size_t errcap) {
  /* Start after (since - 1, any row): the first page includes `since`. */
  int64_t at = since == INT64_MIN ? INT64_MIN : since - 1, aseq = INT64_MAX;
  if (cursor && *cursor && page_cursor_parse(cursor, &at, &aseq) != RIPPLE_OK) {
    snprintf(err, errcap, "cursor '%.64s' is not one this server handed out", cursor);
    return 400;
  }
  const char *key = kind == DEC_MERGELOGS ? "mergelogs" : "spans";
  size_t count;
  int more;
  int64_t nt = 0, ns = 0;
  sbuf_printf(out, "{\"%s\":[", key);
  int rc = store_page(s->core.store, kind, at, aseq, until, limit, out, &count, &more, &nt, &ns);
  if (rc != RIPPLE_OK) return 503;
  page_end(out, more, nt, ns);
  return 200;
}

static void details_metrics(srv_t *s, sbuf_t *out) {
  facts_stats_t fs;
  facts_stats(s->core.facts, &fs);
  prom_family(out, "ripple_details_stored_total", "counter",
              "Details stored, by type: changes and Events (POST /v1/details), audit events "
              "(POST /v1/audit).");
  static const char *const types[] = {"type=\"change\"", "type=\"event\"", "type=\"audit\""};
  for (int i = 0; i < 3; i++)
    prom_sample_u(out, "ripple_details_stored_total", types[i],
                  atomic_load(&s->details.details_stored[i]));
  prom_counter(out, "ripple_details_refused_requests_total",
               "Details and audit requests refused as malformed or too large.",
               atomic_load(&s->details.details_refused));
  prom_counter(out, "ripple_details_busy_total",
               "Details requests refused with 429: the parser's queue (256 MiB of bodies) or "
               "the writer's (--details-queue) was full, or behind by seconds.",
               fs.refused_busy + atomic_load(&s->details.details_busy));
  prom_gauge(out, "ripple_details_queued", "Details waiting to be written.", (double)fs.queued);
  prom_counter(out, "ripple_details_late_requests_total",
               "Details requests that waited 1 s for the details' parser and were taken over by "
               "their own connection's thread (within a 5% share of a core).",
               atomic_load(&s->details.details_late));
  size_t preq, pbytes;
  tdet_pending(&s->details, &preq, &pbytes);
  prom_gauge(out, "ripple_details_pending_requests",
             "Details and audit requests waiting for, or in, the details' parser.", (double)preq);
  prom_gauge(out, "ripple_details_pending_bytes",
             "Their bodies' bytes (at most 256 MiB; more get 429).", (double)pbytes);
  prom_family(out, "ripple_details_lag_seconds", "histogram",
              "From when a detail's request was queued to the commit of its transaction, one "
              "observation per detail.");
  prom_histogram(out, "ripple_details_lag_seconds", "",
                 &(prom_hist_t){.bounds = facts_lag_bounds,
                                .nbounds = FACTS_LAG_BUCKETS,
                                .counts = fs.lag_counts,
                                .sum = fs.lag_sum,
                                .count = fs.lag_count});
  prom_counter(out, "ripple_details_write_errors_total", "Failed details transactions.",
               fs.write_errors);
  prom_counter(out, "ripple_details_expired_total", "Details deleted by retention.", fs.expired);
  prom_family(out, "ripple_audit_events_ignored_total", "counter",
              "Audit events not stored: skipped (not a completed write) or malformed.");
  prom_sample_u(out, "ripple_audit_events_ignored_total", "reason=\"skipped\"",
                atomic_load(&s->details.audit_skipped));
  prom_sample_u(out, "ripple_audit_events_ignored_total", "reason=\"malformed\"",
                atomic_load(&s->details.audit_malformed));
}

void srv_metrics(srv_t *s, uint64_t connections, sbuf_t *out) {
  metrics_gauges_t g = {0};
  pthread_rwlock_rdlock(&s->core.lock);
  g.vertices = graph_vertices(s->core.g);
  g.edges = graph_edges(s->core.g);
  g.spans = graph_spans(s->core.g);
  g.graph_bytes = index_memory(s);
  g.objects = objects_count(s->core.objects);
  g.objects_refused = objects_refused(s->core.objects);
  pthread_rwlock_unlock(&s->core.lock);
  store_stats_t st;
  store_stats(s->core.store, &st);
  g.storage_bytes = store_size_bytes(s->core.store);
  g.commit_groups = st.groups;
  g.rows_deleted = st.rows_deleted;
  g.write_errors = st.write_errors;
  g.connections = connections;
  metrics_write(&s->m, &g, out);
  prom_family(out, "ripple_otlp_received_spans_total", "counter",
              "Spans received on POST /v1/traces, by result: accepted (joined a CPID's trace) "
              "or rejected (no CPID of this server's).");
  prom_sample_u(out, "ripple_otlp_received_spans_total", "result=\"accepted\"",
                atomic_load(&s->otlp_spans[0]));
  prom_sample_u(out, "ripple_otlp_received_spans_total", "result=\"rejected\"",
                atomic_load(&s->otlp_spans[1]));
  details_metrics(s, out);
  stalls_metrics(&s->stalls, out);
  if (s->fights)
    prom_counter(out, "ripple_field_fights_total",
                 "Field fights flagged: two writers setting one field of one object back and "
                 "forth, once per episode (GET /v1/fights).",
                 fights_total(s->fights));
}
