/*
 * critpath.c - the critical path of a cascade (ripplex/critpath.h), from the
 * writes and predecessors writes.c finds; and each hop split into its parts
 * from the details joined to its spans.
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

/* ---- a hop split into its parts ------------------------------------------ */

/* v moved into [lo, hi] (lo <= hi); *moved set when it was outside. */
static int64_t clamp(int64_t v, int64_t lo, int64_t hi, int *moved) {
  if (v < lo || v > hi) *moved = 1;
  return v < lo ? lo : v > hi ? hi : v;
}

void critpath_split(int64_t pred_end, int64_t seen, int64_t received, int64_t end,
                    critpath_parts_t *out) {
  *out = (critpath_parts_t){-1, -1, -1, 0};
  /* Cut points from pred_end to hi, each clamped after the one before, so
   * the parts between them are never negative and add up to hi - pred_end. */
  int64_t hi = end < pred_end ? pred_end : end, span;
  if (__builtin_sub_overflow(hi, pred_end, &span)) return; /* a hostile trace's times */
  int64_t a = pred_end, b = hi;
  if (seen != CRITPATH_UNKNOWN) {
    a = clamp(seen, pred_end, hi, &out->clamped);
    out->seen = a - pred_end;
  }
  if (received != CRITPATH_UNKNOWN) {
    b = clamp(received, a, hi, &out->clamped);
    out->admission = hi - b;
  }
  if (seen != CRITPATH_UNKNOWN || received != CRITPATH_UNKNOWN) out->wrote = b - a;
}

/* The time at o's key k, or CRITPATH_UNKNOWN. */
static int64_t time_at(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  int64_t ns;
  if (!json_is_string(v) || ripple_time_parse(json_string_value(v), json_string_length(v), &ns))
    return CRITPATH_UNKNOWN;
  return ns;
}

/* details' writes by span id (borrowed references), or NULL. */
static json_t *by_span(const json_t *details) {
  json_t *m = json_object(), *w;
  size_t i;
  json_array_foreach(json_object_get(details, "writes"), i, w) {
    const char *id = json_string_value(json_object_get(w, "span_id"));
    if (m && id && *id && json_object_set(m, id, w) != 0) {
      json_decref(m);
      return NULL;
    }
  }
  return m;
}

static const json_t *fact_of(const json_t *m, const json_t *hop, const char *which) {
  const char *id = json_string_value(json_object_get(hop, "span_id"));
  return id ? json_object_get(json_object_get(m, id), which) : NULL;
}

static json_t *parts_json(const critpath_parts_t *p) {
  json_t *o = json_object();
  int bad = !o;
  if (p->seen >= 0) bad |= json_object_set_new(o, "seen_ms", json_real((double)p->seen / 1e6));
  if (p->wrote >= 0) bad |= json_object_set_new(o, "wrote_ms", json_real((double)p->wrote / 1e6));
  if (p->admission >= 0)
    bad |= json_object_set_new(o, "admission_ms", json_real((double)p->admission / 1e6));
  if (p->clamped) bad |= json_object_set_new(o, "clamped", json_true());
  if (bad) json_decref(o);
  return bad ? NULL : o;
}

int critpath_add_parts(json_t *path, const json_t *details) {
  if (!json_is_object(path)) return RIPPLE_EINVAL;
  json_t *hops = json_object_get(path, "hops");
  if (!json_array_size(hops) || !json_array_size(json_object_get(details, "writes")))
    return RIPPLE_OK;
  json_t *m = by_span(details);
  if (!m) return RIPPLE_ENOMEM;
  int rc = RIPPLE_OK;
  for (size_t k = 1; k < json_array_size(hops) && rc == RIPPLE_OK; k++) {
    json_t *hop = json_array_get(hops, k);
    const json_t *pred = json_array_get(hops, k - 1);
    int64_t seen = time_at(fact_of(m, pred, "change"), "time");
    int64_t received = time_at(fact_of(m, hop, "audit"), "received");
    int64_t from = time_at(pred, "end"), to = time_at(hop, "end");
    if ((seen == CRITPATH_UNKNOWN && received == CRITPATH_UNKNOWN) || from == CRITPATH_UNKNOWN ||
        to == CRITPATH_UNKNOWN)
      continue;
    critpath_parts_t p;
    critpath_split(from, seen, received, to, &p);
    json_t *o = parts_json(&p);
    if (!o || json_object_set_new(hop, "parts", o) != 0) rc = RIPPLE_ENOMEM;
  }
  json_decref(m);
  return rc;
}
