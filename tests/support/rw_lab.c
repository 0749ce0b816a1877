/*
 * rw_lab.c - see rw_lab.h.
 */
#include "rw_lab.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"

ripple_kube_client_t *lab_client(void) {
  if (!getenv("KUBECONFIG"))
    fail_msg("KUBECONFIG is not set: run through `make test-lab` or scripts/with-lab");
  ripple_kube_config_t *cfg = NULL;
  char err[512];
  if (ripple_kube_config_load(NULL, &cfg, err, sizeof err) != RIPPLE_OK)
    fail_msg("loading the kubeconfig: %s", err);
  ripple_kube_client_t *c = NULL;
  assert_int_equal(ripple_kube_client_new(cfg, NULL, &c), RIPPLE_OK);
  ripple_kube_config_free(cfg);
  return c;
}

void lab_suffix(char *out, size_t n) {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char b[64];
  assert_true(n < sizeof b);
  assert_int_equal(rnd_bytes(b, n), 0);
  for (size_t i = 0; i < n; i++) out[i] = chars[b[i] % (sizeof chars - 1)];
  out[n] = '\0';
}

/* Poll (up to 60 s) until ns/name of resource exists. */
static void wait_for(ripple_kube_client_t *c, const char *resource, const char *ns,
                     const char *name) {
  const ripple_kube_resource_t *r = lab_resolve(c, resource);
  ripple_kube_status_t st;
  for (int i = 0; i < 600; i++) {
    json_t *obj = NULL;
    int rc = ripple_kube_get(c, r, ns, name, &obj, &st);
    json_decref(obj);
    if (rc == RIPPLE_OK) return;
    if (rc != RIPPLE_KUBE_ENOTFOUND)
      fail_msg("waiting for %s %s/%s: %s", resource, ns, name, st.message);
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  fail_msg("%s %s/%s did not appear within 60 s", resource, ns, name);
}

void lab_ns_new(ripple_kube_client_t *c, const char *prefix, char *out, size_t cap) {
  char sfx[8];
  lab_suffix(sfx, 6);
  snprintf(out, cap, "%s-%s", prefix, sfx);
  json_t *ns = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
      "\"%s\",\"labels\":{\"ripple-test\":\"rw\"}}}",
      out);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(c, lab_resolve(c, "namespaces"), NULL, ns, NULL, NULL, &st));
  json_decref(ns);
  /* Controllers finish a namespace after it is created: the serviceaccount
   * controller adds "default" (without it Pod admission refuses Pods) and the
   * root-ca-cert-publisher adds kube-root-ca.crt. Wait for both, so tests
   * see a namespace as users do. */
  wait_for(c, "serviceaccounts", out, "default");
  wait_for(c, "configmaps", out, "kube-root-ca.crt");
}

void lab_ns_delete(ripple_kube_client_t *c, const char *ns) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_delete(c, lab_resolve(c, "namespaces"), NULL, ns, NULL, &st));
}

const ripple_kube_resource_t *lab_resolve(ripple_kube_client_t *c, const char *name) {
  const ripple_kube_resource_t *r = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_resolve(c, name, &r, &st));
  return r;
}

json_t *lab_json(const char *fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  assert_true(n > 0 && (size_t)n < sizeof buf);
  json_error_t je;
  json_t *j = json_loads(buf, 0, &je);
  if (!j) fail_msg("bad JSON in a test: %s: %s", je.text, buf);
  return j;
}

const json_t *lab_at(const json_t *j, const char *path) {
  char key[128];
  while (j && *path) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof key) return NULL;
    memcpy(key, path, n);
    key[n] = '\0';
    j = json_object_get(j, key);
    path += n + (path[n] == '.');
  }
  return j;
}

const char *lab_str(const json_t *j, const char *path) {
  return json_string_value(lab_at(j, path));
}

long long lab_int(const json_t *j, const char *path) {
  const json_t *v = lab_at(j, path);
  return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

int lab_wait(int (*cond)(void *ud), void *ud, int timeout_ms) {
  for (int waited = 0;; waited += 100) {
    if (cond(ud)) return 1;
    if (waited >= timeout_ms) return 0;
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

static void collect_name(void *ud, json_t *obj) {
  json_object_set_new(ud, lab_str(obj, "metadata.name"), json_true());
}

json_t *lab_names(ripple_kube_client_t *c, const char *resource, const char *ns,
                  const char *selector) {
  ripple_kube_list_opts_t lo = {.namespace_ = ns, .label_selector = selector};
  json_t *names = json_object();
  char *rv = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_list(c, lab_resolve(c, resource), &lo, collect_name, names, &rv, &st));
  ripple_free(rv);
  return names;
}

int lab_sh(char **out, const char *fmt, ...) {
  char cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c): the test's own command line
  assert_non_null(p);
  sbuf_t b;
  sbuf_init(&b);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) sbuf_put(&b, buf, n);
  sbuf_putc(&b, '\0');
  int st = pclose(p);
  *out = b.p;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
