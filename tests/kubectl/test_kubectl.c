/*
 * test_kubectl.c - kubectl-ripple's parts without a cluster: the command
 * line, manifests, the root context and the annotation in patches, the
 * choice of `last`, and the duration format. The tree is tested in
 * test_kubectl_tree.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr.h"
#include "testutil.h"

/* ---- the command line ----------------------------------------------------------- */

static int parse(kr_args_t *a, char *err, size_t cap, ...) {
  char *argv[32] = {"kubectl-ripple"};
  int argc = 1;
  va_list ap;
  va_start(ap, cap);
  for (char *s; (s = va_arg(ap, char *)) && argc < 31;) argv[argc++] = s;
  va_end(ap);
  return kr_args_parse(argc, argv, a, err, cap);
}

static void test_args_scale(void **state) {
  (void)state;
  kr_args_t a;
  char err[256];
  assert_int_equal(parse(&a, err, sizeof err, "scale", "deploy/x", "--replicas=20", "-n", "demo",
                         "--kubeconfig", "/k", "--context=lab", (char *)NULL),
                   RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_SCALE);
  assert_string_equal(a.resource, "deploy");
  assert_string_equal(a.name, "x");
  assert_int_equal(a.replicas, 20);
  assert_string_equal(a.namespace_, "demo");
  assert_string_equal(a.kubeconfig, "/k");
  assert_string_equal(a.context, "lab");
  /* KIND NAME, flags before the command, -nNS, --replicas N */
  assert_int_equal(parse(&a, err, sizeof err, "-nprod", "scale", "deploy", "web", "--replicas", "0",
                         (char *)NULL),
                   RIPPLE_OK);
  assert_string_equal(a.resource, "deploy");
  assert_string_equal(a.name, "web");
  assert_int_equal(a.replicas, 0);
  assert_string_equal(a.namespace_, "prod");
  assert_int_equal(
      parse(&a, err, sizeof err, "scale", "deploy/x", "-n=a", "--replicas=1", (char *)NULL),
      RIPPLE_OK);
  assert_string_equal(a.namespace_, "a");
}

static void test_args_others(void **state) {
  (void)state;
  kr_args_t a;
  char err[256];
  assert_int_equal(parse(&a, err, sizeof err, "patch", "svc/web", "-p", "{\"a\":1}", "--type",
                         "merge", (char *)NULL),
                   RIPPLE_OK);
  assert_int_equal(a.patch_type, RIPPLE_KUBE_PATCH_MERGE);
  assert_string_equal(a.patch, "{\"a\":1}");
  assert_int_equal(parse(&a, err, sizeof err, "patch", "svc/web", "-p", "[]", (char *)NULL),
                   RIPPLE_OK);
  assert_int_equal(a.patch_type, RIPPLE_KUBE_PATCH_STRATEGIC);
  assert_int_equal(
      parse(&a, err, sizeof err, "apply", "-f", "-", "--force-conflicts", (char *)NULL), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_APPLY);
  assert_string_equal(a.file, "-");
  assert_true(a.force_conflicts);
  assert_int_equal(parse(&a, err, sizeof err, "trace", "11111111-1111-4111-8111-111111111111", "-o",
                         "json", "--server", "http://h:1", (char *)NULL),
                   RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_TRACE);
  assert_true(a.json);
  assert_string_equal(a.server, "http://h:1");
  assert_int_equal(
      parse(&a, err, sizeof err, "last", "deployment.apps/web", "-ojson", (char *)NULL), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_LAST);
  assert_string_equal(a.resource, "deployment.apps");
  assert_true(a.json);
  assert_int_equal(parse(&a, err, sizeof err, "delete", "pod/p", (char *)NULL), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_DELETE);
  assert_int_equal(
      parse(&a, err, sizeof err, "why", "pod", "web-1-a", "-n", "demo", "-o", "json", (char *)NULL),
      RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_WHY);
  assert_string_equal(a.resource, "pod");
  assert_string_equal(a.name, "web-1-a");
  assert_string_equal(a.namespace_, "demo");
  assert_true(a.json);
  assert_int_equal(parse(&a, err, sizeof err, "--help", (char *)NULL), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_HELP);
}

static void expect_error(const char *want, ...) {
  char *argv[32] = {"kubectl-ripple"};
  int argc = 1;
  va_list ap;
  va_start(ap, want);
  for (char *s; (s = va_arg(ap, char *)) && argc < 31;) argv[argc++] = s;
  va_end(ap);
  kr_args_t a;
  char err[256] = "";
  assert_int_equal(kr_args_parse(argc, argv, &a, err, sizeof err), RIPPLE_EINVAL);
  if (!strstr(err, want)) fail_msg("error \"%s\" does not say \"%s\"", err, want);
}

static void test_args_errors(void **state) {
  (void)state;
  expect_error("no command", (char *)NULL);
  expect_error("unknown command \"frob\"", "frob", (char *)NULL);
  expect_error("scale needs --replicas", "scale", "deploy/x", (char *)NULL);
  expect_error("--replicas must be", "scale", "deploy/x", "--replicas=-1", (char *)NULL);
  expect_error("--replicas must be", "scale", "deploy/x", "--replicas=2x", (char *)NULL);
  expect_error("KIND/NAME", "scale", "deploy", "--replicas=1", (char *)NULL);
  expect_error("KIND/NAME", "delete", "deploy/", (char *)NULL);
  expect_error("KIND/NAME", "why", "deploy", (char *)NULL);
  expect_error("unexpected argument \"z\"", "delete", "deploy/x", "z", (char *)NULL);
  expect_error("-n needs a value", "delete", "deploy/x", "-n", (char *)NULL);
  expect_error("unknown flag --frob", "delete", "deploy/x", "--frob", (char *)NULL);
  expect_error("--type must be", "patch", "deploy/x", "-p", "{}", "--type=xml", (char *)NULL);
  expect_error("patch needs -p", "patch", "deploy/x", (char *)NULL);
  expect_error("apply needs -f", "apply", (char *)NULL);
  expect_error("trace needs a CPID", "trace", (char *)NULL);
  expect_error("-o must be json", "trace", "x", "-o", "yaml", (char *)NULL);
}

/* ---- manifests and patches ------------------------------------------------------- */

static const char *write_tmp(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/kr-test-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

static void test_manifest(void **state) {
  (void)state;
  const char *p = write_tmp(
      "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
      "---\n---\n"
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: 3}}\n"
      "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: {x: \"1\"}}\n");
  json_t *objs = NULL;
  char err[256];
  assert_int_equal(kr_manifest_load(p, &objs, err, sizeof err), RIPPLE_OK);
  unlink(p);
  assert_int_equal(json_array_size(objs), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(objs, 1), "kind")),
                      "Deployment");
  json_t *replicas = json_object_get(json_object_get(json_array_get(objs, 1), "spec"), "replicas");
  assert_true(json_is_integer(replicas));
  assert_int_equal(json_integer_value(replicas), 3);
  json_decref(objs);

  p = write_tmp("apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\n");
  assert_int_not_equal(kr_manifest_load(p, &objs, err, sizeof err), RIPPLE_OK);
  assert_non_null(strstr(err, "no metadata.name"));
  unlink(p);
  p = write_tmp("just: a map\n");
  assert_int_not_equal(kr_manifest_load(p, &objs, err, sizeof err), RIPPLE_OK);
  assert_non_null(strstr(err, "document 1 is not a Kubernetes object"));
  unlink(p);
  p = write_tmp("---\n");
  assert_int_not_equal(kr_manifest_load(p, &objs, err, sizeof err), RIPPLE_OK);
  assert_non_null(strstr(err, "holds no objects"));
  unlink(p);
  assert_int_equal(kr_manifest_load("/nonexistent/x.yaml", &objs, err, sizeof err), RIPPLE_ESYS);
}

static void test_annotation_patches(void **state) {
  (void)state;
  json_t *p =
      json_loads("{\"spec\":{\"replicas\":2},\"metadata\":{\"labels\":{\"a\":\"b\"}}}", 0, NULL);
  assert_int_equal(kr_patch_add_annotation(p, "cpid.ripple.dev/deployment", "1;v"), RIPPLE_OK);
  char *s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(s,
                      "{\"metadata\":{\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;v\"},"
                      "\"labels\":{\"a\":\"b\"}},\"spec\":{\"replicas\":2}}");
  free(s);
  json_decref(p);
  json_t *arr = json_array();
  assert_int_equal(kr_patch_add_annotation(arr, "k", "v"), RIPPLE_EINVAL);
  json_decref(arr);

  json_t *ann = json_pack("{s:s}", "x", "y");
  json_t *op = kr_jsonpatch_annotation(ann, "cpid.ripple.dev/pod", "1;v");
  s = json_dumps(op, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(
      s,
      "{\"op\":\"add\",\"path\":\"/metadata/annotations/cpid.ripple.dev~1pod\",\"value\":\"1;v\"}");
  free(s);
  json_decref(op);
  op = kr_jsonpatch_annotation(NULL, "cpid.ripple.dev/pod", "1;v");
  s = json_dumps(op, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(s,
                      "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{"
                      "\"cpid.ripple.dev/pod\":\"1;v\"}}");
  free(s);
  json_decref(op);
  json_decref(ann);
}

static void test_root_ctx(void **state) {
  (void)state;
  ripple_ctx_t a, b, d;
  char va[RIPPLE_CTX_STRMAX + 1], vb[RIPPLE_CTX_STRMAX + 1];
  assert_int_equal(kr_root_ctx(&a, va, sizeof va), RIPPLE_OK);
  assert_int_equal(kr_root_ctx(&b, vb, sizeof vb), RIPPLE_OK);
  assert_false(ripple_cpid_equal(&a.cpid, &b.cpid));
  assert_int_equal(a.nanc, 0);
  assert_int_equal(strlen(va), 2 + RIPPLE_CPID_STRLEN);
  assert_int_equal(ripple_ctx_decode(va, strlen(va), RIPPLE_ANC_MAX, &d), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&a, &d));
}

/* `last`: the trace server's newest root of the object, else (none, or an
 * older server without the endpoint) the CPID of the object's annotation. */
static void test_last_pick(void **state) {
  (void)state;
  ripple_ctx_t a;
  char va[RIPPLE_CTX_STRMAX + 1], ida[RIPPLE_CPID_STRLEN + 1], got[RIPPLE_CPID_STRLEN + 1],
      err[512];
  assert_int_equal(kr_root_ctx(&a, va, sizeof va), RIPPLE_OK);
  ripple_cpid_format(&a.cpid, ida);
  json_t *obj = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "uid", "u-1", "annotations",
                          "cpid.ripple.dev/deployment", va);
  json_t *bare = json_pack("{s:{s:s}}", "metadata", "uid", "u-1");
  json_t *bad = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "cpid.ripple.dev/deployment",
                          "garbage");
#define X "9c459e9c-463c-42d6-bf69-f6f89ba0d84e"
  json_t *one = json_loads(
             "{\"roots\":[{\"cpid\":\"9C459E9C-463C-42D6-BF69-F6F89BA0D84E\","
             "\"sources\":[]},{\"cpid\":\"" X "\"}]}",
             0, NULL),
         *none = json_loads("{\"roots\":[]}", 0, NULL);
  assert_non_null(one);
  assert_non_null(none);

  /* The trace server's root wins over the annotation, in canonical form. */
  assert_int_equal(kr_last_pick(obj, "Deployment", "d/x", one, got, err, sizeof err), RIPPLE_OK);
  assert_string_equal(got, X);
  assert_int_equal(kr_last_pick(bare, "Deployment", "d/x", one, got, err, sizeof err), RIPPLE_OK);
  assert_string_equal(got, X);
  /* No root indexed, or no answer: the annotation. */
  assert_int_equal(kr_last_pick(obj, "Deployment", "d/x", none, got, err, sizeof err), RIPPLE_OK);
  assert_string_equal(got, ida);
  assert_int_equal(kr_last_pick(obj, "Deployment", "d/x", NULL, got, err, sizeof err), RIPPLE_OK);
  assert_string_equal(got, ida);
  /* Neither names a change. */
  strcpy(got, "unchanged");
  assert_int_equal(kr_last_pick(bare, "Deployment", "d/x", none, got, err, sizeof err),
                   RIPPLE_ENOENT);
  assert_non_null(strstr(err, "d/x has no cpid.ripple.dev/deployment annotation"));
  assert_string_equal(got, "unchanged");
  assert_int_not_equal(kr_last_pick(bad, "Deployment", "d/x", NULL, got, err, sizeof err),
                       RIPPLE_OK);
  assert_non_null(strstr(err, "malformed"));
  /* Answers that are not the documented shape are errors, not "none". */
  static const char *const wrong[] = {"{}", "{\"roots\":{}}", "{\"roots\":[{}]}",
                                      "{\"roots\":[{\"cpid\":\"nope\"}]}", "[]"};
  for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
    json_t *w = json_loads(wrong[i], 0, NULL);
    assert_non_null(w);
    assert_int_equal(kr_last_pick(obj, "Deployment", "d/x", w, got, err, sizeof err), RIPPLE_EJSON);
    json_decref(w);
  }
  assert_string_equal(got, "unchanged");
#undef X
  json_decref(obj);
  json_decref(bare);
  json_decref(bad);
  json_decref(one);
  json_decref(none);
}

static void test_fmt_dur(void **state) {
  (void)state;
  char b[32];
  kr_fmt_dur(0, b, sizeof b);
  assert_string_equal(b, "0.0ms");
  kr_fmt_dur(1234567, b, sizeof b);
  assert_string_equal(b, "1.2ms");
  kr_fmt_dur(-2500000, b, sizeof b);
  assert_string_equal(b, "-2.5ms");
  kr_fmt_dur(1250000000, b, sizeof b);
  assert_string_equal(b, "1.25s");
  kr_fmt_dur(125000000000LL, b, sizeof b);
  assert_string_equal(b, "2m05s");
}

static void test_dashboard_url(void **state) {
  (void)state;
  static const char *const t[][2] = {
      {"http://127.0.0.1:7480", "http://127.0.0.1:7480/#/trace/X"},
      {"https://ripple.example/", "https://ripple.example/#/trace/X"},
      {"http://h:1/ripple//", "http://h:1/ripple/#/trace/X"},
      {"", "/#/trace/X"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char *u = kr_dashboard_url(t[i][0], "X");
    assert_non_null(u);
    assert_string_equal(u, t[i][1]);
    free(u);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_args_scale),
      cmocka_unit_test(test_args_others),
      cmocka_unit_test(test_args_errors),
      cmocka_unit_test(test_manifest),
      cmocka_unit_test(test_annotation_patches),
      cmocka_unit_test(test_root_ctx),
      cmocka_unit_test(test_fmt_dur),
      cmocka_unit_test(test_last_pick),
      cmocka_unit_test(test_dashboard_url),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
