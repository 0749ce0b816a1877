/*
 * test_kube_auth_lab.c - authentication and TLS against the lab's API server:
 * the admin client certificate, a service account's token given inline, in a
 * tokenFile (and rotated) and from an exec plugin, a plugin that returns a
 * client certificate, wrong tokens and missing permissions, and server
 * verification (the right CA, a wrong CA, no CA, insecure-skip-tls-verify,
 * tls-server-name).
 *
 * Needs the lab: KUBECONFIG is its admin kubeconfig and RIPPLE_SOURCE_DIR
 * the source tree (for `lab/lab kubectl`), as `make test-lab` sets them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "kube_internal.h"

#define SA "ripple-auth-test"

static char dir[256];
static char token[4096];
static char server[512], ca_file[512], cert_file[512], key_file[512];

/* ---- helpers ----------------------------------------------------------------- */

static const char *path(const char *name) { return test_path(dir, name); }

static void put(const char *p, const char *text, int mode) {
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  chmod(p, (mode_t)mode);
}

/* Run the lab's kubectl; returns its exit status, its output in out. */
static int kubectl(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kubectl(char *out, size_t cap, const char *fmt, ...) {
  char args[1024], cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "\"%s/lab/lab\" kubectl %s 2>&1", getenv("RIPPLE_SOURCE_DIR"), args);
  FILE *p = popen(cmd, "r"); /* NOLINT(cert-env33-c): the lab's kubectl is a script */
  if (!p) return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = '\0';
  return pclose(p);
}

/* A kubeconfig for the lab's server with the given cluster and user
 * fields (each line indented by four spaces). */
static const char *kubeconfig(const char *name, const char *cluster, const char *user) {
  static char text[16384];
  snprintf(text, sizeof text,
           "apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: lab\n"
           "  cluster:\n"
           "    server: %s\n"
           "%s"
           "users:\n"
           "- name: u\n"
           "  user:\n"
           "%s"
           "contexts:\n"
           "- name: c\n"
           "  context: {cluster: lab, user: u}\n"
           "current-context: c\n",
           server, cluster, user);
  const char *p = path(name);
  put(p, text, 0600);
  return p;
}

static const char *lab_ca(void) {
  static char line[600];
  snprintf(line, sizeof line, "    certificate-authority: %s\n", ca_file);
  return line;
}

static ripple_kube_client_t *client(const char *cfgpath) {
  ripple_kube_config_opts_t o = {cfgpath, NULL, NULL, 0};
  ripple_kube_config_t *cfg;
  char err[512];
  int rc = ripple_kube_config_load(&o, &cfg, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("%s: %s", cfgpath, err);
  ripple_kube_client_t *c;
  assert_int_equal(ripple_kube_client_new(cfg, NULL, &c), RIPPLE_OK);
  ripple_kube_config_free(cfg); /* the client keeps its own copy */
  return c;
}

static int get(ripple_kube_client_t *c, const char *p, json_t **out, ripple_kube_status_t *st) {
  int rc = ripple_kube_request(c, "GET", p, NULL, NULL, 0, out, st);
  if (rc != RIPPLE_OK) print_message("GET %s: %s (%s)\n", p, ripple_kube_strerror(rc), st->message);
  return rc;
}

/* GET /version and the default namespace: both must work. */
static void expect_ok(const char *cfgpath) {
  ripple_kube_client_t *c = client(cfgpath);
  ripple_kube_status_t st;
  json_t *j = NULL;
  assert_int_equal(get(c, "/version", &j, &st), RIPPLE_OK);
  const char *v = json_string_value(json_object_get(j, "gitVersion"));
  assert_non_null(v);
  assert_true(v[0] == 'v');
  json_decref(j);
  assert_int_equal(get(c, "/api/v1/namespaces/default", &j, &st), RIPPLE_OK);
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "metadata"), "name")),
                      "default");
  json_decref(j);
  ripple_kube_client_free(c);
}

/* GET /version fails with rc; the message must say something. */
static void expect_fail(const char *cfgpath, int want) {
  ripple_kube_client_t *c = client(cfgpath);
  ripple_kube_status_t st;
  json_t *j = NULL;
  int rc = get(c, "/version", &j, &st);
  assert_int_equal(rc, want);
  assert_null(j);
  assert_true(strlen(st.message) > 0);
  if (want == RIPPLE_KUBE_EFORBIDDEN) assert_int_equal(st.http, 401);
  if (want == RIPPLE_KUBE_ECONNECT) assert_int_equal(st.http, 0);
  ripple_kube_client_free(c);
}

/* ---- fixture: a service account with read access, and its token ---------------- */

/* The server, its CA and the admin's certificate, from the admin kubeconfig
 * (the RIPPLE_LAB_* variables are not exported to tests). */
static int admin_files(const char *kc) {
  ripple_kube_config_opts_t o = {kc, NULL, NULL, 0};
  ripple_kube_config_t *cfg;
  char err[512];
  if (ripple_kube_config_load(&o, &cfg, err, sizeof err) != RIPPLE_OK || !cfg->ca_pem ||
      !cfg->cert_pem || !cfg->key_pem) {
    fprintf(stderr, "test_kube_auth: %s: %s\n", kc, err[0] ? err : "no CA or client certificate");
    return -1;
  }
  snprintf(server, sizeof server, "%s", cfg->server);
  snprintf(ca_file, sizeof ca_file, "%s/lab-ca.crt", dir);
  snprintf(cert_file, sizeof cert_file, "%s/admin.crt", dir);
  snprintf(key_file, sizeof key_file, "%s/admin.key", dir);
  put(ca_file, cfg->ca_pem, 0600);
  put(cert_file, cfg->cert_pem, 0600);
  put(key_file, cfg->key_pem, 0600);
  ripple_kube_config_free(cfg);
  return 0;
}

static int group_setup(void **state) {
  (void)state;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !*kc || !getenv("RIPPLE_SOURCE_DIR")) {
    fprintf(stderr,
            "test_kube_auth: KUBECONFIG and RIPPLE_SOURCE_DIR must be set "
            "(run it with `make test-lab`, or eval \"$(lab/lab env)\")\n");
    return -1;
  }
  snprintf(dir, sizeof dir, "/tmp/ripple-kauth-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  if (admin_files(kc) != 0) return -1;
  char out[4096];
  kubectl(out, sizeof out, "delete clusterrolebinding %s --ignore-not-found", SA);
  kubectl(out, sizeof out, "-n default delete serviceaccount %s --ignore-not-found", SA);
  if (kubectl(out, sizeof out, "-n default create serviceaccount %s", SA) != 0 ||
      kubectl(out, sizeof out,
              "create clusterrolebinding %s --clusterrole=view --serviceaccount=default:%s", SA,
              SA) != 0) {
    fprintf(stderr, "test_kube_auth: kubectl: %s\n", out);
    return -1;
  }
  if (kubectl(token, sizeof token, "-n default create token %s --duration=1h", SA) != 0 ||
      strlen(token) < 20) {
    fprintf(stderr, "test_kube_auth: kubectl create token: %s\n", token);
    return -1;
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  char out[4096];
  kubectl(out, sizeof out, "delete clusterrolebinding %s --ignore-not-found", SA);
  kubectl(out, sizeof out, "-n default delete serviceaccount %s --ignore-not-found", SA);
  test_rmtree(dir);
  return 0;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_admin_cert(void **state) {
  (void)state;
  expect_ok(getenv("KUBECONFIG"));
}

static void test_token(void **state) {
  (void)state;
  char user[5000];
  snprintf(user, sizeof user, "    token: %s\n", token);
  expect_ok(kubeconfig("token.yaml", lab_ca(), user));
  /* authenticated, but the view role does not cover secrets: 403 */
  ripple_kube_client_t *c = client(path("token.yaml"));
  ripple_kube_status_t st;
  json_t *j = NULL;
  assert_int_equal(get(c, "/api/v1/namespaces/kube-system/secrets", &j, &st),
                   RIPPLE_KUBE_EFORBIDDEN);
  assert_int_equal(st.http, 403);
  assert_string_equal(st.reason, "Forbidden");
  assert_non_null(strstr(st.message, SA));
  ripple_kube_client_free(c);
}

static void test_token_file(void **state) {
  (void)state;
  char tok[4200];
  snprintf(tok, sizeof tok, "%s\n", token);
  put(path("sa-token"), tok, 0600);
  /* relative to the kubeconfig's directory */
  const char *cfg = kubeconfig("tokenfile.yaml", lab_ca(), "    tokenFile: sa-token\n");
  expect_ok(cfg);
  /* a rotated file is read again: a wrong token fails, the right one works again */
  ripple_kube_client_t *c = client(cfg);
  ripple_kube_status_t st;
  json_t *j = NULL;
  assert_int_equal(get(c, "/version", &j, &st), RIPPLE_OK);
  json_decref(j);
  put(path("sa-token"), "rotated-but-wrong\n", 0600);
  j = NULL;
  assert_int_equal(get(c, "/version", &j, &st), RIPPLE_KUBE_EFORBIDDEN);
  put(path("sa-token"), tok, 0600);
  assert_int_equal(get(c, "/version", &j, &st), RIPPLE_OK);
  json_decref(j);
  ripple_kube_client_free(c);
}

static void test_exec_token(void **state) {
  (void)state;
  char body[6000];
  snprintf(body, sizeof body,
           "#!/bin/sh\n"
           "echo run >> \"%s\"\n"
           "cat <<EOF\n"
           "{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\",\n"
           " \"status\": {\"token\": \"%s\", \"expirationTimestamp\": \"2099-01-01T00:00:00Z\"}}\n"
           "EOF\n",
           path("exec-runs"), token);
  put(path("plugin.sh"), body, 0700);
  const char *cfg = kubeconfig("exec.yaml", lab_ca(),
                               "    exec:\n"
                               "      apiVersion: client.authentication.k8s.io/v1\n"
                               "      command: ./plugin.sh\n"
                               "      interactiveMode: Never\n");
  expect_ok(cfg);
  /* two requests, one plugin run: the token is cached until it expires */
  FILE *f = fopen(path("exec-runs"), "r");
  assert_non_null(f);
  char line[64];
  int n = 0;
  while (fgets(line, sizeof line, f)) n++;
  fclose(f);
  assert_int_equal(n, 1);
}

static void test_exec_cert(void **state) {
  (void)state;
  const char *cert = cert_file, *key = key_file;
  char body[2048];
  snprintf(body, sizeof body,
           "#!/bin/sh\n"
           "pem() { awk '{printf \"%%s\\\\n\", $0}' \"$1\"; }\n"
           "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
           "\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":\"%%s\","
           "\"clientKeyData\":\"%%s\"}}' \"$(pem %s)\" \"$(pem %s)\"\n",
           cert, key);
  put(path("cert-plugin.sh"), body, 0700);
  char user[1024];
  snprintf(user, sizeof user,
           "    exec:\n"
           "      apiVersion: client.authentication.k8s.io/v1beta1\n"
           "      command: %s\n",
           path("cert-plugin.sh"));
  expect_ok(kubeconfig("exec-cert.yaml", lab_ca(), user));
}

static void test_exec_failing(void **state) {
  (void)state;
  put(path("bad-plugin.sh"), "#!/bin/sh\necho 'error: you must log in first' >&2\nexit 1\n", 0700);
  const char *cfg = kubeconfig("exec-bad.yaml", lab_ca(),
                               "    exec:\n"
                               "      apiVersion: client.authentication.k8s.io/v1\n"
                               "      command: ./bad-plugin.sh\n"
                               "      interactiveMode: IfAvailable\n");
  ripple_kube_client_t *c = client(cfg);
  ripple_kube_status_t st;
  json_t *j = NULL;
  assert_int_equal(get(c, "/version", &j, &st), RIPPLE_KUBE_ECRED);
  assert_non_null(strstr(st.message, "you must log in first"));
  ripple_kube_client_free(c);
}

static void test_wrong_token(void **state) {
  (void)state;
  expect_fail(kubeconfig("wrong.yaml", lab_ca(), "    token: not-a-valid-token\n"),
              RIPPLE_KUBE_EFORBIDDEN);
}

static void test_server_verification(void **state) {
  (void)state;
  char user[5000], cmd[1200];
  snprintf(user, sizeof user, "    token: %s\n", token);
  /* a CA that did not sign the server's certificate */
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -subj /CN=wrong-ca "
           "-days 1 >/dev/null 2>&1",
           path("wrong.key"), path("wrong-ca.crt"));
  assert_int_equal(system(cmd), 0); /* NOLINT(cert-env33-c) */
  expect_fail(kubeconfig("wrong-ca.yaml", "    certificate-authority: wrong-ca.crt\n", user),
              RIPPLE_KUBE_ECONNECT);
  /* no CA at all: the system's CAs do not know the lab's */
  expect_fail(kubeconfig("no-ca.yaml", "", user), RIPPLE_KUBE_ECONNECT);
  expect_ok(kubeconfig("insecure.yaml", "    insecure-skip-tls-verify: true\n", user));
  /* tls-server-name: verify another of the certificate's names, or fail */
  char cl[700];
  snprintf(cl, sizeof cl, "%s    tls-server-name: kubernetes.default.svc\n", lab_ca());
  expect_ok(kubeconfig("sni.yaml", cl, user));
  snprintf(cl, sizeof cl, "%s    tls-server-name: not-the-server.example\n", lab_ca());
  expect_fail(kubeconfig("sni-wrong.yaml", cl, user), RIPPLE_KUBE_ECONNECT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_admin_cert),  cmocka_unit_test(test_token),
      cmocka_unit_test(test_token_file),  cmocka_unit_test(test_exec_token),
      cmocka_unit_test(test_exec_cert),   cmocka_unit_test(test_exec_failing),
      cmocka_unit_test(test_wrong_token), cmocka_unit_test(test_server_verification),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
