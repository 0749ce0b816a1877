/*
 * wh_lab.h - what the webhook's and the kubectl plugin's lab tests share: the
 * trace server and the webhook as real processes on free loopback ports, and
 * the webhook's registration for one namespace (failurePolicy Ignore, by
 * loopback URL, as the lab's network rule requires).
 */
#ifndef RIPPLE_TESTS_WH_LAB_H
#define RIPPLE_TESTS_WH_LAB_H

#include <sys/types.h>

#include "ripple/kube.h"

typedef struct whlab_proc {
  pid_t pid;
  unsigned port;
  char log[256];
} whlab_proc_t;

typedef struct whlab {
  whlab_proc_t server, webhook;
  char dir[64];   /* logs and the trace database */
  char trace[64]; /* the trace server's URL */
  char name[64];  /* the registration's name, "" when none */
} whlab_t;

/* Start ripple-server and ripple-webhook ($RIPPLE_SERVER_BIN,
 * $RIPPLE_WEBHOOK_BIN) with the lab's webhook certificate, and wait until the
 * webhook's informers have synced. Fails the test if either does not start. */
void whlab_start(whlab_t *l);
/* Run argv with its stderr to p->log and learn its port from its
 * "event=listening" log line. */
void whlab_spawn(whlab_proc_t *p, char *const argv[]);
/* SIGKILL one process (a no-op when it is not running). */
void whlab_kill(whlab_proc_t *p);
/* Register the webhook for namespace ns only, under name (webhook/deploy/
 * registration.sh, the one registration), and wait until a dry-run write in ns
 * comes back annotated. */
void whlab_register(whlab_t *l, ripple_kube_client_t *kc, const char *name, const char *ns);
/* Does a dry-run Service create in ns come back with the webhook's context? */
int whlab_annotated(ripple_kube_client_t *kc, const char *ns);
/* Remove the registration (if any). */
void whlab_unregister(whlab_t *l, ripple_kube_client_t *kc);
/* GET path on the webhook over HTTPS; the HTTP status, 0 when unreachable. */
long whlab_webhook_get(const whlab_t *l, const char *path, char **body);

#endif
