/*
 * writes.c - a trace's writes and their predecessors (writes.h).
 *
 * Three sorted indexes stand in for hash tables: writes by (CPID, time),
 * writes by (object, time), and mergelogs by CPID. The first of a CPID's
 * group is the write that made it; the one before a write in its object's
 * group is its object's previous write; a binary search in a cause's group
 * finds that cause's latest write before a given one.
 */
#include "writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

typedef struct ix {
  const char *key;
  size_t rank; /* order by end time */
  size_t w;
} ix_t;

typedef struct mlx {
  const char *cpid;
  const json_t *causes; /* its trigger, else its sources */
  int root;             /* no sources: a person's change */
} mlx_t;

typedef struct build {
  cw_trace_t *t;
  size_t *rank;
  ix_t *cp, *ob, *ch; /* by CPID, by object, by owner */
  size_t nob, nch;
  mlx_t *ml;
  size_t nml;
} build_t;

static const char *str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

static int ix_cmp(const void *a, const void *b) {
  const ix_t *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

static int ml_cmp(const void *a, const void *b) {
  return strcmp(((const mlx_t *)a)->cpid, ((const mlx_t *)b)->cpid);
}

/* The object a write is of: its uid, else kind, namespace and name; NULL
 * when it names none (a Pod's create by generateName). */
static char *object_key(const cw_write_t *w) {
  size_t n = strlen(w->uid) + strlen(w->kind) + strlen(w->ns) + strlen(w->oname) + 8;
  if (!*w->uid && !*w->oname) return NULL;
  char *k = malloc(n);
  if (!k) return NULL;
  if (*w->uid)
    snprintf(k, n, "u:%s", w->uid);
  else
    snprintf(k, n, "o:%s/%s/%s", w->kind, w->ns, w->oname);
  return k;
}

/* "kind/namespace/name", or NULL when a part is missing (or no memory). */
static char *name_key(const char *kind, const char *ns, const char *name) {
  if (!*kind || !*name) return NULL;
  size_t n = strlen(kind) + strlen(ns) + strlen(name) + 3;
  char *k = malloc(n);
  if (k) snprintf(k, n, "%s/%s/%s", kind, ns, name);
  return k;
}

/* The owner attribute "Kind/name" as a name_key in ns. */
static char *owner_key(const cw_write_t *w) {
  const char *slash = strchr(w->owner, '/');
  if (!slash || slash == w->owner) return NULL;
  size_t n = strlen(w->owner) + strlen(w->ns) + 2;
  char *k = malloc(n);
  if (k) snprintf(k, n, "%.*s/%s/%s", (int)(slash - w->owner), w->owner, w->ns, slash + 1);
  return k;
}

static int read_spans(const json_t *spans, cw_trace_t *t) {
  size_t n = json_array_size(spans), i;
  t->w = calloc(n ? n : 1, sizeof *t->w);
  t->keys = calloc(n ? n : 1, sizeof *t->keys);
  t->names = calloc(n ? n : 1, sizeof *t->names);
  t->owned = calloc(n ? n : 1, sizeof *t->owned);
  if (!t->w || !t->keys || !t->names || !t->owned) return RIPPLE_ENOMEM;
  const json_t *s;
  json_array_foreach(spans, i, s) {
    cw_write_t *w = &t->w[t->n];
    const json_t *a = json_object_get(s, "attributes");
    const char *end = json_string_value(json_object_get(s, "end"));
    w->cpid = str(s, "cpid");
    if (!*w->cpid || !end || ripple_time_parse(end, strlen(end), &w->end) != RIPPLE_OK) continue;
    w->service = str(s, "service");
    /* The watch agent's spans say when it saw a change (docs/watch.md), not
     * a write: as hops they would stand between a write and the next. */
    if (!strcmp(w->service, CW_WATCH_SERVICE)) continue;
    w->span_id = str(s, "span_id");
    w->name = str(s, "name");
    w->kind = str(a, "kind");
    w->ns = str(a, "namespace");
    w->oname = str(a, "name");
    w->uid = str(a, "uid");
    w->owner = str(a, "owner");
    w->pred = CW_NONE;
    t->keys[t->n] = object_key(w);
    t->names[t->n] = name_key(w->kind, w->ns, w->oname);
    t->owned[t->n] = owner_key(w);
    t->n++;
    if ((!t->keys[t->n - 1] && (*w->uid || *w->oname)) ||
        (!t->names[t->n - 1] && *w->kind && *w->oname) || (!t->owned[t->n - 1] && *w->owner))
      return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

typedef struct ord {
  int64_t end;
  size_t i;
} ord_t;

static int by_end(const void *a, const void *b) {
  const ord_t *x = a, *y = b;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int index_writes(build_t *b) {
  cw_trace_t *t = b->t;
  ord_t *order = malloc(t->n * sizeof *order);
  b->rank = malloc(t->n * sizeof *b->rank);
  b->cp = malloc(t->n * sizeof *b->cp);
  b->ob = malloc(t->n * sizeof *b->ob);
  b->ch = malloc(t->n * sizeof *b->ch);
  if (!order || !b->rank || !b->cp || !b->ob || !b->ch) {
    free(order);
    return RIPPLE_ENOMEM;
  }
  for (size_t i = 0; i < t->n; i++) order[i] = (ord_t){t->w[i].end, i};
  qsort(order, t->n, sizeof *order, by_end);
  for (size_t r = 0; r < t->n; r++) b->rank[order[r].i] = r;
  t->first = order[0].i;
  t->last = order[t->n - 1].i;
  free(order);
  for (size_t i = 0; i < t->n; i++) {
    b->cp[i] = (ix_t){t->w[i].cpid, b->rank[i], i};
    if (t->keys[i]) b->ob[b->nob++] = (ix_t){t->keys[i], b->rank[i], i};
    if (t->owned[i]) b->ch[b->nch++] = (ix_t){t->owned[i], b->rank[i], i};
  }
  qsort(b->cp, t->n, sizeof *b->cp, ix_cmp);
  qsort(b->ob, b->nob, sizeof *b->ob, ix_cmp);
  qsort(b->ch, b->nch, sizeof *b->ch, ix_cmp);
  return RIPPLE_OK;
}

static int index_mergelogs(build_t *b, const json_t *mergelogs) {
  size_t n = json_array_size(mergelogs), i;
  b->ml = malloc((n ? n : 1) * sizeof *b->ml);
  if (!b->ml) return RIPPLE_ENOMEM;
  const json_t *m;
  json_array_foreach(mergelogs, i, m) {
    const json_t *trig = json_object_get(m, "trigger");
    const json_t *src = json_object_get(m, "sources");
    if (!*str(m, "cpid")) continue;
    b->ml[b->nml++] = (mlx_t){str(m, "cpid"), json_array_size(trig) ? trig : src,
                              json_is_array(src) && !json_array_size(src)};
  }
  qsort(b->ml, b->nml, sizeof *b->ml, ml_cmp);
  return RIPPLE_OK;
}

/* The first entry of key's group in the sorted index, or n. */
static size_t group_of(const ix_t *x, size_t n, const char *key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(x[mid].key, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && !strcmp(x[lo].key, key) ? lo : n;
}

/* The latest write of key's group in index x ranked before rank, or
 * CW_NONE. */
static size_t latest_before(const ix_t *x, size_t n, const char *key, size_t rank) {
  size_t g = group_of(x, n, key), best = CW_NONE;
  for (size_t lo = g, hi = n; lo < hi;) { /* the group's entries ranked before */
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(x[mid].key, key) == 0 && x[mid].rank < rank) {
      best = x[mid].w;
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return best;
}

static const mlx_t *mergelog_of(const build_t *b, const char *cpid) {
  mlx_t k = {cpid, NULL, 0};
  return bsearch(&k, b->ml, b->nml, sizeof *b->ml, ml_cmp);
}

static int is_status(const cw_write_t *w) {
  size_t n = strlen(w->name);
  return n > 7 && !strcmp(w->name + n - 7, "/status");
}

static void consider(const build_t *b, size_t cur, size_t j, size_t *best) {
  if (j == CW_NONE || j == cur || b->rank[j] >= b->rank[cur]) return;
  if (*best == CW_NONE || b->rank[*best] < b->rank[j]) *best = j;
}

static void link_writes(build_t *b) {
  cw_trace_t *t = b->t;
  for (size_t k = 0; k < b->nob; k++) /* an object's previous write */
    if (k > 0 && !strcmp(b->ob[k].key, b->ob[k - 1].key)) t->w[b->ob[k].w].pred = b->ob[k - 1].w;
  for (size_t k = 0, first = 0; k < t->n; k++) {
    if (k == 0 || strcmp(b->cp[k].key, b->cp[k - 1].key) != 0) first = b->cp[k].w;
    size_t i = b->cp[k].w, best = t->w[i].pred;
    const mlx_t *m = mergelog_of(b, t->w[i].cpid);
    t->w[i].pred = CW_NONE;
    if (first == i && m && m->root) continue; /* a person's change */
    consider(b, i, best, &t->w[i].pred);
    if (is_status(&t->w[i]) && t->names[i])
      consider(b, i, latest_before(b->ch, b->nch, t->names[i], b->rank[i]), &t->w[i].pred);
    if (first != i) {
      consider(b, i, first, &t->w[i].pred);
      continue;
    }
    size_t c;
    const json_t *v;
    json_array_foreach(m ? m->causes : NULL, c, v) {
      if (json_is_string(v))
        consider(b, i, latest_before(b->cp, t->n, json_string_value(v), b->rank[i]), &t->w[i].pred);
    }
  }
  for (size_t i = 0; i < t->n; i++)
    t->w[i].took = t->w[i].pred == CW_NONE ? 0 : cw_diff(t->w[i].end, t->w[t->w[i].pred].end);
}

int cw_load(const json_t *trace, cw_trace_t *t) {
  memset(t, 0, sizeof *t);
  t->last = t->first = CW_NONE;
  if (!json_is_object(trace)) return RIPPLE_EINVAL;
  build_t b = {.t = t};
  int rc = read_spans(json_object_get(trace, "spans"), t);
  if (rc == RIPPLE_OK && t->n) rc = index_writes(&b);
  if (rc == RIPPLE_OK && t->n) rc = index_mergelogs(&b, json_object_get(trace, "mergelogs"));
  if (rc == RIPPLE_OK && t->n) link_writes(&b);
  free(b.rank);
  free(b.cp);
  free(b.ob);
  free(b.ch);
  free(b.ml);
  if (rc != RIPPLE_OK) cw_free(t);
  return rc;
}

void cw_free(cw_trace_t *t) {
  for (size_t i = 0; i < t->n; i++) {
    if (t->keys) free(t->keys[i]);
    if (t->names) free(t->names[i]);
    if (t->owned) free(t->owned[i]);
  }
  free(t->keys);
  free(t->names);
  free(t->owned);
  free(t->w);
  memset(t, 0, sizeof *t);
  t->last = t->first = CW_NONE;
}
