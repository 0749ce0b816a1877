/*
 * fuzz_scenario.c - scenario files and manifests (run/yjson.c, run/scenario.c,
 * run/steps.c): any bytes read as YAML documents, every step list checked and
 * described, and the text run through parameter substitution. Nothing may
 * crash, leak or read out of bounds; a document that parses must also survive
 * being dumped as JSON (what `ripple run` sends to the API server). A
 * document's expect: section (run/expect.c) is read too, and when it reads,
 * compared with a made-up cascade and shown; and every document is read as
 * a trace from kubectl ripple trace -o json (run/trace.c), whose hops must
 * be no more than its nodes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "ripple/ripple.h"
#include "run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void steps(const json_t *doc) {
  static const char *const lists[] = {"setup", "steps", "teardown"};
  for (size_t l = 0; l < 3; l++) {
    json_t *list = json_object_get(doc, lists[l]), *step;
    size_t i;
    json_array_foreach(list, i, step) {
      char err[256], what[512];
      (void)step_check(step, err, sizeof err);
      step_describe(step, what, sizeof what);
    }
  }
}

/* Every expected hop seen once, late, plus one writer nobody expected. */
static void expect(const json_t *doc) {
  xp_t x;
  char err[256];
  if (xp_parse(json_object_get(doc, "expect"), &x, err, sizeof err) != RIPPLE_OK) return;
  xp_seen_t *seen = calloc(x.n + 2, sizeof *seen);
  size_t n = 0;
  for (size_t i = 0; seen && i < x.n; i++, n++) {
    snprintf(seen[n].writer, sizeof seen[n].writer, "%s", x.hops[i].writer);
    snprintf(seen[n].write, sizeof seen[n].write, "%s", x.hops[i].write);
    snprintf(seen[n].kind, sizeof seen[n].kind, "%s", x.hops[i].kind);
    seen[n].count = 1, seen[n].last_ns = INT64_MAX;
  }
  if (seen) seen[n++] = (xp_seen_t){"w", "create pods", "Pod", 3, -5};
  xp_row_t *rows = NULL;
  size_t nrows = 0;
  (void)xp_complete(&x, seen, n);
  (void)xp_max_budget_ns(&x);
  size_t bad = xp_compare(&x, seen, n, &rows, &nrows);
  if (bad > nrows) abort();
  FILE *f = fopen("/dev/null", "w");
  if (f) {
    xp_render(f, f, rows, nrows);
    fclose(f);
  }
  free(rows);
  free(seen);
  xp_free(&x);
}

static void trace(const json_t *doc) {
  xp_seen_t *seen = NULL;
  size_t n = 0;
  char err[256];
  if (xp_seen_from_trace(doc, &seen, &n, err, sizeof err) != RIPPLE_OK) return;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += seen[i].count;
  if (n && !total) abort();
  free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  json_t *docs = NULL, *doc;
  char err[256];
  if (yjson_parse(text, size, &docs, err, sizeof err) == RIPPLE_OK) {
    size_t i;
    json_array_foreach(docs, i, doc) {
      steps(doc);
      expect(doc);
      trace(doc);
      char *dump = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
      if (!dump) abort(); /* every value we build must be encodable */
      free(dump);
    }
    json_decref(docs);
  }
  scn_t s;
  memset(&s, 0, sizeof s);
  s.params = json_pack("{s:s,s:s}", "N", "3", "app", "web");
  char *out = NULL;
  if (scn_subst(&s, 7, text, size, &out, err, sizeof err) == RIPPLE_OK) free(out);
  json_decref(s.params);
  free(text);
  return 0;
}
