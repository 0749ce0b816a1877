/*
 * tjson.c - a trace for programs (`kubectl ripple trace -o json`): the tree
 * and the per-hop table as one JSON document. Times are RFC 3339 and the
 * durations integer nanoseconds, so nothing is lost to rounding; the shape
 * is described in docs/kubectl-ripple.md. The stalls are the trace server's
 * array as it gave it.
 */
#include <stdlib.h>

#include "kr.h"

static json_t *time_json(int64_t ns) {
  char buf[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ns, buf);
  return json_string(buf);
}

json_t *kr_span_json(const kr_trace_t *t, long i) {
  const kr_span_t *s = &t->spans[i];
  json_t *n = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "cpid",
                        s->cpid, "span_id", s->span_id, "component", s->service, "write", s->name,
                        "kind", s->kind, "namespace", s->ns, "name", s->oname, "uid", s->uid,
                        "user", s->user, "operation", s->operation, "subresource", s->subresource,
                        "start", time_json(s->start_ns), "end", time_json(s->end_ns));
  if (n)
    json_object_set_new(n, "cause",
                        s->cause >= 0 ? json_string(t->spans[s->cause].span_id) : json_null());
  return n;
}

static json_t *node(const kr_trace_t *t, long i, int depth) {
  const kr_span_t *s = &t->spans[i];
  json_t *n = kr_span_json(t, i);
  if (!n) return NULL;
  json_object_set_new(n, "at_ns", json_integer((json_int_t)kr_diff(s->end_ns, t->t0_ns)));
  json_object_set_new(n, "since_cause_ns",
                      json_integer((json_int_t)kr_diff(s->end_ns, s->start_ns)));
  json_t *kids = json_array();
  /* jansson's encoder recurses; a pathological chain is cut rather than crash. */
  for (size_t k = 0; k < s->nchildren && depth < 1000; k++)
    json_array_append_new(kids, node(t, s->children[k], depth + 1));
  json_object_set_new(n, "children", kids);
  return n;
}

json_t *kr_trace_json(const kr_trace_t *t) {
  json_t *tree = json_array(), *hops = json_array();
  for (size_t k = 0; k < t->ntop; k++) json_array_append_new(tree, node(t, t->top[k], 0));
  kr_hop_t *rows = NULL;
  size_t n = 0;
  if (kr_hops(t, &rows, &n) == RIPPLE_OK) {
    for (size_t r = 0; r < n; r++)
      json_array_append_new(
          hops, json_pack("{s:s, s:s, s:I, s:I, s:I}", "component", rows[r].service, "write",
                          rows[r].name, "count", (json_int_t)rows[r].count, "p50_ns",
                          (json_int_t)rows[r].p50_ns, "max_ns", (json_int_t)rows[r].max_ns));
    free(rows);
  }
  /* The server's stalls as they are (docs/api.md); null when not known. */
  return json_pack("{s:s, s:b, s:I, s:I, s:o, s:o, s:o, s:O}", "cpid", t->cpid, "truncated",
                   t->truncated, "cpids", (json_int_t)t->ncpids, "writes", (json_int_t)t->n,
                   "start", time_json(t->t0_ns), "tree", tree, "hops", hops, "stalls",
                   t->stalls ? t->stalls : json_null());
}
