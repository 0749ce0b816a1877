/*
 * trace_details.c - the server's side of details (trace_details.h):
 * storing what POST /v1/details and POST /v1/audit bring, and answering
 * GET /v1/cpids/{cpid}/details by joining facts to the cascade's spans.
 *
 * The joins, strictest first; a fact joins at most one span, and a fact that
 * joins nothing is shown only when it is known to belong to the cascade:
 *  - audit event to span: the span id the webhook put in the audit event's
 *    annotations (exact);
 *  - change to span: the object's uid and the resourceVersion the write
 *    started from (the span's resourceVersion attribute, the change's
 *    previousResourceVersion; a binding, a create of a subresource, updates
 *    its Pod from the version it names); else the version the audit event
 *    says was written; a create by its CPID, kind, namespace and name when exactly one
 *    span fits; a delete by uid;
 *  - changes that join no span are listed when the object's own CPID is one
 *    of the cascade's (a Pod created by generateName, named after admission);
 *  - audit events with no span id (writes the webhook never saw: refused
 *    before admission, excluded namespaces, a webhook that failed open) about
 *    the cascade's objects, in its time window, are listed as such;
 *  - Events whose involved object is one of the cascade's (by uid), in its
 *    time window, newest version of each Event only.
 */
#include "analysis/trace_details.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/details.h"
#include "analysis/fights_feed.h"
#include "graph/keytab.h"
#include "ripplex/clock.h"
#include "ripplex/cpid.h"
#include "ripplex/idle.h"
#include "ripplex/wire.h"

/* Events and audit events that come after the cascade's last write still
 * belong to it for this long (a Pod that cannot be scheduled gets its
 * FailedScheduling Events long after its create). */
#define WINDOW_AFTER_NS (10 * 60 * 1000000000LL)
#define WINDOW_BEFORE_NS (60 * 1000000000LL)
/* Facts read for one answer, at most. */
#define FACTS_MAX 100000

/* ---- ingest ---------------------------------------------------------------- */

static int put_batch(tdet_t *s, det_batch_t *b, int64_t since, dec_error_t *err) {
  int rc = facts_put_since(s->core->facts, b->v, b->n, since);
  if (rc == RIPPLE_OK) return 200;
  if (rc == RIPPLE_EFULL) {
    snprintf(err->msg, sizeof err->msg,
             "the details queue is full (--details-queue) or behind by seconds; retry later");
    return 429;
  }
  snprintf(err->msg, sizeof err->msg, "storing details failed; retry later");
  return 503;
}

static int ingest_details(tdet_t *s, const char *body, size_t len, int64_t since, size_t *accepted,
                          dec_error_t *err) {
  det_batch_t b;
  *accepted = 0;
  int rc = det_decode(body, len, &s->limits, &b, err);
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&s->details_refused, 1);
    return rc == RIPPLE_ENOMEM ? 503 : rc == RIPPLE_ERANGE ? 413 : 400;
  }
  int status = put_batch(s, &b, since, err);
  if (status == 200) {
    *accepted = b.n;
    for (size_t i = 0; i < b.n; i++)
      atomic_fetch_add(&s->details_stored[b.v[i].type == FACT_CHANGE ? 0 : 1], 1);
    fights_feed_facts(s->fights, &b); /* once stored: a refused batch comes again */
  }
  det_batch_free(&b);
  return status;
}

static int ingest_audit(tdet_t *s, const char *body, size_t len, int64_t since, size_t *accepted,
                        dec_error_t *err) {
  audit_batch_t a;
  det_batch_t b;
  *accepted = 0;
  int rc = audit_parse(body, len, s->limits.max_records, &a, err->msg, sizeof err->msg);
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&s->details_refused, 1);
    return rc == RIPPLE_ENOMEM ? 503 : rc == RIPPLE_ERANGE ? 413 : 400;
  }
  atomic_fetch_add(&s->audit_skipped, a.skipped);
  atomic_fetch_add(&s->audit_malformed, a.malformed);
  int status = 503;
  if (det_from_audit(&a, &b) == RIPPLE_OK) {
    status = put_batch(s, &b, since, err);
    if (status == 200) {
      *accepted = b.n;
      atomic_fetch_add(&s->details_stored[2], b.n);
    }
    det_batch_free(&b);
  } else {
    snprintf(err->msg, sizeof err->msg, "out of memory; retry later");
  }
  audit_batch_free(&a);
  return status;
}

/* ---- the details' worker --------------------------------------------------------
 *
 * Details are parsed and stored by one thread at a background priority
 * (nice +15, ripplex/idle.h), not by the connection's thread: a flood of
 * audit events then takes a small share of the CPU beside ingest of
 * mergelogs and spans, never all of it, and is never starved. Requests
 * wait for it in a queue bounded by bytes; past the bound they are refused at
 * once with 429 (kube-apiserver's batch backend and the shipper retry). */

#define DWORK_MAX_BYTES ((size_t)256 << 20)

/* On a core saturated by ingest, nice +15 alone gets a few percent and the
 * details' lag grows up to the queue's bound (docs/benchmarks.md, "Issue 28:
 * details lag"). So a request that waited DWORK_LATE_NS for the worker is
 * parsed by its own connection's thread, at the connection's priority, while
 * a budget of CPU time lasts: DWORK_SHARE_MS of every second of a core, at
 * most DWORK_BURST_NS at once. Late details get that share for sure, and
 * ingest loses at most that share to them. */
#define DWORK_LATE_NS 1000000000LL
/* A queue whose oldest request has waited this long is behind: new requests
 * are refused (429) rather than queued behind it, so what is accepted is
 * stored within seconds (the details' lag is bounded by time, not only by
 * the queue's bytes) and a flood costs ingest no more than the details'
 * share of the CPU. */
#define DWORK_BEHIND_NS 2000000000LL
#define DWORK_RETRY_NS 100000000LL /* budget spent: look again this much later */
#define DWORK_SHARE_MS 50
#define DWORK_BURST_NS 250000000LL

typedef struct djob {
  int audit;
  const char *body;
  size_t len, accepted;
  int64_t since; /* mono_ns: when it was queued, where the details' lag starts */
  dec_error_t *err;
  int status, done;
  struct djob *next;
} djob_t;

struct dwork {
  tdet_t *s;
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  djob_t *head, *tail;
  size_t bytes, jobs;           /* bodies queued or being parsed */
  int64_t budget_ns, budget_at; /* late requests' CPU budget, refilled at budget_at */
  int stop, started;
  pthread_t thread;
};

static void run_job(tdet_t *s, djob_t *j) {
  j->status = j->audit ? ingest_audit(s, j->body, j->len, j->since, &j->accepted, j->err)
                       : ingest_details(s, j->body, j->len, j->since, &j->accepted, j->err);
}

static void *dwork_run(void *arg) {
  dwork_t *w = arg;
  if (!idle_enter()) ripple_log(RIPPLE_LOG_INFO, "details_priority", "nice=no");
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->head && !w->stop) pthread_cond_wait(&w->work, &w->mu);
    djob_t *j = w->head;
    if (!j) break; /* stopping, nothing left */
    w->head = j->next;
    if (!w->head) w->tail = NULL;
    pthread_mutex_unlock(&w->mu);
    run_job(w->s, j);
    pthread_mutex_lock(&w->mu);
    w->bytes -= j->len;
    w->jobs--;
    j->done = 1;
    pthread_cond_broadcast(&w->done);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int tdet_start(tdet_t *s) {
  dwork_t *w = calloc(1, sizeof *w);
  if (!w) return RIPPLE_ENOMEM;
  w->s = s;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->work, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* submit waits until a mono_ns() time */
  pthread_cond_init(&w->done, &ca);
  pthread_condattr_destroy(&ca);
  w->budget_ns = DWORK_BURST_NS;
  w->budget_at = mono_ns();
  if (pthread_create(&w->thread, NULL, dwork_run, w) != 0) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w);
    return RIPPLE_ESYS;
  }
  s->dwork = w;
  return RIPPLE_OK;
}

void tdet_stop(tdet_t *s) {
  dwork_t *w = s->dwork;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->work);
  pthread_cond_destroy(&w->done);
  free(w);
  s->dwork = NULL;
}

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Under mu: refill the late requests' budget; 1 when some is left. */
static int budget_left(dwork_t *w, int64_t now) {
  w->budget_ns += (now - w->budget_at) / 1000 * DWORK_SHARE_MS;
  if (w->budget_ns > DWORK_BURST_NS) w->budget_ns = DWORK_BURST_NS;
  w->budget_at = now;
  return w->budget_ns > 0;
}

/* Under mu: take j out of the queue; 0 when the worker already has. */
static int unqueue(dwork_t *w, djob_t *j) {
  djob_t *prev = NULL;
  for (djob_t *q = w->head; q; prev = q, q = q->next) {
    if (q != j) continue;
    if (prev)
      prev->next = j->next;
    else
      w->head = j->next;
    if (w->tail == j) w->tail = prev;
    return 1;
  }
  return 0;
}

/* Under mu, j queued: wait for the worker, or once j is late and the budget
 * allows, parse it on this thread (see DWORK_LATE_NS). */
static void await_job(dwork_t *w, djob_t *j) {
  int64_t at = j->since + DWORK_LATE_NS;
  int queued = 1;
  while (!j->done) {
    int64_t now = mono_ns();
    if (queued && now >= at) {
      if (budget_left(w, now) && (queued = unqueue(w, j))) {
        atomic_fetch_add(&w->s->details_late, 1);
        pthread_mutex_unlock(&w->mu);
        int64_t cpu = thread_cpu_ns();
        run_job(w->s, j);
        cpu = thread_cpu_ns() - cpu;
        pthread_mutex_lock(&w->mu);
        w->budget_ns -= cpu;
        w->bytes -= j->len;
        w->jobs--;
        j->done = 1;
        return;
      }
      at = now + DWORK_RETRY_NS;
    }
    if (!queued) {
      pthread_cond_wait(&w->done, &w->mu);
      continue;
    }
    struct timespec ts = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
    pthread_cond_timedwait(&w->done, &w->mu, &ts);
  }
}

static int submit(tdet_t *s, int audit, const char *body, size_t len, size_t *accepted,
                  dec_error_t *err) {
  dwork_t *w = s->dwork;
  djob_t j = {audit, body, len, 0, mono_ns(), err, 503, 0, NULL};
  *accepted = 0;
  pthread_mutex_lock(&w->mu);
  int behind = w->head && j.since - w->head->since > DWORK_BEHIND_NS;
  if (w->stop || behind || (w->bytes && w->bytes + len > DWORK_MAX_BYTES)) {
    int stopping = w->stop;
    pthread_mutex_unlock(&w->mu);
    if (!stopping) atomic_fetch_add(&s->details_busy, 1);
    snprintf(err->msg, sizeof err->msg, "%s",
             stopping ? "the server is stopping"
             : behind ? "the details are behind by more than 2 s; retry later"
                      : "too many details are waiting; retry later");
    return stopping ? 503 : 429;
  }
  w->bytes += len;
  w->jobs++;
  /* The job lives on this stack: this thread waits below until the worker
   * (or this thread) marked it done, and it leaves the queue before that. */
  if (w->tail)
    w->tail->next = &j;
  else
    w->head = &j; /* cppcheck-suppress autoVariables */
  w->tail = &j;   /* cppcheck-suppress autoVariables */
  pthread_cond_signal(&w->work);
  await_job(w, &j);
  pthread_mutex_unlock(&w->mu);
  *accepted = j.accepted;
  return j.status;
}

void tdet_pending(tdet_t *s, size_t *requests, size_t *bytes) {
  dwork_t *w = s->dwork;
  *requests = *bytes = 0;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  *requests = w->jobs;
  *bytes = w->bytes;
  pthread_mutex_unlock(&w->mu);
}

int tdet_ingest(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err) {
  return submit(s, 0, body, len, accepted, err);
}

int tdet_ingest_audit(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err) {
  return submit(s, 1, body, len, accepted, err);
}

/* ---- the cascade's spans ------------------------------------------------------ */

typedef struct dspan {
  json_t *rec; /* borrowed from the spans array */
  const char *span_id, *cpid, *uid, *rv, *kind, *ns, *name, *op, *sub;
  json_t *change, *audit; /* joined facts (new references) */
} dspan_t;

typedef struct dq {
  dspan_t *sp;
  size_t nsp;
  json_t *spans;                       /* the span records */
  keytab_t by_span, uids, cpids, objs; /* span id -> dspan; sets */
  json_t *facts;                       /* every fact read, parsed */
  keytab_t seen;                       /* facts read, by seq */
  int64_t since, until;
  int truncated, oom;
} dq_t;

static void seqs_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 256;
    uint64_t *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return;
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = x;
}

typedef struct seqs {
  uint64_t *v;
  size_t n, cap;
} seqs_t;
static void push_seq(void *ud, uint64_t seq) {
  seqs_t *s = ud;
  seqs_push(&s->v, &s->n, &s->cap, seq);
}

static void set_add(dq_t *q, keytab_t *t, const char *k) {
  keytab_slot_t *slot;
  if (k && *k && keytab_put(t, k, strlen(k), &slot) != RIPPLE_OK) q->oom = 1;
}

static const char *attr(const json_t *rec, const char *k) {
  const char *v = json_string_value(json_object_get(json_object_get(rec, "attributes"), k));
  return v ? v : "";
}

static int index_spans(tdet_t *s, const seqs_t *rows, const keytab_t *keep, dq_t *q);

/* The related CPIDs' spans, read and indexed. Returns an HTTP status. */
static int load_spans(tdet_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                      dq_t *q) {
  vid_t *vs;
  size_t n;
  seqs_t rows = {0};
  pthread_rwlock_rdlock(&s->core->lock);
  int rc = graph_cascade(s->core->g, cpid, scope, limit, &vs, &n, &q->truncated);
  if (rc != RIPPLE_OK) {
    pthread_rwlock_unlock(&s->core->lock);
    return rc == RIPPLE_ENOENT ? 404 : 503;
  }
  for (size_t i = 0; i < n; i++) {
    char t[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(graph_cpid(s->core->g, vs[i]), t);
    set_add(q, &q->cpids, t);
    graph_span_seqs(s->core->g, vs[i], push_seq, &rows);
  }
  pthread_rwlock_unlock(&s->core->lock);
  free(vs);
  rc = index_spans(s, &rows, NULL, q);
  free(rows.v);
  return rc;
}

/* The spans of rows, read and indexed: those whose span id keep holds (NULL:
 * all). Returns an HTTP status. */
static int index_spans(tdet_t *s, const seqs_t *rows, const keytab_t *keep, dq_t *q) {
  sbuf_t b;
  sbuf_init(&b);
  int first = 1;
  sbuf_putc(&b, '[');
  int rc = store_bodies(s->core->store, DEC_SPANS, rows->v, rows->n, &b, &first);
  sbuf_putc(&b, ']');
  q->spans = rc == RIPPLE_OK && !b.oom ? json_loadb(b.p, b.len, 0, NULL) : NULL;
  sbuf_free(&b);
  if (!q->spans) return 503;
  for (size_t i = json_array_size(q->spans); keep && i-- > 0;) {
    const char *id = json_string_value(json_object_get(json_array_get(q->spans, i), "span_id"));
    if (!id || !keytab_get(keep, id, strlen(id))) json_array_remove(q->spans, i);
  }
  q->nsp = json_array_size(q->spans);
  q->sp = calloc(q->nsp ? q->nsp : 1, sizeof *q->sp);
  if (!q->sp) return 503;
  q->since = INT64_MAX, q->until = INT64_MIN;
  for (size_t i = 0; i < q->nsp; i++) {
    json_t *r = json_array_get(q->spans, i);
    dspan_t *d = &q->sp[i];
    *d = (dspan_t){r,
                   json_string_value(json_object_get(r, "span_id")),
                   json_string_value(json_object_get(r, "cpid")),
                   attr(r, "uid"),
                   attr(r, "resourceVersion"),
                   attr(r, "kind"),
                   attr(r, "namespace"),
                   attr(r, "name"),
                   attr(r, "operation"),
                   attr(r, "subresource"),
                   NULL,
                   NULL};
    int64_t t0, t1;
    const char *st = json_string_value(json_object_get(r, "start"));
    const char *en = json_string_value(json_object_get(r, "end"));
    if (st && ripple_time_parse(st, strlen(st), &t0) == RIPPLE_OK && t0 < q->since) q->since = t0;
    if (en && ripple_time_parse(en, strlen(en), &t1) == RIPPLE_OK && t1 > q->until) q->until = t1;
    keytab_slot_t *slot;
    if (d->span_id && keytab_put(&q->by_span, d->span_id, strlen(d->span_id), &slot) == RIPPLE_OK)
      slot->val = d;
    set_add(q, &q->uids, d->uid);
    if (*d->name) {
      char o[600];
      snprintf(o, sizeof o, "%s/%s", d->ns, d->name);
      set_add(q, &q->objs, o);
    }
  }
  if (q->since > q->until) q->since = q->until = 0;
  q->since -= WINDOW_BEFORE_NS;
  q->until += WINDOW_AFTER_NS;
  return 200;
}

/* ---- facts --------------------------------------------------------------------- */

typedef struct dfact {
  fact_type_t type;
  int64_t time;
  char *k[9]; /* uid, kind, ns, name, rv, prev_rv, span_id, cpid, op (copies, "" absent) */
  json_t *body;
  int used; /* joined to a span */
} dfact_t;
enum { K_UID, K_KIND, K_NS, K_NAME, K_RV, K_PREV, K_SPAN, K_CPID, K_OP };

typedef struct dfacts {
  dfact_t *v;
  size_t n, cap;
  keytab_t seen; /* by seq */
  int oom;
} dfacts_t;

static int take_fact(void *ud, uint64_t seq, const fact_t *f) {
  dfacts_t *a = ud;
  keytab_slot_t *slot;
  if (keytab_get(&a->seen, (const char *)&seq, sizeof seq)) return 0;
  if (keytab_put(&a->seen, (const char *)&seq, sizeof seq, &slot) != RIPPLE_OK) return a->oom = 1;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    dfact_t *nv = realloc(a->v, cap * sizeof *nv);
    if (!nv) return a->oom = 1;
    a->v = nv;
    a->cap = cap;
  }
  dfact_t *d = &a->v[a->n];
  *d = (dfact_t){f->type, f->time, {0}, json_loadb(f->body, f->body_len, 0, NULL), 0};
  const char *k[9] = {f->uid,     f->kind,    f->ns,   f->name, f->rv,
                      f->prev_rv, f->span_id, f->cpid, f->op};
  for (int i = 0; i < 9; i++) d->k[i] = strdup(k[i] ? k[i] : "");
  for (int i = 0; i < 9; i++)
    if (!d->k[i]) a->oom = 1;
  if (!d->body) a->oom = 1;
  a->n++;
  return a->oom;
}

static void dfacts_free(dfacts_t *a) {
  for (size_t i = 0; i < a->n; i++) {
    for (int k = 0; k < 9; k++) free(a->v[i].k[k]);
    json_decref(a->v[i].body);
  }
  free(a->v);
  keytab_free(&a->seen, NULL);
}

/* The keys of a set, borrowed from it. */
static const char **keys_of(const keytab_t *t, size_t *n) {
  const char **k = malloc((t->n ? t->n : 1) * sizeof *k);
  *n = 0;
  for (size_t i = 0; k && t->slot && i <= t->mask; i++)
    if (t->slot[i].key) k[(*n)++] = t->slot[i].key;
  return k;
}

/* One lookup with whatever sets are given (NULL: none). */
static int lookup(tdet_t *s, dq_t *q, const keytab_t *spans, const keytab_t *uids,
                  const keytab_t *cpids, const keytab_t *objs, dfacts_t *out) {
  facts_query_t fq = {.since = q->since, .until = q->until, .limit = FACTS_MAX};
  const char **a = spans ? keys_of(spans, &fq.nspan_ids) : NULL;
  const char **b = uids ? keys_of(uids, &fq.nuids) : NULL;
  const char **c = cpids ? keys_of(cpids, &fq.ncpids) : NULL;
  const char **d = objs ? keys_of(objs, &fq.nobjects) : NULL;
  fq.span_ids = a, fq.uids = b, fq.cpids = c, fq.objects = d;
  int rc = (spans && !a) || (uids && !b) || (cpids && !c) || (objs && !d)
               ? RIPPLE_ENOMEM
               : facts_lookup(s->core->facts, &fq, take_fact, out);
  free(a), free(b), free(c), free(d);
  return rc == RIPPLE_OK && !out->oom ? RIPPLE_OK : RIPPLE_ESYS;
}

/* ---- joining ------------------------------------------------------------------- */

static int eq(const char *a, const char *b) { return a && b && *a && !strcmp(a, b); }

static dspan_t *span_of(dq_t *q, const char *span_id) {
  keytab_slot_t *slot = *span_id ? keytab_get(&q->by_span, span_id, strlen(span_id)) : NULL;
  return slot ? slot->val : NULL;
}

static void join_audit(dq_t *q, dfacts_t *f) {
  for (size_t i = 0; i < f->n; i++) {
    dfact_t *a = &f->v[i];
    dspan_t *d = a->type == FACT_AUDIT ? span_of(q, a->k[K_SPAN]) : NULL;
    if (!d || d->audit) continue;
    d->audit = json_incref(a->body);
    a->used = 1;
  }
}

/* Changes by the keys a span can find them by (the rules at the top of this
 * file): "u" uid, previous version (an update); "w" uid, version written (as
 * an audit event names it); "d" uid (a delete); "c" CPID, kind, namespace,
 * name (a create). The first change under a key wins. */
static void key_of(sbuf_t *k, char tag, const char *a, const char *b, const char *c,
                   const char *d) {
  k->len = 0;
  sbuf_putc(k, tag);
  const char *v[] = {a, b, c, d};
  for (int i = 0; i < 4 && v[i]; i++) {
    sbuf_putc(k, '\x1f');
    sbuf_puts(k, v[i]);
  }
}

static void index_put(dq_t *q, keytab_t *ix, const sbuf_t *k, dfact_t *c) {
  keytab_slot_t *slot;
  if (!k->len || k->oom) return;
  if (keytab_put(ix, k->p, k->len, &slot) != RIPPLE_OK)
    q->oom = 1;
  else if (!slot->val)
    slot->val = c;
}

static void index_change(dq_t *q, keytab_t *ix, sbuf_t *k, dfact_t *c) {
  const char *op = c->k[K_OP], *uid = c->k[K_UID];
  if (!*uid) return;
  k->len = 0;
  if (!strcmp(op, "update") && *c->k[K_PREV])
    key_of(k, 'u', uid, c->k[K_PREV], NULL, NULL);
  else if (!strcmp(op, "delete"))
    key_of(k, 'd', uid, NULL, NULL, NULL);
  else if (!strcmp(op, "create") && *c->k[K_CPID])
    key_of(k, 'c', c->k[K_CPID], c->k[K_KIND], c->k[K_NS], c->k[K_NAME]);
  index_put(q, ix, k, c);
  if (!*c->k[K_RV]) return;
  key_of(k, 'w', uid, c->k[K_RV], NULL, NULL);
  index_put(q, ix, k, c);
}

static dfact_t *find_change(const keytab_t *ix, const sbuf_t *k) {
  keytab_slot_t *slot = k->len && !k->oom ? keytab_get(ix, k->p, k->len) : NULL;
  dfact_t *c = slot ? slot->val : NULL;
  return c && !c->used ? c : NULL;
}

static dfact_t *change_for(const dspan_t *d, const keytab_t *ix, sbuf_t *k) {
  dfact_t *c = NULL;
  if (d->audit) {
    const json_t *ref = json_object_get(d->audit, "object");
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    const char *rv = json_string_value(json_object_get(d->audit, "writtenResourceVersion"));
    if (uid && rv) key_of(k, 'w', uid, rv, NULL, NULL), c = find_change(ix, k);
  }
  if (c) return c;
  /* A write of a subresource (a binding is a create of one) updates its
   * object, from the version it names. */
  int update = !strcmp(d->op, "UPDATE") || (*d->sub && !strcmp(d->op, "CREATE"));
  if (update && *d->uid && *d->rv)
    key_of(k, 'u', d->uid, d->rv, NULL, NULL);
  else if (!strcmp(d->op, "DELETE") && *d->uid)
    key_of(k, 'd', d->uid, NULL, NULL, NULL);
  else if (!strcmp(d->op, "CREATE") && d->cpid && *d->name)
    key_of(k, 'c', d->cpid, d->kind, d->ns, d->name);
  else
    return NULL;
  return find_change(ix, k);
}

static void join_changes(dq_t *q, dfacts_t *f) {
  keytab_t ix;
  sbuf_t k;
  keytab_init(&ix);
  sbuf_init(&k);
  for (size_t i = 0; i < f->n; i++)
    if (f->v[i].type == FACT_CHANGE) index_change(q, &ix, &k, &f->v[i]);
  for (size_t i = 0; i < q->nsp; i++) {
    dspan_t *d = &q->sp[i];
    dfact_t *c = change_for(d, &ix, &k);
    if (!c) continue;
    d->change = json_incref(c->body);
    c->used = 1;
  }
  sbuf_free(&k);
  keytab_free(&ix, NULL);
}

/* Objects the facts name that the cascade's spans did not: objects it
 * created (their audit events, their changes' CPIDs), by uid and by
 * namespace/name (audit events of writes refused before admission name no
 * uid). */
static void more_objects(dq_t *q, dfacts_t *f, keytab_t *out, keytab_t *objs) {
  for (size_t i = 0; i < f->n; i++) {
    dfact_t *a = &f->v[i];
    int ours = (a->type == FACT_AUDIT && span_of(q, a->k[K_SPAN])) ||
               (a->type == FACT_CHANGE && *a->k[K_CPID] &&
                keytab_get(&q->cpids, a->k[K_CPID], strlen(a->k[K_CPID])));
    if (!ours) continue;
    if (*a->k[K_UID] && !keytab_get(&q->uids, a->k[K_UID], strlen(a->k[K_UID])))
      set_add(q, out, a->k[K_UID]);
    char o[600];
    snprintf(o, sizeof o, "%s/%s", a->k[K_NS], a->k[K_NAME]);
    if (*a->k[K_NAME] && !keytab_get(&q->objs, o, strlen(o))) set_add(q, objs, o);
  }
}

/* ---- the answer ------------------------------------------------------------------ */

static void put_json(sbuf_t *o, const json_t *v) {
  char *t = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
  if (t)
    sbuf_puts(o, t);
  else
    sbuf_puts(o, "null");
  free(t);
}

static void answer_writes(const dq_t *q, sbuf_t *o) {
  sbuf_puts(o, ",\"writes\":[");
  int first = 1;
  for (size_t i = 0; i < q->nsp; i++) {
    const dspan_t *d = &q->sp[i];
    if (!d->change && !d->audit) continue;
    sbuf_puts(o, first ? "{\"span_id\":" : ",{\"span_id\":");
    first = 0;
    sbuf_json_str(o, d->span_id ? d->span_id : "");
    sbuf_puts(o, ",\"change\":");
    put_json(o, d->change ? d->change : json_null());
    sbuf_puts(o, ",\"audit\":");
    put_json(o, d->audit ? d->audit : json_null());
    sbuf_putc(o, '}');
  }
  sbuf_putc(o, ']');
}

/* The newest version of each Event (by the Event's own uid). */
static int newest_event(const dfacts_t *f, size_t i) {
  const char *uid = json_string_value(json_object_get(f->v[i].body, "uid"));
  for (size_t k = 0; uid && k < f->n; k++) {
    if (k == i || f->v[k].type != FACT_EVENT) continue;
    const char *u = json_string_value(json_object_get(f->v[k].body, "uid"));
    int64_t tk = f->v[k].time, ti = f->v[i].time;
    if (eq(u, uid) && (tk > ti || (tk == ti && k > i))) return 0;
  }
  return 1;
}

static void answer_rest(const dq_t *q, const dfacts_t *f, const keytab_t *uids2, sbuf_t *o) {
  static const char *const lists[] = {"changes", "events", "audit"};
  for (int l = 0; l < 3; l++) {
    sbuf_printf(o, ",\"%s\":[", lists[l]);
    int first = 1;
    for (size_t i = 0; i < f->n; i++) {
      const dfact_t *a = &f->v[i];
      const char *uid = a->k[K_UID];
      int ours_obj =
          *uid && (keytab_get(&q->uids, uid, strlen(uid)) || keytab_get(uids2, uid, strlen(uid)));
      int show = 0;
      if (l == 0)
        show = a->type == FACT_CHANGE && !a->used && *a->k[K_CPID] &&
               keytab_get(&q->cpids, a->k[K_CPID], strlen(a->k[K_CPID]));
      else if (l == 1)
        show = a->type == FACT_EVENT && ours_obj && a->time >= q->since && a->time <= q->until &&
               newest_event(f, i);
      else
        show = a->type == FACT_AUDIT && !a->used && !*a->k[K_SPAN];
      if (!show) continue;
      if (!first) sbuf_putc(o, ',');
      first = 0;
      put_json(o, a->body);
    }
    sbuf_putc(o, ']');
  }
}

static void dq_free(dq_t *q) {
  for (size_t i = 0; i < q->nsp; i++) {
    json_decref(q->sp[i].change);
    json_decref(q->sp[i].audit);
  }
  free(q->sp);
  json_decref(q->spans);
  keytab_free(&q->by_span, NULL);
  keytab_free(&q->uids, NULL);
  keytab_free(&q->cpids, NULL);
  keytab_free(&q->objs, NULL);
}

/* The facts about q's spans and objects read (and those about the objects
 * the facts name: more_objects) into f, and joined to the spans. */
static int join_facts(tdet_t *s, dq_t *q, dfacts_t *f, keytab_t *uids2, keytab_t *objs2) {
  if (lookup(s, q, &q->by_span, &q->uids, &q->cpids, &q->objs, f) != RIPPLE_OK) return 503;
  more_objects(q, f, uids2, objs2);
  if ((uids2->n || objs2->n) && lookup(s, q, NULL, uids2, NULL, objs2, f) != RIPPLE_OK) return 503;
  join_audit(q, f);
  join_changes(q, f);
  return 200;
}

int tdet_answer(tdet_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                sbuf_t *out) {
  if (!limit || limit > s->query_limit) limit = s->query_limit;
  dq_t q = {0};
  dfacts_t f = {0};
  keytab_t uids2, objs2;
  keytab_init(&q.by_span), keytab_init(&q.uids), keytab_init(&q.cpids), keytab_init(&q.objs);
  keytab_init(&f.seen), keytab_init(&uids2), keytab_init(&objs2);
  int status = load_spans(s, cpid, scope, limit, &q);
  if (status == 200) status = join_facts(s, &q, &f, &uids2, &objs2);
  if (status == 200 && !q.oom) {
    sbuf_puts(out, "{\"cpid\":");
    wire_cpid(out, cpid);
    sbuf_printf(out, ",\"truncated\":%s", q.truncated ? "true" : "false");
    answer_writes(&q, out);
    answer_rest(&q, &f, &uids2, out);
    sbuf_putc(out, '}');
  }
  if (q.oom) status = 503;
  dfacts_free(&f);
  keytab_free(&uids2, NULL);
  keytab_free(&objs2, NULL);
  dq_free(&q);
  return status;
}

int tdet_span_writes(tdet_t *s, const ripple_cpid_t *cpids, size_t n, const char *const *span_ids,
                     size_t nspans, sbuf_t *out) {
  dq_t q = {0};
  dfacts_t f = {0};
  keytab_t keep, uids2, objs2;
  seqs_t rows = {0};
  keytab_init(&q.by_span), keytab_init(&q.uids), keytab_init(&q.cpids), keytab_init(&q.objs);
  keytab_init(&f.seen), keytab_init(&keep), keytab_init(&uids2), keytab_init(&objs2);
  for (size_t i = 0; i < nspans; i++) set_add(&q, &keep, span_ids[i]);
  pthread_rwlock_rdlock(&s->core->lock);
  for (size_t i = 0; i < n; i++) {
    char t[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(&cpids[i], t);
    vid_t v = keytab_get(&q.cpids, t, strlen(t)) ? 0 : graph_find(s->core->g, &cpids[i]);
    if (!v) continue; /* unknown, or its spans read already */
    set_add(&q, &q.cpids, t);
    graph_span_seqs(s->core->g, v, push_seq, &rows);
  }
  pthread_rwlock_unlock(&s->core->lock);
  int status = index_spans(s, &rows, &keep, &q);
  free(rows.v);
  if (status == 200) status = join_facts(s, &q, &f, &uids2, &objs2);
  if (status == 200 && !q.oom) {
    sbuf_puts(out, "{\"spans\":");
    sbuf_printf(out, "%zu", q.nsp);
    answer_writes(&q, out);
    sbuf_putc(out, '}');
  }
  if (q.oom) status = 503;
  dfacts_free(&f);
  keytab_free(&keep, NULL), keytab_free(&uids2, NULL), keytab_free(&objs2, NULL);
  dq_free(&q);
  return status;
}
