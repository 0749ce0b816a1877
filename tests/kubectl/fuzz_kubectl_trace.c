/*
 * fuzz_kubectl_trace.c - kubectl-ripple's tree from hostile trace server
 * answers. The input is one JSON array [related, mergelogs, spans] of the
 * three answers (docs/api.md); whatever it holds, building, rendering and the
 * JSON output must not crash, leak or loop, and a built tree must have every
 * span once: at the top or under exactly one parent that precedes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kr.h"

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
                    json_incref(json_array_get(in, 2))};
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
      kr_render_hops(f, &t, 0);
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
