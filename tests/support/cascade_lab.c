/*
 * cascade_lab.c - see cascade_lab.h.
 */
#include "cascade_lab.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"

whlab_t cl;

/* ---- set up and tear down -------------------------------------------------- */

void cl_start_webhook(void) {
  if (cl.webhook.pid <= 0) whlab_start(&cl);
  whlab_register(&cl, "ripple-casc");
}

void cl_begin(const char *prefix) {
  /* RIPPLE_TEST_SECOND_APISERVER: the test's writes (a person's) and the
   * webhooks' informers on the lab's second API server, the controllers on
   * the first, as on a control plane of several (lab/lab up --apiservers 2). */
  const char *second = getenv("RIPPLE_LAB_KUBECONFIG2");
  if (getenv("RIPPLE_TEST_SECOND_APISERVER")) {
    if (second && *second)
      setenv("KUBECONFIG", second, 1);
    else
      fprintf(stderr, "# no second API server (lab/lab up --apiservers 2): the first only\n");
  }
  whlab_begin_cluster(&cl, prefix);
  /* The same cascades through several replicas behind a load balancer, one
   * deciding (tests/webhook/CMakeLists.txt runs test_cascades3_lab so). */
  const char *r = getenv("RIPPLE_TEST_WEBHOOK_REPLICAS");
  if (r) cl.replicas = (int)strtol(r, NULL, 10);
  cl_start_webhook();
}

/* A dry-run Service create: does it still come back with a context? */
static int webhook_silent(void *ud) {
  (void)ud;
  json_t *out = NULL;
  char id[CL_CPID];
  int ok = whlab_probe(cl.kc, cl.ns, &out) && !whlab_obj_cpid(out, "Service", id);
  json_decref(out);
  return ok;
}

void cl_unregister(void) {
  whlab_unregister(&cl);
  cl_wait(webhook_silent, NULL, 60000, "the API server to stop calling the webhook");
}

int cl_teardown(void **state) {
  (void)state;
  whlab_end(&cl);
  return 0;
}

/* ---- objects and writes ----------------------------------------------------- */

const char *const CL_READY_APPS[] = {"status.readyReplicas", "status.updatedReplicas",
                                     "status.replicas", "status.availableReplicas", NULL};

json_t *cl_deployment(const char *name, int replicas) {
  return lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"%s\"},"
      "\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},\"template\":{"
      "\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":{" CL_CONTAINERS "}}}}",
      name, replicas, name, name);
}

json_t *cl_statefulset(const char *name, int replicas) {
  return lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"%s\"},"
      "\"spec\":{\"replicas\":%d,\"serviceName\":\"%s\",\"selector\":{\"matchLabels\":{"
      "\"app\":\"%s\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":"
      "{" CL_CONTAINERS "}}}}",
      name, replicas, name, name, name);
}

json_t *cl_service(const char *name) {
  return lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
      "\"selector\":{\"app\":\"%s\"},\"ports\":[{\"port\":80}]}}",
      name, name);
}

json_t *cl_get(const char *resource, const char *name) {
  json_t *o = NULL;
  ripple_kube_status_t st;
  int rc = ripple_kube_get(cl.kc, lab_resolve(cl.kc, resource), cl.ns, name, &o, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND) return NULL;
  LAB_OK(st, rc);
  return o;
}

void cl_create_root(const char *resource, json_t *o, char cpid[CL_CPID]) {
  char key[RIPPLE_ANNOTATION_KEYMAX], value[64];
  const char *kind = json_string_value(json_object_get(o, "kind"));
  assert_non_null(kind);
  assert_int_equal(ripple_annotation_key(kind, key, sizeof key), RIPPLE_OK);
  whlab_new_cpid(cpid);
  snprintf(value, sizeof value, "1;%s", cpid);
  json_t *md = json_object_get(o, "metadata");
  assert_non_null(md);
  if (!json_object_get(md, "annotations")) json_object_set_new(md, "annotations", json_object());
  json_object_set_new(json_object_get(md, "annotations"), key, json_string(value));
  whlab_create(&cl, resource, o);
}

void cl_patch_root(const char *resource, const char *kind, const char *name, const char *fields,
                   char cpid[CL_CPID]) {
  char key[RIPPLE_ANNOTATION_KEYMAX], patch[1024];
  assert_int_equal(ripple_annotation_key(kind, key, sizeof key), RIPPLE_OK);
  whlab_new_cpid(cpid);
  snprintf(patch, sizeof patch, "{\"metadata\":{\"annotations\":{\"%s\":\"1;%s\"}}%s%s}", key, cpid,
           fields ? "," : "", fields ? fields : "");
  whlab_patch(&cl, resource, name, patch);
}

/* ---- raw requests to the API server ---------------------------------------- */

typedef struct rawresp {
  char *body;
  size_t len, cap;
  char warning[CL_CPID];
} rawresp_t;

/* The API server's /metrics is megabytes in 4 KiB pieces: the buffer grows
 * geometrically, or the copies cost minutes under ASan. */
static size_t raw_body(char *p, size_t sz, size_t n, void *ud) {
  rawresp_t *r = ud;
  if (r->len + sz * n + 1 > r->cap) {
    size_t cap = r->cap ? r->cap : 65536;
    while (cap < r->len + sz * n + 1) cap *= 2;
    char *g = realloc(r->body, cap);
    if (!g) return 0;
    r->body = g;
    r->cap = cap;
  }
  memcpy(r->body + r->len, p, sz * n);
  r->len += sz * n;
  r->body[r->len] = '\0';
  return sz * n;
}

/* Warning: 299 - "ripple: cpid 3f2b8e4c-..." */
static size_t raw_header(char *p, size_t sz, size_t n, void *ud) {
  rawresp_t *r = ud;
  size_t len = sz * n;
  static const char tag[] = "ripple: cpid ";
  if (len > 8 && !strncasecmp(p, "warning:", 8)) {
    for (size_t i = 0; i + sizeof tag - 1 + RIPPLE_CPID_STRLEN <= len; i++) {
      if (!memcmp(p + i, tag, sizeof tag - 1)) {
        memcpy(r->warning, p + i + sizeof tag - 1, RIPPLE_CPID_STRLEN);
        r->warning[RIPPLE_CPID_STRLEN] = '\0';
        break;
      }
    }
  }
  return len;
}

/* $name, else the lab's state directory's pki/file. */
static const char *lab_file(const char *name, const char *file, char *buf, size_t cap) {
  if (getenv(name)) return getenv(name);
  const char *dir = getenv("RIPPLE_LAB_DIR");
  snprintf(buf, cap, "%s/pki/%s", dir ? dir : "/tmp/ripple-lab", file);
  return buf;
}

static const char *api_server(void) {
  static char url[256];
  if (getenv("RIPPLE_LAB_SERVER")) return getenv("RIPPLE_LAB_SERVER");
  if (!url[0]) {
    ripple_kube_config_t *cfg = NULL;
    char err[512];
    if (ripple_kube_config_load(NULL, &cfg, err, sizeof err) != RIPPLE_OK)
      fail_msg("loading the kubeconfig: %s", err);
    snprintf(url, sizeof url, "%s", ripple_kube_config_server(cfg));
    ripple_kube_config_free(cfg);
  }
  return url;
}

long cl_api(const char *method, const char *path, const char *body, char **out,
            char warning[CL_CPID]) {
  char url[1024], cab[300], crtb[300], keyb[300];
  snprintf(url, sizeof url, "%s%s", api_server(), path);
  rawresp_t r = {0};
  CURL *c = curl_easy_init();
  assert_non_null(c);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_CAINFO, lab_file("RIPPLE_LAB_CA", "ca.crt", cab, sizeof cab));
  curl_easy_setopt(c, CURLOPT_SSLCERT,
                   lab_file("RIPPLE_LAB_ADMIN_CERT", "admin.crt", crtb, sizeof crtb));
  curl_easy_setopt(c, CURLOPT_SSLKEY,
                   lab_file("RIPPLE_LAB_ADMIN_KEY", "admin.key", keyb, sizeof keyb));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, raw_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, raw_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
  if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (warning) memcpy(warning, r.warning, CL_CPID);
  if (out) {
    *out = r.body ? r.body : strdup("");
  } else {
    free(r.body);
  }
  return status;
}

void cl_delete_person(const char *resource, const char *ns, const char *name, char cpid[CL_CPID]) {
  const ripple_kube_resource_t *r = lab_resolve(cl.kc, resource);
  char path[512], nspart[160] = "";
  if (ns) snprintf(nspart, sizeof nspart, "/namespaces/%s", ns);
  if (r->group[0])
    snprintf(path, sizeof path, "/apis/%s/%s%s/%s/%s", r->group, r->version, nspart, r->resource,
             name);
  else
    snprintf(path, sizeof path, "/api/%s%s/%s/%s", r->version, nspart, r->resource, name);
  char *body = NULL;
  long status = cl_api("DELETE", path,
                       "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                       "\"propagationPolicy\":\"Background\"}",
                       &body, cpid);
  if (status != 200 && status != 202) fail_msg("DELETE %s: %ld %s", path, status, body);
  free(body);
}

void cl_wait(int (*cond)(void *ud), void *ud, int timeout_ms, const char *what) {
  if (!lab_wait(cond, ud, timeout_ms)) fail_msg("waited %d s for %s", timeout_ms / 1000, what);
}

/* ---- ripple-watch ------------------------------------------------------------ */

static pid_t watch_pid;
static char watch_log[300];
static int watch_want;

static int watch_synced(void *ud) {
  (void)ud;
  FILE *f = fopen(watch_log, "r");
  if (!f) return 0;
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += strstr(line, "event=watch_synced") != NULL;
  fclose(f);
  return n >= watch_want;
}

void cl_watch_start(const char *const *more, int watches) {
  const char *bin = getenv("RIPPLE_WATCH_BIN");
  if (!bin || !*bin) {
    fail_msg("RIPPLE_WATCH_BIN is needed (ctest sets it)");
    return;
  }
  const char *argv[24] = {bin, "--namespace", cl.ns, "--trace-server", cl.trace};
  size_t n = 5;
  for (size_t i = 0; more && more[i] && n < sizeof argv / sizeof argv[0] - 1; i++)
    argv[n++] = more[i];
  snprintf(watch_log, sizeof watch_log, "%s/watch.log", cl.dir);
  watch_want = watches;
  watch_pid = fork();
  assert_true(watch_pid >= 0);
  if (watch_pid == 0) {
    int fd = open(watch_log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2);
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  cl_wait(watch_synced, NULL, 60000, "ripple-watch to sync its watches");
}

void cl_watch_stop(void) {
  if (watch_pid > 0) kill(watch_pid, SIGKILL), waitpid(watch_pid, NULL, 0);
  watch_pid = 0;
}

void cl_nothing_refused(void) {
  cl_spans_settle();
  char *body = NULL;
  assert_int_equal(whlab_webhook_get(&cl, "/metrics", &body), 200);
  double v = hc_metric_value(body ? body : "", "ripple_webhook_shipper_rejected_total");
  free(body);
  if (v != 0)
    fail_msg("the trace server refused %.0f records the webhook sent (ship_rejected in %s)", v,
             cl.webhook.log);
}

/* ---- the lab's scheduler ---------------------------------------------------- */

static pid_t stopped_scheduler;

void cl_scheduler_resume(void) {
  if (stopped_scheduler > 0) kill(stopped_scheduler, SIGCONT);
  stopped_scheduler = 0;
}

static void resume_on_signal(int sig) {
  cl_scheduler_resume();
  signal(sig, SIG_DFL);
  raise(sig);
}

static pid_t scheduler_pid(void) {
  const char *lab = getenv("RIPPLE_LAB_DIR");
  char path[512], buf[32] = "";
  snprintf(path, sizeof path, "%s/run/kube-scheduler.pid", lab && *lab ? lab : "/tmp/ripple-lab");
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("no %s: is the lab up?", path);
  if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
  fclose(f);
  pid_t p = (pid_t)strtol(buf, NULL, 10);
  if (p <= 0 || kill(p, 0) != 0) fail_msg("%s names no running process", path);
  return p;
}

void cl_scheduler_stop(void) {
  static int armed;
  if (!armed) {
    atexit(cl_scheduler_resume);
    signal(SIGINT, resume_on_signal);
    signal(SIGTERM, resume_on_signal);
    armed = 1;
  }
  pid_t p = scheduler_pid();
  if (kill(p, SIGSTOP) != 0) fail_msg("cannot stop kube-scheduler (pid %d)", (int)p);
  stopped_scheduler = p;
}

/* A node that takes Pods without tolerations: Ready, and no NoSchedule or
 * NoExecute taint (the real node of `lab/lab up --node` has one: the tests'
 * DaemonSets and Pods stay on the KWOK nodes). */
static void count_ready(void *ud, json_t *node) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(json_object_get(node, "spec"), "taints"), i, c) {
    const char *e = lab_str(c, "effect") ? lab_str(c, "effect") : "";
    if (!strcmp(e, "NoSchedule") || !strcmp(e, "NoExecute")) return;
  }
  json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c) {
    if (!strcmp(lab_str(c, "type") ? lab_str(c, "type") : "", "Ready") &&
        !strcmp(lab_str(c, "status") ? lab_str(c, "status") : "", "True"))
      ++*(int *)ud;
  }
}

int cl_nodes(void) {
  int n = 0;
  ripple_kube_list_opts_t lo = {0};
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_list(cl.kc, lab_resolve(cl.kc, "nodes"), &lo, count_ready, &n, NULL, &st));
  return n;
}

/* ---- the trace server ------------------------------------------------------ */

json_t *cl_related_set(const char *cpid) {
  json_t *rel = whlab_trace(&cl, cpid, "related"), *set = json_object();
  if (json_is_true(json_object_get(rel, "truncated"))) fail_msg("related of %s truncated", cpid);
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(rel, "related"), i, v) {
    json_object_set_new(set, json_string_value(v), json_true());
  }
  json_decref(rel);
  return set;
}

json_t *cl_all_spans(void) {
  json_t *all = json_array();
  char path[1024] = "/v1/spans?limit=10000";
  for (int page = 0; page < 1000; page++) {
    json_t *j = hc_get_json(cl.trace, path, 200);
    if (!j) fail_msg("GET %s%s did not answer 200", cl.trace, path);
    json_array_extend(all, json_object_get(j, "spans"));
    const char *next = json_string_value(json_object_get(j, "next"));
    if (!next) {
      json_decref(j);
      return all;
    }
    char *esc = curl_easy_escape(NULL, next, 0);
    snprintf(path, sizeof path, "/v1/spans?limit=10000&cursor=%s", esc);
    curl_free(esc);
    json_decref(j);
  }
  fail_msg("too many pages of spans");
  return all;
}

/* ripple_records_total{kind="span"} of the trace server; -1 if unknown. */
static double stored_spans(void) {
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", cl.trace);
  hc_resp_t r;
  double v = -1;
  if (hc_request("GET", url, NULL, 0, NULL, &r) == 0 && r.status == 200) {
    const char *m = strstr(r.body, "ripple_records_total{kind=\"span\"} ");
    if (m) v = strtod(strchr(m, '}') + 2, NULL);
  }
  hc_resp_free(&r);
  return v;
}

void cl_spans_settle(void) {
  /* The shipper sends in the background, every few hundred milliseconds:
   * the count standing still for 1.5 s means the last batch is in. */
  double last = -2;
  int still = 0;
  for (int i = 0; i < 300 && still < 3; i++) {
    usleep(500000);
    double now = stored_spans();
    still = now == last ? still + 1 : 0;
    last = now;
  }
}

const char *cl_attr(const json_t *span, const char *key) {
  const char *v = json_string_value(json_object_get(json_object_get(span, "attributes"), key));
  return v ? v : "";
}

static int span_is(const json_t *s, const char *name, const char *obj, const char *kind) {
  const char *n = json_string_value(json_object_get(s, "name"));
  return n && !strcmp(n, name) && (!obj || !strcmp(cl_attr(s, "name"), obj)) &&
         (!kind || !strcmp(cl_attr(s, "kind"), kind));
}

size_t cl_count(const json_t *arr, const char *name, const char *obj, const char *kind) {
  size_t i, n = 0;
  json_t *s;
  json_array_foreach(arr, i, s) n += span_is(s, name, obj, kind);
  return n;
}

void cl_expect_each(const json_t *arr, const char *name, const json_t *names, size_t lo,
                    size_t hi) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)names, k, v) {
    size_t n = cl_count(arr, name, k, NULL);
    if (n < lo || n > hi) fail_msg("%zu spans \"%s\" of %s, want %zu to %zu", n, name, k, lo, hi);
  }
}

void cl_dump_spans(const char *label, const json_t *arr) {
  json_t *counts = json_object();
  size_t i;
  json_t *s;
  json_array_foreach(arr, i, s) {
    char key[256];
    snprintf(key, sizeof key, "%s %s (%s)", json_string_value(json_object_get(s, "name")),
             cl_attr(s, "name"), json_string_value(json_object_get(s, "service")));
    json_t *c = json_object_get(counts, key);
    json_object_set_new(counts, key, json_integer(c ? json_integer_value(c) + 1 : 1));
  }
  fprintf(stderr, "# %s: %zu spans\n", label, json_array_size(arr));
  const char *k;
  json_t *v;
  json_object_foreach(counts, k, v) {
    fprintf(stderr, "#   %3lld %s\n", (long long)json_integer_value(v), k);
  }
  json_decref(counts);
}

/* ---- the API server's write counters -------------------------------------- */

/* The value of label name in a metric line's {...}; "" if absent. */
static void label(const char *line, const char *name, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "%s=\"", name);
  const char *p = strstr(line, pat);
  out[0] = '\0';
  if (!p || (p != line && p[-1] != '{' && p[-1] != ',')) return;
  p += strlen(pat);
  size_t n = strcspn(p, "\"");
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

static int is_write(const char *verb) {
  static const char *const verbs[] = {"POST", "PUT", "PATCH", "DELETE"};
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    if (!strcmp(verb, verbs[i])) return 1;
  return 0;
}

static int listed(const char *const *res, const char *r) {
  for (; *res; res++)
    if (!strcmp(*res, r)) return 1;
  return 0;
}

json_t *cl_write_counts(const char *const *res) {
  char *body = NULL;
  long status = cl_api("GET", "/metrics", NULL, &body, NULL);
  if (status != 200) fail_msg("GET /metrics of the API server: %ld", status);
  json_t *counts = json_object();
  static const char metric[] = "apiserver_request_total{";
  for (char *save = NULL, *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (strncmp(l, metric, sizeof metric - 1) != 0) continue;
    char verb[32], resource[64], sub[64], dry[32], key[200];
    label(l, "verb", verb, sizeof verb);
    label(l, "resource", resource, sizeof resource);
    label(l, "subresource", sub, sizeof sub);
    label(l, "dry_run", dry, sizeof dry);
    if (dry[0] || !is_write(verb)) continue;
    snprintf(key, sizeof key, "%s%s%s", resource, sub[0] ? "/" : "", sub);
    if (!listed(res, key)) continue;
    snprintf(key + strlen(key), sizeof key - strlen(key), " %s", verb);
    const char *val = strrchr(l, ' ');
    long long n = val ? (long long)strtod(val + 1, NULL) : 0;
    json_t *c = json_object_get(counts, key);
    json_object_set_new(counts, key, json_integer(n + (c ? json_integer_value(c) : 0)));
  }
  free(body);
  return counts;
}

long long cl_fail_opens(void) {
  char *body = NULL, label[128];
  if (cl_api("GET", "/metrics", NULL, &body, NULL) != 200) fail_msg("GET /metrics failed");
  snprintf(label, sizeof label, "name=\"%s.", cl.name);
  static const char metric[] = "apiserver_admission_webhook_fail_open_count{";
  long long n = 0;
  for (char *save = NULL, *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (strncmp(l, metric, sizeof metric - 1) != 0 || !strstr(l, label)) continue;
    const char *val = strrchr(l, ' ');
    if (val) n += (long long)strtod(val + 1, NULL);
  }
  free(body);
  return n;
}

/* ---- waits on objects ------------------------------------------------------ */

typedef struct fields {
  const char *res, *name;
  long long want;
  const char *const *paths;
} fields_t;

static int fields_hold(void *ud) {
  const fields_t *f = ud;
  json_t *o = cl_get(f->res, f->name);
  int ok = o != NULL;
  for (const char *const *p = f->paths; ok && *p; p++) ok = lab_int(o, *p) == f->want;
  if (ok && lab_at(o, "status.observedGeneration"))
    ok = lab_int(o, "status.observedGeneration") == lab_int(o, "metadata.generation");
  json_decref(o);
  return ok;
}

void cl_wait_fields(const char *resource, const char *name, long long want,
                    const char *const *paths, int timeout_ms) {
  fields_t f = {resource, name, want, paths};
  if (!lab_wait(fields_hold, &f, timeout_ms)) {
    json_t *o = cl_get(resource, name);
    char *dump = o ? json_dumps(json_object_get(o, "status"), JSON_COMPACT) : NULL;
    fail_msg("%s/%s: %s did not reach %lld within %d s (status %s)", resource, name, paths[0], want,
             timeout_ms / 1000, dump ? dump : "(gone)");
  }
}

static int gone(void *ud) {
  const fields_t *f = ud;
  json_t *o = cl_get(f->res, f->name);
  json_decref(o);
  return o == NULL;
}

void cl_wait_gone(const char *resource, const char *name, int timeout_ms) {
  fields_t f = {resource, name, 0, NULL};
  if (!lab_wait(gone, &f, timeout_ms))
    fail_msg("%s/%s still there after %d s", resource, name, timeout_ms / 1000);
}

typedef struct cpids {
  json_t *out;
  const char *kind;
} cpids_t;

static void collect_cpid(void *ud, json_t *obj) {
  cpids_t *c = ud;
  char id[CL_CPID] = "";
  if (!obj) { /* a relist: start again */
    json_object_clear(c->out);
    return;
  }
  if (!whlab_obj_cpid(obj, c->kind, id)) id[0] = '\0';
  json_object_set_new(c->out, lab_str(obj, "metadata.name"), json_string(id));
}

json_t *cl_cpids(const char *resource, const char *selector, const char *kind) {
  cpids_t c = {json_object(), kind};
  ripple_kube_list_opts_t lo = {.namespace_ = cl.ns, .label_selector = selector};
  ripple_kube_status_t st;
  LAB_OK(st,
         ripple_kube_list(cl.kc, lab_resolve(cl.kc, resource), &lo, collect_cpid, &c, NULL, &st));
  return c.out;
}

typedef struct podwait {
  const char *sel;
  size_t n;
} podwait_t;

static void count_running(void *ud, json_t *pod) {
  size_t *n = ud;
  size_t i;
  json_t *c;
  if (!pod) {
    *n = 0;
    return;
  }
  const char *phase = lab_str(pod, "status.phase");
  if (!phase || strcmp(phase, "Running") != 0 || lab_at(pod, "metadata.deletionTimestamp")) return;
  json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c) {
    if (!strcmp(lab_str(c, "type") ? lab_str(c, "type") : "", "Ready") &&
        !strcmp(lab_str(c, "status") ? lab_str(c, "status") : "", "True"))
      ++*n;
  }
}

static int pods_running(void *ud) {
  const podwait_t *w = ud;
  size_t running = 0;
  ripple_kube_list_opts_t lo = {.namespace_ = cl.ns, .label_selector = w->sel};
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_list(cl.kc, lab_resolve(cl.kc, "pods"), &lo, count_running, &running, NULL,
                              &st));
  json_t *all = lab_names(cl.kc, "pods", cl.ns, w->sel);
  int ok = running == w->n && json_object_size(all) == w->n;
  json_decref(all);
  return ok;
}

void cl_wait_pods(const char *selector, size_t n, int timeout_ms) {
  podwait_t w = {selector, n};
  char what[160];
  snprintf(what, sizeof what, "%zu running pods %s", n, selector);
  cl_wait(pods_running, &w, timeout_ms, what);
}

/* Whether no namespace is being deleted. Counts are cluster-wide, and a
 * namespace of an earlier test still terminating writes meanwhile (its
 * Pods deleted, and created again by their ReplicaSet until the namespace
 * controller reaches it). */
static int no_namespace_terminating(void *ud) {
  (void)ud;
  char *body = NULL;
  if (cl_api("GET", "/api/v1/namespaces", NULL, &body, NULL) != 200) {
    free(body);
    return 0;
  }
  json_t *list = json_loads(body, 0, NULL);
  free(body);
  size_t i;
  json_t *ns;
  int quiet = list != NULL;
  json_array_foreach(json_object_get(list, "items"), i, ns) {
    const char *phase = json_string_value(json_object_get(json_object_get(ns, "status"), "phase"));
    if (phase && !strcmp(phase, "Terminating")) quiet = 0;
  }
  json_decref(list);
  return quiet;
}

json_t *cl_quiet_counts(const char *const *res) {
  cl_wait(no_namespace_terminating, NULL, 180000, "earlier tests' namespaces to be deleted");
  json_t *last = cl_write_counts(res);
  for (int i = 0, still = 0; i < 60 && still < 4; i++) {
    usleep(500000);
    json_t *now = cl_write_counts(res);
    still = json_equal(now, last) ? still + 1 : 0;
    json_decref(last);
    last = now;
  }
  return last;
}

json_t *cl_counts_diff(const json_t *before, const json_t *after) {
  json_t *d = json_object();
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)after, k, v) {
    json_int_t b = json_integer_value(json_object_get(before, k));
    if (json_integer_value(v) != b)
      json_object_set_new(d, k, json_integer(json_integer_value(v) - b));
  }
  return d;
}
