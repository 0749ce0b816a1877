/*
 * critpath.c - the critical path of a cascade (ripplex/critpath.h), from the
 * writes and predecessors writes.c finds.
 */
#include "ripplex/critpath.h"

#include <stdlib.h>

#include "ripple/ripple.h"
#include "writes.h"

static json_t *hop_json(const cw_write_t *w, int64_t added) {
  char end[40];
  ripple_time_format(w->end, end);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f}", "cpid", w->cpid, "span_id",
                   w->span_id, "component", w->service, "write", w->name, "kind", w->kind,
                   "namespace", w->ns, "name", w->oname, "end", end, "ms", (double)added / 1e6);
}

/* The chain ending at the last write, first write first, into hops. */
static int walk(const cw_trace_t *t, json_t *hops, int64_t *total) {
  *total = 0;
  if (t->last == CW_NONE) return RIPPLE_OK;
  size_t *chain = malloc(t->n * sizeof *chain), len = 0;
  if (!chain) return RIPPLE_ENOMEM;
  /* Each predecessor is strictly before its write: at most n steps. */
  for (size_t cur = t->last; cur != CW_NONE && len < t->n; cur = t->w[cur].pred) chain[len++] = cur;
  int rc = RIPPLE_OK;
  for (size_t k = len; k-- > 0 && rc == RIPPLE_OK;) {
    const cw_write_t *w = &t->w[chain[k]];
    json_t *h = hop_json(w, k + 1 < len ? w->took : 0);
    if (!h || json_array_append_new(hops, h) != 0) rc = RIPPLE_ENOMEM;
  }
  *total = cw_diff(t->w[t->last].end, t->w[chain[len - 1]].end);
  free(chain);
  return rc;
}

int critpath_compute(const json_t *trace, json_t **out) {
  *out = NULL;
  cw_trace_t t;
  int rc = cw_load(trace, &t);
  if (rc != RIPPLE_OK) return rc;
  json_t *hops = json_array();
  int64_t total = 0;
  rc = hops ? walk(&t, hops, &total) : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) {
    *out = json_pack("{s:o, s:f, s:I}", "hops", hops, "total_ms", (double)total / 1e6, "writes",
                     (json_int_t)t.n);
    hops = NULL;
    if (!*out) rc = RIPPLE_ENOMEM;
  }
  json_decref(hops);
  cw_free(&t);
  return rc;
}
