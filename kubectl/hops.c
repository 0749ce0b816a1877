/*
 * hops.c - the per-hop timing summary under a trace: for each (component,
 * span name) among the spans that have a cause, how many there were, the
 * median and the maximum of their time since the cause (end - start). The
 * median is the lower one of an even count (nearest rank), so it is always
 * a time that was seen. Rows come in order of first appearance.
 */
#include <stdlib.h>
#include <string.h>

#include "kr.h"

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : a > b;
}

int kr_hops(const kr_trace_t *t, kr_hop_t **out, size_t *n) {
  kr_hop_t *rows = calloc(t->n + 1, sizeof *rows);
  long *row_of = calloc(t->n + 1, sizeof *row_of);
  int64_t *vals = calloc(t->n + 1, sizeof *vals);
  if (!rows || !row_of || !vals) {
    free(rows);
    free(row_of);
    free(vals);
    return RIPPLE_ENOMEM;
  }
  size_t nrows = 0;
  for (size_t i = 0; i < t->n; i++) {
    const kr_span_t *s = &t->spans[i];
    row_of[i] = -1;
    if (s->cause < 0) continue;
    size_t r = 0;
    while (r < nrows &&
           (strcmp(rows[r].service, s->service) != 0 || strcmp(rows[r].name, s->name) != 0))
      r++;
    if (r == nrows) rows[nrows++] = (kr_hop_t){s->service, s->name, 0, 0, 0};
    rows[r].count++;
    row_of[i] = (long)r;
  }
  for (size_t r = 0; r < nrows; r++) {
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
      if (row_of[i] == (long)r) vals[k++] = kr_diff(t->spans[i].end_ns, t->spans[i].start_ns);
    qsort(vals, k, sizeof *vals, cmp_i64);
    rows[r].p50_ns = vals[(k - 1) / 2];
    rows[r].max_ns = vals[k - 1];
  }
  free(row_of);
  free(vals);
  *out = rows;
  *n = nrows;
  return RIPPLE_OK;
}
