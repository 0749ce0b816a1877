/*
 * tree.c - the cascade of one change as a tree of spans, from the trace
 * server's answers (related CPIDs, their mergelogs, their spans).
 *
 * Every traced write is a span whose start is when its cause was admitted
 * (docs/webhook.md). Spans are put in time order (end, then start, span id,
 * CPID; a duplicate delivery of the same span is dropped) and each one's
 * cause is found from what the webhook did:
 *
 *   1. A person's write of a root CPID (the CPID's first span, and every
 *      other span of that CPID by the same writer: one apply of several
 *      objects) has no cause: it is a root of the tree.
 *   2. A span that keeps a CPID made earlier (a Pod created by a ReplicaSet
 *      controller reusing the ReplicaSet's CPID, a binding, a status write)
 *      was caused by that CPID's first span; for a root CPID by the person's
 *      latest earlier write of the same object when there is one.
 *   3. The first span of a CPID made by a merge was caused by the latest
 *      first span among the CPID's sources (its mergelog's edges); a source
 *      without spans stands for its own sources. No source in the trace:
 *      a root of the tree.
 *
 * The tree shows a span under its cause, except that later writes of one
 * object with the same cause are shown under the first of them (a Pod's
 * status writes under its binding), and writes of the object the cause
 * itself wrote stay under the cause. "Time since cause" is always the span's
 * own end - start. A span's cause always precedes it in time order, so the
 * tree has no cycles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

typedef struct cpinfo {
  const char *id;
  const json_t *sources; /* the mergelog's, borrowed; NULL without a mergelog */
  int root;
  long first;        /* its first span, -1 if none */
  const char *owner; /* a root's writer: its first span's service */
} cpinfo_t;

typedef struct build {
  kr_trace_t *t;
  cpinfo_t *cp;
  size_t ncp;
  json_t *index;  /* cpid -> index into cp */
  json_t *firsts; /* "cause|kind|ns|name" -> the first span shown there */
  json_t *tops;   /* "kind|ns|name" -> the latest top-level span */
  size_t budget;  /* steps left for walking through CPIDs without spans */
} build_t;

static const char *str_or(const json_t *v, const char *dflt) {
  return json_is_string(v) ? json_string_value(v) : dflt;
}

static long cp_lookup(const build_t *b, const char *id) {
  const json_t *v = id ? json_object_get(b->index, id) : NULL;
  return v ? (long)json_integer_value(v) : -1;
}

static int bad(char *err, size_t cap, const char *what) {
  snprintf(err, cap, "the trace server's answer is not the documented shape: %s", what);
  return RIPPLE_EJSON;
}

static int load_cpids(build_t *b, const kr_answers_t *a, char *err, size_t cap) {
  const char *cpid = str_or(json_object_get(a->related, "cpid"), NULL);
  const json_t *rel = json_object_get(a->related, "related");
  if (!cpid || !json_is_array(rel)) return bad(err, cap, "related needs cpid and related[]");
  snprintf(b->t->cpid, sizeof b->t->cpid, "%s", cpid);
  b->t->truncated = json_is_true(json_object_get(a->related, "truncated"));
  b->ncp = json_array_size(rel);
  b->cp = calloc(b->ncp ? b->ncp : 1, sizeof *b->cp);
  if (!b->cp) return RIPPLE_ENOMEM;
  size_t i;
  const json_t *v;
  json_array_foreach(rel, i, v) {
    if (!json_is_string(v)) return bad(err, cap, "related[] holds a non-string");
    b->cp[i] = (cpinfo_t){json_string_value(v), NULL, 0, -1, NULL};
    json_object_set_new(b->index, b->cp[i].id, json_integer((json_int_t)i));
  }
  b->t->ncpids = b->ncp;
  const json_t *mls = json_object_get(a->mergelogs, "mergelogs");
  if (!json_is_array(mls)) return bad(err, cap, "mergelogs needs mergelogs[]");
  json_array_foreach(mls, i, v) {
    long c = cp_lookup(b, str_or(json_object_get(v, "cpid"), NULL));
    const json_t *srcs = json_object_get(v, "sources");
    if (c < 0 || !json_is_array(srcs)) continue;
    b->cp[c].sources = srcs;
  }
  for (size_t c = 0; c < b->ncp; c++) {
    b->cp[c].root = b->cp[c].sources ? json_array_size(b->cp[c].sources) == 0
                                     : b->cp[c].id && !strcmp(b->cp[c].id, b->t->cpid);
  }
  return RIPPLE_OK;
}

static int load_span(const json_t *v, kr_span_t *s) {
  const json_t *attrs = json_object_get(v, "attributes");
  const char *start = str_or(json_object_get(v, "start"), NULL);
  const char *end = str_or(json_object_get(v, "end"), NULL);
  memset(s, 0, sizeof *s);
  s->cpid = str_or(json_object_get(v, "cpid"), NULL);
  s->span_id = str_or(json_object_get(v, "span_id"), NULL);
  s->service = str_or(json_object_get(v, "service"), NULL);
  s->name = str_or(json_object_get(v, "name"), NULL);
  if (!s->cpid || !s->span_id || !s->service || !s->name || !start || !end) return -1;
  if (ripple_time_parse(start, strlen(start), &s->start_ns) != RIPPLE_OK ||
      ripple_time_parse(end, strlen(end), &s->end_ns) != RIPPLE_OK)
    return -1;
  s->kind = str_or(json_object_get(attrs, "kind"), "");
  s->ns = str_or(json_object_get(attrs, "namespace"), "");
  s->oname = str_or(json_object_get(attrs, "name"), "");
  s->uid = str_or(json_object_get(attrs, "uid"), "");
  s->user = str_or(json_object_get(attrs, "user"), "");
  s->operation = str_or(json_object_get(attrs, "operation"), "");
  s->subresource = str_or(json_object_get(attrs, "subresource"), "");
  s->cause = s->parent = -1;
  return 0;
}

static int span_cmp(const void *pa, const void *pb) {
  const kr_span_t *a = pa, *b = pb;
  if (a->end_ns != b->end_ns) return a->end_ns < b->end_ns ? -1 : 1;
  if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
  int c = strcmp(a->span_id, b->span_id);
  return c ? c : strcmp(a->cpid, b->cpid);
}

static int load_spans(build_t *b, const kr_answers_t *a, char *err, size_t cap) {
  const json_t *arr = json_object_get(a->spans, "spans");
  if (!json_is_array(arr)) return bad(err, cap, "spans needs spans[]");
  kr_trace_t *t = b->t;
  t->spans = calloc(json_array_size(arr) + 1, sizeof *t->spans);
  if (!t->spans) return RIPPLE_ENOMEM;
  size_t i;
  const json_t *v;
  json_array_foreach(arr, i, v) {
    kr_span_t s;
    if (load_span(v, &s) != 0 || cp_lookup(b, s.cpid) < 0) continue;
    t->spans[t->n++] = s;
  }
  qsort(t->spans, t->n, sizeof *t->spans, span_cmp);
  size_t kept = 0; /* at-least-once delivery: the same (cpid, span_id) twice */
  for (i = 0; i < t->n; i++) {
    if (kept && !strcmp(t->spans[kept - 1].span_id, t->spans[i].span_id) &&
        !strcmp(t->spans[kept - 1].cpid, t->spans[i].cpid))
      continue;
    t->spans[kept++] = t->spans[i];
  }
  t->n = kept;
  for (i = 0; i < t->n; i++) {
    cpinfo_t *c = &b->cp[cp_lookup(b, t->spans[i].cpid)];
    if (c->first < 0) {
      c->first = (long)i;
      c->owner = t->spans[i].service;
    }
  }
  return RIPPLE_OK;
}

/* The latest first span among c's sources that precedes span `before`. */
static long source_cause(build_t *b, long c, long before, int depth) {
  long best = -1;
  size_t k;
  const json_t *v;
  json_array_foreach(b->cp[c].sources, k, v) {
    long s = cp_lookup(b, json_string_value(v));
    if (s < 0 || s == c || !b->budget) continue;
    b->budget--;
    long f = b->cp[s].first;
    if (f < 0 && depth < 16 && b->cp[s].sources) f = source_cause(b, s, before, depth + 1);
    if (f >= 0 && f < before && f > best) best = f;
  }
  return best;
}

static void obj_key(const kr_span_t *s, long cause, char *out, size_t cap) {
  if (cause >= 0)
    snprintf(out, cap, "%ld\x1f%s\x1f%s\x1f%s", cause, s->kind, s->ns, s->oname);
  else
    snprintf(out, cap, "%s\x1f%s\x1f%s", s->kind, s->ns, s->oname);
}

static int same_object(const kr_span_t *a, const kr_span_t *b) {
  return *a->oname && !strcmp(a->oname, b->oname) && !strcmp(a->kind, b->kind) &&
         !strcmp(a->ns, b->ns);
}

static long find_cause(build_t *b, long i) {
  kr_span_t *s = &b->t->spans[i];
  long c = cp_lookup(b, s->cpid);
  cpinfo_t *cp = &b->cp[c];
  char key[1024];
  if (cp->root && !strcmp(s->service, cp->owner)) return -1;
  if (cp->first != i) {
    if (cp->root && *s->oname) {
      obj_key(s, -1, key, sizeof key);
      const json_t *top = json_object_get(b->tops, key);
      if (top) return (long)json_integer_value(top);
    }
    return cp->first;
  }
  return cp->sources ? source_cause(b, c, i, 0) : -1;
}

/* Where span i is shown: under its cause, or its object's first sibling. */
static long find_parent(build_t *b, long i) {
  kr_span_t *s = &b->t->spans[i];
  if (s->cause < 0 || !*s->oname || same_object(s, &b->t->spans[s->cause])) return s->cause;
  char key[1024];
  obj_key(s, s->cause, key, sizeof key);
  const json_t *f = json_object_get(b->firsts, key);
  if (f) return (long)json_integer_value(f);
  json_object_set_new(b->firsts, key, json_integer(i));
  return s->cause;
}

static int link(build_t *b) {
  kr_trace_t *t = b->t;
  size_t *nkids = calloc(t->n + 1, sizeof *nkids);
  t->top = calloc(t->n + 1, sizeof *t->top);
  if (!nkids || !t->top) {
    free(nkids);
    return RIPPLE_ENOMEM;
  }
  char key[1024];
  for (size_t i = 0; i < t->n; i++) {
    kr_span_t *s = &t->spans[i];
    s->cause = find_cause(b, (long)i);
    s->parent = find_parent(b, (long)i);
    if (s->parent < 0) {
      t->top[t->ntop++] = (long)i;
      if (*s->oname) {
        obj_key(s, -1, key, sizeof key);
        json_object_set_new(b->tops, key, json_integer((json_int_t)i));
      }
    } else {
      nkids[s->parent]++;
    }
  }
  for (size_t i = 0; i < t->n; i++) {
    if (nkids[i] && !(t->spans[i].children = calloc(nkids[i], sizeof(long)))) {
      free(nkids);
      return RIPPLE_ENOMEM;
    }
  }
  free(nkids);
  for (size_t i = 0; i < t->n; i++) {
    kr_span_t *p = t->spans[i].parent >= 0 ? &t->spans[t->spans[i].parent] : NULL;
    if (p) p->children[p->nchildren++] = (long)i;
  }
  return RIPPLE_OK;
}

int kr_trace_build(const kr_answers_t *a, kr_trace_t *out, char *err, size_t cap) {
  kr_trace_t t;
  memset(&t, 0, sizeof t);
  build_t b = {.t = &t, .budget = 1u << 20};
  b.index = json_object();
  b.firsts = json_object();
  b.tops = json_object();
  int rc = b.index && b.firsts && b.tops ? RIPPLE_OK : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) rc = load_cpids(&b, a, err, cap);
  if (rc == RIPPLE_OK) rc = load_spans(&b, a, err, cap);
  if (rc == RIPPLE_OK) rc = link(&b);
  if (rc == RIPPLE_OK) {
    long q = cp_lookup(&b, t.cpid);
    long f = q >= 0 ? b.cp[q].first : -1;
    t.t0_ns = f >= 0 ? t.spans[f].end_ns : t.n ? t.spans[0].end_ns : 0;
    t.keep = json_pack("[OOO]", a->related, a->mergelogs, a->spans);
    if (!t.keep) rc = RIPPLE_ENOMEM;
  }
  if (rc == RIPPLE_OK && a->details) rc = kr_details_join(&t, a->details, err, cap);
  if (rc == RIPPLE_OK && a->stalls) rc = kr_stalls_join(&t, a->stalls, err, cap);
  free(b.cp);
  json_decref(b.index);
  json_decref(b.firsts);
  json_decref(b.tops);
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory building the tree");
  if (rc != RIPPLE_OK) {
    kr_trace_free(&t);
    return rc;
  }
  *out = t;
  return RIPPLE_OK;
}

void kr_trace_free(kr_trace_t *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) free(t->spans[i].children);
  free(t->spans);
  free(t->top);
  json_decref(t->keep);
  memset(t, 0, sizeof *t);
}
