/*
 * test_rules.c - the relation rules (include/ripple/rules.h): owner
 * references, name prefixes, Service selectors, Endpoints and EndpointSlices,
 * Pod -> Node, label selectors, and custom rules loaded from YAML.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ripple/rules.h"

static json_t *obj(const char *text) {
  json_error_t e;
  json_t *o = json_loads(text, 0, &e);
  if (!o) fprintf(stderr, "bad test JSON: %s (%s)\n", e.text, text);
  assert_non_null(o);
  return o;
}

#define RS                                                                                        \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-5d4\","       \
  "\"namespace\":\"default\",\"uid\":\"rs-1\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":" \
  "\"web\"}}}}"
#define POD(name, owner, ctl)                                                               \
  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                  \
  "\",\"namespace\":\"default\",\"uid\":\"pod-" name                                        \
  "\",\"labels\":{\"app\":\"web\","                                                         \
  "\"tier\":\"front\"},\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web-5d4\"," \
  "\"uid\":\"" owner "\",\"controller\":" ctl "}]},\"spec\":{\"nodeName\":\"node-a\"}}"

typedef struct fixture {
  ripple_rules_t *rules;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f || ripple_rules_new(&f->rules) != RIPPLE_OK) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  ripple_rules_free(f->rules);
  free(f);
  return 0;
}

static void owner_references(void **state) {
  fixture_t *f = *state;
  json_t *rs = obj(RS);
  json_t *ctl = obj(POD("other-1", "rs-1", "true"));
  json_t *plain = obj(POD("other-2", "rs-1", "false"));
  json_t *stranger = obj(POD("other-3", "rs-9", "true"));
  assert_true(ripple_rules_owned_by(ctl, rs, true));
  assert_false(ripple_rules_owned_by(plain, rs, true));
  assert_true(ripple_rules_owned_by(plain, rs, false));
  assert_false(ripple_rules_owned_by(stranger, rs, false));
  assert_string_equal(ripple_rules_controller_uid(ctl), "rs-1");
  assert_null(ripple_rules_controller_uid(plain));
  size_t rule;
  assert_true(ripple_rules_relates(f->rules, rs, plain, &rule));
  assert_false(ripple_rules_relates(f->rules, plain, rs, NULL));
  assert_false(ripple_rules_relates(f->rules, rs, stranger, NULL));
  json_decref(rs);
  json_decref(ctl);
  json_decref(plain);
  json_decref(stranger);
}

static void name_prefix(void **state) {
  fixture_t *f = *state;
  json_t *rs = obj(RS);
  /* Owner unknown (rs-9), but the name says web-5d4 made it. */
  json_t *pod = obj(POD("web-5d4-x7k2p", "rs-9", "true"));
  json_t *near = obj(POD("web-5d4x-abc", "rs-9", "true"));
  json_t *bare = obj(POD("web-5d4-", "rs-9", "true"));
  assert_true(ripple_rules_relates(f->rules, rs, pod, NULL));
  assert_false(ripple_rules_relates(f->rules, rs, near, NULL));
  assert_false(ripple_rules_relates(f->rules, rs, bare, NULL));
  /* A Deployment is no Pod's name-prefix parent (only ReplicaSets are). */
  json_t *dep =
      obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"default\",\"uid\":\"d-1\"}}");
  assert_false(ripple_rules_relates(f->rules, dep, pod, NULL));
  assert_true(ripple_rules_relates(f->rules, dep, rs, NULL));
  json_decref(dep);
  json_decref(rs);
  json_decref(pod);
  json_decref(near);
  json_decref(bare);
}

static void service_selects_pods(void **state) {
  fixture_t *f = *state;
  json_t *svc =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"default\",\"uid\":\"s-1\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}");
  json_t *other_ns =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"prod\",\"uid\":\"s-2\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}");
  json_t *nosel =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"ext\","
          "\"namespace\":\"default\",\"uid\":\"s-3\"},\"spec\":{}}");
  json_t *pod = obj(POD("db-0", "x", "true"));
  json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
  assert_true(ripple_rules_relates(f->rules, svc, pod, NULL));
  assert_false(ripple_rules_relates(f->rules, other_ns, pod, NULL));
  assert_false(ripple_rules_relates(f->rules, nosel, pod, NULL));
  json_object_set_new(labels, "app", json_string("db"));
  assert_false(ripple_rules_relates(f->rules, svc, pod, NULL));
  json_decref(svc);
  json_decref(other_ns);
  json_decref(nosel);
  json_decref(pod);
}

static void label_selector_expressions(void **state) {
  (void)state;
  json_t *labels = obj("{\"app\":\"web\",\"env\":\"prod\"}");
  json_t *s1 =
      obj("{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"env\","
          "\"operator\":\"In\",\"values\":[\"prod\",\"stage\"]},{\"key\":\"legacy\","
          "\"operator\":\"DoesNotExist\"}]}");
  json_t *s2 =
      obj("{\"matchExpressions\":[{\"key\":\"env\",\"operator\":\"NotIn\","
          "\"values\":[\"prod\"]}]}");
  json_t *s3 = obj("{\"matchExpressions\":[{\"key\":\"env\",\"operator\":\"Exists\"}]}");
  json_t *s4 = obj("{\"matchExpressions\":[{\"key\":\"env\",\"operator\":\"Gt\"}]}");
  assert_true(ripple_rules_selects(s1, labels));
  assert_false(ripple_rules_selects(s2, labels));
  assert_true(ripple_rules_selects(s3, labels));
  assert_false(ripple_rules_selects(s4, labels));
  assert_false(ripple_rules_selects(NULL, labels));
  json_decref(labels);
  json_decref(s1);
  json_decref(s2);
  json_decref(s3);
  json_decref(s4);
}

static void endpoints_belong_to_service(void **state) {
  fixture_t *f = *state;
  json_t *svc =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"default\",\"uid\":\"s-1\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}");
  json_t *ep =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"default\",\"uid\":\"e-1\"}}");
  json_t *ep2 =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"api\","
          "\"namespace\":\"default\",\"uid\":\"e-2\"}}");
  json_t *slice =
      obj("{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{"
          "\"name\":\"web-abcde\",\"namespace\":\"default\",\"uid\":\"es-1\",\"labels\":{"
          "\"kubernetes.io/service-name\":\"web\"}}}");
  assert_true(ripple_rules_relates(f->rules, svc, ep, NULL));
  assert_false(ripple_rules_relates(f->rules, svc, ep2, NULL));
  assert_true(ripple_rules_relates(f->rules, svc, slice, NULL));
  /* related(): from the Service, both are downstream; ep2 is not there. */
  const json_t *cands[] = {ep, ep2, slice};
  ripple_relation_t *rel;
  size_t n;
  assert_int_equal(ripple_rules_related(f->rules, svc, cands, 3, &rel, &n), RIPPLE_OK);
  assert_int_equal(n, 2);
  assert_int_equal(rel[0].index, 0);
  assert_false(rel[0].upstream);
  assert_int_equal(rel[0].by, RIPPLE_BY_SAME_NAME);
  assert_int_equal(rel[1].index, 2);
  assert_int_equal(rel[1].by, RIPPLE_BY_NAME_LABEL);
  free(rel);
  json_decref(svc);
  json_decref(ep);
  json_decref(ep2);
  json_decref(slice);
}

static void pod_runs_on_node(void **state) {
  fixture_t *f = *state;
  json_t *pod = obj(POD("web-1", "x", "true"));
  json_t *node =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
          "\"node-a\",\"uid\":\"n-1\"}}");
  json_t *other =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
          "\"node-b\",\"uid\":\"n-2\"}}");
  const json_t *cands[] = {other, node};
  ripple_relation_t *rel;
  size_t n;
  assert_int_equal(ripple_rules_related(f->rules, pod, cands, 2, &rel, &n), RIPPLE_OK);
  assert_int_equal(n, 1);
  assert_int_equal(rel[0].index, 1);
  assert_false(rel[0].upstream);
  assert_int_equal(rel[0].by, RIPPLE_BY_FIELD);
  free(rel);
  /* Seen from the Node, the Pod is upstream (the Pod names the Node). */
  const json_t *pods[] = {pod};
  assert_int_equal(ripple_rules_related(f->rules, node, pods, 1, &rel, &n), RIPPLE_OK);
  assert_int_equal(n, 1);
  assert_true(rel[0].upstream);
  free(rel);
  json_decref(pod);
  json_decref(node);
  json_decref(other);
}

static const char custom[] =
    "# a Widget names its ConfigMap; a Gadget owns its Secrets\n"
    "- from: {group: example.com, kind: Widget}\n"
    "  to: {kind: ConfigMap}\n"
    "  by: {field: spec.configRef.name}\n"
    "- from: {group: example.com, kind: Gadget}\n"
    "  to: {group: '', kind: Secret}\n"
    "  by: name-prefix\n";

static void custom_rules_from_yaml(void **state) {
  fixture_t *f = *state;
  size_t before = ripple_rules_count(f->rules);
  char err[256] = "";
  assert_int_equal(ripple_rules_load_yaml(f->rules, custom, strlen(custom), err, sizeof err),
                   RIPPLE_OK);
  assert_int_equal(ripple_rules_count(f->rules), before + 2);
  json_t *w = obj(
      "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\","
      "\"namespace\":\"default\",\"uid\":\"w-1\"},\"spec\":{\"configRef\":{\"name\":\"cfg\"}}}");
  json_t *cm =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
          "\"cfg\",\"namespace\":\"default\",\"uid\":\"c-1\"}}");
  json_t *cm2 =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
          "\"cfg2\",\"namespace\":\"default\",\"uid\":\"c-2\"}}");
  size_t rule;
  assert_true(ripple_rules_relates(f->rules, w, cm, &rule));
  assert_int_equal(rule, before);
  assert_false(ripple_rules_relates(f->rules, w, cm2, NULL));
  /* Another group's Widget is not covered by the rule. */
  json_object_set_new(w, "apiVersion", json_string("other.io/v1"));
  assert_false(ripple_rules_relates(f->rules, w, cm, NULL));
  json_decref(w);
  json_decref(cm);
  json_decref(cm2);
}

static void bad_yaml_adds_nothing(void **state) {
  fixture_t *f = *state;
  size_t before = ripple_rules_count(f->rules);
  static const char *bad[] = {
      ("- from: {kind: A}\n  to: {kind: B}\n  by: owner\n- from: {kind: A}\n  to: {kind: B}\n"
       "  by: telepathy\n"),
      "- from: {kind: A}\n  to: {kind: B}\n  by: field\n",
      "from: {kind: A}\n",
      "- [unclosed\n",
      "- from: {kind: A}\n  by: owner\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[256] = "";
    assert_int_equal(ripple_rules_load_yaml(f->rules, bad[i], strlen(bad[i]), err, sizeof err),
                     RIPPLE_EINVAL);
    assert_true(err[0] != '\0');
    assert_int_equal(ripple_rules_count(f->rules), before);
  }
}

/* yjson types plain scalars; group and kind take their text, a null group
 * ("group:") is "" (the core group), as the libyaml reader took it. A later
 * document is not read. */
static void yaml_scalar_types(void **state) {
  fixture_t *f = *state;
  size_t before = ripple_rules_count(f->rules);
  static const char doc[] =
      "- from: {group: example.com, kind: 2024}\n"
      "  to:\n"
      "    group:\n"
      "    kind: Secret\n"
      "  by: same-name\n"
      "---\n"
      "not: [the, rules]\n";
  char err[256] = "";
  assert_int_equal(ripple_rules_load_yaml(f->rules, doc, strlen(doc), err, sizeof err), RIPPLE_OK);
  assert_int_equal(ripple_rules_count(f->rules), before + 1);
  json_t *from =
      obj("{\"apiVersion\":\"example.com/v1\",\"kind\":\"2024\",\"metadata\":{\"name\":\"s\","
          "\"namespace\":\"default\",\"uid\":\"y-1\"}}");
  json_t *core =
      obj("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
          "\"namespace\":\"default\",\"uid\":\"s-1\"}}");
  json_t *other =
      obj("{\"apiVersion\":\"other.io/v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
          "\"namespace\":\"default\",\"uid\":\"s-2\"}}");
  size_t rule;
  assert_true(ripple_rules_relates(f->rules, from, core, &rule));
  assert_int_equal(rule, before);
  assert_false(ripple_rules_relates(f->rules, from, other, NULL));
  json_decref(from);
  json_decref(core);
  json_decref(other);
}

/* An alias bomb is stopped by the YAML reader and adds nothing. */
static void yaml_alias_bomb(void **state) {
  fixture_t *f = *state;
  size_t before = ripple_rules_count(f->rules);
  static const char bomb[] =
      "- &a [x, x, x, x, x, x, x, x, x, x]\n"
      "- &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "- &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
      "- &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
      "- &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
      "- [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
  char err[256] = "";
  assert_int_equal(ripple_rules_load_yaml(f->rules, bomb, strlen(bomb), err, sizeof err),
                   RIPPLE_EINVAL);
  assert_non_null(strstr(err, "rules: YAML error at line "));
  assert_non_null(strstr(err, "expands too far"));
  assert_int_equal(ripple_rules_count(f->rules), before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(owner_references, setup, teardown),
      cmocka_unit_test_setup_teardown(name_prefix, setup, teardown),
      cmocka_unit_test_setup_teardown(service_selects_pods, setup, teardown),
      cmocka_unit_test(label_selector_expressions),
      cmocka_unit_test_setup_teardown(endpoints_belong_to_service, setup, teardown),
      cmocka_unit_test_setup_teardown(pod_runs_on_node, setup, teardown),
      cmocka_unit_test_setup_teardown(custom_rules_from_yaml, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_yaml_adds_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(yaml_scalar_types, setup, teardown),
      cmocka_unit_test_setup_teardown(yaml_alias_bomb, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
