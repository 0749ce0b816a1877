/*
 * fuzz_rules.c - libFuzzer target for the relation rules file (YAML, read by
 * `ripple analyze --rules` and the webhook) and the rules it yields.
 *
 * Properties: any document either loads whole or adds nothing; the rules it
 * adds can be asked about any pair of objects without crashing.
 */
#include <stdlib.h>

#include "ripple/ripple.h"
#include "ripple/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const objects[] = {
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\","
    "\"namespace\":\"d\",\"uid\":\"1\"},\"spec\":{\"configRef\":{\"name\":\"w-cfg\"},"
    "\"selector\":{\"matchLabels\":{\"app\":\"w\"}}}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"w-cfg\","
    "\"namespace\":\"d\",\"uid\":\"2\",\"labels\":{\"app\":\"w\"},\"ownerReferences\":[{"
    "\"uid\":\"1\",\"controller\":true}]}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"3\"}}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { N = sizeof objects / sizeof objects[0] };
  static json_t *objs[N];
  if (!objs[0])
    for (size_t i = 0; i < N; i++)
      if (!(objs[i] = json_loads(objects[i], 0, NULL))) abort();
  ripple_rules_t *r;
  if (ripple_rules_new(&r) != RIPPLE_OK) abort();
  size_t before = ripple_rules_count(r);
  char err[256];
  int rc = ripple_rules_load_yaml(r, (const char *)data, size, err, sizeof err);
  if (rc != RIPPLE_OK && ripple_rules_count(r) != before) abort();
  for (size_t i = 0; i < N; i++) {
    ripple_relation_t *rel;
    size_t n;
    if (ripple_rules_related(r, objs[i], (const json_t *const *)objs, N, &rel, &n) != RIPPLE_OK)
      abort();
    for (size_t k = 0; k < n; k++)
      if (rel[k].index >= N || rel[k].rule >= ripple_rules_count(r)) abort();
    free(rel);
  }
  ripple_rules_free(r);
  return 0;
}
