/*
 * compare.c - two cascades compared (ripplex/compare.h).
 *
 * Each trace's writes are grouped by hop (component, write, kind) with what
 * they took, sorted (ripplex/hops.h); the two sorted lists of hops are then
 * walked together, as a merge join.
 */
#include "ripplex/compare.h"

#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/hops.h"
#include "writes.h"

/* One side's hop. */
typedef struct hop {
  const char *component, *write, *kind;
  size_t count;
  int64_t p50, max;
} hop_t;

typedef struct side {
  hop_groups_t g;
  hop_t *h;
  size_t n;
} side_t;

static int key_cmp(const char *c1, const char *w1, const char *k1, const char *c2, const char *w2,
                   const char *k2) {
  int c = strcmp(c1, c2);
  if (!c) c = strcmp(w1, w2);
  return c ? c : strcmp(k1, k2);
}

/* s's hops, from trace grouped (ripplex/hops.h). */
static int group(const json_t *trace, side_t *s) {
  int rc = hops_group(trace, &s->g);
  if (rc != RIPPLE_OK || !s->g.n) return rc;
  s->h = calloc(s->g.n, sizeof *s->h);
  if (!s->h) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < s->g.n; i++) {
    const hop_group_t *g = &s->g.g[i];
    s->h[s->n++] =
        (hop_t){g->component, g->write, g->kind, g->n, g->took[(g->n - 1) / 2], g->took[g->n - 1]};
  }
  return RIPPLE_OK;
}

static json_t *side_json(const hop_t *h) {
  if (!h) return json_null();
  return json_pack("{s:I, s:f, s:f}", "count", (json_int_t)h->count, "p50_ms", (double)h->p50 / 1e6,
                   "max_ms", (double)h->max / 1e6);
}

static const char *change_of(const hop_t *a, const hop_t *b) {
  if (!a) return "appeared";
  if (!b) return "disappeared";
  if (a->count != b->count) return "count";
  int64_t d = cw_diff(b->max, a->max), ad = d == INT64_MIN ? INT64_MAX : d < 0 ? -d : d;
  if (ad < 10000000 || ad < a->max / 4) return "same";
  return d > 0 ? "slower" : "faster";
}

static json_t *hop_json(const hop_t *a, const hop_t *b) {
  const hop_t *k = a ? a : b;
  if (!k) return NULL;
  int64_t d = cw_diff(b ? b->max : 0, a ? a->max : 0);
  return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:f}", "component", k->component, "write",
                   k->write, "kind", k->kind, "change", change_of(a, b), "a", side_json(a), "b",
                   side_json(b), "delta_ms", (double)d / 1e6);
}

/* Most changed first: appeared and disappeared, then by |delta_ms|. */
static int rank_cmp(const void *x, const void *y) {
  const json_t *a = *(const json_t *const *)x, *b = *(const json_t *const *)y;
  int sa = json_is_null(json_object_get(a, "a")) || json_is_null(json_object_get(a, "b"));
  int sb = json_is_null(json_object_get(b, "a")) || json_is_null(json_object_get(b, "b"));
  if (sa != sb) return sb - sa;
  double da = json_real_value(json_object_get(a, "delta_ms"));
  double db = json_real_value(json_object_get(b, "delta_ms"));
  da = da < 0 ? -da : da;
  db = db < 0 ? -db : db;
  return (da < db) - (da > db);
}

static int hops_json(const side_t *a, const side_t *b, json_t *out) {
  size_t i = 0, j = 0, n = 0;
  json_t **v = calloc(a->n + b->n + 1, sizeof(json_t *));
  if (!v) return RIPPLE_ENOMEM;
  while (i < a->n || j < b->n) {
    int c = i == a->n   ? 1
            : j == b->n ? -1
                        : key_cmp(a->h[i].component, a->h[i].write, a->h[i].kind, b->h[j].component,
                                  b->h[j].write, b->h[j].kind);
    v[n] = hop_json(c <= 0 ? &a->h[i] : NULL, c >= 0 ? &b->h[j] : NULL);
    if (!v[n]) break;
    n++;
    i += c <= 0;
    j += c >= 0;
  }
  int rc = i < a->n || j < b->n ? RIPPLE_ENOMEM : RIPPLE_OK;
  qsort(v, n, sizeof(json_t *), rank_cmp);
  for (size_t k = 0; k < n; k++)
    if (json_array_append_new(out, v[k]) != 0) rc = RIPPLE_ENOMEM;
  free(v);
  return rc;
}

/* The components that made write on kind in s, as a JSON array. */
static json_t *makers(const side_t *s, const char *write, const char *kind) {
  json_t *v = json_array();
  for (size_t i = 0; v && i < s->n; i++)
    if (!strcmp(s->h[i].write, write) && !strcmp(s->h[i].kind, kind))
      json_array_append_new(v, json_string(s->h[i].component));
  return v;
}

/* Writes (and kinds) both cascades made, by different components. */
static int writers_json(const side_t *a, const side_t *b, json_t *out) {
  for (size_t i = 0; i < a->n; i++) {
    int seen = 0; /* this write and kind listed already */
    for (size_t k = 0; k < i && !seen; k++)
      seen = !strcmp(a->h[k].write, a->h[i].write) && !strcmp(a->h[k].kind, a->h[i].kind);
    if (seen) continue;
    json_t *ma = makers(a, a->h[i].write, a->h[i].kind),
           *mb = makers(b, a->h[i].write, a->h[i].kind);
    if (!ma || !mb) {
      json_decref(ma);
      json_decref(mb);
      return RIPPLE_ENOMEM;
    }
    if (json_array_size(mb) && !json_equal(ma, mb)) {
      json_t *e = json_pack("{s:s, s:s, s:o, s:o}", "write", a->h[i].write, "kind", a->h[i].kind,
                            "a", ma, "b", mb);
      if (!e || json_array_append_new(out, e) != 0) return RIPPLE_ENOMEM;
    } else {
      json_decref(ma);
      json_decref(mb);
    }
  }
  return RIPPLE_OK;
}

static json_t *summary(const side_t *s) {
  return json_pack("{s:f, s:I}", "total_ms", (double)s->g.total / 1e6, "writes",
                   (json_int_t)s->g.writes);
}

int compare_compute(const json_t *a, const json_t *b, json_t **out) {
  *out = NULL;
  side_t sa = {0}, sb = {0};
  int rc = group(a, &sa);
  if (rc == RIPPLE_OK) rc = group(b, &sb);
  json_t *hops = json_array(), *writers = json_array();
  if (rc == RIPPLE_OK && (!hops || !writers)) rc = RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) rc = hops_json(&sa, &sb, hops);
  if (rc == RIPPLE_OK) rc = writers_json(&sa, &sb, writers);
  if (rc == RIPPLE_OK) {
    *out =
        json_pack("{s:o, s:o, s:f, s:o, s:o}", "a", summary(&sa), "b", summary(&sb), "delta_ms",
                  (double)cw_diff(sb.g.total, sa.g.total) / 1e6, "hops", hops, "writers", writers);
    hops = writers = NULL;
    if (!*out) rc = RIPPLE_ENOMEM;
  }
  json_decref(hops);
  json_decref(writers);
  free(sa.h);
  free(sb.h);
  hops_free(&sa.g);
  hops_free(&sb.g);
  return rc;
}
