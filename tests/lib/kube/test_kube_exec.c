/*
 * test_kube_exec.c - credential plugins without a cluster: small shell
 * scripts that print ExecCredentials (a token, a client certificate, an
 * expiry), fail, print garbage, print too much, or hang; and a kubeconfig's
 * exec section carried through to the plugin's arguments and environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "kube_internal.h"

#define V1 "client.authentication.k8s.io/v1"
#define V1BETA1 "client.authentication.k8s.io/v1beta1"

static char dir[256];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ripple-kexec-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  unsetenv("RIPPLE_KUBE_EXEC_TIMEOUT_MS");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(dir);
  return 0;
}

/* Write an executable shell script; returns its path (static storage). */
static const char *script(const char *name, const char *body) {
  static char ring[4][512];
  static unsigned k;
  char *p = ring[k++ % 4];
  snprintf(p, 512, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(p, 0755);
  return p;
}

typedef struct result {
  int rc;
  char *token, *cert, *key;
  int64_t expiry;
  ripple_kube_status_t st;
} result_t;

static void result_free(result_t *r) {
  free(r->token);
  free(r->cert);
  free(r->key);
}

static result_t run(const char *cmd, const char *api, char **env) {
  char *args[] = {(char *)cmd, "arg-one", NULL};
  kube_exec_t e = {(char *)cmd, args, env, (char *)api, 0};
  result_t r;
  memset(&r, 0, sizeof r);
  r.rc = kube_exec_run(&e, "https://k:1", &r.token, &r.cert, &r.key, &r.expiry, &r.st);
  if (r.rc != RIPPLE_OK) print_message("plugin: %s\n", r.st.message);
  return r;
}

static void expect_cred_error(const char *cmd, const char *api, const char *want) {
  result_t r = run(cmd, api, NULL);
  assert_int_equal(r.rc, RIPPLE_KUBE_ECRED);
  if (!strstr(r.st.message, want)) fail_msg("message \"%s\" lacks \"%s\"", r.st.message, want);
  assert_null(r.token);
  assert_null(r.cert);
  result_free(&r);
}

static void test_token(void **state) {
  (void)state;
  const char *p = script("token.sh",
                         "[ \"$1\" = arg-one ] || exit 9\n"
                         "echo 'diagnostics go to stderr' >&2\n"
                         "cat <<EOF\n"
                         "{\"apiVersion\": \"" V1
                         "\", \"kind\": \"ExecCredential\",\n"
                         " \"status\": {\"token\": \"tok-123\",\n"
                         "  \"expirationTimestamp\": \"2030-01-02T03:04:05Z\"}}\n"
                         "EOF");
  result_t r = run(p, V1, NULL);
  assert_int_equal(r.rc, RIPPLE_OK);
  assert_string_equal(r.token, "tok-123");
  assert_null(r.cert);
  assert_null(r.key);
  int64_t want;
  assert_int_equal(ripple_time_parse("2030-01-02T03:04:05Z", 20, &want), RIPPLE_OK);
  assert_true(r.expiry == want);
  result_free(&r);
}

static void test_cert_and_beta(void **state) {
  (void)state;
  const char *p = script("cert.sh", "printf '%s' '{\"apiVersion\":\"" V1BETA1
                                    "\",\"kind\":\"ExecCredential\",\"status\":{"
                                    "\"clientCertificateData\":\"-----BEGIN CERTIFICATE-----\\n\","
                                    "\"clientKeyData\":\"-----BEGIN PRIVATE KEY-----\\n\"}}'");
  result_t r = run(p, V1BETA1, NULL);
  assert_int_equal(r.rc, RIPPLE_OK);
  assert_null(r.token);
  assert_string_equal(r.cert, "-----BEGIN CERTIFICATE-----\n");
  assert_string_equal(r.key, "-----BEGIN PRIVATE KEY-----\n");
  assert_true(r.expiry == 0);
  result_free(&r);
}

static void test_env_and_stdin(void **state) {
  (void)state;
  char body[1024];
  snprintf(body, sizeof body,
           "if read -r line; then echo 'stdin is not empty' >&2; exit 3; fi\n"
           "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > %s/info.json\n"
           "printf '{\"apiVersion\":\"" V1
           "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%%s\"}}' \"$MY_TOKEN\"",
           dir);
  const char *p = script("env.sh", body);
  setenv("MY_TOKEN", "overridden", 1);
  char *env[] = {"MY_TOKEN=first", "MY_TOKEN=from-env",
                 "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\"}", NULL};
  result_t r = run(p, V1, env);
  unsetenv("MY_TOKEN");
  assert_int_equal(r.rc, RIPPLE_OK);
  assert_string_equal(r.token, "from-env"); /* the last definition wins, as in Go */
  result_free(&r);
  char path[600];
  snprintf(path, sizeof path, "%s/info.json", dir);
  json_t *info = json_load_file(path, 0, NULL);
  assert_non_null(info);
  assert_string_equal(json_string_value(json_object_get(info, "kind")), "ExecCredential");
  json_decref(info);
}

static void test_failures(void **state) {
  (void)state;
  expect_cred_error(script("fail.sh",
                           "echo 'first line' >&2\n"
                           "echo 'login failed: no credentials' >&2\nexit 2"),
                    V1, "exited with status 2: first line login failed: no credentials");
  expect_cred_error(script("garbage.sh", "echo 'this is not json'; echo 'a hint' >&2"), V1,
                    "not JSON");
  expect_cred_error(script("nokind.sh", "echo '{\"apiVersion\":\"" V1 "\",\"status\":{}}'"), V1,
                    "not an ExecCredential");
  expect_cred_error(
      script("wrongapi.sh", "echo '{\"apiVersion\":\"" V1BETA1 "\",\"kind\":\"ExecCredential\","
                            "\"status\":{\"token\":\"t\"}}'"),
      V1, "apiVersion " V1BETA1 ", the kubeconfig asks for " V1);
  expect_cred_error(script("empty.sh", "echo '{\"apiVersion\":\"" V1
                                       "\",\"kind\":\"ExecCredential\",\"status\":{}}'"),
                    V1, "neither a token nor a client certificate");
  expect_cred_error(
      script("half.sh", "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
                        "\"status\":{\"clientCertificateData\":\"c\"}}'"),
      V1, "client certificate without its key");
  expect_cred_error(
      script("badexp.sh", "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":"
                          "{\"token\":\"t\",\"expirationTimestamp\":\"soon\"}}'"),
      V1, "expirationTimestamp \"soon\" is not RFC 3339");
  expect_cred_error(script("big.sh", "head -c 2000000 /dev/zero | tr '\\000' a"), V1,
                    "printed more than");
  expect_cred_error(script("signal.sh", "kill -9 $$"), V1, "killed by signal 9");
  char missing[600];
  snprintf(missing, sizeof missing, "%s/no-such-plugin", dir);
  expect_cred_error(missing, V1, "cannot run it: No such file");
  expect_cred_error("ripple-no-such-plugin-in-path", V1, "cannot run it");
}

static void test_timeout(void **state) {
  (void)state;
  setenv("RIPPLE_KUBE_EXEC_TIMEOUT_MS", "300", 1);
  /* the sleep is killed with the shell: the plugin runs in its own group */
  expect_cred_error(script("hang.sh", "echo 'waiting for a browser login' >&2\nsleep 30\necho x"),
                    V1, "did not finish within 300 ms: waiting for a browser login");
  unsetenv("RIPPLE_KUBE_EXEC_TIMEOUT_MS");
}

static void test_grandchild_keeps_pipe(void **state) {
  (void)state;
  /* a plugin that leaves a background process holding its stdout (a token
   * cache daemon, say) is done when it exits, not when the daemon does */
  const char *p = script("daemon.sh",
                         "sleep 5 &\n"
                         "echo '{\"apiVersion\":\"" V1
                         "\",\"kind\":\"ExecCredential\","
                         "\"status\":{\"token\":\"t\"}}'");
  result_t r = run(p, V1, NULL);
  assert_int_equal(r.rc, RIPPLE_OK);
  assert_string_equal(r.token, "t");
  result_free(&r);
}

static void test_from_kubeconfig(void **state) {
  (void)state;
  char body[1024];
  snprintf(
      body, sizeof body,
      "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > %s/info.json\n"
      "echo \"{\\\"apiVersion\\\":\\\"" V1
      "\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{\\\"token\\\":\\\"$1-$AUD\\\"}}\"",
      dir);
  script("plugin.sh", body);
  char cfg[600];
  snprintf(cfg, sizeof cfg, "%s/config", dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fputs(
      "clusters:\n"
      "- name: k\n"
      "  cluster:\n"
      "    server: https://k.example:6443\n"
      "    tls-server-name: kubernetes\n"
      "    extensions:\n"
      "    - {name: client.authentication.k8s.io/exec, extension: {audience: lab}}\n"
      "users:\n"
      "- name: u\n"
      "  user:\n"
      "    exec:\n"
      "      apiVersion: " V1
      "\n"
      "      command: ./plugin.sh\n"
      "      args: [hello]\n"
      "      env: [{name: AUD, value: world}]\n"
      "      interactiveMode: IfAvailable\n"
      "      provideClusterInfo: true\n"
      "contexts: [{name: x, context: {cluster: k, user: u}}]\n"
      "current-context: x\n",
      f);
  fclose(f);
  ripple_kube_config_opts_t o = {cfg, NULL, NULL, 0};
  ripple_kube_config_t *c;
  char err[512];
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_OK);
  char *tok = NULL, *cert = NULL, *key = NULL;
  int64_t exp = -1;
  ripple_kube_status_t st;
  int rc = kube_exec_run(c->exec, c->server, &tok, &cert, &key, &exp, &st);
  if (rc != RIPPLE_OK) fail_msg("%s", st.message);
  assert_string_equal(tok, "hello-world");
  free(tok);
  ripple_kube_config_free(c);
  char path[600];
  snprintf(path, sizeof path, "%s/info.json", dir);
  json_t *info = json_load_file(path, 0, NULL);
  assert_non_null(info);
  json_t *cl = json_object_get(json_object_get(info, "spec"), "cluster");
  assert_string_equal(json_string_value(json_object_get(cl, "server")), "https://k.example:6443");
  assert_string_equal(json_string_value(json_object_get(cl, "tls-server-name")), "kubernetes");
  assert_string_equal(json_string_value(json_object_get(json_object_get(cl, "config"), "audience")),
                      "lab");
  assert_string_equal(json_string_value(json_object_get(info, "apiVersion")), V1);
  json_decref(info);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_token, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cert_and_beta, setup, teardown),
      cmocka_unit_test_setup_teardown(test_env_and_stdin, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grandchild_keeps_pipe, setup, teardown),
      cmocka_unit_test_setup_teardown(test_from_kubeconfig, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
