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

typedef struct whlab {
  whlab_proc_t server, webhook;
  char dir[64];             /* logs and the trace database */
  char trace[64];           /* the trace server's URL */
  char name[64];            /* the registration's name, "" when none */
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
/* SIGTERM one process; it must exit with status 0 (fails the test otherwise). */
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
/* GET path on the webhook over HTTPS; the HTTP status, 0 when unreachable. */
long whlab_webhook_get(const whlab_t *l, const char *path, char **body);

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
