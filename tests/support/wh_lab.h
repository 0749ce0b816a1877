/*
 * wh_lab.h - what the webhook's, the guard's and the kubectl plugin's lab
 * tests share: the trace server and the webhook as real processes on free
 * loopback ports, a namespace of the test's own, the webhook's registration
 * for that namespace only (failurePolicy Ignore, by loopback URL, as the
 * lab's network rule requires), the contexts objects carry and the trace
 * server's answers.
 *
 * A test begins with whlab_begin() (or whlab_begin_cluster() and the rest by
 * hand), ends a passing run with whlab_unregister(), whlab_stop() of the
 * webhook and whlab_ns_delete(), and has whlab_end() in its cmocka teardown
 * for whatever a failed run left. The tests run one at a time (RUN_SERIAL):
 * one whlab_t per process.
 */
#ifndef RIPPLE_TESTS_WH_LAB_H
#define RIPPLE_TESTS_WH_LAB_H

#include <jansson.h>
#include <sys/types.h>

#include "ripple/kube.h"
#include "ripplex/sbuf.h"

typedef struct whlab_proc {
  pid_t pid;
  unsigned port;
  char log[256];
} whlab_proc_t;

/* Most webhook replicas a test may start (whlab_t.replicas). */
#define WHLAB_REPLICAS_MAX 8

typedef struct whlab {
  /* webhook: the one webhook; with replicas > 1 not a process (pid -1) but the
   * address the API server calls, lbproxy's port (wh_replicas.c). */
  whlab_proc_t server, webhook;
  /* Set before whlab_start: 0 or 1 is one webhook process registered by its
   * own port; N > 1 starts N replicas behind lbproxy (tests/support/lbproxy.c,
   * $RIPPLE_LBPROXY_BIN), a Service of N endpoints, and registers the proxy. */
  int replicas;
  /* Replicas without --decider-lease: each decides from its own memory, as
   * before issue 25 (to show what the decider prevents). */
  int no_decider;
  whlab_proc_t webhooks[WHLAB_REPLICAS_MAX]; /* the replicas (pid -1 when stopped) */
  int unready[WHLAB_REPLICAS_MAX];           /* running but out of the Service */
  whlab_proc_t lb;                           /* lbproxy */
  int restarts;                              /* replica restarts so far (log names) */
  char dir[64];                              /* logs and the trace database */
  char trace[64];                            /* the trace server's URL */
  char name[64];                             /* the registration's name, "" when none */
  ripple_kube_client_t *kc; /* the test's client (whlab_begin_cluster), NULL after whlab_end */
  char ns[64];              /* the test's namespace, "" when none or deleted */
  /* More options for the trace server and the webhook, NULL-terminated (set
   * before whlab_start). */
  const char *server_args[8], *webhook_args[8];
} whlab_t;

/* A client on $KUBECONFIG, the processes of l killed at exit too (no process
 * may outlive a failed test), and a fresh namespace "<ns_prefix>-<random>".
 * Clears l first. */
void whlab_begin_cluster(whlab_t *l, const char *ns_prefix);
/* whlab_begin_cluster(), whlab_start() and whlab_register(l, reg_prefix). */
void whlab_begin(whlab_t *l, const char *ns_prefix, const char *reg_prefix);
/* For a cmocka teardown, whatever the test left: the registration, the
 * namespace (unless "", without waiting, errors ignored), both processes
 * (SIGKILL), the client. */
void whlab_end(whlab_t *l);

/* Start ripple-server and ripple-webhook ($RIPPLE_SERVER_BIN,
 * $RIPPLE_WEBHOOK_BIN) with the lab's webhook certificate, and wait until the
 * webhook's informers have synced. Fails the test if either does not start. */
void whlab_start(whlab_t *l);
/* Run argv with its stderr to p->log and learn its port from its
 * "event=listening" log line. */
void whlab_spawn(whlab_proc_t *p, char *const argv[]);
/* argv's standard output appended to out; fails the test unless it exits 0
 * having printed something. */
void whlab_capture(char *const argv[], sbuf_t *out);
/* SIGKILL one process (a no-op when it is not running). */
void whlab_kill(whlab_proc_t *p);
/* SIGTERM one process; it must exit with status 0 (fails the test otherwise,
 * and when it is not running). */
void whlab_stop(whlab_proc_t *p);
/* Register the webhook for l->ns only, as "<prefix>-<random>" (webhook/deploy/
 * registration.sh, the one registration), and wait until a dry-run write in
 * l->ns comes back annotated. */
void whlab_register(whlab_t *l, const char *prefix);
/* A dry-run Service create in ns (nothing stored, nothing traced): 1 with
 * the object the API server returned in *out (the caller's), 0 when the
 * create failed. */
int whlab_probe(ripple_kube_client_t *kc, const char *ns, json_t **out);
/* Does a dry-run Service create in ns come back with the webhook's context? */
int whlab_annotated(ripple_kube_client_t *kc, const char *ns);
/* Remove the registration (if any). */
void whlab_unregister(whlab_t *l);
/* Delete l->ns (the call must succeed; it does not wait) and forget it. */
void whlab_ns_delete(whlab_t *l);
/* GET path on the webhook over HTTPS; the HTTP status, 0 when unreachable.
 * With replicas, through lbproxy: some replica answers. */
long whlab_webhook_get(const whlab_t *l, const char *path, char **body);
/* The same on 127.0.0.1:port (one replica). */
long whlab_get_port(unsigned port, const char *path, char **body);
/* POST body (JSON) to path on the lab's API server as user, and also as
 * group when not NULL (Impersonate-User/-Group through the admin's
 * credentials: a person or a ServiceAccount without making one). The HTTP
 * status, 0 when unreachable; the answer appended to out. */
long whlab_post_as(const char *user, const char *group, const char *path, const char *body,
                   sbuf_t *out);
/* The lines of the log at path that contain what (0 when it cannot be read). */
int whlab_count_in_log(const char *path, const char *what);

/* ---- webhook replicas behind lbproxy (wh_replicas.c) ---------------------------- */

/* Start l->replicas webhook processes with argv (argv[2], the listen address,
 * is 127.0.0.1:0), wait until each is ready, then lbproxy in front of them;
 * l->webhook.port becomes the proxy's. Called by whlab_start. */
void whlab_replicas_start(whlab_t *l, char **argv);
/* Replica k out of the Service (lbproxy's backends) and SIGTERM; it must exit 0. */
void whlab_replica_stop(whlab_t *l, int k);
/* SIGSTOP / SIGCONT replica k: hung, not gone (it stays a backend). */
void whlab_replica_pause(whlab_t *l, int k);
void whlab_replica_resume(whlab_t *l, int k);
/* Replica k out of the Service (lbproxy's backends), its process left as it
 * is: what the endpoints controller does once a readiness probe has failed
 * often enough. Connections already open stay where they are. */
void whlab_replica_unready(whlab_t *l, int k);
/* A rolling restart of replica k: a new process on a new port, ready, in the
 * Service in place of the old one, then the old one SIGTERMed (exit 0). */
void whlab_replica_restart(whlab_t *l, int k);
/* Kill every replica and lbproxy (SIGKILL); for whlab_end. */
void whlab_replicas_kill(whlab_t *l);

/* ---- objects and traces ------------------------------------------------------ */

/* resource/name in l->ns; fails the test unless it can be read. */
json_t *whlab_get(whlab_t *l, const char *resource, const char *name);
/* Create o (taken) in l->ns; fails the test unless the create succeeds. */
void whlab_create(whlab_t *l, const char *resource, json_t *o);
/* A merge patch of resource/name in l->ns; fails the test unless it succeeds. */
void whlab_patch(whlab_t *l, const char *resource, const char *name, const char *patch);
/* A fresh root CPID, lower case, into out (RIPPLE_CPID_STRLEN + 1 bytes). */
void whlab_new_cpid(char *out);
/* The CPID of obj's context under kind's annotation key into out
 * (RIPPLE_CPID_STRLEN + 1 bytes); 0 when it has none (or a malformed one). */
int whlab_obj_cpid(const json_t *obj, const char *kind, char *out);
/* GET /v1/cpids/{cpid}/{what} on the trace server; fails the test unless 200. */
json_t *whlab_trace(const whlab_t *l, const char *cpid, const char *what);

#endif
