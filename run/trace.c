/*
 * trace.c - the hops of a cascade from its trace as kubectl-ripple's `trace
 * -o json` writes it (docs/kubectl-ripple.md, "-o json"): a "tree" of nodes,
 * each with its component, write, kind, cause (null for a root), at_ns (its
 * end, from the change) and children.
 *
 * The rule is export-test's (kubectl/export.c): a hop is every write with a
 * cause and a kind, grouped by component, write and kind; the person's root
 * writes (no cause) are the change, nodes without a kind the watch agent's
 * observations. The document comes from another program and, through it,
 * from the trace server: every field is checked, and the walk is bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"

#define XP_TREE_DEPTH 1100 /* kubectl-ripple cuts its tree at 1000 */

typedef struct walk {
  xp_seen_t *rows;
  size_t n, cap;
  char *err;
  size_t errcap;
} walk_t;

static int shape(walk_t *w, const char *what) {
  snprintf(w->err, w->errcap,
           "the trace (kubectl ripple trace -o json) is not the documented "
           "shape: %s",
           what);
  return RIPPLE_EJSON;
}

static int add(walk_t *w, const char *writer, const char *write, const char *kind, int64_t at) {
  size_t r = 0;
  while (r < w->n && (strcmp(w->rows[r].writer, writer) != 0 ||
                      strcmp(w->rows[r].write, write) != 0 || strcmp(w->rows[r].kind, kind) != 0))
    r++;
  if (r == w->n) {
    if (w->n == w->cap) {
      size_t cap = w->cap ? w->cap * 2 : 16;
      xp_seen_t *g = realloc(w->rows, cap * sizeof *g);
      if (!g) return RIPPLE_ENOMEM;
      w->rows = g, w->cap = cap;
    }
    xp_seen_t *s = &w->rows[w->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->writer, sizeof s->writer, "%s", writer);
    snprintf(s->write, sizeof s->write, "%s", write);
    snprintf(s->kind, sizeof s->kind, "%s", kind);
    s->last_ns = INT64_MIN;
  }
  w->rows[r].count++;
  if (at > w->rows[r].last_ns) w->rows[r].last_ns = at;
  return RIPPLE_OK;
}

static int node(walk_t *w, const json_t *v, int depth) {
  if (depth > XP_TREE_DEPTH) return shape(w, "the tree is deeper than kubectl-ripple makes it");
  const char *writer = json_string_value(json_object_get(v, "component"));
  const char *write = json_string_value(json_object_get(v, "write"));
  const char *kind = json_string_value(json_object_get(v, "kind"));
  const json_t *cause = json_object_get(v, "cause"), *at = json_object_get(v, "at_ns");
  const json_t *kids = json_object_get(v, "children");
  if (!writer || !write || !kind || !json_is_integer(at) || !json_is_array(kids) ||
      !(json_is_null(cause) || json_is_string(cause)))
    return shape(w, "a node needs component, write, kind, cause, at_ns and children");
  int rc = RIPPLE_OK;
  if (!json_is_null(cause) && *kind) rc = add(w, writer, write, kind, json_integer_value(at));
  size_t i;
  const json_t *k;
  json_array_foreach(kids, i, k) {
    if (rc != RIPPLE_OK) break;
    rc = node(w, k, depth + 1);
  }
  return rc;
}

int xp_seen_from_trace(const json_t *trace, xp_seen_t **out, size_t *n, char *err, size_t cap) {
  walk_t w = {NULL, 0, 0, err, cap};
  const json_t *tree = json_object_get(trace, "tree");
  int rc = json_is_array(tree) ? RIPPLE_OK : shape(&w, "no \"tree\" array");
  size_t i;
  const json_t *v;
  json_array_foreach(tree, i, v) {
    if (rc != RIPPLE_OK) break;
    rc = node(&w, v, 0);
  }
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory");
  if (rc != RIPPLE_OK) {
    free(w.rows);
    return rc;
  }
  *out = w.rows;
  *n = w.n;
  return RIPPLE_OK;
}
