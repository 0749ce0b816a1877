/*
 * test_watch_lab.c - the real ripple-watch binary against the lab: in a
 * namespace of its own, ConfigMaps are created, changed and deleted, and the
 * agent's output must hold exactly those changes, once each: with the agent
 * running throughout and stopped by SIGTERM, and with the agent killed
 * (SIGKILL) in the middle of the changes and restarted from its state dir
 * while more changes are made; and with the API server restarted while the
 * agent was down, so that its resume point is gone and the changes made
 * meanwhile come from a relist (marked relist:true, once each). And
 * --trace-server: changes of objects with a ripple context become spans,
 * sent with --trace-server-token-file's token.
 * And a Deployment with its ReplicaSet and Pods, the agent killed while the
 * controllers work: the records end with exactly the server's objects.
 */
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recv_server.h"
#include "rw_lab.h"
#include "watch_lab.h"

typedef struct lab {
  ripple_kube_client_t *kc;
  const ripple_kube_resource_t *cm;
  char ns[64], dir[128], out[256];
  const char *resources;  /* --resources; NULL: configmaps */
  const char *token_file; /* --trace-server-token-file (with a trace URL); NULL: none */
  /* Every (uid, rv) the client made with an add or an update, one per line
   * "op uid rv"; deletes as "delete uid". */
  json_t *want;
} lab_t;

static pid_t g_agent; /* the running agent, killed if a test fails */

static pid_t agent_start_with(lab_t *l, const char *trace_url) {
  const char *bin = getenv("RIPPLE_WATCH_BIN");
  assert_non_null(bin);
  char state[256], log[256];
  snprintf(state, sizeof state, "%s/state", l->dir);
  snprintf(log, sizeof log, "%s/agent.log", l->dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 1); /* ctest would wait for our stdout's end */
    if (!bin) _exit(127);
    execl(bin, bin, "--resources", l->resources ? l->resources : "configmaps", "--namespace", l->ns,
          "--out", l->out, "--state-dir", state, "--checkpoint-every", "200ms", "--report-every",
          "1s", trace_url ? "--trace-server" : NULL, trace_url,
          l->token_file ? "--trace-server-token-file" : NULL, l->token_file, NULL);
    _exit(127);
  }
  g_agent = pid;
  return pid;
}

static pid_t agent_start(lab_t *l) { return agent_start_with(l, NULL); }

static void agent_stop(pid_t pid, int sig) {
  kill(pid, sig);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  g_agent = 0;
  if (sig == SIGTERM) {
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
}

/* The output's records, parsed (kube-root-ca.crt, made by the controller
 * manager, left out). */
static json_t *records(const lab_t *l) {
  json_t *arr = json_array();
  FILE *f = fopen(l->out, "r");
  if (!f) return arr;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  /* The agent may be in the middle of writing the last line. */
  while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
    json_t *r = json_loads(line, 0, NULL);
    assert_non_null(r);
    if (strcmp(json_string_value(json_object_get(r, "name")), "kube-root-ca.crt") != 0)
      json_array_append(arr, r);
    json_decref(r);
  }
  free(line);
  fclose(f);
  return arr;
}

static int has_name(const lab_t *l, const char *name) {
  json_t *arr = records(l);
  size_t i;
  json_t *r;
  int found = 0;
  json_array_foreach(arr, i, r) found |=
      !strcmp(json_string_value(json_object_get(r, "name")), name);
  json_decref(arr);
  return found;
}

typedef struct waitfor {
  lab_t *l;
  const char *name;
} waitfor_t;
static int cond_name(void *ud) {
  waitfor_t *w = ud;
  return has_name(w->l, w->name);
}

static void want_add(lab_t *l, const char *op, json_t *obj) {
  char k[256];
  snprintf(k, sizeof k, "%s %s %s", op, lab_str(obj, "metadata.uid"),
           lab_str(obj, "metadata.resourceVersion"));
  json_object_set_new(l->want, k, json_true());
}

static void cm_create(lab_t *l, const char *name) {
  json_t *obj = lab_json("{\"metadata\":{\"name\":\"%s\"},\"data\":{\"v\":\"0\"}}", name), *out;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(l->kc, l->cm, l->ns, obj, NULL, &out, &st));
  want_add(l, "add", out);
  json_decref(obj);
  json_decref(out);
}

static void cm_update(lab_t *l, const char *name, int v) {
  char patch[64];
  int n = snprintf(patch, sizeof patch, "{\"data\":{\"v\":\"%d\"}}", v);
  json_t *out;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(l->kc, l->cm, l->ns, name, RIPPLE_KUBE_PATCH_MERGE, patch, (size_t)n,
                               NULL, &out, &st));
  want_add(l, "update", out);
  json_decref(out);
}

static void cm_delete(lab_t *l, const char *name) {
  json_t *obj;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(l->kc, l->cm, l->ns, name, &obj, &st));
  char k[256];
  snprintf(k, sizeof k, "delete %s", lab_str(obj, "metadata.uid"));
  json_object_set_new(l->want, k, json_true());
  json_decref(obj);
  LAB_OK(st, ripple_kube_delete(l->kc, l->cm, l->ns, name, NULL, &st));
}

static void lab_setup(lab_t *l, const char *prefix) {
  memset(l, 0, sizeof *l);
  l->kc = lab_client();
  l->cm = lab_resolve(l->kc, "configmaps");
  lab_ns_new(l->kc, prefix, l->ns, sizeof l->ns);
  snprintf(l->dir, sizeof l->dir, "/tmp/%s", l->ns);
  assert_int_equal(mkdir(l->dir, 0755), 0);
  snprintf(l->out, sizeof l->out, "%s/out.jsonl", l->dir);
  l->want = json_object();
}

static void lab_teardown(lab_t *l) {
  lab_ns_delete(l->kc, l->ns);
  test_rmtree(l->dir);
  json_decref(l->want);
  ripple_kube_client_free(l->kc);
}

/* Waits until the output holds the marker object `name` (created now). */
static void marker(lab_t *l, const char *name) {
  cm_create(l, name);
  waitfor_t w = {l, name};
  assert_true(lab_wait(cond_name, &w, 30000));
}

/* The output's records must be exactly l->want: every (op, uid, rv) once. */
static void check_exact(lab_t *l, int adds, int updates, int deletes) {
  json_t *arr = records(l), *seen = json_object();
  size_t i;
  json_t *r;
  int n[3] = {0};
  json_array_foreach(arr, i, r) {
    const char *op = json_string_value(json_object_get(r, "op"));
    char k[256];
    if (!strcmp(op, "delete"))
      snprintf(k, sizeof k, "delete %s", json_string_value(json_object_get(r, "uid")));
    else
      snprintf(k, sizeof k, "%s %s %s", op, json_string_value(json_object_get(r, "uid")),
               json_string_value(json_object_get(r, "rv")));
    if (json_object_get(seen, k)) fail_msg("record twice: %s", k);
    if (!json_object_get(l->want, k)) fail_msg("record not made by the test: %s", k);
    assert_null(json_object_get(r, "relist"));
    json_object_set_new(seen, k, json_true());
    n[!strcmp(op, "add") ? 0 : !strcmp(op, "update") ? 1 : 2]++;
  }
  const char *k;
  json_t *v;
  json_object_foreach(l->want, k, v) if (!json_object_get(seen, k)) fail_msg("lost: %s", k);
  assert_int_equal(n[0], adds);
  assert_int_equal(n[1], updates);
  assert_int_equal(n[2], deletes);
  json_decref(seen);
  json_decref(arr);
}

static void changes(lab_t *l, const char *prefix, int creates, int updates, int deletes) {
  char name[64];
  for (int i = 0; i < creates; i++) {
    snprintf(name, sizeof name, "%s-%d", prefix, i);
    cm_create(l, name);
  }
  for (int i = 0; i < updates; i++) {
    snprintf(name, sizeof name, "%s-%d", prefix, i % creates);
    cm_update(l, name, i + 1);
  }
  for (int i = 0; i < deletes; i++) {
    snprintf(name, sizeof name, "%s-%d", prefix, creates - 1 - i);
    cm_delete(l, name);
  }
}

static void test_watch_agent_basic(void **state) {
  (void)state;
  lab_t l;
  lab_setup(&l, "rw-watch");
  pid_t pid = agent_start(&l);
  marker(&l, "begin");
  changes(&l, "cm", 20, 30, 7);
  marker(&l, "end");
  agent_stop(pid, SIGTERM);
  check_exact(&l, 22, 30, 7);
  lab_teardown(&l);
}

static void test_watch_agent_sigkill(void **state) {
  (void)state;
  lab_t l;
  lab_setup(&l, "rw-watchk");
  pid_t pid = agent_start(&l);
  marker(&l, "begin");
  changes(&l, "a", 15, 20, 3);
  agent_stop(pid, SIGKILL); /* in the middle: some of these are not written yet */
  changes(&l, "b", 10, 10, 2);
  pid = agent_start(&l);
  changes(&l, "c", 10, 10, 2);
  marker(&l, "mid");
  agent_stop(pid, SIGKILL); /* right after a change was written, before a checkpoint */
  pid = agent_start(&l);
  changes(&l, "d", 5, 5, 5);
  marker(&l, "end");
  agent_stop(pid, SIGTERM);
  check_exact(&l, 15 + 10 + 10 + 5 + 3, 45, 12);
  lab_teardown(&l);
}

/* The objects the records leave, as "name=rv" lines sorted, like
 * wl_list_state's (kube-root-ca.crt left out of both). */
static char *records_state_of(const lab_t *l, const char *resource, int *relists) {
  json_t *arr = records(l), *m = json_object();
  size_t i;
  json_t *r;
  *relists = 0;
  json_array_foreach(arr, i, r) {
    const char *name = json_string_value(json_object_get(r, "name"));
    if (resource && strcmp(json_string_value(json_object_get(r, "resource")), resource) != 0)
      continue;
    /* "end" is made while the restarted agent may still be relisting. */
    if (json_is_true(json_object_get(r, "relist")) && strcmp(name, "end") != 0) ++*relists;
    if (!strcmp(json_string_value(json_object_get(r, "op")), "delete"))
      json_object_del(m, name);
    else
      json_object_set(m, name, json_object_get(r, "rv"));
  }
  char *out = calloc(1, 65536);
  size_t n = 0;
  const char **names = calloc(json_object_size(m) + 1, sizeof *names);
  size_t k = 0;
  const char *key;
  json_t *v;
  json_object_foreach(m, key, v) names[k++] = key;
  for (size_t a = 0; a < k; a++) /* few names: a selection sort */
    for (size_t b = a + 1; b < k; b++)
      if (strcmp(names[b], names[a]) < 0) {
        const char *t = names[a];
        names[a] = names[b], names[b] = t;
      }
  for (size_t a = 0; a < k; a++)
    n += (size_t)snprintf(out + n, 65536 - n, "%s=%s\n", names[a],
                          json_string_value(json_object_get(m, names[a])));
  free(names);
  json_decref(m);
  json_decref(arr);
  return out;
}

static char *records_state(const lab_t *l, int *relists) {
  return records_state_of(l, NULL, relists);
}

static void on_listed(void *ud, json_t *obj) {
  json_t *m = ud;
  if (!obj) {
    json_object_clear(m); /* the list started over */
    return;
  }
  json_object_set(m, lab_str(obj, "metadata.name"),
                  json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* "name=rv" lines, sorted, of a resource's objects in l->ns, from a fresh list. */
static char *server_state(lab_t *l, const char *resource) {
  json_t *m = json_object();
  ripple_kube_list_opts_t lo = {.namespace_ = l->ns};
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_list(l->kc, lab_resolve(l->kc, resource), &lo, on_listed, m, NULL, &st));
  size_t k = 0, n = 0;
  const char **names = calloc(json_object_size(m) + 1, sizeof *names);
  const char *key;
  json_t *v;
  json_object_foreach(m, key, v) names[k++] = key;
  for (size_t a = 0; a < k; a++)
    for (size_t b = a + 1; b < k; b++)
      if (strcmp(names[b], names[a]) < 0) {
        const char *t = names[a];
        names[a] = names[b], names[b] = t;
      }
  char *out = calloc(1, 65536);
  for (size_t a = 0; a < k; a++)
    n += (size_t)snprintf(out + n, 65536 - n, "%s=%s\n", names[a],
                          json_string_value(json_object_get(m, names[a])));
  free(names);
  json_decref(m);
  return out;
}

typedef struct converge {
  lab_t *l;
  const char *resource;
} converge_t;

/* The records leave exactly the server's objects of this resource. */
static int cond_converged(void *ud) {
  converge_t *c = ud;
  int relists;
  char *got = records_state_of(c->l, c->resource, &relists),
       *want = server_state(c->l, c->resource);
  int same = !strcmp(got, want);
  free(got);
  free(want);
  return same;
}

static void assert_converged(lab_t *l, const char *resource) {
  converge_t c = {l, resource};
  if (lab_wait(cond_converged, &c, 30000)) return;
  int relists;
  char *got = records_state_of(l, resource, &relists), *want = server_state(l, resource);
  static char msg[140000];
  snprintf(msg, sizeof msg, "%s: the records leave\n%s\nthe server has\n%s", resource, got, want);
  free(got);
  free(want);
  fail_msg("%s", msg);
}

/* No (op, uid, rv) twice across the whole output. */
static void assert_no_duplicates(const lab_t *l) {
  json_t *arr = records(l), *seen = json_object();
  size_t i;
  json_t *r;
  json_array_foreach(arr, i, r) {
    char k[512];
    snprintf(k, sizeof k, "%s %s %s %s", json_string_value(json_object_get(r, "resource")),
             json_string_value(json_object_get(r, "op")),
             json_string_value(json_object_get(r, "uid")),
             json_string_value(json_object_get(r, "rv")));
    if (json_object_get(seen, k)) fail_msg("record twice: %s", k);
    json_object_set_new(seen, k, json_true());
  }
  json_decref(seen);
  json_decref(arr);
}

static int cond_three_pods(void *ud) {
  converge_t *c = ud;
  char *s = server_state(c->l, "pods");
  int lines = 0;
  for (const char *p = s; *p; p++) lines += *p == '\n';
  free(s);
  return lines == 3;
}

/* A Deployment on the lab's KWOK nodes: the controllers make a ReplicaSet
 * and Pods and keep changing their status; the agent, killed in the middle
 * and restarted, must end with exactly the server's objects of each kind and
 * no record twice. */
static void test_watch_agent_deployment(void **state) {
  (void)state;
  lab_t l;
  lab_setup(&l, "rw-watchd");
  l.resources = "deployments.apps,replicasets.apps,pods";
  pid_t pid = agent_start(&l);
  json_t *d = lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},"
      "\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
      "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":"
      "[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}");
  ripple_kube_status_t st;
  const ripple_kube_resource_t *dep = lab_resolve(l.kc, "deployments.apps");
  LAB_OK(st, ripple_kube_create(l.kc, dep, l.ns, d, NULL, NULL, &st));
  json_decref(d);
  usleep(700 * 1000);
  agent_stop(pid, SIGKILL); /* while the controllers are at work */
  const char *scale = "{\"spec\":{\"replicas\":3}}";
  LAB_OK(st, ripple_kube_patch(l.kc, dep, l.ns, "web", RIPPLE_KUBE_PATCH_MERGE, scale,
                               strlen(scale), NULL, NULL, &st));
  pid = agent_start(&l);
  converge_t three = {&l, "pods"};
  assert_true(lab_wait(cond_three_pods, &three, 30000)); /* a comparison with something */
  assert_converged(&l, "pods");
  assert_converged(&l, "replicasets.apps");
  assert_converged(&l, "deployments.apps");
  LAB_OK(st, ripple_kube_delete(l.kc, dep, l.ns, "web", NULL, &st));
  assert_converged(&l, "deployments.apps");
  assert_converged(&l, "replicasets.apps");
  assert_converged(&l, "pods");
  agent_stop(pid, SIGTERM);
  assert_no_duplicates(&l);
  lab_teardown(&l);
}

static char *list_state(lab_t *l) {
  char *s = wl_list_state(l->kc, l->ns);
  char *p = strstr(s, "kube-root-ca.crt=");
  if (p) {
    char *nl = strchr(p, '\n');
    memmove(p, nl + 1, strlen(nl + 1) + 1);
  }
  return s;
}

static void test_watch_agent_apiserver_restart(void **state) {
  (void)state;
  lab_t l;
  lab_setup(&l, "rw-watchr");
  pid_t pid = agent_start(&l);
  marker(&l, "begin");
  changes(&l, "a", 10, 5, 2);
  marker(&l, "m1");
  agent_stop(pid, SIGTERM);
  /* While the agent is down: 3 created, 3 changed, 2 deleted. */
  changes(&l, "b", 3, 0, 0);
  cm_update(&l, "a-0", 100);
  cm_update(&l, "a-0", 101); /* intermediate versions are not seen after a relist */
  cm_update(&l, "a-1", 100);
  cm_update(&l, "a-2", 100);
  cm_delete(&l, "a-6");
  cm_delete(&l, "a-7");
  wl_lab("restart", "kube-apiserver");
  pid = agent_start(&l);
  marker(&l, "end");
  agent_stop(pid, SIGTERM);
  int relists;
  char *got = records_state(&l, &relists), *want = list_state(&l);
  if (strcmp(got, want) != 0) fail_msg("records leave\n%s\nthe server has\n%s", got, want);
  assert_int_equal(relists, 3 + 3 + 2);
  free(got);
  free(want);
  lab_teardown(&l);
}

static void test_watch_agent_trace(void **state) {
  (void)state;
  recv_server_t *rs = recv_start();
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", recv_port(rs));
  lab_t l;
  lab_setup(&l, "rw-watcht");
  char token_file[300];
  snprintf(token_file, sizeof token_file, "%s/token", l.dir);
  FILE *tf = fopen(token_file, "w");
  assert_non_null(tf);
  fputs("  tok-watch-lab-5e1f9a \r\n", tf); /* trimmed */
  fclose(tf);
  l.token_file = token_file;
  pid_t pid = agent_start_with(&l, url);
  marker(&l, "begin");
  json_t *obj = lab_json(
      "{\"metadata\":{\"name\":\"traced\",\"annotations\":{\"cpid.ripple.dev/configmap\":"
      "\"1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60\"}}}");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(l.kc, l.cm, l.ns, obj, NULL, NULL, &st));
  json_decref(obj);
  cm_update(&l, "traced", 1);
  cm_update(&l, "begin", 1); /* no context: no span */
  marker(&l, "end");
  agent_stop(pid, SIGTERM); /* the shipper delivers what is queued before exiting */
  assert_int_equal(recv_records(rs, "/v1/spans"), 2);
  assert_int_equal(recv_invalid(rs), 0);
  char auth[128];
  recv_last_auth(rs, auth, sizeof auth);
  assert_string_equal(auth, "Bearer tok-watch-lab-5e1f9a");
  recv_stop(rs);
  lab_teardown(&l);
}

static int kill_agent(void **state) {
  (void)state;
  if (g_agent > 0) kill(g_agent, SIGKILL), waitpid(g_agent, NULL, 0);
  g_agent = 0;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_watch_agent_basic, kill_agent),
      cmocka_unit_test_teardown(test_watch_agent_sigkill, kill_agent),
      cmocka_unit_test_teardown(test_watch_agent_trace, kill_agent),
      cmocka_unit_test_teardown(test_watch_agent_deployment, kill_agent),
      cmocka_unit_test_teardown(test_watch_agent_apiserver_restart, kill_agent),
  };
  /* One test restarts the API server, and the others must not see someone
   * else's restart: hold the lab's lock throughout. */
  wl_lock();
  /* RIPPLE_TEST_FILTER=test_watch_agent_sigkill runs one test (cmocka's wildcards work). */
  if (getenv("RIPPLE_TEST_FILTER")) cmocka_set_test_filter(getenv("RIPPLE_TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
