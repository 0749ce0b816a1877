/*
 * replicas_check.c - the second API server, metrics, and the check of where
 * each change's Pods landed, for the webhook replica lab tests
 * (replicas_check.h).
 *
 * Why the check reads Pods' own contexts and the merge graph rather than
 * counting spans: a Pod's create has no name yet (generateName), but the
 * Pod's annotation keeps the context its create was given (its binding and
 * status writes keep it), so the Pod's CPID says exactly which roots its
 * create descends from (GET /v1/cpids/{cpid}/origins) and which roots reach
 * it (the roots' related CPIDs).
 */
#include "replicas_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "testutil.h"

/* ---- the second API server --------------------------------------------------- */

const char *rc_kubeconfig2(void) {
  static char path[300];
  const char *k = getenv("RIPPLE_LAB_KUBECONFIG2"), *dir = getenv("RIPPLE_LAB_DIR");
  if (k) return k;
  snprintf(path, sizeof path, "%s/kubeconfig-2", dir ? dir : "/tmp/ripple-lab");
  return access(path, R_OK) == 0 ? path : NULL;
}

static const char *kubectl(void) {
  static char path[300];
  const char *bin = getenv("RIPPLE_LAB_BIN");
  snprintf(path, sizeof path, "%s%s", bin ? bin : "", bin ? "/kubectl" : "kubectl");
  return path;
}

void rc_kubectl2(char **out, const char *args) {
  int rc = lab_sh(out, "'%s' --kubeconfig '%s' -n '%s' %s 2>&1", kubectl(), rc_kubeconfig2(), cl.ns,
                  args);
  if (rc != 0) fail_msg("kubectl %s: exit %d: %s", args, rc, *out ? *out : "");
}

int rc_warning_cpid(const char *out, char cpid[CL_CPID]) {
  const char *w = out ? strstr(out, "ripple: cpid ") : NULL;
  cpid[0] = '\0';
  if (!w || strlen(w + 13) < RIPPLE_CPID_STRLEN) return 0;
  memcpy(cpid, w + 13, RIPPLE_CPID_STRLEN);
  cpid[RIPPLE_CPID_STRLEN] = '\0';
  return 1;
}

int rc_second_calls_webhook(void *ud) {
  (void)ud;
  char *out = NULL;
  int rc = lab_sh(&out,
                  "'%s' --kubeconfig '%s' -n '%s' create service clusterip probe --tcp=80 "
                  "--dry-run=server -o jsonpath='{.metadata.annotations}' 2>&1",
                  kubectl(), rc_kubeconfig2(), cl.ns);
  int ok = rc == 0 && out && strstr(out, "cpid.ripple.dev/service");
  free(out);
  return ok;
}

/* ---- metrics ------------------------------------------------------------------- */

/* Does the label set [l, close) contain has (NULL: yes)? */
static int labels_have(const char *l, const char *close, const char *has) {
  if (!has) return 1;
  size_t n = strlen(has);
  for (const char *p = l; p + n <= close; p++)
    if (!memcmp(p, has, n)) return 1;
  return 0;
}

/* The sum of metric name over the lines whose labels contain has and has2. */
static double sum_where(const char *text, const char *name, const char *has, const char *has2) {
  size_t n = strlen(name);
  double sum = 0;
  for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    if (strncmp(l, name, n) != 0 || (l[n] != ' ' && l[n] != '{')) continue;
    const char *end = strchr(l, '\n');
    if (!end) end = l + strlen(l);
    const char *close = l[n] == '{' ? memchr(l, '}', (size_t)(end - l)) : l + n;
    if (close && labels_have(l, close, has) && labels_have(l, close, has2))
      sum += strtod(close + 1, NULL);
  }
  return sum;
}

double rc_prom_sum(const char *text, const char *name, const char *has) {
  return sum_where(text, name, has, NULL);
}

double rc_replica_metric(const whlab_t *l, int k, const char *name) {
  char *body = NULL;
  long st = whlab_get_port(l->webhooks[k].port, "/metrics", &body);
  double v = st == 200 ? rc_prom_sum(body, name, NULL) : -1;
  free(body);
  return v;
}

int rc_decider(const whlab_t *l, int skip) {
  for (int k = 0; k < l->replicas; k++)
    if (k != skip && l->webhooks[k].pid > 0 &&
        rc_replica_metric(l, k, "ripple_webhook_decider") == 1)
      return k;
  return -1;
}

double rc_cause_unknown(const whlab_t *l, int skip) {
  double n = 0;
  for (int k = 0; k < l->replicas; k++) {
    double v = k == skip || l->webhooks[k].pid <= 0
                   ? 0
                   : rc_replica_metric(l, k, "ripple_webhook_cause_unknown_total");
    n += v > 0 ? v : 0;
  }
  return n;
}

/* GET /metrics of the API server c talks to; fails the test unless 200. */
static char *apiserver_metrics(ripple_kube_client_t *c) {
  long status = 0;
  char *body = NULL;
  size_t len = 0;
  ripple_kube_status_t st;
  int rc = ripple_kube_request_raw(c, "GET", "/metrics", NULL, &status, &body, &len, &st);
  if (rc != RIPPLE_OK || status != 200) fail_msg("GET /metrics: %s %ld", st.message, status);
  return body;
}

/* A client of the second API server (the caller frees it). */
static ripple_kube_client_t *client2(void) {
  ripple_kube_config_opts_t o = {.kubeconfig = rc_kubeconfig2()};
  ripple_kube_config_t *cfg = NULL;
  ripple_kube_client_t *c = NULL;
  char err[512];
  if (ripple_kube_config_load(&o, &cfg, err, sizeof err) != RIPPLE_OK)
    fail_msg("loading %s: %s", o.kubeconfig, err);
  assert_int_equal(ripple_kube_client_new(cfg, NULL, &c), RIPPLE_OK);
  ripple_kube_config_free(cfg);
  return c;
}

static void add_admission(const char *text, rc_admission_t *a) {
  char name[160];
  /* The registration's one webhook is "<name>.ripple.dev". */
  snprintf(name, sizeof name, "name=\"%s.", cl.name);
  double calls =
      sum_where(text, "apiserver_admission_webhook_admission_duration_seconds_count", name, NULL);
  a->calls += calls;
  a->seconds +=
      sum_where(text, "apiserver_admission_webhook_admission_duration_seconds_sum", name, NULL);
  a->slow +=
      calls - sum_where(text, "apiserver_admission_webhook_admission_duration_seconds_bucket", name,
                        "le=\"0.5\"");
  a->not_ok += sum_where(text, "apiserver_admission_webhook_request_total", name, NULL) -
               sum_where(text, "apiserver_admission_webhook_request_total", name, "code=\"200\"");
  a->fail_open += sum_where(text, "apiserver_admission_webhook_fail_open_count", name, NULL);
}

void rc_admission(rc_admission_t *out) {
  memset(out, 0, sizeof *out);
  char *t = apiserver_metrics(cl.kc);
  add_admission(t, out);
  ripple_free(t);
  ripple_kube_client_t *c2 = client2();
  t = apiserver_metrics(c2);
  add_admission(t, out);
  ripple_free(t);
  ripple_kube_client_free(c2);
}

void rc_admission_print(const char *what, const rc_admission_t *before,
                        const rc_admission_t *after) {
  double calls = after->calls - before->calls, secs = after->seconds - before->seconds;
  fprintf(stderr,
          "# %s: %.0f webhook calls (both API servers), %.0f failed open, %.0f answered other "
          "than 200, %.0f took over 0.5 s; %.2f s waited in all, %.0f ms a call on average\n",
          what, calls, after->fail_open - before->fail_open, after->not_ok - before->not_ok,
          after->slow - before->slow, secs, calls > 0 ? 1000 * secs / calls : 0);
}

/* ---- changes and their Pods ---------------------------------------------------- */

typedef struct ready {
  long long want;
  void (*tick)(void *);
  void *ud;
} ready_t;

static int web_ready(void *ud) {
  const ready_t *r = ud;
  if (r->tick) r->tick(r->ud);
  json_t *o = cl_get("deployments", "web");
  int ok = o && lab_int(o, "status.observedGeneration") == lab_int(o, "metadata.generation");
  for (const char *const *p = CL_READY_APPS; ok && *p; p++) ok = lab_int(o, *p) == r->want;
  json_decref(o);
  return ok;
}

json_t *rc_new_pods(json_t *seen) {
  json_t *all = lab_names(cl.kc, "pods", cl.ns, "app=web"), *fresh = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(all, k, v) {
    if (!json_object_get(seen, k)) json_object_set(fresh, k, json_true());
  }
  json_object_update(seen, all);
  json_decref(all);
  return fresh;
}

void rc_settle(rc_change_t *c, json_t *seen, void (*tick)(void *), void *ud) {
  ready_t r = {c->replicas, tick, ud};
  cl_wait(web_ready, &r, 120000, "the Deployment web to be ready");
  c->pods = rc_new_pods(seen);
}

void rc_changes_free(rc_change_t *ch, int n) {
  for (int i = 0; i < n; i++) {
    json_decref(ch[i].pods);
    ch[i].pods = NULL;
  }
}

/* What the check reads from the trace server once. */
typedef struct graph {
  json_t *related[64]; /* per change: {cpid: true} from its root; NULL without one */
  json_t *marked;      /* {cpid: true}: CPIDs with a span marked causeUnknown */
  json_t *spans;       /* every span, for the evidence */
} graph_t;

static json_t *marked_cpids(const json_t *spans) {
  json_t *m = json_object();
  size_t i;
  json_t *s;
  json_array_foreach(spans, i, s) {
    if (!strcmp(cl_attr(s, "causeUnknown"), "true"))
      json_object_set_new(m, json_string_value(json_object_get(s, "cpid")), json_true());
  }
  return m;
}

/* GET /v1/cpids/{cpid}/{what}; NULL when the trace server does not know it. */
static json_t *trace_or_null(const char *cpid, const char *what) {
  char path[160];
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", cpid, what);
  return hc_get_json(cl.trace, path, 200);
}

/* Which change's root c is, as text for a person. */
static void root_name(const rc_change_t *ch, int n, const graph_t *g, const char *c, char *out,
                      size_t cap) {
  for (int i = 0; i < n; i++)
    if (!strcmp(ch[i].cpid, c)) {
      snprintf(out, cap, "%.8s (the change to %d)", c, ch[i].replicas);
      return;
    }
  snprintf(out, cap, "%.8s (%s)", c, json_object_get(g->marked, c) ? "marked" : "unmarked");
}

/* The evidence of a wrong Pod: each path from an origin to its CPID, with
 * the merges on the way. */
static void evidence(const rc_change_t *ch, int n, const graph_t *g, const json_t *origins) {
  size_t i, j;
  json_t *path, *c;
  json_array_foreach(json_object_get(origins, "paths"), i, path) {
    json_array_foreach(path, j, c) {
      const char *id = json_string_value(c);
      char who[96];
      root_name(ch, n, g, id, who, sizeof who);
      json_t *ml = trace_or_null(id, "mergelogs");
      size_t x;
      json_t *m;
      json_array_foreach(json_object_get(ml, "mergelogs"), x, m) {
        if (strcmp(lab_str(m, "cpid") ? lab_str(m, "cpid") : "", id) != 0) continue;
        char *src = json_dumps(json_object_get(m, "sources"), JSON_COMPACT);
        fprintf(stderr, "#     path %zu: %s <- %s (%s %s) by %s\n", i, who, src ? src : "?",
                lab_str(m, "object.kind") ? lab_str(m, "object.kind") : "",
                lab_str(m, "object.name") ? lab_str(m, "object.name") : "",
                lab_str(m, "component") ? lab_str(m, "component") : "");
        free(src);
      }
      json_decref(ml);
    }
  }
}

/* Where a cascade goes from the Deployment to its Pods: every write of the
 * Deployment's scale and of ReplicaSets the webhook decided, in time order
 * (a write that failed open has none: look for the gap). */
static void replicaset_writes(const graph_t *g) {
  fprintf(stderr, "# the scales and ReplicaSet writes the webhook decided (the spans):\n");
  json_t *rows = json_array();
  size_t i;
  json_t *s;
  json_array_foreach(g->spans, i, s) {
    const char *name = lab_str(s, "name") ? lab_str(s, "name") : "";
    if (strcmp(name, "update replicasets") != 0 && strcmp(name, "create replicasets") != 0 &&
        strcmp(name, "update deployments/scale") != 0)
      continue;
    char line[400];
    snprintf(line, sizeof line, "%s %.8s %s %s rv %s by %s%s", lab_str(s, "start"),
             lab_str(s, "cpid"), name, cl_attr(s, "name"), cl_attr(s, "resourceVersion"),
             lab_str(s, "service"), *cl_attr(s, "causeUnknown") ? " causeUnknown" : "");
    json_array_append_new(rows, json_string(line));
  }
  /* RFC 3339 in UTC with nine digits sorts as text. */
  json_t *sorted = json_array();
  while (json_array_size(rows)) {
    size_t min = 0;
    for (i = 1; i < json_array_size(rows); i++)
      if (strcmp(json_string_value(json_array_get(rows, i)),
                 json_string_value(json_array_get(rows, min))) < 0)
        min = i;
    json_array_append(sorted, json_array_get(rows, min));
    json_array_remove(rows, min);
  }
  json_array_foreach(sorted, i, s) { fprintf(stderr, "#   %s\n", json_string_value(s)); }
  json_decref(rows);
  json_decref(sorted);
}

/* Does an origin of the Pod's CPID carry the causeUnknown mark? */
static int under_marked(const graph_t *g, const json_t *origins) {
  size_t i;
  json_t *o;
  json_array_foreach(json_object_get(origins, "origins"), i, o) {
    if (json_object_get(g->marked, json_string_value(o))) return 1;
  }
  return 0;
}

/* Are the origins of a Pod's CPID roots made for that Pod alone? A Pod whose
 * create failed open has no context; its binding then starts a root of its
 * own, which relates it to no change. */
static int alone(const json_t *origins, const char *pod) {
  size_t i, n = 0;
  json_t *o;
  json_array_foreach(json_object_get(origins, "origins"), i, o) {
    const char *id = json_string_value(o);
    json_t *ml = trace_or_null(id, "mergelogs");
    size_t x;
    json_t *m;
    json_array_foreach(json_object_get(ml, "mergelogs"), x, m) {
      n += !strcmp(lab_str(m, "cpid") ? lab_str(m, "cpid") : "", id) &&
           !json_array_size(json_object_get(m, "sources")) && lab_str(m, "object.name") &&
           !strcmp(lab_str(m, "object.name"), pod);
    }
    json_decref(ml);
  }
  return i > 0 && n == i;
}

/* The verdict on Pod name of change s, whose context is cpid. */
static void judge(rc_change_t *ch, int n, int s, const graph_t *g, const char *name,
                  const char *cpid) {
  rc_change_t *c = &ch[s];
  if (!*cpid) {
    c->untraced++;
    return;
  }
  for (int j = s + 1; j < n; j++)
    if (g->related[j] && json_object_get(g->related[j], cpid)) {
      fprintf(stderr, "# WRONG: Pod %s of the change to %d (cpid %s) is under the later root %s\n",
              name, c->replicas, cpid, ch[j].cpid);
      c->wrong++;
      return;
    }
  if (g->related[s] && json_object_get(g->related[s], cpid)) {
    c->own++;
    return;
  }
  json_t *origins = trace_or_null(cpid, "origins");
  if (origins && under_marked(g, origins)) {
    c->marked++;
  } else if (origins && alone(origins, name)) {
    c->alone++;
  } else {
    fprintf(stderr, "# WRONG: Pod %s of the change to %d (root %s) has cpid %s, %s:\n", name,
            c->replicas, *c->cpid ? c->cpid : "none", cpid,
            origins ? "under other roots only" : "unknown to the trace server");
    if (origins) evidence(ch, n, g, origins);
    c->wrong++;
  }
  json_decref(origins);
}

int rc_check(rc_change_t *ch, int n) {
  if (n > 64) fail_msg("rc_check: at most 64 changes");
  cl_spans_settle();
  graph_t g = {.spans = cl_all_spans()};
  g.marked = marked_cpids(g.spans);
  for (int i = 0; i < n; i++) g.related[i] = *ch[i].cpid ? cl_related_set(ch[i].cpid) : NULL;
  json_t *ctx = cl_cpids("pods", "app=web", "Pod");
  int wrong = 0;
  for (int s = 0; s < n; s++) {
    rc_change_t *c = &ch[s];
    c->own = c->marked = c->untraced = c->alone = c->wrong = 0;
    const char *name;
    json_t *v;
    json_object_foreach(c->pods, name, v) {
      const char *cpid = json_string_value(json_object_get(ctx, name));
      judge(ch, n, s, &g, name, cpid ? cpid : "");
    }
    fprintf(stderr,
            "# change to %d replicas (root %s): %zu new Pods: %d traced to it, %d under a root "
            "marked causeUnknown, %d without a context and %d under a root of their own "
            "(create failed open), %d wrong\n",
            c->replicas, *c->cpid ? c->cpid : "none: failed open", json_object_size(c->pods),
            c->own, c->marked, c->untraced, c->alone, c->wrong);
    wrong += c->wrong;
  }
  fprintf(stderr, "# %zu CPIDs carry a causeUnknown mark\n", json_object_size(g.marked));
  if (wrong) replicaset_writes(&g);
  for (int i = 0; i < n; i++) json_decref(g.related[i]);
  json_decref(g.marked);
  json_decref(g.spans);
  json_decref(ctx);
  return wrong;
}
