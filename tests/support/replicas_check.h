/*
 * replicas_check.h - what the webhook replica lab tests
 * (tests/webhook/test_replicas_lab.c) share on top of cascade_lab.h: a
 * person's writes through the second API server with plain kubectl, the
 * replicas' and the API servers' metrics, and the one property every change
 * made while replicas restart or hang must keep: each of a change's new Pods
 * is under the change's own root, or under a root the webhook marked
 * causeUnknown, or carries no context at all or a root made for the Pod alone
 * (its create failed open, its binding found no context), and never under
 * another change's root only, nor under a later change's.
 */
#ifndef RIPPLE_TESTS_REPLICAS_CHECK_H
#define RIPPLE_TESTS_REPLICAS_CHECK_H

#include <jansson.h>

#include "cascade_lab.h"

/* ---- the second API server --------------------------------------------------- */

/* Its kubeconfig ($RIPPLE_LAB_KUBECONFIG2, else the lab's kubeconfig-2);
 * NULL when the lab has one API server only. */
const char *rc_kubeconfig2(void);
/* kubectl on the second API server in cl.ns; its output and warnings into
 * *out (the caller's). Fails the test unless it exits 0. */
void rc_kubectl2(char **out, const char *args);
/* The CPID of the "ripple: cpid X" warning in out: 1, or 0 and "" when there
 * is none (the write failed open: no replica answered in time). */
int rc_warning_cpid(const char *out, char cpid[CL_CPID]);
/* Does a dry-run write through the second API server come back annotated?
 * (For cl_wait: each API server learns of a registration from its own watch.) */
int rc_second_calls_webhook(void *ud);

/* ---- metrics ------------------------------------------------------------------- */

/* The sum of metric name over the lines of Prometheus text whose labels
 * contain has (NULL: every line of it). */
double rc_prom_sum(const char *text, const char *name, const char *has);
/* Metric name (summed over its labels) on replica k's /metrics; -1 when the
 * replica does not answer. Never ask a paused replica: that waits 10 s. */
double rc_replica_metric(const whlab_t *l, int k, const char *name);
/* The running replica other than skip (-1: none skipped) whose gauge
 * ripple_webhook_decider is 1; -1 when none is. */
int rc_decider(const whlab_t *l, int skip);
/* ripple_webhook_cause_unknown_total summed over the replicas that run,
 * skip (a paused one) left out. */
double rc_cause_unknown(const whlab_t *l, int skip);

/* This test's webhook calls as both API servers count them (their /metrics
 * through the kube client), summed: apiserver_admission_webhook_* of the
 * registration cl.name. */
typedef struct rc_admission {
  double calls;     /* admission_duration_seconds_count */
  double seconds;   /* admission_duration_seconds_sum */
  double slow;      /* calls that took longer than 0.5 s (histogram) */
  double not_ok;    /* request_total with a code other than 200 */
  double fail_open; /* fail_open_count: admitted unchanged, the webhook failed */
} rc_admission_t;
void rc_admission(rc_admission_t *out);
/* One line, "# <what>: ...", of after - before. */
void rc_admission_print(const char *what, const rc_admission_t *before,
                        const rc_admission_t *after);

/* ---- changes and their Pods ---------------------------------------------------- */

/* One person's change of the Deployment "web" and what became of its Pods. */
typedef struct rc_change {
  json_t *pods; /* {name: true} of the Pods it added */
  int replicas;
  /* rc_check's verdicts on those Pods. */
  int own, marked, untraced, alone, wrong;
  char cpid[CL_CPID]; /* its root; "" when it failed open (no warning) */
} rc_change_t;

/* The Pods of Deployment web not in *seen (a new object of names), which then
 * holds every Pod. */
json_t *rc_new_pods(json_t *seen);
/* Wait (at most 120 s) until "web" has c->replicas ready, calling tick(ud)
 * (when not NULL) at every poll; c's Pods are the ones not in *seen, which
 * then holds every Pod. */
void rc_settle(rc_change_t *c, json_t *seen, void (*tick)(void *), void *ud);
/* Classify the Pods of ch[0..n-1] (n in time order) by their contexts and the
 * trace server's graph, print one line per change and the evidence of every
 * wrong one (origins, merges on the way, spans); the number of wrong Pods. */
int rc_check(rc_change_t *ch, int n);
void rc_changes_free(rc_change_t *ch, int n);

#endif
