/*
 * paths.c - critical paths and comparisons from whole traces (paths.h).
 */
#include "analysis/paths.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "graph/trace.h"
#include "ripple/ripple.h"
#include "ripplex/compare.h"
#include "ripplex/critpath.h"

/* cpid's whole trace in scope, parsed into *out; the HTTP status. */
static int load(core_t *c, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                json_t **out) {
  sbuf_t b;
  sbuf_init(&b);
  *out = NULL;
  int status = trace_answer(c, cpid, scope, limit, NULL, &b);
  if (status == 200 && !(*out = json_loadb(b.p ? b.p : "", b.len, 0, NULL))) status = 500;
  sbuf_free(&b);
  return status;
}

/* o's members put (as JSON text) into out, and o freed; 500 without memory. */
static int put(json_t *o, sbuf_t *out) {
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  if (!s) return 500;
  sbuf_puts(out, s);
  free(s);
  return 200;
}

/* The details (GET /details's "writes") of the path's spans only, or NULL:
 * without them the path has no parts, and is still right. Reading a whole
 * cascade's facts would cost more than the path (docs/benchmarks.md). */
static json_t *details_of(tdet_t *d, const json_t *path) {
  const json_t *hops = json_object_get(path, "hops"), *h;
  size_t n = json_array_size(hops), k = 0, i;
  if (!d || !n) return NULL;
  ripple_cpid_t *cpids = calloc(n, sizeof *cpids);
  const char **ids = calloc(n, sizeof *ids);
  json_t *j = NULL;
  json_array_foreach(hops, i, h) {
    const char *c = json_string_value(json_object_get(h, "cpid"));
    const char *id = json_string_value(json_object_get(h, "span_id"));
    if (cpids && ids && c && id && ripple_cpid_parse(c, strlen(c), &cpids[k]) == RIPPLE_OK)
      ids[k++] = id;
  }
  sbuf_t b;
  sbuf_init(&b);
  if (cpids && ids && tdet_span_writes(d, cpids, k, ids, k, &b) == 200)
    j = json_loadb(b.p ? b.p : "", b.len, 0, NULL);
  sbuf_free(&b);
  free(cpids);
  free(ids);
  return j;
}

int paths_critical(core_t *c, tdet_t *details, const ripple_cpid_t *cpid, graph_scope_t scope,
                   size_t limit, sbuf_t *out) {
  json_t *t, *path = NULL;
  int status = load(c, cpid, scope, limit, &t);
  if (status != 200) return status;
  if (critpath_compute(t, &path) != RIPPLE_OK) {
    json_decref(t);
    return 500;
  }
  json_t *d = details_of(details, path);
  int rc = critpath_add_parts(path, d);
  json_decref(d);
  if (rc != RIPPLE_OK) {
    json_decref(t);
    json_decref(path);
    return 500;
  }
  json_object_set(path, "cpid", json_object_get(t, "cpid"));
  json_object_set(path, "scope", json_object_get(t, "scope"));
  json_object_set(path, "truncated", json_object_get(t, "truncated"));
  json_decref(t);
  return put(path, out);
}

/* The summary of one side: its cpid and truncated beside what compare said. */
static void side(json_t *cmp, const char *key, const json_t *t) {
  json_t *s = json_object_get(cmp, key);
  json_object_set(s, "cpid", json_object_get(t, "cpid"));
  json_object_set(s, "truncated", json_object_get(t, "truncated"));
}

int paths_compare(core_t *c, const ripple_cpid_t *a, const ripple_cpid_t *b, graph_scope_t scope,
                  size_t limit, sbuf_t *out) {
  json_t *ta, *tb = NULL, *cmp = NULL;
  int status = load(c, a, scope, limit, &ta);
  if (status == 200) status = load(c, b, scope, limit, &tb);
  if (status == 200 && compare_compute(ta, tb, &cmp) != RIPPLE_OK) status = 500;
  if (status == 200) {
    side(cmp, "a", ta);
    side(cmp, "b", tb);
    json_object_set(cmp, "scope", json_object_get(ta, "scope"));
  }
  json_decref(ta);
  json_decref(tb);
  if (status != 200) {
    json_decref(cmp);
    return status;
  }
  return put(cmp, out);
}
