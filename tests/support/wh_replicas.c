/*
 * wh_replicas.c - ripple-webhook as a Deployment of several replicas would run
 * it, for lab tests (wh_lab.h): N processes on their own loopback ports, the
 * same trace server, certificate and options, behind lbproxy, which picks one
 * per connection as kube-proxy does for a Service; the registration names the
 * proxy. Replicas can be stopped, hung (SIGSTOP) and restarted on a new port,
 * as a rolling update moves a Pod, so tests see what replicas that share no
 * memory make of one cascade.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rw_lab.h"
#include "testutil.h"
#include "wh_lab.h"

static int port_ready(void *ud) { return whlab_get_port(*(unsigned *)ud, "/readyz", NULL) == 200; }

/* Start one replica into p, its log "webhook-<k>[.<restart>].log"; wait until
 * its informers have synced. */
static void replica_spawn(whlab_t *l, int k, whlab_proc_t *p, char **argv) {
  if (l->restarts)
    snprintf(p->log, sizeof p->log, "%s/webhook-%d.%d.log", l->dir, k, l->restarts);
  else
    snprintf(p->log, sizeof p->log, "%s/webhook-%d.log", l->dir, k);
  whlab_spawn(p, argv);
  if (!lab_wait(port_ready, &p->port, 60000))
    fail_msg("webhook replica %d's informers did not sync (log %s)", k, p->log);
}

/* lbproxy's backends file: the replicas that run. Written anew and renamed,
 * so the proxy never reads half of it. */
static void write_backends(const whlab_t *l, const char *path) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  assert_non_null(f);
  for (int k = 0; k < l->replicas; k++)
    if (l->webhooks[k].pid > 0 && !l->unready[k]) fprintf(f, "127.0.0.1:%u\n", l->webhooks[k].port);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(rename(tmp, path), 0);
}

int whlab_count_in_log(const char *path, const char *what) {
  FILE *f = fopen(path, "r");
  char line[1024];
  int n = 0;
  while (f && fgets(line, sizeof line, f)) n += strstr(line, what) != NULL;
  if (f) fclose(f);
  return n;
}

typedef struct reloads {
  const char *log;
  int want;
} reloads_t;

static int reloaded(void *ud) {
  const reloads_t *r = ud;
  return whlab_count_in_log(r->log, "event=backends ") >= r->want;
}

/* Tell lbproxy of the replicas that run now, and wait until it has read them:
 * from then on no new connection reaches a replica left out. */
static void update_service(whlab_t *l) {
  char path[300];
  snprintf(path, sizeof path, "%s/backends", l->dir);
  write_backends(l, path);
  reloads_t r = {l->lb.log, whlab_count_in_log(l->lb.log, "event=backends ") + 1};
  kill(l->lb.pid, SIGHUP);
  if (!lab_wait(reloaded, &r, 10000)) fail_msg("lbproxy did not re-read %s", path);
}

/* The replicas' command line, kept for restarts (the strings are the
 * environment's and whlab_t's, which outlive the test). */
static char *saved_argv[40];

/* As the chart runs them: the holder of a Lease in the test's namespace
 * decides, the others forward to it over loopback, where the lab's webhook
 * certificate is valid (docs/webhook.md, "Several replicas"). */
static int add_decider_args(const whlab_t *l, int n) {
  static char lease[160];
  const char *ca = getenv("RIPPLE_LAB_CA");
  if (!ca) fail_msg("RIPPLE_LAB_CA is not set (eval \"$(lab/lab env)\")");
  snprintf(lease, sizeof lease, "%s/ripple-decider", l->ns);
  const char *more[] = {"--decider-lease", lease, "--peer-address", "127.0.0.1", "--peer-ca", ca};
  for (size_t i = 0; i < sizeof more / sizeof more[0] && n < 39; i++)
    saved_argv[n++] = (char *)more[i];
  return n;
}

/* One replica decides: it holds the Lease and has settled (its /metrics
 * gauge ripple_webhook_decider is 1). Before that every replica decides as
 * uncertain, as a freshly installed webhook does for its first second. */
static int one_decides(void *ud) {
  whlab_t *l = ud;
  for (int k = 0; k < l->replicas; k++) {
    char *body = NULL;
    long st = whlab_get_port(l->webhooks[k].port, "/metrics", &body);
    int yes = st == 200 && body && strstr(body, "\nripple_webhook_decider 1\n");
    free(body);
    if (yes) return 1;
  }
  return 0;
}

void whlab_replicas_start(whlab_t *l, char **argv) {
  const char *bin = getenv("RIPPLE_LBPROXY_BIN");
  if (!bin) fail_msg("RIPPLE_LBPROXY_BIN is needed for webhook replicas (ctest sets it)");
  if (l->replicas > WHLAB_REPLICAS_MAX) fail_msg("at most %d replicas", WHLAB_REPLICAS_MAX);
  int n = 0;
  for (; n < 39 && argv[n]; n++) saved_argv[n] = argv[n];
  if (!l->no_decider) n = add_decider_args(l, n);
  saved_argv[n] = NULL;
  for (int k = 0; k < l->replicas; k++) replica_spawn(l, k, &l->webhooks[k], saved_argv);
  if (!l->no_decider && !lab_wait(one_decides, l, 30000))
    fail_msg("no webhook replica became the decider in 30 s (logs %s/webhook-*.log)", l->dir);
  char file[300];
  snprintf(file, sizeof file, "%s/backends", l->dir);
  write_backends(l, file);
  snprintf(l->lb.log, sizeof l->lb.log, "%s/lbproxy.log", l->dir);
  char *lbargv[] = {(char *)bin, "--listen", "127.0.0.1:0", "--backends-file", file, NULL};
  whlab_spawn(&l->lb, lbargv);
  /* What the API server is given; not a process of its own. */
  l->webhook.pid = -1;
  l->webhook.port = l->lb.port;
  snprintf(l->webhook.log, sizeof l->webhook.log, "%s", l->lb.log);
  fprintf(stderr, "# logs: %s %s/webhook-*.log %s; %d replicas behind 127.0.0.1:%u\n",
          l->server.log, l->dir, l->lb.log, l->replicas, l->lb.port);
}

static whlab_proc_t *replica(whlab_t *l, int k) {
  if (k < 0 || k >= l->replicas || l->webhooks[k].pid <= 0)
    fail_msg("webhook replica %d is not running", k);
  return &l->webhooks[k];
}

void whlab_replica_stop(whlab_t *l, int k) {
  whlab_proc_t old = *replica(l, k);
  l->webhooks[k].pid = -1;
  update_service(l);
  kill(old.pid, SIGCONT); /* a paused replica would never see the SIGTERM */
  whlab_stop(&old);
}

void whlab_replica_pause(whlab_t *l, int k) { kill(replica(l, k)->pid, SIGSTOP); }

void whlab_replica_resume(whlab_t *l, int k) { kill(replica(l, k)->pid, SIGCONT); }

void whlab_replica_unready(whlab_t *l, int k) {
  replica(l, k);
  l->unready[k] = 1;
  update_service(l);
}

void whlab_replica_restart(whlab_t *l, int k) {
  whlab_proc_t old = *replica(l, k), fresh = {.pid = -1};
  l->restarts++;
  replica_spawn(l, k, &fresh, saved_argv);
  /* As an endpoint controller would: the new Pod in, the old one out, and
   * only then is the old one told to stop. */
  l->webhooks[k] = fresh;
  l->unready[k] = 0;
  update_service(l);
  kill(old.pid, SIGCONT);
  whlab_stop(&old);
  fprintf(stderr, "# webhook replica %d restarted: port %u -> %u\n", k, old.port, fresh.port);
}

void whlab_replicas_kill(whlab_t *l) {
  for (int k = 0; k < WHLAB_REPLICAS_MAX; k++) whlab_kill(&l->webhooks[k]);
  whlab_kill(&l->lb);
}
