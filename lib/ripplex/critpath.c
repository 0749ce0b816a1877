/*
 * critpath.c - the critical path of a cascade (ripplex/critpath.h).
 *
 * A trace holds at most the server's limit of spans (10,000 in the
 * benchmark) and a path a few dozen hops, so each step back scans the writes
 * once: no index to build, nothing to keep consistent.
 */
#include "ripplex/critpath.h"

#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

typedef struct wr {
  const char *cpid, *span_id, *service, *name, *kind, *ns, *oname, *uid;
  int64_t end;
} wr_t;

typedef struct path {
  wr_t *w;
  size_t n;
  const json_t *mergelogs;
} path_t;

static const char *str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

static int time_of(const json_t *o, const char *k, int64_t *ns) {
  const char *s = json_string_value(json_object_get(o, k));
  return s && ripple_time_parse(s, strlen(s), ns) == RIPPLE_OK;
}

/* The writes of the trace's spans that can be read; RIPPLE_ENOMEM. */
static int load(const json_t *spans, path_t *p) {
  size_t n = json_array_size(spans), i;
  p->w = calloc(n ? n : 1, sizeof *p->w);
  if (!p->w) return RIPPLE_ENOMEM;
  const json_t *s;
  json_array_foreach(spans, i, s) {
    wr_t *w = &p->w[p->n];
    const json_t *a = json_object_get(s, "attributes");
    w->cpid = str(s, "cpid");
    if (!*w->cpid || !time_of(s, "end", &w->end)) continue;
    w->span_id = str(s, "span_id");
    w->service = str(s, "service");
    w->name = str(s, "name");
    w->kind = str(a, "kind");
    w->ns = str(a, "namespace");
    w->oname = str(a, "name");
    w->uid = str(a, "uid");
    p->n++;
  }
  return RIPPLE_OK;
}

/* Whether write a is before write b: by end, then by their order. */
static int before(const path_t *p, size_t a, size_t b) {
  int64_t ea = p->w[a].end, eb = p->w[b].end;
  return ea != eb ? ea < eb : a < b;
}

static int same_object(const wr_t *a, const wr_t *b) {
  if (*a->uid || *b->uid) return *a->uid && !strcmp(a->uid, b->uid);
  return *a->oname && !strcmp(a->oname, b->oname) && !strcmp(a->kind, b->kind) &&
         !strcmp(a->ns, b->ns);
}

/* The first write of cpid (the one that made it here), or SIZE_MAX. */
static size_t first_of(const path_t *p, const char *cpid) {
  size_t f = SIZE_MAX;
  for (size_t j = 0; j < p->n; j++)
    if (!strcmp(p->w[j].cpid, cpid) && (f == SIZE_MAX || before(p, j, f))) f = j;
  return f;
}

/* What cpid's merge was caused by: its mergelog's trigger, else its
 * sources; NULL for a root or a CPID with no mergelog here. */
static const json_t *causes_of(const path_t *p, const char *cpid) {
  size_t i;
  const json_t *m;
  json_array_foreach(p->mergelogs, i, m) {
    if (strcmp(str(m, "cpid"), cpid) != 0) continue;
    const json_t *t = json_object_get(m, "trigger");
    return json_array_size(t) ? t : json_object_get(m, "sources");
  }
  return NULL;
}

static int named(const json_t *ids, const char *cpid) {
  size_t i;
  const json_t *v;
  json_array_foreach(ids, i, v) {
    if (!strcmp(json_string_value(v) ? json_string_value(v) : "", cpid)) return 1;
  }
  return 0;
}

/* Keep j as *best if it is a later candidate before cur. */
static void consider(const path_t *p, size_t cur, size_t j, size_t *best) {
  if (j == SIZE_MAX || j == cur || !before(p, j, cur)) return;
  if (*best == SIZE_MAX || before(p, *best, j)) *best = j;
}

/* cur's predecessor (critpath.h), or SIZE_MAX. */
static size_t pred(const path_t *p, size_t cur) {
  const wr_t *w = &p->w[cur];
  size_t best = SIZE_MAX, first = first_of(p, w->cpid);
  for (size_t j = 0; j < p->n; j++)
    if (same_object(&p->w[j], w)) consider(p, cur, j, &best);
  if (first != cur) {
    consider(p, cur, first, &best);
    return best;
  }
  const json_t *causes = causes_of(p, w->cpid);
  for (size_t j = 0; causes && j < p->n; j++)
    if (named(causes, p->w[j].cpid)) consider(p, cur, j, &best);
  return best;
}

static json_t *hop_json(const wr_t *w, int64_t added) {
  char end[40];
  ripple_time_format(w->end, end);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f}", "cpid", w->cpid, "span_id",
                   w->span_id, "component", w->service, "write", w->name, "kind", w->kind,
                   "namespace", w->ns, "name", w->oname, "end", end, "ms", (double)added / 1e6);
}

/* The chain ending at the last write, first write first, into hops. */
static int walk(const path_t *p, json_t *hops, int64_t *total) {
  size_t last = SIZE_MAX;
  for (size_t j = 0; j < p->n; j++)
    if (last == SIZE_MAX || before(p, last, j)) last = j;
  *total = 0;
  if (last == SIZE_MAX) return RIPPLE_OK;
  size_t *chain = malloc(p->n * sizeof *chain), len = 0;
  if (!chain) return RIPPLE_ENOMEM;
  /* Each predecessor is strictly before its write: at most n steps. */
  for (size_t cur = last; cur != SIZE_MAX && len < p->n; cur = pred(p, cur)) chain[len++] = cur;
  int rc = RIPPLE_OK;
  for (size_t k = len; k-- > 0 && rc == RIPPLE_OK;) {
    const wr_t *w = &p->w[chain[k]];
    int64_t added = k + 1 < len ? w->end - p->w[chain[k + 1]].end : 0;
    json_t *h = hop_json(w, added);
    if (!h || json_array_append_new(hops, h) != 0) rc = RIPPLE_ENOMEM;
  }
  *total = p->w[last].end - p->w[chain[len - 1]].end;
  free(chain);
  return rc;
}

int critpath_compute(const json_t *trace, json_t **out) {
  *out = NULL;
  if (!json_is_object(trace)) return RIPPLE_EINVAL;
  path_t p = {.mergelogs = json_object_get(trace, "mergelogs")};
  int rc = load(json_object_get(trace, "spans"), &p);
  json_t *hops = json_array();
  int64_t total = 0;
  if (rc == RIPPLE_OK && !hops) rc = RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) rc = walk(&p, hops, &total);
  if (rc == RIPPLE_OK) {
    *out = json_pack("{s:o, s:f, s:I}", "hops", hops, "total_ms", (double)total / 1e6, "writes",
                     (json_int_t)p.n);
    hops = NULL;
    if (!*out) rc = RIPPLE_ENOMEM;
  }
  json_decref(hops);
  free(p.w);
  return rc;
}
