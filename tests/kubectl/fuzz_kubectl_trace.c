/*
 * fuzz_kubectl_trace.c - kubectl-ripple's tree from hostile trace server
 * answers. The input is one JSON array [related, mergelogs, spans, details,
 * stalls] of the answers (docs/api.md; the last two optional); whatever it
 * holds, building, rendering (the tree with details, the stalls) and the
 * JSON output must not crash, leak or loop, and a built tree must have every
 * span once: at the top or under exactly one parent that precedes it. The
 * chain of `why` for the latest span's object is walked and shown too: it
 * runs from a top-level span down parent links to that object's latest write.
 * The cascade is exported as a scenario (export-test) and its hops counted:
 * every hop's writes are writes of the trace.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kr.h"
#include "xtest.h"

static void why(FILE *f, const kr_trace_t *t) {
  if (!t->n) return;
  const kr_span_t *last = &t->spans[t->n - 1];
  if (!*last->uid && !*last->oname) return; /* a create by generateName names nothing */
  if (!*last->kind) return;                 /* not a write (a watch's record): never a hop */
  kr_why_target_t o = {last->kind, last->ns, last->oname, last->uid, NULL};
  kr_why_t w;
  if (kr_why_chain(t, &o, &w) != RIPPLE_OK) abort(); /* the span itself matches */
  if (w.n == 0 || t->spans[w.hops[0]].parent != -1) abort();
  for (size_t k = 1; k < w.n; k++)
    if (t->spans[w.hops[k]].parent != w.hops[k - 1]) abort();
  if (w.hops[w.n - 1] != kr_why_latest(t, &o)) abort();
  kr_render_why(f, &w, 1);
  json_t *j = kr_why_json(&w);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  free(s);
  json_decref(j);
  kr_why_free(&w);
}

static void export_test(FILE *f, const kr_trace_t *t) {
  kr_xhop_t *h = NULL;
  size_t n = 0, total = 0;
  if (kr_xhops(t, &h, &n) != RIPPLE_OK) return;
  for (size_t i = 0; i < n; i++) total += h[i].count;
  if (total > t->n) abort();
  free(h);
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, "fuzz"};
  char err[256];
  (void)kr_export_scenario(t, &o, f, err, sizeof err);
}

static void check(const kr_trace_t *t) {
  size_t shown = t->ntop;
  for (size_t i = 0; i < t->n; i++) {
    shown += t->spans[i].nchildren;
    if (t->spans[i].parent >= (long)i || t->spans[i].cause >= (long)i) abort();
  }
  if (shown != t->n) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *in = json_loadb((const char *)data, size, 0, NULL);
  kr_answers_t a = {json_incref(json_array_get(in, 0)), json_incref(json_array_get(in, 1)),
                    json_incref(json_array_get(in, 2)), json_incref(json_array_get(in, 3)),
                    json_incref(json_array_get(in, 4))};
  json_decref(in);
  kr_trace_t t;
  char err[256];
  if (kr_trace_build(&a, &t, err, sizeof err) == RIPPLE_OK) {
    check(&t);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
      kr_render_tree(f, &t, 1);
      kr_render_stalls(f, &t, 1);
      kr_render_hops(f, &t, 0);
      why(f, &t);
      export_test(f, &t);
      fclose(f);
    }
    free(text);
    json_t *j = kr_trace_json(&t);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    free(s);
    json_decref(j);
    kr_trace_free(&t);
  }
  kr_answers_free(&a);
  return 0;
}
