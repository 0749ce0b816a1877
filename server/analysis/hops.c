/*
 * hops.c - per-hop statistics across many cascades (hops.h).
 *
 * Roots are read from the store a page at a time (newest first, as
 * GET /v1/roots lists them); each root's cascade is read whole, grouped by
 * ripplex (ripplex/hops.h), and its groups' times appended to one table
 * keyed by hop, which is sorted and summed up at the end.
 */
#include "analysis/hops.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "graph/trace.h"
#include "ripple/ripple.h"
#include "ripplex/hops.h"
#include "store/store.h"

#define PAGE 64 /* roots read from the store at once */

typedef struct acc {
  char *component, *write, *kind;
  size_t cascades, n, cap;
  int64_t *took;
  int64_t p50; /* set when summed up */
} acc_t;

typedef struct run {
  const hops_query_t *q;
  core_t *c;
  acc_t *a;
  size_t n, cap;
  size_t roots, examined, spans;
  int roots_cut, cascade_cut;
} run_t;

typedef struct page {
  ripple_cpid_t cpid[PAGE];
  int64_t time, seq; /* of the last row */
  size_t n;
} page_t;

static int page_row(void *ud, uint64_t seq, int64_t time, const ripple_cpid_t *cpid,
                    const char *body, size_t len) {
  (void)body;
  (void)len;
  page_t *p = ud;
  if (p->n < PAGE) p->cpid[p->n++] = *cpid;
  p->time = time;
  p->seq = (int64_t)seq;
  return RIPPLE_OK;
}

/* The table's entry for g's hop, added when new; NULL without memory. */
static acc_t *entry(run_t *r, const hop_group_t *g) {
  for (size_t i = 0; i < r->n; i++)
    if (!strcmp(r->a[i].component, g->component) && !strcmp(r->a[i].write, g->write) &&
        !strcmp(r->a[i].kind, g->kind))
      return &r->a[i];
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 16;
    acc_t *a = realloc(r->a, cap * sizeof *a);
    if (!a) return NULL;
    r->a = a;
    r->cap = cap;
  }
  acc_t *e = &r->a[r->n];
  *e = (acc_t){
      .component = strdup(g->component), .write = strdup(g->write), .kind = strdup(g->kind)};
  if (!e->component || !e->write || !e->kind) {
    free(e->component);
    free(e->write);
    free(e->kind);
    return NULL;
  }
  r->n++;
  return e;
}

static int add_group(run_t *r, const hop_group_t *g) {
  acc_t *e = entry(r, g);
  if (!e) return RIPPLE_ENOMEM;
  if (e->n + g->n > e->cap) {
    size_t cap = e->cap ? e->cap : 8;
    while (cap < e->n + g->n) cap *= 2;
    int64_t *t = realloc(e->took, cap * sizeof *t);
    if (!t) return RIPPLE_ENOMEM;
    e->took = t;
    e->cap = cap;
  }
  if (g->n) memcpy(e->took + e->n, g->took, g->n * sizeof *g->took);
  e->n += g->n;
  e->cascades++;
  return RIPPLE_OK;
}

/* One root: its cascade read and, when its first write matches, added.
 * The HTTP status (200 also for a root skipped or gone meanwhile). */
static int one_root(run_t *r, const ripple_cpid_t *cpid) {
  sbuf_t b;
  sbuf_init(&b);
  int status = trace_answer(r->c, cpid, r->q->scope, r->q->cpid_limit, NULL, &b);
  json_t *t = status == 200 ? json_loadb(b.p ? b.p : "", b.len, 0, NULL) : NULL;
  sbuf_free(&b);
  if (status == 404) return 200; /* retention took it since it was listed */
  if (status != 200) return status;
  if (!t) return 500;
  r->examined++;
  r->spans += json_array_size(json_object_get(t, "spans"));
  hop_groups_t h;
  int rc = hops_group(t, &h);
  if (rc == RIPPLE_OK && (!r->q->write || (h.first && !strcmp(h.first, r->q->write)))) {
    r->roots++;
    r->cascade_cut |= json_is_true(json_object_get(t, "truncated"));
    for (size_t i = 0; rc == RIPPLE_OK && i < h.n; i++) rc = add_group(r, &h.g[i]);
  }
  hops_free(&h);
  json_decref(t);
  return rc == RIPPLE_ENOMEM ? 500 : 200;
}

/* Has this run read as much as it may? */
static int full(const run_t *r) {
  return r->roots >= r->q->limit || r->spans >= HOPS_SPANS_MAX || r->examined >= HOPS_EXAMINED_MAX;
}

/* The roots, newest first, a page at a time, until full or none are left. */
static int walk(run_t *r) {
  const hops_query_t *q = r->q;
  store_root_query_t sq = {.since = q->since,
                           .before_time = q->until ? q->until : INT64_MAX,
                           .before_seq = q->until ? INT64_MIN : INT64_MAX,
                           .component = q->component,
                           .kind = q->kind,
                           .limit = PAGE};
  for (;;) {
    page_t p = {.n = 0};
    int more = 0;
    if (store_roots(r->c->store, &sq, page_row, &p, &more) != RIPPLE_OK) return 503;
    for (size_t i = 0; i < p.n; i++) {
      if (full(r)) {
        r->roots_cut = 1;
        return 200;
      }
      int status = one_root(r, &p.cpid[i]);
      if (status != 200) return status;
    }
    if (!more || !p.n) return 200;
    if (full(r)) {
      r->roots_cut = 1;
      return 200;
    }
    sq.before_time = p.time;
    sq.before_seq = p.seq;
  }
}

static int acc_cmp(const void *x, const void *y) {
  const acc_t *a = x, *b = y;
  if (a->p50 != b->p50) return (a->p50 < b->p50) - (a->p50 > b->p50);
  int c = strcmp(a->component, b->component);
  if (!c) c = strcmp(a->write, b->write);
  return c ? c : strcmp(a->kind, b->kind);
}

static int took_cmp(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static json_t *acc_json(const acc_t *e) {
  return json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f}", "component", e->component,
                   "write", e->write, "kind", e->kind, "cascades", (json_int_t)e->cascades,
                   "writes", (json_int_t)e->n, "p50_ms", (double)e->p50 / 1e6, "p90_ms",
                   (double)hops_percentile(e->took, e->n, 90) / 1e6, "p99_ms",
                   (double)hops_percentile(e->took, e->n, 99) / 1e6, "max_ms",
                   (double)(e->n ? e->took[e->n - 1] : 0) / 1e6);
}

/* The table summed up, slowest p50 first, as the answer into out. */
static int put(run_t *r, sbuf_t *out) {
  for (size_t i = 0; i < r->n; i++) {
    qsort(r->a[i].took, r->a[i].n, sizeof(int64_t), took_cmp);
    r->a[i].p50 = hops_percentile(r->a[i].took, r->a[i].n, 50);
  }
  if (r->n) qsort(r->a, r->n, sizeof *r->a, acc_cmp);
  json_t *hops = json_array();
  for (size_t i = 0; hops && i < r->n; i++)
    if (json_array_append_new(hops, acc_json(&r->a[i])) != 0) {
      json_decref(hops);
      hops = NULL;
    }
  if (!hops) return 500;
  json_t *o =
      json_pack("{s:s, s:{s:I, s:b}, s:I, s:b, s:o}", "scope", trace_scope_name(r->q->scope),
                "roots", "count", (json_int_t)r->roots, "truncated", r->roots_cut, "spans",
                (json_int_t)r->spans, "truncated", r->cascade_cut || r->roots_cut, "hops", hops);
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  if (!s) return 500;
  sbuf_puts(out, s);
  free(s);
  return out->oom ? 503 : 200;
}

int hops_answer(core_t *c, const hops_query_t *q, sbuf_t *out) {
  run_t r = {.q = q, .c = c};
  int status = walk(&r);
  if (status == 200) status = put(&r, out);
  for (size_t i = 0; i < r.n; i++) {
    free(r.a[i].component);
    free(r.a[i].write);
    free(r.a[i].kind);
    free(r.a[i].took);
  }
  free(r.a);
  return status;
}
