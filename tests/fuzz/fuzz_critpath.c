/*
 * fuzz_critpath.c - libFuzzer target for what kubectl ripple and the trace
 * server compute from a trace they read (lib/ripplex/critpath.c, compare.c,
 * hops.c, writes.c): any JSON where a trace is expected.
 *
 * The input is a JSON text, parsed by jansson; the properties: no crash, no
 * leak; an object gives RIPPLE_OK and an answer whose hops are at most the
 * readable writes, each hop's time not negative, its parts (from the
 * object's "details", as GET /details answers) not negative and not more
 * than the hop; anything else EINVAL. The
 * same text is compared with itself: every hop "same", no writer changed.
 * Grouped into hops (GET /v1/hops's grouping): the groups' writes add up to
 * the trace's, each group's times ascending.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/compare.h"
#include "ripplex/critpath.h"
#include "ripplex/hops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void path_case(const json_t *t) {
  json_t *out = NULL;
  int rc = critpath_compute(t, &out);
  if (!json_is_object(t)) {
    if (rc != RIPPLE_EINVAL || out) abort();
    return;
  }
  if (rc == RIPPLE_ENOMEM) return;
  if (rc != RIPPLE_OK || !out) abort();
  const json_t *hops = json_object_get(out, "hops");
  if (json_array_size(hops) > (size_t)json_integer_value(json_object_get(out, "writes"))) abort();
  size_t i;
  const json_t *h;
  json_array_foreach(hops, i, h) {
    if (json_real_value(json_object_get(h, "ms")) < 0) abort();
  }
  /* The hops' parts from the trace's "details", if any: none negative, and
   * together never more than the hop (rounding aside). */
  rc = critpath_add_parts(out, json_object_get(t, "details"));
  if (rc != RIPPLE_OK && rc != RIPPLE_ENOMEM) abort();
  json_array_foreach(hops, i, h) {
    const json_t *p = json_object_get(h, "parts"), *v;
    const char *k;
    double sum = 0;
    json_object_foreach((json_t *)p, k, v) {
      if (json_is_real(v) && json_real_value(v) < 0) abort();
      sum += json_is_real(v) ? json_real_value(v) : 0;
    }
    if (sum > json_real_value(json_object_get(h, "ms")) * (1 + 1e-9) + 1e-6) abort();
  }
  json_decref(out);
}

static void compare_case(const json_t *t) {
  json_t *out = NULL;
  int rc = compare_compute(t, t, &out);
  if (rc != RIPPLE_OK) {
    if (json_is_object(t) && rc != RIPPLE_ENOMEM) abort();
    return;
  }
  size_t i;
  const json_t *h;
  json_array_foreach(json_object_get(out, "hops"), i, h) {
    if (strcmp(json_string_value(json_object_get(h, "change")), "same") != 0) abort();
  }
  if (json_array_size(json_object_get(out, "writers"))) abort();
  json_decref(out);
}

static void hops_case(const json_t *t) {
  hop_groups_t h;
  int rc = hops_group(t, &h);
  if (rc != RIPPLE_OK) {
    if (json_is_object(t) && rc != RIPPLE_ENOMEM) abort();
    return;
  }
  size_t sum = 0;
  for (size_t i = 0; i < h.n; i++) {
    if (!h.g[i].n) abort();
    for (size_t k = 1; k < h.g[i].n; k++)
      if (h.g[i].took[k - 1] > h.g[i].took[k]) abort();
    if (hops_percentile(h.g[i].took, h.g[i].n, 50) > h.g[i].took[h.g[i].n - 1]) abort();
    sum += h.g[i].n;
  }
  if (sum != h.writes) abort();
  hops_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *t = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
  if (!t) return 0;
  path_case(t);
  hops_case(t);
  compare_case(t);
  json_decref(t);
  return 0;
}
