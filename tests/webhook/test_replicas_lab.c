/*
 * test_replicas_lab.c - the webhook as a real control plane runs it: several
 * replicas behind a Service (lbproxy, tests/support/wh_replicas.c), called
 * by two API servers on one etcd (`lab/lab up --apiservers 2`).
 *
 * A person writes through the second API server with plain kubectl: creates a
 * Deployment of 10 replicas and scales it five times, 10 -> 12 -> ... -> 20,
 * each time until every replica is ready. The controllers write through the
 * first, so consecutive writes of one cascade reach different replicas. Each
 * write's root CPID comes from the webhook's admission warning ("ripple: cpid
 * X", which kubectl prints).
 *
 * Then the trace server must put each change's own Pods under its root and
 * under no later change's: the bindings of the Pods a change made (by name)
 * in its trace and in no later root's, and exactly its own number of Pod
 * creates (10 for the creation, 2 per scale) in its trace but in no later
 * root's. Not "in no other root's trace": the ReplicaSet's context merges
 * each scale's root with the one it had (the CPID paper's merge), so a root's
 * related CPIDs include every later scale's, and the creation's trace holds
 * every Pod; that is the method, not a fault. A replica that did not admit a
 * scale leaves the scale's Pods under an earlier change: they are missing
 * from the scale's own trace.
 *
 * Two more tests change the replicas under the same kind of cascade
 * (tests/support/replicas_check.h holds the check): a rolling update of the
 * webhook (each replica restarted in turn, twice while a scale's cascade
 * runs) during ten scales, and one replica hung (SIGSTOP), the decider or a
 * follower, taken out of the Service after the chart's readiness period, while
 * the Deployment is scaled four times. Whatever the replicas do, a new Pod
 * must be under its own change's root or under a root marked causeUnknown (or
 * carry no context or a root of its own, when its create failed open), never only under another
 * change's root nor under a later one's; and once a new decider has taken over
 * from a hung one, scales are traced to their roots again. What it cost (Pods
 * traced, marked, fail-opens, the API servers' webhook latency, writes the
 * replicas counted as cause unknown) is printed, not asserted.
 *
 * It needs a lab with two API servers ($RIPPLE_LAB_KUBECONFIG2, which
 * `lab/lab env` prints then); without one it exits 77, which CTest reports as
 * skipped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replicas_check.h"

#define REPLICAS 3 /* webhook replicas; $RIPPLE_TEST_WEBHOOK_REPLICAS for others */
#define SCALES 5
#define FIRST 10 /* the Deployment's replicas at its creation */
#define STEP 2

/* The CPID of the "ripple: cpid X" warning kubectl printed; fails without one. */
static void warning_cpid(const char *out, char cpid[CL_CPID]) {
  if (!rc_warning_cpid(out, cpid)) fail_msg("no ripple warning in: %s", out);
}

/* One person's change: its root, the Pods it made, and what its trace holds. */
typedef struct change {
  char cpid[CL_CPID];
  int replicas;
  json_t *pods;     /* {name: true} of its new Pods */
  json_t *creates;  /* {span_id: true} of the Pod creates in its trace */
  json_t *bindings; /* {pod name: true} of the bindings in its trace */
} change_t;

/* Wait until the Deployment has c->replicas ready; its new Pods are the ones
 * not in *seen, which then holds every Pod. */
static void settle(change_t *c, json_t *seen) {
  cl_wait_fields("deployments", "web", c->replicas, CL_READY_APPS, 120000);
  c->pods = rc_new_pods(seen);
}

/* ---- what the trace server holds -------------------------------------------- */

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "# PROBLEM: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  problems++;
}

/* The Pod creates and bindings in c's trace. */
static void load_trace(change_t *c) {
  json_t *t = whlab_trace(&cl, c->cpid, "spans");
  c->creates = json_object();
  c->bindings = json_object();
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(t, "spans"), i, s) {
    const char *name = json_string_value(json_object_get(s, "name"));
    if (!strcmp(name, "create pods"))
      json_object_set_new(c->creates, json_string_value(json_object_get(s, "span_id")),
                          json_true());
    if (!strcmp(name, "create pods/binding"))
      json_object_set_new(c->bindings, cl_attr(s, "name"), json_true());
  }
  json_decref(t);
}

/* Change k of ch[0..n-1]: its Pods in its trace and in no later one's, and
 * want Pod creates that no later trace has. */
static void check_change(const change_t *ch, int n, int k, size_t want) {
  const change_t *c = &ch[k];
  const char *key;
  json_t *v;
  json_object_foreach(c->pods, key, v) {
    if (!json_object_get(c->bindings, key))
      problem("Pod %s of the change to %d replicas is not in its trace", key, c->replicas);
    for (int j = k + 1; j < n; j++)
      if (json_object_get(ch[j].bindings, key))
        problem("Pod %s of the change to %d replicas is in the later change's to %d", key,
                c->replicas, ch[j].replicas);
  }
  size_t own = 0;
  json_object_foreach(c->creates, key, v) {
    int later = 0;
    for (int j = k + 1; j < n && !later; j++) later = json_object_get(ch[j].creates, key) != NULL;
    own += !later;
  }
  if (own != want)
    problem("root %s (to %d replicas): %zu Pod creates of its own in its trace, want %zu", c->cpid,
            c->replicas, own, want);
  fprintf(stderr, "# root %s (to %d replicas): %zu Pod creates in its trace, %zu of its own\n",
          c->cpid, c->replicas, json_object_size(c->creates), own);
}

/* On failure, for whoever reads the log: each root's merges, as
 * "merged <- sources (object)", and which CPIDs its Pod creates carry. */
static void dump_root(const change_t *c) {
  json_t *m = whlab_trace(&cl, c->cpid, "mergelogs"), *t = whlab_trace(&cl, c->cpid, "spans");
  fprintf(stderr, "# root %s (to %d replicas):\n", c->cpid, c->replicas);
  size_t i;
  json_t *ml;
  json_array_foreach(json_object_get(m, "mergelogs"), i, ml) {
    char *src = json_dumps(json_object_get(ml, "sources"), JSON_COMPACT);
    const json_t *o = json_object_get(ml, "object");
    fprintf(stderr, "#   merge %.8s <- %s (%s %s) by %s\n",
            json_string_value(json_object_get(ml, "cpid")), src ? src : "?",
            lab_str(o, "kind") ? lab_str(o, "kind") : "",
            lab_str(o, "name") ? lab_str(o, "name") : "",
            lab_str(ml, "component") ? lab_str(ml, "component") : "");
    free(src);
  }
  json_array_foreach(json_object_get(t, "spans"), i, ml) {
    const char *name = json_string_value(json_object_get(ml, "name"));
    if (strcmp(name, "create pods") != 0 && strcmp(name, "update replicasets") != 0 &&
        strcmp(name, "update deployments/scale") != 0)
      continue;
    fprintf(stderr, "#   span %s %s cpid %.8s\n", name, cl_attr(ml, "name"),
            json_string_value(json_object_get(ml, "cpid")));
  }
  json_decref(m);
  json_decref(t);
}

/* ---- the test ------------------------------------------------------------------ */

static void scales_through_the_second_apiserver(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "t-replicas");
  const char *r = getenv("RIPPLE_TEST_WEBHOOK_REPLICAS");
  cl.replicas = r ? (int)strtol(r, NULL, 10) : REPLICAS;
  if (cl.replicas < 1 || cl.replicas > WHLAB_REPLICAS_MAX)
    fail_msg("replicas: 1 to %d", WHLAB_REPLICAS_MAX);
  /* RIPPLE_TEST_NO_DECIDER=1: replicas that share nothing, to see the bug. */
  cl.no_decider = getenv("RIPPLE_TEST_NO_DECIDER") != NULL;
  whlab_start(&cl);
  whlab_register(&cl, "ripple-repl");
  cl_wait(rc_second_calls_webhook, NULL, 60000, "the second API server to call the webhook");

  change_t ch[1 + SCALES] = {{.replicas = FIRST}};
  json_t *seen = json_object();
  char *out = NULL, args[128];
  snprintf(args, sizeof args, "create deployment web --image=%s:1 --replicas=%d", CL_IMAGE, FIRST);
  rc_kubectl2(&out, args);
  warning_cpid(out, ch[0].cpid);
  free(out);
  settle(&ch[0], seen);
  for (int s = 1; s <= SCALES; s++) {
    ch[s].replicas = FIRST + STEP * s;
    snprintf(args, sizeof args, "scale deployment web --replicas=%d", ch[s].replicas);
    rc_kubectl2(&out, args);
    warning_cpid(out, ch[s].cpid);
    free(out);
    settle(&ch[s], seen);
    fprintf(stderr, "# scale to %d: root %s\n", ch[s].replicas, ch[s].cpid);
  }

  cl_spans_settle();
  for (int s = 0; s <= SCALES; s++) load_trace(&ch[s]);
  for (int s = 0; s <= SCALES; s++) check_change(ch, 1 + SCALES, s, s ? STEP : FIRST);
  if (problems) {
    for (int s = 0; s <= SCALES; s++) dump_root(&ch[s]);
    json_t *all = cl_all_spans();
    cl_dump_spans("every span", all);
    json_decref(all);
    fail_msg("%d problems with %d webhook replicas (above): a change's Pods under another one",
             problems, cl.replicas);
  }
  for (int s = 0; s <= SCALES; s++) {
    json_decref(ch[s].pods);
    json_decref(ch[s].creates);
    json_decref(ch[s].bindings);
  }
  json_decref(seen);
  whlab_unregister(&cl);
  whlab_ns_delete(&cl);
}

/* ---- a rolling update of the webhook, and a hung replica ------------------------- */

#define ROLL_SCALES 10 /* scales while the replicas restart one at a time */
#define HUNG_SCALES 5  /* scales with one replica hung; the last three after the takeover */
/* The chart's readinessProbe: periodSeconds 2, failureThreshold 3 (the
 * default): how long the endpoints controller keeps a hung replica. */
#define READINESS_S 6.0

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The wall clock, to compare with the spans' times in the evidence. */
static const char *utc_now(void) {
  static char buf[40];
  struct timespec t;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &t);
  gmtime_r(&t.tv_sec, &tm);
  size_t n = strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%03ldZ", t.tv_nsec / 1000000);
  return buf;
}

/* The test's replicas, registered, called by both API servers; with
 * shutdown_ms, --shutdown-delay-ms as the chart sets it. */
static void start_replicas(const char *ns_prefix, const char *shutdown_ms) {
  whlab_begin_cluster(&cl, ns_prefix);
  cl.replicas = REPLICAS;
  if (shutdown_ms) {
    cl.webhook_args[0] = "--shutdown-delay-ms";
    cl.webhook_args[1] = shutdown_ms;
  }
  whlab_start(&cl);
  whlab_register(&cl, "ripple-repl");
  cl_wait(rc_second_calls_webhook, NULL, 60000, "the second API server to call the webhook");
}

/* A person's write of "web" through the second API server: create (c is the
 * first change) or scale to c->replicas. Its root from the warning, "" when
 * the write failed open. */
static void person_writes(rc_change_t *c, int create) {
  char args[160], *out = NULL;
  if (create)
    snprintf(args, sizeof args, "create deployment web --image=%s:1 --replicas=%d", CL_IMAGE,
             c->replicas);
  else
    snprintf(args, sizeof args, "scale deployment web --replicas=%d", c->replicas);
  rc_kubectl2(&out, args);
  if (!rc_warning_cpid(out, c->cpid))
    fprintf(stderr, "# the change to %d got no warning: it failed open\n", c->replicas);
  free(out);
}

/* Restart replica k as a rolling update does; what it had counted as cause
 * unknown (a new process counts from 0; writes it decides during its
 * shutdown delay are not in it). */
static double roll(int k, const char *when) {
  double n = rc_replica_metric(&cl, k, "ripple_webhook_cause_unknown_total");
  fprintf(stderr, "# restarting replica %d %s (decider now: replica %d)\n", k, when,
          rc_decider(&cl, -1));
  whlab_replica_restart(&cl, k);
  return n > 0 ? n : 0;
}

static void finish(rc_change_t *ch, int n, json_t *seen) {
  rc_changes_free(ch, n);
  json_decref(seen);
  whlab_unregister(&cl);
  whlab_ns_delete(&cl);
}

/* Scales while the replicas restart one at a time, as `helm upgrade` rolls
 * them with the chart's shutdown delay ($RIPPLE_TEST_SHUTDOWN_DELAY_MS, 5000):
 * replica 0 while the third scale's cascade runs, replica 1 between the
 * sixth and the seventh, replica 2 while the ninth runs. */
static void rolling_update_of_the_webhook(void **state) {
  (void)state;
  const char *delay = getenv("RIPPLE_TEST_SHUTDOWN_DELAY_MS");
  start_replicas("t-roll", delay ? delay : "5000");
  rc_change_t ch[1 + ROLL_SCALES] = {{.replicas = FIRST}};
  json_t *seen = json_object();
  double unknown = 0;
  person_writes(&ch[0], 1);
  rc_settle(&ch[0], seen, NULL, NULL);
  for (int s = 1, k = 0; s <= ROLL_SCALES; s++) {
    ch[s].replicas = FIRST + STEP * s;
    person_writes(&ch[s], 0);
    if (s % 3 == 0 && s != 6) unknown += roll(k++, "while its cascade runs");
    rc_settle(&ch[s], seen, NULL, NULL);
    if (s == 6) unknown += roll(k++, "between two scales");
  }
  int wrong = rc_check(ch, 1 + ROLL_SCALES);
  int own = 0, marked = 0, untraced = 0;
  for (int s = 1; s <= ROLL_SCALES; s++) {
    own += ch[s].own;
    marked += ch[s].marked;
    untraced += ch[s].untraced + ch[s].alone;
  }
  unknown += rc_cause_unknown(&cl, -1);
  fprintf(stderr,
          "# rolling update: of the scales' Pods %d traced to their scale, %d under a marked "
          "root, %d without a context; the replicas counted %.0f writes as cause unknown\n",
          own, marked, untraced, unknown);
  if (wrong) fail_msg("%d Pods under a change that did not cause them (above)", wrong);
  finish(ch, 1 + ROLL_SCALES, seen);
}

/* What the hung-replica tests watch while they wait: the endpoints
 * controller's part (the replica out of the Service after READINESS_S), the
 * takeover, and the API servers' fail-open count. */
typedef struct hang {
  int k;                               /* the paused replica */
  double t0;                           /* when it was paused */
  double out_at, took_over;            /* seconds after t0; 0 before */
  double polled;                       /* last poll of the metrics, after t0 */
  double fail_open;                    /* the API servers' count at the last poll */
  double fail_open_from, fail_open_to; /* the polls around its last growth */
} hang_t;

static void hang_tick(void *ud) {
  hang_t *h = ud;
  double t = now_s() - h->t0;
  if (!h->out_at && t >= READINESS_S) {
    whlab_replica_unready(&cl, h->k);
    h->out_at = t;
    fprintf(stderr, "# %.1f s: replica %d out of the Service\n", t, h->k);
  }
  if (t - h->polled < 1) return;
  double prev = h->polled;
  h->polled = t;
  int d = h->took_over ? -1 : rc_decider(&cl, h->k);
  if (d >= 0) {
    h->took_over = t;
    fprintf(stderr, "# %.1f s: replica %d decides\n", t, d);
  }
  rc_admission_t a;
  rc_admission(&a);
  if (a.fail_open > h->fail_open) {
    h->fail_open = a.fail_open;
    h->fail_open_from = prev;
    h->fail_open_to = t;
  }
}

/* Out of the Service, another replica deciding, and 2 s more: what a write
 * made now meets is what the cluster settles into. */
static int hang_settled(void *ud) {
  hang_t *h = ud;
  hang_tick(h);
  return h->out_at && h->took_over && now_s() - h->t0 >= h->out_at + 2;
}

/* Print what the hang cost, resume the replica; cause unknown counted since
 * unknown0. */
static void hang_end(const hang_t *h, const rc_admission_t *before, double unknown0) {
  rc_admission_t after;
  rc_admission(&after);
  double hung = now_s() - h->t0;
  whlab_replica_resume(&cl, h->k);
  fprintf(stderr, "# replica %d resumed at %s\n", h->k, utc_now());
  char what[160];
  snprintf(what, sizeof what, "while replica %d was hung (%.1f s; out of the Service at %.1f s)",
           h->k, hung, h->out_at);
  rc_admission_print(what, before, &after);
  if (h->fail_open_to)
    fprintf(stderr, "# the last fail-open came between %.1f and %.1f s after the pause\n",
            h->fail_open_from, h->fail_open_to);
  fprintf(stderr, "# the replicas counted %.0f writes as cause unknown\n",
          rc_cause_unknown(&cl, -1) - unknown0);
}

/* Whether the settled change to ch->replicas kept liveness: all its Pods
 * traced to its root. A write may still fail open after the takeover, and
 * only one way: an API server reused a keep-alive connection it had opened
 * to the hung replica before it left the Service (Go's transport keeps idle
 * connections per Service host for 90 s, whatever the endpoints say, and a
 * stopped process's kernel still acknowledges them). That is the API
 * server's, not ripple's, so a change whose calls failed open is excused,
 * said so, and not counted as live; one that did not fail open must be
 * whole. */
static int settled_live(const rc_change_t *c, double fail_opens) {
  int whole = *c->cpid && c->own == (int)json_object_size(c->pods);
  if (whole) return 1;
  if (fail_opens > 0) {
    fprintf(stderr,
            "# the change to %d lost its trace to %.0f fail-open(s) on a connection an API "
            "server had kept to the hung replica: excused, not live\n",
            c->replicas, fail_opens);
    return 0;
  }
  fail_msg(
      "the change to %d, made after the takeover, did not fail open and is not traced to "
      "its root (above)",
      c->replicas);
  return 0;
}

/* One replica hung (SIGSTOP), the decider or a follower, while a person
 * scales: correctness all along, and liveness once the cluster has settled
 * around the hung replica (the scales made then are traced to their roots,
 * but for a write the API server failed open; at least one must be whole). */
static void hung_replica(int the_decider) {
  start_replicas(the_decider ? "t-hung-decider" : "t-hung-follower", NULL);
  rc_change_t ch[1 + HUNG_SCALES] = {{.replicas = FIRST}};
  double fail_opens[1 + HUNG_SCALES] = {0};
  json_t *seen = json_object();
  person_writes(&ch[0], 1);
  rc_settle(&ch[0], seen, NULL, NULL);
  int d = rc_decider(&cl, -1);
  assert_true(d >= 0);
  hang_t h = {.k = the_decider ? d : (d + 1) % cl.replicas};
  rc_admission_t before;
  rc_admission(&before);
  double unknown0 = rc_cause_unknown(&cl, -1);
  h.fail_open = before.fail_open;
  h.t0 = now_s();
  whlab_replica_pause(&cl, h.k);
  fprintf(stderr, "# replica %d paused (%s) at %s\n", h.k,
          the_decider ? "the decider" : "a follower", utc_now());
  int settled_from = HUNG_SCALES - 2;
  for (int s = 1; s <= HUNG_SCALES; s++) {
    if (s == settled_from) cl_wait(hang_settled, &h, 60000, "the takeover");
    rc_admission_t a0, a1;
    rc_admission(&a0);
    ch[s].replicas = FIRST + STEP * s;
    person_writes(&ch[s], 0);
    fprintf(stderr, "# %.1f s: scaled to %d\n", now_s() - h.t0, ch[s].replicas);
    rc_settle(&ch[s], seen, hang_tick, &h);
    rc_admission(&a1);
    fail_opens[s] = a1.fail_open - a0.fail_open;
  }
  hang_end(&h, &before, unknown0);
  int wrong = rc_check(ch, 1 + HUNG_SCALES);
  if (wrong) fail_msg("%d Pods under a change that did not cause them (above)", wrong);
  int live = 0;
  for (int s = settled_from; s <= HUNG_SCALES; s++) live += settled_live(&ch[s], fail_opens[s]);
  if (!live) fail_msg("no change made after the takeover was traced whole");
  finish(ch, 1 + HUNG_SCALES, seen);
}

static void hung_decider(void **state) {
  (void)state;
  hung_replica(1);
}

static void hung_follower(void **state) {
  (void)state;
  hung_replica(0);
}

int main(void) {
  if (!rc_kubeconfig2()) {
    fprintf(stderr,
            "test_replicas_lab: skipped: it needs a lab with two API servers "
            "(lab/lab up --apiservers 2; $RIPPLE_LAB_KUBECONFIG2 from lab/lab env)\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(scales_through_the_second_apiserver, cl_teardown),
      cmocka_unit_test_teardown(rolling_update_of_the_webhook, cl_teardown),
      cmocka_unit_test_teardown(hung_decider, cl_teardown),
      cmocka_unit_test_teardown(hung_follower, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
