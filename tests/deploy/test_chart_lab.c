/*
 * test_chart_lab.c - the Helm chart (deploy/helm/ripple) installed on the lab the
 * way a cluster would run it, with its programs out of cluster: the chart is
 * rendered by Helm, its objects other than workloads are created for real, and
 * each workload's container runs here (podrun.h) with exactly the rendered
 * arguments, environment and files: the install hook first (it makes the
 * certificate and the tokens), then the trace server, the webhook and the guard.
 *
 * It checks what an operator relies on:
 * - the rendered objects hold no key or token, every Pod runs as non-root on a
 *   read-only root, the registration is failurePolicy Ignore, timeoutSeconds 1,
 *   without a caBundle and disabled (ripple-guard-off);
 * - the install hook's Secrets are made with its least-privilege Role, and a second
 *   run changes none of them: the webhook's and the trace server's certificates
 *   (one CA; the trace server's Pod holds its own key, never the webhook's), the
 *   tokens, and the webhook replicas' context key (mounted in their Pods only);
 * - while the registration is disabled the API server does not call the webhook,
 *   even with the webhook up; the guard sets the hook's CA as caBundle and only then
 *   enables it;
 * - `make demo`'s cascade (a Deployment of 10 scaled to 20 by kubectl ripple) is
 *   traced: the webhook ships over HTTPS (verifying the trace server against the
 *   hook's CA) with the writer token, the server refuses readers
 *   without the reader token and shows the whole cascade with it, and the watch
 *   agent (watch.enabled, its list/watch RBAC, --no-records) sends what the scale
 *   changed;
 * - every program stops cleanly on SIGTERM.
 *
 * The chart is rendered for the lab's network rule: every program listens on
 * 127.0.0.1 (listenHost) on free ports, the webhook is registered by loopback URL
 * (webhook.url; its certificate then names 127.0.0.1), traces one namespace of the
 * test's own (webhook.namespaces) and reaches the trace server at
 * https://127.0.0.1 (webhook.traceServer; the server's certificate then names
 * 127.0.0.1 too): a cluster's Service names do not resolve here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http_client.h"
#include "podrun.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"
#include "ripplex/yjson.h"
#include "rw_lab.h"
#include "wh_lab.h"

static struct {
  whlab_t l;      /* client and the release's namespace */
  char wns[64];   /* the traced namespace */
  char rel[32];   /* the release's name */
  char bins[256]; /* the build's bin directory */
  char data[128]; /* the server's claim */
  char ca[160];   /* the hook's CA (the trace server's ca.crt) as a file */
  unsigned port_server, port_webhook, port_guard;
  json_t *docs;
  podrun_t certs, server, webhook, guard, watch;
} t;

static unsigned free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0)
    fail_msg("no free port");
  close(fd);
  return ntohs(a.sin_port);
}

static const json_t *doc(const char *kind, const char *name) {
  size_t i;
  const json_t *d;
  json_array_foreach(t.docs, i, d) {
    if (!strcmp(lab_str(d, "kind"), kind) && !strcmp(lab_str(d, "metadata.name"), name)) return d;
  }
  fail_msg("the rendered chart has no %s %s", kind, name);
  return NULL;
}

static const char *named(const char *part) {
  static char buf[4][96];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s-%s", t.rel, part);
  return buf[k];
}

/* helm template with the lab's settings. */
static void render(void) {
  const char *src = getenv("RIPPLE_SOURCE_DIR");
  char *helm = NULL, *yaml = NULL;
  if (lab_sh(&helm, "'%s/lab/build.sh' --print-helm", src) != 0) fail_msg("helm is not built");
  helm[strcspn(helm, "\n")] = '\0';
  int rc =
      lab_sh(&yaml,
             "'%s' template %s '%s/deploy/helm/ripple' --namespace %s --set listenHost=127.0.0.1"
             " --set server.port=%u --set webhook.port=%u --set guard.port=%u"
             " --set webhook.url=https://127.0.0.1:%u/mutate --set 'webhook.namespaces={%s}'"
             " --set webhook.traceServer=https://127.0.0.1:%u --set logLevel=debug"
             " --set watch.enabled=true --set watch.namespace=%s"
             " --set 'watch.objects={deployments.apps,replicasets.apps,pods}'",
             helm, t.rel, src, t.l.ns, t.port_server, t.port_webhook, t.port_guard, t.port_webhook,
             t.wns, t.port_server, t.wns);
  if (rc != 0) fail_msg("helm template failed (%d):\n%s", rc, yaml);
  assert_null(strstr(yaml, "PRIVATE KEY")); /* no key material in what is rendered */
  char err[256];
  if (yjson_parse(yaml, strlen(yaml), &t.docs, err, sizeof err) != RIPPLE_OK)
    fail_msg("the rendered chart is not YAML: %s", err);
  free(helm);
  free(yaml);
}

static void check_pod(const json_t *obj) {
  const json_t *spec = lab_at(podrun_template(obj), "spec");
  assert_true(json_is_true(lab_at(spec, "securityContext.runAsNonRoot")));
  assert_true(lab_int(spec, "securityContext.runAsUser") > 0);
  const json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
  assert_true(json_is_true(lab_at(c, "securityContext.readOnlyRootFilesystem")));
  assert_true(json_is_false(lab_at(c, "securityContext.allowPrivilegeEscalation")));
  assert_string_equal(
      json_string_value(json_array_get(lab_at(c, "securityContext.capabilities.drop"), 0)), "ALL");
}

/* Does obj's Pod template mount Secret name (as a volume or a projected source)? */
static int uses_secret(const json_t *obj, const char *name) {
  size_t i, j;
  const json_t *v, *src;
  json_array_foreach(lab_at(podrun_template(obj), "spec.volumes"), i, v) {
    const char *s = json_string_value(lab_at(v, "secret.secretName"));
    if (s && !strcmp(s, name)) return 1;
    json_array_foreach(lab_at(v, "projected.sources"), j, src) {
      s = json_string_value(lab_at(src, "secret.name"));
      if (s && !strcmp(s, name)) return 1;
    }
  }
  return 0;
}

/* What the rendered objects must say, before anything runs. */
static void check_rendered(void) {
  size_t i;
  const json_t *d;
  json_array_foreach(t.docs, i, d) {
    if (!strcmp(lab_str(d, "kind"), "Secret")) fail_msg("the chart renders a Secret");
    if (podrun_template(d)) check_pod(d);
  }
  const json_t *reg = doc("MutatingWebhookConfiguration", named("webhook"));
  const json_t *w = json_array_get(json_object_get(reg, "webhooks"), 0);
  assert_string_equal(lab_str(w, "failurePolicy"), "Ignore");
  assert_int_equal(lab_int(w, "timeoutSeconds"), 1);
  assert_string_equal(lab_str(w, "sideEffects"), "NoneOnDryRun");
  assert_null(lab_at(w, "clientConfig.caBundle"));
  const json_t *conds = json_object_get(w, "matchConditions");
  const json_t *last = json_array_get(conds, json_array_size(conds) - 1);
  assert_string_equal(lab_str(last, "name"), "ripple-guard-off");
  assert_string_equal(lab_str(last, "expression"), "false");
  const json_t *wh = doc("Deployment", named("webhook"));
  /* The tested configuration (test_replicas_lab): three, one may be lost. */
  assert_int_equal(lab_int(wh, "spec.replicas"), 3);
  assert_non_null(lab_at(wh, "spec.template.spec.affinity.podAntiAffinity"));
  const json_t *pdb = doc("PodDisruptionBudget", named("webhook"));
  assert_true(json_equal(lab_at(pdb, "spec.selector.matchLabels"),
                         lab_at(wh, "spec.selector.matchLabels")));
  assert_int_equal(lab_int(pdb, "spec.minAvailable"), 2);
  const json_t *sts = doc("StatefulSet", named("server"));
  assert_string_equal(
      lab_str(json_array_get(lab_at(sts, "spec.volumeClaimTemplates"), 0), "metadata.name"),
      "data");
  /* The trace server's Pod mounts its own certificate, never the webhook's key or
   * the context key; only the webhook's Pods mount the context key. */
  assert_false(uses_secret(sts, named("webhook-tls")));
  assert_false(uses_secret(sts, named("context-key")));
  assert_true(uses_secret(sts, named("server-tls")));
  assert_true(uses_secret(wh, named("context-key")));
  assert_false(uses_secret(doc("Deployment", named("guard")), named("context-key")));
  assert_false(uses_secret(doc("Deployment", named("watch")), named("context-key")));
  /* No rule of the webhook's ClusterRole reaches Secrets or every resource. */
  size_t i2;
  const json_t *rule;
  json_array_foreach(json_object_get(doc("ClusterRole", named("webhook")), "rules"), i2, rule) {
    char *text = json_dumps(json_object_get(rule, "resources"), 0);
    assert_null(strstr(text, "secrets"));
    assert_null(strstr(text, "*"));
    free(text);
  }
}

/* Every rendered object but the workloads, created for real. */
static void create_objects(void) {
  size_t i;
  const json_t *d;
  json_array_foreach(t.docs, i, d) {
    const char *kind = lab_str(d, "kind");
    if (!strcmp(kind, "Deployment") || !strcmp(kind, "StatefulSet") || !strcmp(kind, "Job"))
      continue;
    const char *api = lab_str(d, "apiVersion");
    char group[128] = "";
    const char *slash = strchr(api, '/');
    if (slash) snprintf(group, sizeof group, "%.*s", (int)(slash - api), api);
    const ripple_kube_resource_t *r;
    ripple_kube_status_t st;
    LAB_OK(st, ripple_kube_resolve_kind(t.l.kc, group, kind, &r, &st));
    LAB_OK(st, ripple_kube_create(t.l.kc, r, NULL, d, NULL, NULL, &st));
  }
}

static void delete_cluster_objects(void) {
  size_t i;
  const json_t *d;
  json_array_foreach(t.docs, i, d) {
    if (lab_str(d, "metadata.namespace")) continue;
    const char *api = lab_str(d, "apiVersion"), *slash = strchr(api, '/');
    char group[128] = "";
    if (slash) snprintf(group, sizeof group, "%.*s", (int)(slash - api), api);
    const ripple_kube_resource_t *r;
    ripple_kube_status_t st;
    if (ripple_kube_resolve_kind(t.l.kc, group, lab_str(d, "kind"), &r, &st) == RIPPLE_OK)
      ripple_kube_delete(t.l.kc, r, NULL, lab_str(d, "metadata.name"), NULL, &st);
  }
}

static podrun_opts_t run_opts(void) {
  static char host[64], port[16];
  const char *server = getenv("RIPPLE_LAB_SERVER"); /* https://127.0.0.1:PORT */
  if (!server || sscanf(server, "https://%63[^:]:%15s", host, port) != 2)
    fail_msg("RIPPLE_LAB_SERVER is not set (eval \"$(lab/lab env)\")");
  return (podrun_opts_t){.kc = t.l.kc,
                         .ns = t.l.ns,
                         .bin_dir = t.bins,
                         .api_host = host,
                         .api_port = port,
                         .ca_file = getenv("RIPPLE_LAB_CA"),
                         .data_dir = t.data};
}

static json_t *secret(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s", t.l.ns, name);
  json_t *s = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_request(t.l.kc, "GET", path, NULL, NULL, 0, &s, &st));
  return s;
}

static void run_hook(void) {
  podrun_opts_t o = run_opts();
  podrun_start(&t.certs, doc("Job", named("certs")), &o);
  int rc = podrun_wait(&t.certs, 120000);
  if (rc != 0) {
    podrun_dump(&t.certs);
    fail_msg("the install hook exited with %d", rc);
  }
}

/* A Secret's data[key] decoded, as a new string. */
static char *secret_text(const char *name, const char *key) {
  json_t *s = secret(name);
  const char *b64 = json_string_value(json_object_get(json_object_get(s, "data"), key));
  char *out = NULL;
  size_t n = 0;
  if (!b64 || b64_decode(b64, strlen(b64), &out, &n) != RIPPLE_OK)
    fail_msg("Secret %s has no %s", name, key);
  json_decref(s);
  return out;
}

/* The hook's Secrets; their resourceVersions into rv ("a,b,..."). */
static void hook_secrets(char *rv, size_t cap) {
  static const char *const parts[5] = {"webhook-tls", "server-tls", "server-writer-token",
                                       "server-reader-token", "context-key"};
  char names[5][96]; /* named() keeps only its last four */
  for (int i = 0; i < 5; i++) snprintf(names[i], sizeof names[i], "%s", named(parts[i]));
  rv[0] = '\0';
  for (int i = 0; i < 5; i++) {
    json_t *s = secret(names[i]);
    const char *keys[3] = {"ca.crt", "tls.crt", "tls.key"};
    for (int k = 0; k < (i < 2 ? 3 : 0); k++)
      assert_non_null(json_object_get(json_object_get(s, "data"), keys[k]));
    if (i >= 2) assert_non_null(lab_at(s, "data.token"));
    size_t n = strlen(rv);
    snprintf(rv + n, cap - n, "%s,", lab_str(s, "metadata.resourceVersion"));
    json_decref(s);
  }
  /* One CA signed both certificates: the webhook verifies the trace server with it. */
  char *a = secret_text(names[0], "ca.crt"), *b = secret_text(names[1], "ca.crt");
  assert_string_equal(a, b);
  free(a);
  free(b);
  /* The context key: 32 random bytes as 64 hex digits. */
  char *key = secret_text(names[4], "token");
  assert_int_equal(strspn(key, "0123456789abcdef"), 64);
  assert_int_equal(strlen(key), 64);
  free(key);
  /* The CA as a file, for this test's own HTTPS requests to the trace server. */
  char *ca = secret_text(names[1], "ca.crt");
  FILE *f = fopen(t.ca, "w");
  if (!f || fputs(ca, f) < 0 || fclose(f) != 0) fail_msg("cannot write %s", t.ca);
  free(ca);
}

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  hc_resp_t *r = ud;
  size_t add = size * n;
  char *grown = realloc(r->body, r->len + add + 1);
  if (!grown) return 0; /* curl reports a write error */
  memcpy(grown + r->len, p, add);
  r->len += add;
  grown[r->len] = '\0';
  r->body = grown;
  return add;
}

/* hc_request over HTTPS to the trace server, verified against the hook's CA. */
static int ts_request(const char *url, const char *token, hc_resp_t *r) {
  memset(r, 0, sizeof *r);
  CURL *c = curl_easy_init();
  if (!c) return -1;
  struct curl_slist *h = NULL;
  char auth[512];
  if (token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_CAINFO, t.ca);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return rc == CURLE_OK ? 0 : -1;
}

static char *token(const char *which) {
  json_t *s = secret(named(which));
  char *out = NULL;
  if (lab_sh(&out, "echo '%s' | base64 -d", lab_str(s, "data.token")) != 0) fail_msg("base64");
  json_decref(s);
  return out;
}

typedef struct regstate {
  int enabled; /* no ripple-guard-off condition */
  int ca_set;  /* caBundle equals the hook's ca.crt */
} regstate_t;

static regstate_t registration(void) {
  char path[256];
  snprintf(path, sizeof path,
           "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/%s",
           named("webhook"));
  json_t *m = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_request(t.l.kc, "GET", path, NULL, NULL, 0, &m, &st));
  const json_t *w = json_array_get(json_object_get(m, "webhooks"), 0);
  regstate_t r = {1, 0};
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(w, "matchConditions"), i, c) {
    if (!strcmp(lab_str(c, "name"), "ripple-guard-off")) r.enabled = 0;
  }
  json_t *tls = secret(named("webhook-tls"));
  const char *ca = json_string_value(json_object_get(json_object_get(tls, "data"), "ca.crt"));
  const char *have = lab_str(w, "clientConfig.caBundle");
  r.ca_set = have && ca && !strcmp(have, ca);
  json_decref(tls);
  json_decref(m);
  return r;
}

static int guard_enabled(void *ud) {
  (void)ud;
  regstate_t r = registration();
  return r.enabled && r.ca_set;
}

static int server_ready(void *ud) {
  (void)ud;
  char url[128];
  snprintf(url, sizeof url, "https://127.0.0.1:%u/readyz", t.port_server);
  hc_resp_t r;
  int ok = ts_request(url, NULL, &r) == 0 && r.status == 200;
  hc_resp_free(&r);
  return ok;
}

/* kubectl ripple (the lab's admin) with args; its stdout and status. */
static int kr(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kr(char **out, const char *fmt, ...) {
  char args[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return lab_sh(out, "'%s' --kubeconfig '%s' %s", getenv("RIPPLE_KUBECTL_BIN"),
                getenv("KUBECONFIG"), args);
}

static int webhook_called(void *ud) {
  (void)ud;
  return whlab_annotated(t.l.kc, t.wns);
}

static int ready_replicas(void *ud) {
  json_t *d = NULL;
  ripple_kube_status_t st;
  char path[256];
  snprintf(path, sizeof path, "/apis/apps/v1/namespaces/%s/deployments/paper1", t.wns);
  if (ripple_kube_request(t.l.kc, "GET", path, NULL, NULL, 0, &d, &st) != RIPPLE_OK) return 0;
  int ok = lab_int(d, "status.readyReplicas") == *(int *)ud &&
           lab_int(d, "status.updatedReplicas") == *(int *)ud;
  json_decref(d);
  return ok;
}

/* What the scale's trace shows, counted over its tree. */
typedef struct counts {
  int rs, creates, bindings, statuses;
} counts_t;

static int is(const json_t *n, const char *key, const char *want) {
  const char *v = json_string_value(json_object_get(n, key));
  return v && !strcmp(v, want);
}

static void count(counts_t *c, const json_t *nodes) {
  size_t i;
  const json_t *n;
  json_array_foreach(nodes, i, n) {
    c->rs += is(n, "kind", "ReplicaSet") && is(n, "component", "deployment-controller");
    c->creates += is(n, "write", "create pods") && is(n, "component", "replicaset-controller");
    c->bindings += is(n, "write", "create pods/binding") && is(n, "component", "kube-scheduler");
    c->statuses += is(n, "write", "update pods/status") && is(n, "component", "kwok");
    count(c, json_object_get(n, "children"));
  }
}

typedef struct traced {
  const char *cpid;
  char *token;
  counts_t c;
} traced_t;

static int cascade_traced(void *ud) {
  traced_t *tr = ud;
  char *out = NULL;
  setenv("RIPPLE_READER_TOKEN", tr->token, 1);
  setenv("RIPPLE_SERVER_CA", t.ca, 1);
  int rc = kr(&out, "trace %s -o json --server https://127.0.0.1:%u", tr->cpid, t.port_server);
  unsetenv("RIPPLE_SERVER_CA");
  unsetenv("RIPPLE_READER_TOKEN");
  json_t *j = rc == 0 ? json_loads(out, 0, NULL) : NULL;
  free(out);
  memset(&tr->c, 0, sizeof tr->c);
  count(&tr->c, json_object_get(j, "tree"));
  json_decref(j);
  return tr->c.rs && tr->c.creates >= 10 && tr->c.bindings >= 10 && tr->c.statuses >= 10;
}

typedef struct details {
  const char *cpid, *token;
  char *last; /* the last answer */
} details_t;

static int has_replicas_diff(void *ud) {
  details_t *d = ud;
  char url[160];
  snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/cpids/%s/details", t.port_server, d->cpid);
  hc_resp_t r;
  if (ts_request(url, d->token, &r) != 0) return 0;
  free(d->last);
  d->last = r.status == 200 && r.body ? strdup(r.body) : NULL;
  hc_resp_free(&r);
  return d->last && strstr(d->last, "\"/spec/replicas\"") && strstr(d->last, "\"ReplicaSet\"");
}

/* make demo's cascade, by kubectl ripple, traced by the chart's programs. */
static void demo_cascade(void) {
  char *out = NULL;
  json_t *d = lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"paper1\"},"
      "\"spec\":{\"replicas\":10,\"selector\":{\"matchLabels\":{\"app\":\"paper1\"}},"
      "\"template\":{\"metadata\":{\"labels\":{\"app\":\"paper1\"}},\"spec\":{\"containers\":"
      "[{\"name\":\"c\",\"image\":\"ripple.invalid/noop:1\"}]}}}}");
  const ripple_kube_resource_t *r = lab_resolve(t.l.kc, "deployments");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(t.l.kc, r, t.wns, d, NULL, NULL, &st));
  json_decref(d);
  int ten = 10, twenty = 20;
  if (!lab_wait(ready_replicas, &ten, 120000)) fail_msg("10 replicas not ready in 120 s");
  assert_int_equal(kr(&out, "scale deployment/paper1 --replicas=20 -n %s", t.wns), 0);
  const char *c = strstr(out, "cpid: ");
  if (!c) fail_msg("kubectl ripple scale printed no CPID:\n%s", out);
  char cpid[RIPPLE_CPID_STRLEN + 1];
  snprintf(cpid, sizeof cpid, "%s", c + 6);
  free(out);
  if (!lab_wait(ready_replicas, &twenty, 120000)) fail_msg("20 replicas not ready in 120 s");

  traced_t tr = {cpid, token("server-reader-token"), {0}};
  int ok = lab_wait(cascade_traced, &tr, 60000);
  fprintf(stderr, "# trace %s: replicaset %d, %d pod creates, %d bindings, %d pod statuses\n", cpid,
          tr.c.rs, tr.c.creates, tr.c.bindings, tr.c.statuses);
  if (!ok) fail_msg("the chart's programs did not trace the scale's whole cascade");

  /* Without the reader token the server answers 401; with a wrong one too. */
  char url[160];
  snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/cpids/%s/spans", t.port_server, cpid);
  hc_resp_t resp;
  assert_int_equal(ts_request(url, NULL, &resp), 0);
  assert_int_equal(resp.status, 401);
  hc_resp_free(&resp);
  assert_int_equal(ts_request(url, "not-the-token", &resp), 0);
  assert_int_equal(resp.status, 401);
  hc_resp_free(&resp);
  /* Plain HTTP is not served: no token crosses the network in clear. */
  snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", t.port_server);
  assert_true(hc_request("GET", url, NULL, 0, NULL, &resp) != 0 || resp.status != 200);
  hc_resp_free(&resp);

  /* The watch agent, with the chart's RBAC and writer token, sent what the scale
   * changed: the Deployment controller's ReplicaSet update, /spec/replicas 10 -> 20. */
  details_t det = {cpid, tr.token, NULL};
  if (!lab_wait(has_replicas_diff, &det, 60000))
    fail_msg("no /spec/replicas change in the scale's details:\n%s", det.last ? det.last : "");
  free(det.last);
  free(tr.token);
}

static void test_chart_out_of_cluster(void **state) {
  (void)state;
  render();
  check_rendered();
  create_objects();

  /* The install hook makes the Secrets; run again, it changes none of them. */
  char rv1[256], rv2[256];
  run_hook();
  hook_secrets(rv1, sizeof rv1);
  run_hook();
  hook_secrets(rv2, sizeof rv2);
  assert_string_equal(rv1, rv2);

  podrun_opts_t o = run_opts();
  podrun_start(&t.server, doc("StatefulSet", named("server")), &o);
  podrun_start(&t.webhook, doc("Deployment", named("webhook")), &o);
  if (!lab_wait(server_ready, NULL, 60000)) {
    podrun_dump(&t.server);
    fail_msg("the trace server is not ready in 60 s");
  }
  /* The webhook is up, but the registration is disabled until the guard has seen it
   * answer: the API server does not call it. */
  sleep(2);
  regstate_t r = registration();
  assert_false(r.enabled);
  assert_false(whlab_annotated(t.l.kc, t.wns));

  podrun_start(&t.guard, doc("Deployment", named("guard")), &o);
  if (!lab_wait(guard_enabled, NULL, 60000)) {
    podrun_dump(&t.guard);
    podrun_dump(&t.webhook);
    fail_msg("the guard did not set the CA and enable the registration in 60 s");
  }
  if (!lab_wait(webhook_called, NULL, 30000))
    fail_msg("the registration is enabled but writes in %s are not annotated", t.wns);
  podrun_start(&t.watch, doc("Deployment", named("watch")), &o);
  demo_cascade();

  /* Clean stops (the server's commit finishes; nothing acknowledged is lost). */
  assert_int_equal(podrun_stop(&t.watch), 0);
  assert_int_equal(podrun_stop(&t.guard), 0);
  assert_int_equal(podrun_stop(&t.webhook), 0);
  assert_int_equal(podrun_stop(&t.server), 0);
}

static int setup(void **state) {
  (void)state;
  memset(&t, 0, sizeof t);
  whlab_begin_cluster(&t.l, "rt-chart");
  lab_ns_new(t.l.kc, "rt-chartw", t.wns, sizeof t.wns);
  char sfx[8];
  lab_suffix(sfx, 6);
  snprintf(t.rel, sizeof t.rel, "rt%s", sfx);
  const char *bin = getenv("RIPPLE_SERVER_BIN"); /* set by CTest (tests/CMakeLists.txt) */
  const char *slash = bin ? strrchr(bin, '/') : NULL;
  if (!slash) {
    fail_msg("RIPPLE_SERVER_BIN is not set: run this test through ctest");
    return -1;
  }
  snprintf(t.bins, sizeof t.bins, "%.*s", (int)(slash - bin), bin);
  snprintf(t.data, sizeof t.data, "/var/tmp/ripple-chart-data-%s", sfx);
  snprintf(t.ca, sizeof t.ca, "/var/tmp/ripple-chart-ca-%s.pem", sfx);
  t.port_server = free_port();
  t.port_webhook = free_port();
  t.port_guard = free_port();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  podrun_t *all[5] = {&t.watch, &t.guard, &t.webhook, &t.server, &t.certs};
  for (int i = 0; i < 5; i++) {
    if (all[i]->pid > 0) {
      podrun_stop(all[i]);
      podrun_dump(all[i]);
    }
  }
  if (t.docs) delete_cluster_objects();
  json_decref(t.docs);
  lab_ns_delete(t.l.kc, t.wns);
  whlab_end(&t.l);
  /* The volumes hold the tokens and the key: nothing may stay behind. */
  char *out = NULL;
  lab_sh(&out, "rm -rf '%s' '%s' '%s' '%s' '%s' '%s' '%s'", t.data, t.certs.dir, t.server.dir,
         t.webhook.dir, t.guard.dir, t.watch.dir, t.ca);
  free(out);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_chart_out_of_cluster, setup, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
