/*
 * stalls.c - the trace server's side of stalled-cascade detection
 * (stalls.h, on stall.h).
 */
#include "analysis/stalls.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/keytab.h"
#include "ripplex/idle.h"
#include "ripplex/prom.h"
#include "ripplex/wire.h"

/* ---- beside ingest ------------------------------------------------------------ */

/*
 * Lag and drops. The detector sees a span later than its commit, or never
 * (dropped), and must not claim a stall because of that:
 *  - its clock: the thread ticks only after feeding what it took, to
 *    min(now, the queue time of the oldest span still queued). Every span
 *    committed before that time has been fed, so the detector's state at its
 *    clock T is the one the inline detector had at T: a write whose next hop
 *    is still queued is not past its deadline yet;
 *  - answers (GET /v1/stalls, /v1/cpids/{cpid}/stalls) first wait, up to
 *    SYNC_MS, until every span acknowledged before the request was fed, so a
 *    follower posted before the question is in the answer. Past SYNC_MS (the
 *    detector is behind) the answer is its state at its clock, with
 *    "complete": false;
 *  - a dropped span may have been the next hop of any write admitted before
 *    it was queued: stalls of writes admitted at or before the newest drop
 *    are withheld from answers and /metrics (counted in
 *    ripple_stalls_withheld), as the detector prefers missing a stall to
 *    inventing one. Learning from a write whose follower was dropped lowers
 *    the hop's share, which only makes it expect less.
 */
enum { CHUNK = 256, SYNC_MS = 2000, IDLE_MS = 1000 };
/* An answer is "complete": false while a drop is more recent than this: the
 * detector learned without the spans it missed. */
#define DROP_MEMORY_NS (600 * 1000000000LL)

/* Feed what the queue holds, CHUNK spans per hold of mu (queries wait for
 * mu at most that long), then tick. */
static void feed_chunk(stalls_t *s, int64_t *clock) {
  size_t n = stallq_take(s->q, IDLE_MS, &s->chunk);
  stall_span_t sp;
  for (int more = n > 0; more;) {
    pthread_mutex_lock(&s->mu);
    for (int k = 0; k < CHUNK && (more = stallq_next(&s->chunk, &sp)); k++)
      stall_add(s->stall, &sp);
    pthread_mutex_unlock(&s->mu);
  }
  int64_t t = stallq_clock(s->q, ripple_now_ns());
  if (t > *clock) *clock = t;
  pthread_mutex_lock(&s->mu);
  stall_tick(s->stall, *clock);
  pthread_mutex_unlock(&s->mu);
  if (n) stallq_done(s->q, s->chunk.upto);
}

/* At nice +15 (ripplex/idle.h), as the exporter and the details are: when
 * ingest takes the whole core, the detector gets a small share and the queue
 * drops what it cannot hold (counted, answers "complete": false) rather than
 * the detector slowing ingest. A bench_ingest run of 10 M spans dated now over
 * 4,000 objects (each new write scans its object's earlier writes in the
 * window) had the detector at normal priority take 40% of ingest's rate. */
static void *feeder(void *arg) {
  stalls_t *s = arg;
  int64_t clock = 0;
  idle_enter();
  while (!stallq_stopped(s->q)) feed_chunk(s, &clock);
  return NULL;
}

int stalls_start(stalls_t *s, size_t queue_bytes) {
  if (!s->stall) return RIPPLE_OK;
  int rc = stallq_new(queue_bytes ? queue_bytes : STALLS_QUEUE_BYTES, &s->q);
  if (rc != RIPPLE_OK) return rc;
  if (pthread_create(&s->thread, NULL, feeder, s) != 0) {
    stallq_free(s->q);
    s->q = NULL;
    return RIPPLE_ESYS;
  }
  s->running = 1;
  return RIPPLE_OK;
}

void stalls_stop(stalls_t *s) {
  if (!s->running) return;
  stallq_stop(s->q);
  pthread_join(s->thread, NULL);
  s->running = 0;
  stallq_free(s->q);
  s->q = NULL;
  stallq_chunk_free(&s->chunk);
}

void stalls_feed(stalls_t *s, const dec_batch_t *b) {
  if (s->q) stallq_push(s->q, b, ripple_now_ns());
}

int stalls_sync(stalls_t *s, int timeout_ms) { return !s->q || stallq_wait(s->q, timeout_ms); }

static const char *jstr(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}

void stalls_replay(stalls_t *s, const store_row_t *r) {
  if (!s->stall || !r->body) return;
  json_t *o = json_loadb(r->body, r->body_len, 0, NULL);
  const json_t *a = json_object_get(o, "attributes");
  const char *sid = jstr(o, "span_id");
  char *end = NULL;
  uint64_t id = strtoull(sid, &end, 16);
  if (o && *jstr(a, "kind") && *sid && end && !*end) {
    stall_tick(s->stall, r->end);
    stall_span_t sp = {r->cpid,
                       id,
                       r->time,
                       r->end,
                       jstr(o, "service"),
                       jstr(o, "name"),
                       jstr(a, "kind"),
                       jstr(a, "namespace"),
                       jstr(a, "name"),
                       jstr(a, "owner"),
                       jstr(a, "operation")};
    stall_add(s->stall, &sp);
  }
  json_decref(o);
}

/* ---- answers --------------------------------------------------------------------- */

/* Stalls copied out of the detector, so Events can be read without the lock. */
typedef struct stall_copy {
  stall_info_t i;
  char *str[8]; /* service, name, kind, ns, obj, owner, expect_service, expect_name */
  int shallow;  /* a deeper write of the cascade waits for the same hop (deepest_only) */
} stall_copy_t;

typedef struct copies {
  stall_copy_t *v;
  size_t n, cap;
  stalls_t *s;
  const ripple_cpid_t *under; /* only stalls descending from it; NULL: all */
  int oom;
  int64_t last_drop; /* withhold the stalls of writes admitted at or before it */
  size_t withheld;
  graph_scope_t scope; /* of under's cascade */
} copies_t;

/* The newest drop's time (0: none), read before taking the detector's stalls. */
static int64_t last_drop(stalls_t *s) {
  stallq_stats_t qs = {0};
  if (s->q) stallq_stats(s->q, &qs);
  return qs.last_drop_ns;
}

static int copy_one(void *ud, const stall_info_t *st) {
  copies_t *c = ud;
  if (c->under && !graph_descends_in(c->s->core->g, c->under, &st->cpid, c->scope)) return 0;
  if (st->admitted_ns <= c->last_drop) {
    c->withheld++;
    return 0;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    stall_copy_t *nv = realloc(c->v, cap * sizeof *nv);
    if (!nv) return c->oom = 1;
    c->v = nv;
    c->cap = cap;
  }
  stall_copy_t *d = &c->v[c->n++];
  d->i = *st;
  d->shallow = 0;
  const char *src[8] = {st->service, st->name,  st->kind,           st->ns,
                        st->obj,     st->owner, st->expect_service, st->expect_name};
  for (int k = 0; k < 8; k++)
    if (!(d->str[k] = strdup(src[k] ? src[k] : ""))) c->oom = 1;
  return c->oom;
}

/* "namespace, owner, expected hop": the key under which a stalled write is
 * found by the writes its object owns. */
static int owner_key(sbuf_t *k, const char *ns, const char *owner, const stall_copy_t *c) {
  k->len = 0;
  sbuf_printf(k, "%s\x1f%s\x1f%s\x1f%s", ns, owner, c->str[6], c->str[7]);
  return !k->oom;
}

/* A missing hop shows at every write above it: a Pod never bound leaves its
 * create waiting for the binding, and the ReplicaSet's create too (its Pods'
 * bindings follow it as well). Only the deepest is the stall an operator
 * must see: a stall is dropped when a write its object owns, of a CPID that
 * descends from its own, stalls on the same hop. The caller holds the lock
 * (the merge graph). */
static void deepest_only(stalls_t *s, copies_t *c) {
  keytab_t by_owner;
  sbuf_t k;
  keytab_init(&by_owner);
  sbuf_init(&k);
  keytab_slot_t *slot;
  for (size_t i = 0; i < c->n; i++) {
    const stall_copy_t *x = &c->v[i];
    if (*x->str[5] && owner_key(&k, x->str[3], x->str[5], x) &&
        keytab_put(&by_owner, k.p, k.len, &slot) == RIPPLE_OK && !slot->val)
      slot->val = (void *)x;
  }
  char self[700];
  for (size_t i = 0; i < c->n; i++) {
    stall_copy_t *a = &c->v[i];
    snprintf(self, sizeof self, "%s/%s", a->str[2], a->str[4]);
    if (!*a->str[4] || !owner_key(&k, a->str[3], self, a)) continue;
    slot = keytab_get(&by_owner, k.p, k.len);
    const stall_copy_t *deeper = slot ? slot->val : NULL;
    if (deeper && graph_descends(s->core->g, &a->i.cpid, &deeper->i.cpid)) a->shallow = 1;
  }
  sbuf_free(&k);
  keytab_free(&by_owner, NULL);
}

static void copies_free(copies_t *c) {
  for (size_t i = 0; i < c->n; i++)
    for (int k = 0; k < 8; k++) free(c->v[i].str[k]);
  free(c->v);
}

/* Events about the stalled write's object: the objects that carry its CPID
 * and match its kind, namespace and (when known) name, then their Events. */
typedef struct ev_find {
  const stall_copy_t *st;
  const char *uids[32];
  size_t nuids;
  sbuf_t *out;
  int first;
} ev_find_t;

static int take_uid(void *ud, uint64_t seq, const fact_t *f) {
  (void)seq;
  ev_find_t *e = ud;
  const stall_copy_t *st = e->st;
  if (f->type != FACT_CHANGE || !f->uid || !f->kind || strcmp(f->kind, st->str[2]) != 0 ||
      strcmp(f->ns ? f->ns : "", st->str[3]) != 0 ||
      (*st->str[4] && (!f->name || strcmp(f->name, st->str[4]) != 0)))
    return 0;
  for (size_t i = 0; i < e->nuids; i++)
    if (!strcmp(e->uids[i], f->uid)) return 0;
  char *u = strdup(f->uid);
  if (u) e->uids[e->nuids++] = u;
  return e->nuids == sizeof e->uids / sizeof *e->uids;
}

static int put_event(void *ud, uint64_t seq, const fact_t *f) {
  (void)seq;
  ev_find_t *e = ud;
  if (f->type != FACT_EVENT) return 0;
  if (!e->first) sbuf_putc(e->out, ',');
  e->first = 0;
  sbuf_put(e->out, f->body, f->body_len);
  return 0;
}

static void stall_events(stalls_t *s, const stall_copy_t *st, sbuf_t *out) {
  char cpid[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&st->i.cpid, cpid);
  const char *cp[1] = {cpid};
  ev_find_t e = {st, {0}, 0, out, 1};
  facts_query_t q = {.cpids = cp,
                     .ncpids = 1,
                     .since = st->i.admitted_ns - 60000000000LL,
                     .until = 0,
                     .limit = 1000};
  sbuf_puts(out, ",\"events\":[");
  if (facts_lookup(s->core->facts, &q, take_uid, &e) == RIPPLE_OK && e.nuids) {
    facts_query_t q2 = {.uids = e.uids, .nuids = e.nuids, .since = q.since, .limit = 100};
    (void)facts_lookup(s->core->facts, &q2, put_event, &e);
  }
  sbuf_putc(out, ']');
  for (size_t i = 0; i < e.nuids; i++) free((char *)e.uids[i]);
}

static void put_time(sbuf_t *o, const char *key, int64_t ns) {
  char t[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ns, t);
  sbuf_printf(o, ",\"%s\":\"%s\"", key, t);
}

static void put_stall(stalls_t *s, const stall_copy_t *c, int64_t now, sbuf_t *o) {
  sbuf_puts(o, "{\"cpid\":");
  wire_cpid(o, &c->i.cpid);
  sbuf_printf(o, ",\"span_id\":\"%016" PRIx64 "\",\"service\":", c->i.span_id);
  sbuf_json_str(o, c->str[0]);
  sbuf_puts(o, ",\"name\":");
  sbuf_json_str(o, c->str[1]);
  sbuf_puts(o, ",\"object\":{\"kind\":");
  sbuf_json_str(o, c->str[2]);
  sbuf_puts(o, ",\"namespace\":");
  sbuf_json_str(o, c->str[3]);
  sbuf_puts(o, ",\"name\":");
  sbuf_json_str(o, c->str[4]);
  sbuf_puts(o, ",\"owner\":");
  sbuf_json_str(o, c->str[5]);
  sbuf_puts(o, "},\"expect\":");
  if (*c->str[6] || *c->str[7]) {
    sbuf_puts(o, "{\"service\":");
    sbuf_json_str(o, c->str[6]);
    sbuf_puts(o, ",\"name\":");
    sbuf_json_str(o, c->str[7]);
    sbuf_putc(o, '}');
  } else {
    sbuf_puts(o, "null");
  }
  put_time(o, "admitted", c->i.admitted_ns);
  put_time(o, "flagged", c->i.flagged_ns);
  sbuf_printf(o, ",\"waiting_seconds\":%.3f,\"p99_seconds\":%.3f,\"samples\":%u,\"share\":%.3f",
              (double)(now - c->i.admitted_ns) / 1e9, (double)c->i.p99_ns / 1e9, c->i.samples,
              c->i.share);
  stall_events(s, c, o);
  sbuf_putc(o, '}');
}

int stalls_answer(stalls_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, sbuf_t *out) {
  int synced = stalls_sync(s, SYNC_MS);
  copies_t c = {NULL, 0, 0, s, cpid, 0, 0, 0, scope};
  pthread_mutex_lock(&s->mu); /* before the core's lock: stalls.h */
  c.last_drop = last_drop(s); /* under mu: the clock cannot pass a drop read after it */
  pthread_rwlock_rdlock(&s->core->lock);
  int known = !cpid || graph_find(s->core->g, cpid);
  if (known && s->stall) stall_each(s->stall, copy_one, &c);
  if (!c.oom) deepest_only(s, &c);
  pthread_rwlock_unlock(&s->core->lock);
  pthread_mutex_unlock(&s->mu);
  if (!known || c.oom) {
    copies_free(&c);
    return known ? 503 : 404;
  }
  int64_t now = ripple_now_ns();
  sbuf_printf(out, "{\"enabled\":%s,\"complete\":%s,\"stalls\":[", s->stall ? "true" : "false",
              synced && !c.withheld && (!c.last_drop || now - c.last_drop > DROP_MEMORY_NS)
                  ? "true"
                  : "false");
  for (size_t i = 0, first = 1; i < c.n; i++) {
    if (c.v[i].shallow) continue;
    if (!first) sbuf_putc(out, ',');
    first = 0;
    put_stall(s, &c.v[i], now, out);
  }
  sbuf_puts(out, "]}");
  copies_free(&c);
  return 200;
}

typedef struct model_out {
  sbuf_t *o;
  int first;
} model_out_t;

static void put_model(void *ud, const char *service, const char *name, const char *es,
                      const char *en, double share, uint32_t samples, int64_t p99) {
  model_out_t *m = ud;
  sbuf_puts(m->o, m->first ? "{\"service\":" : ",{\"service\":");
  m->first = 0;
  sbuf_json_str(m->o, service);
  sbuf_puts(m->o, ",\"name\":");
  sbuf_json_str(m->o, name);
  sbuf_puts(m->o, ",\"expect\":");
  if (*es || *en) {
    sbuf_puts(m->o, "{\"service\":");
    sbuf_json_str(m->o, es);
    sbuf_puts(m->o, ",\"name\":");
    sbuf_json_str(m->o, en);
    sbuf_putc(m->o, '}');
  } else {
    sbuf_puts(m->o, "null");
  }
  sbuf_printf(m->o, ",\"share\":%.3f,\"samples\":%u,\"p99_seconds\":%.3f}", share, samples,
              (double)p99 / 1e9);
}

int stalls_model(stalls_t *s, sbuf_t *out) {
  model_out_t m = {out, 1};
  sbuf_printf(out, "{\"enabled\":%s,\"expected\":[", s->stall ? "true" : "false");
  pthread_mutex_lock(&s->mu);
  if (s->stall) stall_model(s->stall, put_model, &m);
  pthread_mutex_unlock(&s->mu);
  sbuf_puts(out, "]}");
  return out->oom ? 503 : 200;
}

/* Stalls counted by the stalled write's hop ("service\x1fname"), for the gauge. */
static void count_kinds(const copies_t *c, keytab_t *t) {
  char k[600];
  keytab_slot_t *slot;
  for (size_t i = 0; i < c->n; i++) {
    if (c->v[i].shallow) continue;
    int n = snprintf(k, sizeof k, "%s\x1f%s", c->v[i].str[0], c->v[i].str[1]);
    if (n <= 0 || (size_t)n >= sizeof k || keytab_put(t, k, (size_t)n, &slot) != RIPPLE_OK)
      continue;
    if (!slot->val) slot->val = calloc(1, sizeof(uint64_t)); /* freed with the table */
    if (slot->val) ++*(uint64_t *)slot->val;
  }
}

static void put_kinds(const keytab_t *t, sbuf_t *o) {
  sbuf_t l;
  sbuf_init(&l);
  for (size_t i = 0; t->slot && i <= t->mask; i++) {
    const char *k = t->slot[i].key;
    if (!k) continue;
    const char *sep = strchr(k, '\x1f');
    l.len = 0;
    sbuf_puts(&l, "service=\"");
    char svc[300];
    snprintf(svc, sizeof svc, "%.*s", (int)(sep - k), k);
    prom_label_value(&l, svc);
    sbuf_puts(&l, "\",name=\"");
    prom_label_value(&l, sep + 1);
    sbuf_putc(&l, '"');
    const uint64_t *n = t->slot[i].val;
    if (!l.oom && n) prom_sample_u(o, "ripple_stalled_writes", l.p, *n);
  }
  sbuf_free(&l);
}

/* The queue between ingest and the detector: how far behind it is. */
static void queue_metrics(stalls_t *s, size_t withheld, sbuf_t *out) {
  stallq_stats_t q = {0};
  if (s->q) stallq_stats(s->q, &q);
  prom_gauge(out, "ripple_stall_queue_spans",
             "Committed spans queued for the stall detector, not fed yet.", (double)q.depth);
  prom_gauge(out, "ripple_stall_queue_bytes", "Bytes those spans hold (bounded).", (double)q.bytes);
  prom_gauge(out, "ripple_stall_lag_seconds",
             "How long the oldest span not fed to the stall detector yet has waited.",
             (double)q.lag_ns / 1e9);
  prom_counter(out, "ripple_stall_queued_spans_total", "Spans queued for the stall detector.",
               q.queued);
  prom_counter(out, "ripple_stall_dropped_spans_total",
               "Spans the stall detector never saw: its queue was full.", q.dropped);
  prom_gauge(out, "ripple_stalls_withheld",
             "Stalls not reported: a span was dropped after their write was admitted, and it "
             "may have been the next hop.",
             (double)withheld);
}

void stalls_metrics(stalls_t *s, sbuf_t *out) {
  if (!s->stall) return;
  stall_stats_t st;
  copies_t c = {NULL, 0, 0, s, NULL, 0, 0, 0, GRAPH_REACHABLE};
  pthread_mutex_lock(&s->mu);
  c.last_drop = last_drop(s);
  pthread_rwlock_rdlock(&s->core->lock);
  stall_stats(s->stall, &st);
  stall_each(s->stall, copy_one, &c);
  deepest_only(s, &c);
  pthread_rwlock_unlock(&s->core->lock);
  pthread_mutex_unlock(&s->mu);
  prom_family(out, "ripple_stalled_writes", "gauge",
              "Stalls now (a write and a hop that usually follows it but has not come), by "
              "the stalled write's hop (service and span name).");
  keytab_t kinds;
  keytab_init(&kinds);
  count_kinds(&c, &kinds);
  put_kinds(&kinds, out);
  keytab_free(&kinds, free);
  size_t active = 0;
  for (size_t i = 0; i < c.n; i++) active += !c.v[i].shallow;
  copies_free(&c);
  prom_gauge(
      out, "ripple_stalls_active",
      "Stalls now: the deepest of each cascade's missing hops, as GET /v1/stalls lists them.",
      (double)active);
  prom_family(out, "ripple_stalls_total", "counter",
              "Stalls by how they ended: flagged (all), resolved (the next hop came late), "
              "superseded (the object was deleted or written by another change), expired.");
  prom_sample_u(out, "ripple_stalls_total", "event=\"flagged\"", st.flagged);
  prom_sample_u(out, "ripple_stalls_total", "event=\"resolved\"", st.resolved);
  prom_sample_u(out, "ripple_stalls_total", "event=\"superseded\"", st.superseded);
  prom_sample_u(out, "ripple_stalls_total", "event=\"expired\"", st.expired);
  prom_gauge(out, "ripple_stall_window_writes", "Writes the detector waits on or learns from.",
             (double)st.window);
  prom_gauge(out, "ripple_stall_hop_kinds", "Hop kinds the detector knows.", (double)st.kinds);
  prom_counter(out, "ripple_stall_evicted_total",
               "Writes that left the detector's window early (it holds 200,000).", st.evicted);
  queue_metrics(s, c.withheld, out);
}
