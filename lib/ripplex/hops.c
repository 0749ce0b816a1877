/*
 * hops.c - one trace's writes grouped into hops (ripplex/hops.h): the
 * writes (writes.c) sorted by hop and time, then cut where the hop changes.
 */
#include "ripplex/hops.h"

#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "writes.h"

typedef const cw_write_t *wptr_t;

static int key_cmp(const cw_write_t *x, const cw_write_t *y) {
  int c = strcmp(x->service, y->service);
  if (!c) c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->kind, y->kind);
}

static int write_cmp(const void *a, const void *b) {
  wptr_t x = *(const wptr_t *)a, y = *(const wptr_t *)b;
  int c = key_cmp(x, y);
  return c ? c : (x->took > y->took) - (x->took < y->took);
}

/* t's writes, sorted, cut into out's groups (out's arrays hold t->n). */
static void cut(const cw_trace_t *t, wptr_t *v, hop_groups_t *out) {
  for (size_t i = 0; i < t->n; i++) v[i] = &t->w[i];
  qsort(v, t->n, sizeof(wptr_t), write_cmp);
  for (size_t i = 0, j; i < t->n; i = j) {
    for (j = i; j < t->n && !key_cmp(v[i], v[j]); j++) out->took_[j] = v[j]->took;
    out->g[out->n++] = (hop_group_t){v[i]->service, v[i]->name, v[i]->kind, j - i, out->took_ + i};
  }
}

int hops_group(const json_t *trace, hop_groups_t *out) {
  memset(out, 0, sizeof *out);
  cw_trace_t t;
  int rc = cw_load(trace, &t);
  if (rc != RIPPLE_OK) return rc;
  size_t n = t.n ? t.n : 1;
  wptr_t *v = calloc(n, sizeof(wptr_t));
  out->g = calloc(n, sizeof *out->g);
  out->took_ = calloc(n, sizeof *out->took_);
  if (!v || !out->g || !out->took_) {
    rc = RIPPLE_ENOMEM;
    hops_free(out);
  } else {
    cut(&t, v, out);
    out->writes = t.n;
    out->total = t.last == CW_NONE ? 0 : cw_diff(t.w[t.last].end, t.w[t.first].end);
    out->first = t.first == CW_NONE ? NULL : t.w[t.first].name;
  }
  free(v);
  cw_free(&t);
  return rc;
}

void hops_free(hop_groups_t *h) {
  free(h->g);
  free(h->took_);
  memset(h, 0, sizeof *h);
}

int64_t hops_percentile(const int64_t *sorted, size_t n, unsigned pct) {
  if (!n) return 0;
  if (pct > 100) pct = 100;
  size_t rank = (n * pct + 99) / 100; /* ceil(n * pct / 100) */
  return sorted[rank ? rank - 1 : 0];
}
