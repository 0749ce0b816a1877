/*
 * test_kubectl_proxy_lab.c - kubectl-ripple reaching the trace server through
 * the lab's real API server (its service proxy), with a user's own
 * credentials: every answer on the way that is the API server's, and the
 * reader token read from the Service's Secret with those credentials.
 *
 * What it cannot do is reach a ripple-server that way. The service proxy
 * (pkg/registry/core/service/storage, REST.ResourceLocation) dials an
 * address from the Service's Endpoints object, whose validation refuses
 * loopback addresses (ValidateEndpointIP), and never looks at an
 * ExternalName; the lab may only use loopback addresses. So the test stops
 * at the API server, and checks that an ExternalName Service of "localhost"
 * is still not proxied: should that change, the full path can be tested.
 *
 * As a user: a ServiceAccount of the test's namespace with a token from
 * the TokenRequest API, first with no rights, then with the Role
 * ripple-reader the install grants (get on services/proxy of the Service,
 * get on its Secret), by a RoleBinding the test makes. The proxy's
 * resourceName is the id in its path, "https:tserver:https", not the
 * Service's name: a Role naming "tserver" lets nobody through.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ripplex/sbuf.h"
#include "rw_lab.h"

#define CPID "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"

static ripple_kube_client_t *kc;
static char ns[64], dir[64] = "/tmp/ripple-kproxy-XXXXXX", reader_cfg[128];

/* kubectl-ripple with args (safe words) and this kubeconfig: its stdout and
 * stderr into out (a new string); its exit status. */
static int kr_run(char **out, const char *kubeconfig, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kr_run(char **out, const char *kubeconfig, const char *fmt, ...) {
  char args[1024], cmd[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s' --kubeconfig '%s' %s 2>&1",
           getenv("RIPPLE_KUBECTL_BIN"), kubeconfig, args);
  return lab_sh(out, "%s", cmd);
}

/* `trace CPID --server-service NS/svc` fails (status 1) saying every want. */
static void expect_trace(const char *kubeconfig, const char *svc, ...) {
  char *out;
  int st = kr_run(&out, kubeconfig, "trace " CPID " --server-service %s/%s", ns, svc);
  if (st != 1) fail_msg("status %d, want 1:\n%s", st, out);
  va_list ap;
  va_start(ap, svc);
  for (const char *w; (w = va_arg(ap, const char *));)
    if (!strstr(out, w)) fail_msg("the error does not say \"%s\":\n%s", w, out);
  va_end(ap);
  free(out);
}

static void create(const char *resource, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void create(const char *resource, const char *fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  json_t *o = lab_json("%s", text);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, resource), ns, o, NULL, NULL, &st));
  json_decref(o);
}

/* The Secret kubectl ripple reads the token from; token base64'd. */
static void put_secret(const char *token_b64) {
  json_t *o = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
      "\"tserver-reader-token\"},\"data\":{\"token\":\"%s\"}}",
      token_b64);
  ripple_kube_status_t st;
  const ripple_kube_resource_t *r = lab_resolve(kc, "secrets");
  int rc = ripple_kube_delete(kc, r, ns, "tserver-reader-token", NULL, &st);
  if (rc != RIPPLE_KUBE_ENOTFOUND) LAB_OK(st, rc);
  LAB_OK(st, ripple_kube_create(kc, r, ns, o, NULL, NULL, &st));
  json_decref(o);
}

/* A kubeconfig for the ServiceAccount "reader": the lab's server and CA, a
 * token from the TokenRequest API. */
static void reader_kubeconfig(void) {
  create("serviceaccounts",
         "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
         "\"metadata\":{\"name\":\"reader\"}}");
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts/reader/token", ns);
  const char *body =
      "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
      "\"spec\":{\"expirationSeconds\":3600}}";
  ripple_kube_status_t st;
  json_t *tr = NULL;
  LAB_OK(st,
         ripple_kube_request(kc, "POST", path, "application/json", body, strlen(body), &tr, &st));
  const char *token = lab_str(tr, "status.token");
  const char *server = getenv("RIPPLE_LAB_SERVER"), *ca = getenv("RIPPLE_LAB_CA");
  if (!token || !server || !ca) fail_msg("no token, or no $RIPPLE_LAB_SERVER / $RIPPLE_LAB_CA");
  snprintf(reader_cfg, sizeof reader_cfg, "%s/reader.kubeconfig", dir);
  int fd = open(reader_cfg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  assert_non_null(f);
  fprintf(f,
          "apiVersion: v1\nkind: Config\ncurrent-context: r\n"
          "clusters: [{name: lab, cluster: {server: '%s', certificate-authority: '%s'}}]\n"
          "users: [{name: reader, user: {token: '%s'}}]\n"
          "contexts: [{name: r, context: {cluster: lab, user: reader, namespace: '%s'}}]\n",
          server, ca, token, ns);
  fclose(f);
  json_decref(tr);
}

static int setup(void **state) {
  (void)state;
  if (!getenv("RIPPLE_KUBECTL_BIN")) fail_msg("RIPPLE_KUBECTL_BIN is needed (ctest sets it)");
  unsetenv("RIPPLE_SERVER");
  unsetenv("RIPPLE_SERVER_SERVICE");
  unsetenv("RIPPLE_READER_TOKEN");
  kc = lab_client();
  lab_ns_new(kc, "ripple-kproxy", ns, sizeof ns);
  assert_non_null(mkdtemp(dir));
  /* A Service with no ready endpoints (selector-less, an empty Endpoints
   * object: no controller races the test), its Secret, the install's Role. */
  create("services",
         "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
         "\"tserver\"},\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":7480}]}}");
  create("endpoints",
         "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":"
         "\"tserver\"},\"subsets\":[]}");
  create("services",
         "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"ext\"},"
         "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"localhost\","
         "\"ports\":[{\"name\":\"https\",\"port\":7480}]}}");
  put_secret("dG9rLWxhYgo="); /* "tok-lab\n" */
  create("roles.rbac.authorization.k8s.io",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{"
         "\"name\":\"ripple-reader\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":["
         "\"services/proxy\"],\"resourceNames\":[\"https:tserver:https\"],\"verbs\":[\"get\"]},{"
         "\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"resourceNames\":["
         "\"tserver-reader-token\"],\"verbs\":[\"get\"]}]}");
  reader_kubeconfig();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (ns[0]) lab_ns_delete(kc, ns);
  test_rmtree(dir);
  ripple_kube_client_free(kc);
  return 0;
}

/* The API server's own answers, as the admin (who may do anything). */
static void test_api_server_answers(void **state) {
  (void)state;
  const char *admin = getenv("KUBECONFIG");
  char svc[128];
  snprintf(svc, sizeof svc, "Service %s/missing", ns);
  expect_trace(admin, "missing", svc, "is ripple installed", "--server-service", "--server URL",
               (char *)NULL);
  snprintf(svc, sizeof svc, "Service %s/tserver", ns);
  expect_trace(admin, "tserver", svc, "not running or not ready", "no endpoints available",
               (char *)NULL);
  /* The same Service from $RIPPLE_SERVER_SERVICE. */
  char env[128], *out;
  snprintf(env, sizeof env, "%s/tserver:https", ns);
  setenv("RIPPLE_SERVER_SERVICE", env, 1);
  int st = kr_run(&out, admin, "trace " CPID);
  unsetenv("RIPPLE_SERVER_SERVICE");
  if (st != 1 || !strstr(out, "not running or not ready") || !strstr(out, "$RIPPLE_SERVER_SERVICE"))
    fail_msg("status %d:\n%s", st, out);
  free(out);
  /* An ExternalName Service is not proxied (see the top of this file). */
  expect_trace(admin, "ext", "is ripple installed", (char *)NULL);
}

/* As a user with no rights, then with the Role ripple-reader. */
static int bound(void *ud) {
  (void)ud;
  char *out;
  kr_run(&out, reader_cfg, "trace " CPID " --server-service %s/tserver", ns);
  int ok = strstr(out, "not running or not ready") != NULL;
  free(out);
  return ok;
}

static void test_reader(void **state) {
  (void)state;
  /* No rights: the Secret is not readable (no token, no error), the proxy
   * is forbidden, and the error names the Role. */
  expect_trace(reader_cfg, "tserver", "get on services/proxy, resourceName https:tserver:https",
               "Role ripple-reader", "create rolebinding", (char *)NULL);
  create("rolebindings.rbac.authorization.k8s.io",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":"
         "{\"name\":\"reader\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
         "\"Role\",\"name\":\"ripple-reader\"},\"subjects\":[{\"kind\":\"ServiceAccount\","
         "\"name\":\"reader\",\"namespace\":\"%s\"}]}",
         ns);
  /* The authorizer's cache follows RBAC objects within moments. */
  if (!lab_wait(bound, NULL, 30000)) fail_msg("the RoleBinding did not let the reader through");
  /* The token is read with the reader's credentials: one that cannot be a
   * header is said (and not repeated). */
  put_secret("YmFkIHRva2VuCngK"); /* "bad token\nx\n" */
  expect_trace(reader_cfg, "tserver", "tserver-reader-token has no usable \"token\"", (char *)NULL);
  char *out;
  kr_run(&out, reader_cfg, "trace " CPID " --server-service %s/tserver", ns);
  assert_null(strstr(out, "bad token"));
  free(out);
  /* $RIPPLE_READER_TOKEN comes first: the Secret is not read at all. */
  setenv("RIPPLE_READER_TOKEN", "tok-env", 1);
  expect_trace(reader_cfg, "tserver", "not running or not ready", (char *)NULL);
  unsetenv("RIPPLE_READER_TOKEN");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_api_server_answers),
      cmocka_unit_test(test_reader),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
