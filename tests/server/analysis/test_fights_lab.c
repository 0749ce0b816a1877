/*
 * test_fights_lab.c - "who keeps reverting this field?" on the lab's real
 * control plane (docs/api.md, "Field fights"): the real webhook and trace
 * server, and the real ripple-watch sending each write's diff.
 *
 * A person scales a Deployment from 2 to 3 (merge patches as kubectl ripple
 * makes them, field manager "ripple"); an HPA-like writer (its own
 * ServiceAccount, impersonated, field manager "hpa-like") sets it back to 2;
 * the person to 3 again; the HPA-like writer to 2 again. Flagged: one fight
 * on /spec/replicas between the person and hpa-like, with the person's CPIDs
 * among its writes, in GET /v1/fights and ripple_field_fights_total, and in
 * `kubectl ripple why deployment/web` (spec.replicas owned by hpa-like now,
 * the fight with both writers). A second Deployment scaled once by the
 * person: its write is joined (the server knows who set its replicas) and
 * not flagged.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade_lab.h"
#include "http_client.h"
#include "ripplex/sbuf.h"

static int teardown(void **state) {
  cl_watch_stop();
  return cl_teardown(state);
}

/* ripple-watch on the test's Deployments, sending details to the server. */
static void start_watch(void) {
  static const char *const more[] = {"--resources", "deployments.apps", "--no-records", NULL};
  cl_watch_start(more, 1);
}

static int setup(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "fights");
  cl_start_webhook();
  start_watch();
  return 0;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
  sbuf_put(ud, p, sz * n);
  return sz * n;
}

/* The HPA-like writer: a merge patch of spec.replicas as its own
 * ServiceAccount (impersonated, with system:masters for the rights) and
 * field manager "hpa-like". */
static void hpa_like_scale(const char *name, int replicas) {
  const char *server = getenv("RIPPLE_LAB_SERVER"), *ca = getenv("RIPPLE_LAB_CA");
  const char *crt = getenv("RIPPLE_LAB_ADMIN_CERT"), *key = getenv("RIPPLE_LAB_ADMIN_KEY");
  if (!server || !ca || !crt || !key) fail_msg("the lab's env is needed (eval \"$(lab/lab env)\")");
  char url[512], as[300], body[64];
  snprintf(url, sizeof url, "%s/apis/apps/v1/namespaces/%s/deployments/%s?fieldManager=hpa-like",
           server, cl.ns, name);
  snprintf(as, sizeof as, "Impersonate-User: system:serviceaccount:%s:hpa-like", cl.ns);
  snprintf(body, sizeof body, "{\"spec\":{\"replicas\":%d}}", replicas);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
  h = curl_slist_append(h, as);
  h = curl_slist_append(h, "Impersonate-Group: system:masters");
  sbuf_t out;
  sbuf_init(&out);
  CURL *c = curl_easy_init();
  assert_non_null(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CAINFO, ca);
  curl_easy_setopt(c, CURLOPT_SSLCERT, crt);
  curl_easy_setopt(c, CURLOPT_SSLKEY, key);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (status != 200) fail_msg("the HPA-like PATCH: %ld: %.*s", status, (int)out.len, out.p);
  sbuf_free(&out);
}

static const char *uid_of(const char *name, char *out, size_t cap) {
  json_t *o = cl_get("deployments", name);
  assert_non_null(o);
  snprintf(out, cap, "%s",
           json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")));
  json_decref(o);
  return out;
}

static json_t *fights_of(const char *uid) {
  char p[256];
  snprintf(p, sizeof p, "/v1/fights?uid=%s", uid);
  return hc_get_json(cl.trace, p, 200);
}

static int has_fight(void *ud) {
  json_t *j = fights_of(ud);
  int n = (int)json_array_size(json_object_get(j, "fights"));
  json_decref(j);
  return n > 0;
}

/* The server has joined a write of the object's spec.replicas. */
static int replicas_known(void *ud) {
  json_t *j = fights_of(ud);
  size_t i;
  const json_t *f;
  int found = 0;
  json_array_foreach(json_object_get(j, "fields"), i, f) {
    const char *p = json_string_value(json_object_get(f, "path"));
    found |= p && !strcmp(p, "/spec/replicas");
  }
  json_decref(j);
  return found;
}

static int has_cpid(const json_t *writes, const char *cpid, const char *writer) {
  size_t i;
  const json_t *w;
  json_array_foreach(writes, i, w) {
    const char *c = json_string_value(json_object_get(w, "cpid"));
    const char *wr = json_string_value(json_object_get(w, "writer"));
    if (c && !strcmp(c, cpid) && wr && !strcmp(wr, writer)) return 1;
  }
  return 0;
}

static void test_fight(void **state) {
  (void)state;
  char c0[CL_CPID], p1[CL_CPID], p2[CL_CPID], s0[CL_CPID], s1[CL_CPID];
  char web[64], solo[64];
  cl_create_root("deployments", cl_deployment("web", 2), c0);
  cl_create_root("deployments", cl_deployment("solo", 1), s0);
  uid_of("web", web, sizeof web);
  uid_of("solo", solo, sizeof solo);

  cl_patch_root("deployments", "Deployment", "web", "\"spec\":{\"replicas\":3}", p1);
  hpa_like_scale("web", 2);
  cl_patch_root("deployments", "Deployment", "web", "\"spec\":{\"replicas\":3}", p2);
  hpa_like_scale("web", 2);
  /* One change by one person: never a fight. */
  cl_patch_root("deployments", "Deployment", "solo", "\"spec\":{\"replicas\":2}", s1);

  cl_wait(has_fight, web, 60000, "the fight over web's spec.replicas");
  cl_wait(replicas_known, solo, 60000, "solo's scale joined to its writer");
  json_t *j = fights_of(web);
  json_t *v = json_object_get(j, "fights");
  assert_int_equal(json_array_size(v), 1);
  json_t *g = json_array_get(v, 0);
  assert_string_equal(json_string_value(json_object_get(g, "path")), "/spec/replicas");
  json_t *m = json_object_get(g, "managers");
  const char *a = json_string_value(json_object_get(json_array_get(m, 0), "writer"));
  const char *b = json_string_value(json_object_get(json_array_get(m, 1), "writer"));
  assert_non_null(a);
  assert_non_null(b);
  const char *person = !strcmp(a, "hpa-like") ? b : a;
  if (strcmp(a, "hpa-like") != 0 && strcmp(b, "hpa-like") != 0)
    fail_msg("no hpa-like among the writers: %s, %s", a, b);
  assert_string_not_equal(person, "hpa-like");
  assert_true(json_integer_value(json_object_get(g, "reversals")) >= 2);
  char wa[128], wb[128]; /* for why's output, after j goes */
  snprintf(wa, sizeof wa, "%s", a);
  snprintf(wb, sizeof wb, "%s", b);
  const json_t *w = json_object_get(g, "writes");
  if (!has_cpid(w, p1, person) || !has_cpid(w, p2, person))
    fail_msg("the person's CPIDs %s and %s are not among the fight's writes: %s", p1, p2,
             json_dumps(g, 0));
  json_decref(j);

  j = fights_of(solo);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 0);
  json_decref(j);

  char *text = NULL;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", cl.trace);
  hc_resp_t resp;
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  text = resp.body;
  assert_true(hc_metric_value(text, "ripple_field_fights_total") == 1);
  hc_resp_free(&resp);

  /* kubectl ripple why: who owns spec.replicas now, and the fight. */
  const char *kr = getenv("RIPPLE_KUBECTL_BIN");
  if (!kr) {
    fail_msg("RIPPLE_KUBECTL_BIN is needed (ctest sets it)");
    return;
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "'%s' --kubeconfig '%s' why deployment/web -n %s --server %s", kr,
           getenv("KUBECONFIG"), cl.ns, cl.trace);
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c): the test's own words
  assert_non_null(p);
  char out[32768];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  char fight[320];
  snprintf(fight, sizeof fight, "/spec/replicas: %s <-> %s, ", wa, wb);
  const char *row = strstr(out, "\n  spec.replicas ");
  const char *eol = row ? strchr(row + 1, '\n') : NULL;
  if (st != 0 || !row || !eol || !strstr(out, fight) || !strstr(out, p2)) {
    print_message("kubectl ripple why deployment/web (status %d), wanted \"%s\" and %s:\n", st,
                  fight, p2);
    fputs(out, stderr); /* fail_msg cuts it */
    fail();
  }
  /* The row of spec.replicas: hpa-like owns it, and set it last. */
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)(eol - row), row);
  if (!strstr(line, "hpa-like") || !strstr(line, "cpid "))
    fail_msg("spec.replicas' row: %s\nin:\n%s", line, out);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fight, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
