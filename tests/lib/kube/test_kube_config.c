/*
 * test_kube_config.c - kubeconfig loading without a cluster: files written
 * to a temporary directory, read the way kubectl reads them ($KUBECONFIG
 * merging, contexts, relative paths, data versus files, tokens, exec
 * sections, in-cluster service accounts), and every kind of broken file
 * giving RIPPLE_KUBE_ECONFIG with a message that names the file and field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "kube_internal.h"

/* base64 of "CA-PEM\n", "CERT\n", "KEY\n" */
#define CA_B64 "Q0EtUEVNCg=="
#define CERT_B64 "Q0VSVAo="
#define KEY_B64 "S0VZCg=="

static char dir[256];
static char err[512];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ripple-kcfg-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  setenv("HOME", dir, 1); /* no ~/.kube/config unless a test writes one */
  unsetenv("KUBECONFIG");
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  unsetenv("RIPPLE_KUBE_SA_DIR");
  unsetenv("POD_NAMESPACE");
  err[0] = '\0';
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(dir);
  return 0;
}

static const char *path(const char *name) { return test_path(dir, name); }

/* Write a file in the test directory, making its parent directory. */
static const char *put(const char *name, const char *text) {
  const char *p = path(name);
  char parent[512];
  snprintf(parent, sizeof parent, "%s", p);
  *strrchr(parent, '/') = '\0';
  mkdir(parent, 0700);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static int load(const char *files, const char *context, const char *ns, ripple_kube_config_t **c) {
  ripple_kube_config_opts_t o = {files, context, ns, 0};
  *c = NULL;
  int rc = ripple_kube_config_load(&o, c, err, sizeof err);
  if (rc != RIPPLE_OK) print_message("load: %s\n", err);
  return rc;
}

/* Expect a failure whose message contains all the given fragments. */
static void expect_fail(const char *files, const char *context, const char *want1,
                        const char *want2) {
  ripple_kube_config_t *c = NULL;
  ripple_kube_config_opts_t o = {files, context, NULL, 0};
  int rc = ripple_kube_config_load(&o, &c, err, sizeof err);
  if (rc != RIPPLE_KUBE_ECONFIG || !strstr(err, want1) || (want2 && !strstr(err, want2)))
    fail_msg("rc %d, message \"%s\", wanted \"%s\" and \"%s\"", rc, err, want1, want2 ? want2 : "");
  assert_null(c);
}

static const char *const ADMIN =
    "apiVersion: v1\n"
    "kind: Config\n"
    "clusters:\n"
    "- name: lab\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:16443/\n"
    "    certificate-authority-data: " CA_B64
    "\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " CERT_B64
    "\n"
    "    client-key-data: " KEY_B64
    "\n"
    "contexts:\n"
    "- name: lab\n"
    "  context: {cluster: lab, user: admin}\n"
    "current-context: lab\n"
    "preferences: {colors: true}\n"
    "unknown-top-level: [1, 2]\n";

static void test_admin(void **state) {
  (void)state;
  ripple_kube_config_t *c;
  assert_int_equal(load(put("config", ADMIN), NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(ripple_kube_config_server(c), "https://127.0.0.1:16443");
  assert_string_equal(ripple_kube_config_namespace(c), "default");
  assert_string_equal(ripple_kube_config_context(c), "lab");
  assert_string_equal(c->ca_pem, "CA-PEM\n");
  assert_string_equal(c->cert_pem, "CERT\n");
  assert_string_equal(c->key_pem, "KEY\n");
  assert_null(c->token);
  assert_null(c->exec);
  assert_int_equal(c->insecure, 0);
  ripple_kube_config_t *d = NULL;
  assert_int_equal(kube_config_dup(c, &d), RIPPLE_OK);
  assert_string_equal(d->key_pem, "KEY\n");
  assert_ptr_not_equal(d->key_pem, c->key_pem);
  ripple_kube_config_free(c);
  ripple_kube_config_free(d);
}

static void test_kubeconfig_env_and_home(void **state) {
  (void)state;
  ripple_kube_config_t *c;
  /* ~/.kube/config when nothing else is given */
  put(".kube/config", ADMIN);
  assert_int_equal(load(NULL, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->context, "lab");
  ripple_kube_config_free(c);
  /* $KUBECONFIG wins over ~/.kube/config */
  setenv("KUBECONFIG",
         put("env.yaml",
             "clusters: [{name: e, cluster: {server: 'https://env:1'}}]\n"
             "contexts: [{name: e, context: {cluster: e}}]\n"
             "current-context: e\n"),
         1);
  assert_int_equal(load(NULL, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->server, "https://env:1");
  ripple_kube_config_free(c);
  /* and the explicit option wins over both */
  assert_int_equal(load(path(".kube/config"), NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->context, "lab");
  ripple_kube_config_free(c);
  expect_fail(path("nope"), NULL, "kubeconfig ", "nope: No such file");
}

static void test_merge(void **state) {
  (void)state;
  put("a",
      "clusters:\n"
      "- {name: shared, cluster: {server: 'https://from-a:1'}}\n"
      "users:\n"
      "- {name: u, user: {token: token-a}}\n"
      "contexts:\n"
      "- {name: ca, context: {cluster: shared, user: u, namespace: ns-a}}\n");
  put("b",
      "clusters:\n"
      "- {name: shared, cluster: {server: 'https://from-b:1'}}\n"
      "- {name: only-b, cluster: {server: 'https://only-b:1'}}\n"
      "users:\n"
      "- {name: u, user: {token: token-b}}\n"
      "contexts:\n"
      "- {name: cb, context: {cluster: only-b, user: u}}\n"
      "- {name: ca, context: {cluster: only-b}}\n"
      "current-context: cb\n");
  put("c", "current-context: ca\n");
  char list[1200];
  /* a missing file in the list is skipped, as kubectl skips it */
  snprintf(list, sizeof list, "%s::%s:%s:%s", path("missing"), path("a"), path("b"), path("c"));
  setenv("KUBECONFIG", list, 1);
  ripple_kube_config_t *c;
  /* current-context from the first file that sets one (b, not c) */
  assert_int_equal(load(NULL, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->context, "cb");
  assert_string_equal(c->server, "https://only-b:1");
  assert_string_equal(c->token, "token-a"); /* user u from a, the first to define it */
  assert_string_equal(c->namespace_, "default");
  ripple_kube_config_free(c);
  /* context ca from a (the first), with cluster "shared" from a */
  assert_int_equal(load(NULL, "ca", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->server, "https://from-a:1");
  assert_string_equal(c->namespace_, "ns-a");
  ripple_kube_config_free(c);
  assert_int_equal(load(NULL, "ca", "override", &c), RIPPLE_OK);
  assert_string_equal(c->namespace_, "override");
  ripple_kube_config_free(c);
  /* the explicit option takes a list too */
  snprintf(list, sizeof list, "%s:%s", path("c"), path("a"));
  unsetenv("KUBECONFIG");
  assert_int_equal(load(list, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->context, "ca");
  ripple_kube_config_free(c);
}

static void test_missing_everything(void **state) {
  (void)state;
  setenv("KUBECONFIG", path("none1"), 1);
  expect_fail(NULL, NULL, "none of the files in", "none1");
  unsetenv("KUBECONFIG");
  expect_fail(NULL, NULL, "no kubeconfig", ".kube/config");
  put("empty", "");
  expect_fail(path("empty"), NULL, "no current-context", "empty");
}

static void test_contexts(void **state) {
  (void)state;
  const char *p = put("config",
                      "clusters: [{name: k, cluster: {server: 'k:6443'}}]\n"
                      "users: [{name: u, user: {}}]\n"
                      "contexts:\n"
                      "- {name: one, context: {cluster: k, user: u}}\n"
                      "- {name: nocluster, context: {user: u}}\n"
                      "- {name: badcluster, context: {cluster: zz}}\n"
                      "- {name: baduser, context: {cluster: k, user: zz}}\n"
                      "- {name: anon, context: {cluster: k}}\n"
                      "current-context: gone\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, "one", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->server, "https://k:6443"); /* a bare host:port means https */
  ripple_kube_config_free(c);
  assert_int_equal(load(p, "anon", NULL, &c), RIPPLE_OK);
  assert_null(c->token);
  assert_null(c->cert_pem);
  ripple_kube_config_free(c);
  expect_fail(p, NULL, "context \"gone\" is not defined", p);
  expect_fail(p, "nocluster", "context \"nocluster\": no cluster", p);
  expect_fail(p, "badcluster", "cluster \"zz\" is not defined", NULL);
  expect_fail(p, "baduser", "user \"zz\" is not defined", NULL);
}

static void test_files_relative(void **state) {
  (void)state;
  put("sub/ca.pem", "CA FROM FILE\n");
  put("sub/certs/c.pem", "CERT FROM FILE\n");
  put("k.pem", "KEY FROM FILE\n");
  put("sub/tok", "tok-from-file\n");
  char text[2048];
  snprintf(text, sizeof text,
           "clusters:\n"
           "- name: k\n"
           "  cluster:\n"
           "    server: https://k:1\n"
           "    certificate-authority: ca.pem\n"
           "users:\n"
           "- name: u\n"
           "  user:\n"
           "    client-certificate: certs/c.pem\n"
           "    client-key: %s\n"
           "    tokenFile: tok\n"
           "contexts: [{name: x, context: {cluster: k, user: u}}]\n"
           "current-context: x\n",
           path("k.pem"));
  ripple_kube_config_t *c;
  /* relative to the kubeconfig's directory, not to the working directory */
  assert_int_equal(load(put("sub/config", text), NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->ca_pem, "CA FROM FILE\n");
  assert_string_equal(c->cert_pem, "CERT FROM FILE\n");
  assert_string_equal(c->key_pem, "KEY FROM FILE\n");
  assert_string_equal(c->token_file, path("sub/tok"));
  assert_null(c->token); /* the client reads the file, and again when it rotates */
  ripple_kube_config_free(c);
  remove(path("sub/certs/c.pem"));
  char want[600];
  snprintf(want, sizeof want, "kubeconfig %s: user \"u\": client-certificate %s: No such file",
           path("sub/config"), path("sub/certs/c.pem"));
  expect_fail(path("sub/config"), NULL, want, NULL);
}

static void test_data_wins(void **state) {
  (void)state;
  const char *p = put("config",
                      "clusters:\n"
                      "- name: k\n"
                      "  cluster:\n"
                      "    server: https://k:1\n"
                      "    certificate-authority: does-not-exist\n"
                      "    certificate-authority-data: ZGF0YS13aW5zCg==\n"
                      "contexts: [{name: x, context: {cluster: k}}]\n"
                      "current-context: x\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->ca_pem, "data-wins\n");
  ripple_kube_config_free(c);
}

static void test_bad_base64(void **state) {
  (void)state;
  /* what client-go refuses too: no padding, a space (a folded plain scalar) */
  static const char *const bad[] = {
      "not*base64", "QQ=A", "Q", "QUJD===", "QQ==QQ==", "Q0VSVAo", "Q0 VSVAo="};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "clusters: [{name: k, cluster: {server: 'https://k:1'}}]\n"
             "users: [{name: bob, user: {client-certificate-data: '%s', client-key-data: "
             "'" KEY_B64
             "'}}]\n"
             "contexts: [{name: x, context: {cluster: k, user: bob}}]\n"
             "current-context: x\n",
             bad[i]);
    const char *p = put("config", text);
    expect_fail(p, NULL, "user \"bob\": client-certificate-data: not valid base64", p);
  }
  /* valid forms: padded, wrapped over the lines of a block scalar */
  const char *p = put("config",
                      "clusters: [{name: k, cluster: {server: 'https://k:1'}}]\n"
                      "users:\n"
                      "- name: bob\n"
                      "  user:\n"
                      "    client-certificate-data: Q0VSVAo=\n"
                      "    client-key-data: |\n"
                      "      S0\n"
                      "      VZCg==\n"
                      "contexts: [{name: x, context: {cluster: k, user: bob}}]\n"
                      "current-context: x\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->cert_pem, "CERT\n");
  assert_string_equal(c->key_pem, "KEY\n");
  ripple_kube_config_free(c);
}

static void test_broken_yaml(void **state) {
  (void)state;
  const char *p = put("config", "clusters:\n  - name: [unclosed\n");
  expect_fail(p, NULL, p, "line ");
  expect_fail(put("config", "- just\n- a list\n"), NULL, "expected a mapping", NULL);
  expect_fail(put("config", "clusters: 3\n"), NULL, "clusters: expected a list", NULL);
  expect_fail(put("config", "clusters: [3]\n"), NULL, "clusters[0]: expected a mapping", NULL);
  expect_fail(put("config", "clusters: [{name: a, cluster: 3}]\n"), NULL,
              "clusters[0] \"a\": cluster: expected a mapping", NULL);
  expect_fail(put("config", "clusters: [{name: a}, {name: a}]\n"), NULL, "\"a\" is defined twice",
              NULL);
  expect_fail(put("config", "current-context: [x]\n"), NULL, "current-context: expected", NULL);
  expect_fail(put("config",
                  "clusters: [{name: k, cluster: {server: [1]}}]\n"
                  "contexts: [{name: x, context: {cluster: k}}]\ncurrent-context: x\n"),
              NULL, "cluster \"k\": server: expected a string", NULL);
  expect_fail(put("config",
                  "clusters: [{name: k, cluster: {}}]\n"
                  "contexts: [{name: x, context: {cluster: k}}]\ncurrent-context: x\n"),
              NULL, "cluster \"k\": no server", NULL);
  expect_fail(put("config",
                  "clusters: [{name: k, cluster: {server: 'https://k:1', "
                  "insecure-skip-tls-verify: maybe}}]\n"
                  "contexts: [{name: x, context: {cluster: k}}]\ncurrent-context: x\n"),
              NULL, "insecure-skip-tls-verify: expected true or false", NULL);
  /* an alias cycle and a binary file do not crash the loader */
  expect_fail(put("config", "a: &x [*x]\n"), NULL, "expands too far", NULL);
  expect_fail(put("config", "\x01\x02\xff\xfe"), NULL, "kubeconfig ", NULL);
  expect_fail(dir, NULL, "kubeconfig ", "directory");
}

static void test_cluster_fields(void **state) {
  (void)state;
  const char *p = put("config",
                      "clusters:\n"
                      "- name: k\n"
                      "  cluster:\n"
                      "    server: https://10.0.0.1:6443\n"
                      "    insecure-skip-tls-verify: true\n"
                      "    tls-server-name: kubernetes.default\n"
                      "    proxy-url: http://proxy:3128\n"
                      "    disable-compression: true\n"
                      "- name: both\n"
                      "  cluster:\n"
                      "    server: https://k:1\n"
                      "    insecure-skip-tls-verify: true\n"
                      "    certificate-authority-data: " CA_B64
                      "\n"
                      "contexts:\n"
                      "- {name: x, context: {cluster: k}}\n"
                      "- {name: both, context: {cluster: both}}\n"
                      "current-context: x\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, NULL, NULL, &c), RIPPLE_OK);
  assert_int_equal(c->insecure, 1);
  assert_null(c->ca_pem);
  assert_string_equal(c->tls_server_name, "kubernetes.default");
  assert_string_equal(c->proxy_url, "http://proxy:3128");
  ripple_kube_config_free(c);
  expect_fail(p, "both", "insecure-skip-tls-verify with a certificate-authority", NULL);
}

static void test_user_auth(void **state) {
  (void)state;
  put("tok", "abc\n");
  const char *p = put("config",
                      "clusters: [{name: k, cluster: {server: 'https://k:1'}}]\n"
                      "users:\n"
                      "- {name: token, user: {token: secret-token}}\n"
                      "- {name: file, user: {tokenFile: tok}}\n"
                      "- {name: nofile, user: {tokenFile: missing-tok}}\n"
                      "- {name: basic, user: {username: ann, password: pw}}\n"
                      "- {name: both, user: {token: t, username: ann}}\n"
                      "- {name: certonly, user: {client-certificate-data: Q0VSVAo=}}\n"
                      "- {name: keyonly, user: {client-key: tok}}\n"
                      "- {name: oidc, user: {auth-provider: {name: oidc}}}\n"
                      "contexts:\n"
                      "- {name: token, context: {cluster: k, user: token}}\n"
                      "- {name: file, context: {cluster: k, user: file}}\n"
                      "- {name: nofile, context: {cluster: k, user: nofile}}\n"
                      "- {name: basic, context: {cluster: k, user: basic}}\n"
                      "- {name: both, context: {cluster: k, user: both}}\n"
                      "- {name: certonly, context: {cluster: k, user: certonly}}\n"
                      "- {name: keyonly, context: {cluster: k, user: keyonly}}\n"
                      "- {name: oidc, context: {cluster: k, user: oidc}}\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, "token", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->token, "secret-token");
  assert_null(c->token_file);
  ripple_kube_config_free(c);
  assert_int_equal(load(p, "file", NULL, &c), RIPPLE_OK);
  assert_null(c->token);
  assert_string_equal(c->token_file, path("tok"));
  ripple_kube_config_free(c);
  assert_int_equal(load(p, "basic", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->username, "ann");
  assert_string_equal(c->password, "pw");
  ripple_kube_config_free(c);
  expect_fail(p, "nofile", "user \"nofile\": tokenFile ", "missing-tok: No such file");
  expect_fail(p, "both", "only one authentication method", NULL);
  expect_fail(p, "certonly", "client-certificate without client-key", NULL);
  expect_fail(p, "keyonly", "client-key without client-certificate", NULL);
  expect_fail(p, "oidc", "auth-provider is not supported", NULL);
}

static int env_has(char **env, const char *kv) {
  for (; env && *env; env++)
    if (!strcmp(*env, kv)) return 1;
  return 0;
}

static const char *env_get(char **env, const char *name) {
  size_t n = strlen(name);
  for (; env && *env; env++)
    if (!strncmp(*env, name, n) && (*env)[n] == '=') return *env + n + 1;
  return NULL;
}

static const char *exec_kubeconfig(void) {
  return put(
      "sub/config",
      "clusters:\n"
      "- name: k\n"
      "  cluster:\n"
      "    server: https://k:1\n"
      "    certificate-authority-data: " CA_B64
      "\n"
      "    extensions:\n"
      "    - name: client.authentication.k8s.io/exec\n"
      "      extension: {audience: lab, n: 3, deep: {list: [a, true]}}\n"
      "users:\n"
      "- name: v1\n"
      "  user:\n"
      "    exec:\n"
      "      apiVersion: client.authentication.k8s.io/v1\n"
      "      command: ./bin/plugin\n"
      "      args: [get-token, --x=1]\n"
      "      env: [{name: A, value: '1'}, {name: B, value: two words}]\n"
      "      interactiveMode: Never\n"
      "      provideClusterInfo: true\n"
      "      installHint: install it\n"
      "- {name: beta, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
      "command: plugin}}}\n"
      "- {name: nomode, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: p}}}\n"
      "- {name: always, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: p, "
      "interactiveMode: Always}}}\n"
      "- {name: alpha, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
      "command: p}}}\n"
      "- {name: nocmd, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1}}}\n"
      "- {name: badenv, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
      "command: p, env: [{value: x}]}}}\n"
      "contexts:\n"
      "- {name: v1, context: {cluster: k, user: v1}}\n"
      "- {name: beta, context: {cluster: k, user: beta}}\n"
      "- {name: nomode, context: {cluster: k, user: nomode}}\n"
      "- {name: always, context: {cluster: k, user: always}}\n"
      "- {name: alpha, context: {cluster: k, user: alpha}}\n"
      "- {name: nocmd, context: {cluster: k, user: nocmd}}\n"
      "- {name: badenv, context: {cluster: k, user: badenv}}\n");
}

static void test_exec_section(void **state) {
  (void)state;
  const char *p = exec_kubeconfig();
  ripple_kube_config_t *c;
  assert_int_equal(load(p, "v1", NULL, &c), RIPPLE_OK);
  kube_exec_t *x = c->exec;
  assert_non_null(x);
  assert_string_equal(x->command, path("sub/bin/plugin"));
  assert_string_equal(x->args[0], x->command);
  assert_string_equal(x->args[1], "get-token");
  assert_string_equal(x->args[2], "--x=1");
  assert_null(x->args[3]);
  assert_true(env_has(x->env, "A=1"));
  assert_true(env_has(x->env, "B=two words"));
  assert_int_equal(x->interactive, 0);
  json_t *info = json_loads(env_get(x->env, "KUBERNETES_EXEC_INFO"), 0, NULL);
  assert_non_null(info);
  assert_string_equal(json_string_value(json_object_get(info, "kind")), "ExecCredential");
  json_t *spec = json_object_get(info, "spec"), *cl = json_object_get(spec, "cluster");
  assert_true(json_is_false(json_object_get(spec, "interactive")));
  assert_string_equal(json_string_value(json_object_get(cl, "server")), "https://k:1");
  assert_string_equal(json_string_value(json_object_get(cl, "certificate-authority-data")), CA_B64);
  json_t *cfg = json_object_get(cl, "config");
  assert_string_equal(json_string_value(json_object_get(cfg, "audience")), "lab");
  assert_int_equal(json_integer_value(json_object_get(cfg, "n")), 3);
  json_decref(info);
  ripple_kube_config_t *d = NULL;
  assert_int_equal(kube_config_dup(c, &d), RIPPLE_OK);
  assert_string_equal(d->exec->args[2], "--x=1");
  assert_string_equal(d->exec->api_version, "client.authentication.k8s.io/v1");
  ripple_kube_config_free(d);
  ripple_kube_config_free(c);
}

static void test_exec_section_variants(void **state) {
  (void)state;
  const char *p = exec_kubeconfig();
  ripple_kube_config_t *c;
  assert_int_equal(load(p, "beta", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->exec->command, "plugin"); /* looked up in PATH, not resolved */
  assert_int_equal(c->exec->interactive, 1);       /* v1beta1 default: IfAvailable */
  json_t *info = json_loads(env_get(c->exec->env, "KUBERNETES_EXEC_INFO"), 0, NULL);
  assert_non_null(info);
  assert_null(json_object_get(json_object_get(info, "spec"), "cluster"));
  json_decref(info);
  ripple_kube_config_free(c);
  expect_fail(p, "nomode", "user \"nomode\": exec: interactiveMode is required", NULL);
  expect_fail(p, "always", "interactiveMode Always needs a terminal", NULL);
  expect_fail(p, "alpha", "v1alpha1 is not supported", NULL);
  expect_fail(p, "nocmd", "exec: no command", NULL);
  expect_fail(p, "badenv", "exec: env[0]: bad or missing name", NULL);
}

/* yjson types plain scalars (numbers, booleans); fields that are strings
 * take their text, as the libyaml reader took it. */
static void test_scalar_types(void **state) {
  (void)state;
  const char *p = put("config",
                      "clusters:\n"
                      "- name: 1\n"
                      "  cluster:\n"
                      "    server: https://k:1\n"
                      "    insecure-skip-tls-verify: 'true'\n"
                      "    tls-server-name: 2024\n"
                      "users:\n"
                      "- {name: true, user: {token: 12345}}\n"
                      "- {name: basic, user: {username: 7, password: 1.5}}\n"
                      "- name: ex\n"
                      "  user:\n"
                      "    exec:\n"
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                      "      command: p\n"
                      "      args: [--port, 8080, 0.25, false, ~]\n"
                      "      env: [{name: N, value: 42}]\n"
                      "contexts:\n"
                      "- {name: 3, context: {cluster: 1, user: true, namespace: 2024}}\n"
                      "- {name: basic, context: {cluster: 1, user: basic}}\n"
                      "- {name: ex, context: {cluster: 1, user: ex}}\n"
                      "current-context: 3\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, NULL, NULL, &c), RIPPLE_OK);
  assert_string_equal(c->context, "3");
  assert_string_equal(c->namespace_, "2024");
  assert_int_equal(c->insecure, 1);
  assert_string_equal(c->tls_server_name, "2024");
  assert_string_equal(c->token, "12345");
  ripple_kube_config_free(c);
  assert_int_equal(load(p, "basic", NULL, &c), RIPPLE_OK);
  assert_string_equal(c->username, "7");
  assert_string_equal(c->password, "1.5");
  ripple_kube_config_free(c);
  assert_int_equal(load(p, "ex", NULL, &c), RIPPLE_OK);
  static const char *const args[] = {"--port", "8080", "0.25", "false", ""};
  for (size_t i = 0; i < sizeof args / sizeof *args; i++)
    assert_string_equal(c->exec->args[i + 1], args[i]);
  assert_null(c->exec->args[6]);
  assert_true(env_has(c->exec->env, "N=42"));
  ripple_kube_config_free(c);
}

/* Aliases that expand too far fail the file (yjson's bound), and the exec
 * extension, which goes whole into one environment variable, has its own. */
#define ALIASES                                      \
  "a: &a [x, x, x, x, x, x, x, x, x, x]\n"           \
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" \
  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"

static void test_alias_bounds(void **state) {
  (void)state;
  expect_fail(put("config", ALIASES "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                    "f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"),
              NULL, "expands too far", NULL);
  const char *p =
      put("config", ALIASES
          "clusters:\n"
          "- name: k\n"
          "  cluster:\n"
          "    server: https://k:1\n"
          "    extensions: [{name: client.authentication.k8s.io/exec, extension: *d}]\n"
          "users:\n"
          "- {name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
          "command: p}}}\n"
          "- {name: info, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
          "command: p, provideClusterInfo: true}}}\n"
          "contexts:\n"
          "- {name: u, context: {cluster: k, user: u}}\n"
          "- {name: info, context: {cluster: k, user: info}}\n");
  ripple_kube_config_t *c;
  assert_int_equal(load(p, "u", NULL, &c), RIPPLE_OK);
  ripple_kube_config_free(c);
  expect_fail(p, "info", "user \"info\": exec: provideClusterInfo", "more than 10000 values");
}

static void test_in_cluster(void **state) {
  (void)state;
  put("sa/token", "sa-token\n");
  put("sa/ca.crt", "SA CA\n");
  put("sa/namespace", "team-a\n");
  setenv("RIPPLE_KUBE_SA_DIR", path("sa"), 1);
  ripple_kube_config_opts_t o = {NULL, NULL, NULL, 1};
  ripple_kube_config_t *c = NULL;
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_KUBE_ECONFIG);
  assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_OK);
  assert_string_equal(c->server, "https://10.96.0.1:443");
  assert_string_equal(ripple_kube_config_context(c), "");
  assert_string_equal(c->namespace_, "team-a");
  assert_string_equal(c->ca_pem, "SA CA\n");
  ripple_kube_config_free(c);
  setenv("POD_NAMESPACE", "from-downward-api", 1);
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_OK);
  unsetenv("POD_NAMESPACE");
  assert_string_equal(c->namespace_, "from-downward-api");
  assert_string_equal(c->token_file, path("sa/token"));
  assert_null(c->token);
  ripple_kube_config_free(c);
  /* IPv6, and the fallback when there is no kubeconfig at all */
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  remove(path("sa/namespace"));
  assert_int_equal(ripple_kube_config_load(NULL, &c, err, sizeof err), RIPPLE_OK);
  assert_string_equal(c->server, "https://[fd00::1]:443");
  assert_string_equal(c->namespace_, "default");
  ripple_kube_config_free(c);
  o.namespace_ = "given";
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_OK);
  assert_string_equal(c->namespace_, "given");
  ripple_kube_config_free(c);
  remove(path("sa/token"));
  c = NULL;
  assert_int_equal(ripple_kube_config_load(&o, &c, err, sizeof err), RIPPLE_KUBE_ECONFIG);
  assert_non_null(strstr(err, "sa/token: No such file"));
  assert_null(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_admin, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kubeconfig_env_and_home, setup, teardown),
      cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_everything, setup, teardown),
      cmocka_unit_test_setup_teardown(test_contexts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_files_relative, setup, teardown),
      cmocka_unit_test_setup_teardown(test_data_wins, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_base64, setup, teardown),
      cmocka_unit_test_setup_teardown(test_broken_yaml, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cluster_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(test_user_auth, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exec_section, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exec_section_variants, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scalar_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alias_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
