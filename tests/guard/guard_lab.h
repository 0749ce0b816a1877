/*
 * guard_lab.h - ripple-guard beside the webhook in lab tests: start it on a
 * free loopback port for a registration, read its metrics, read the API
 * server's admission metrics, see whether the registration carries the
 * guard's condition and which caBundle, register the webhook disabled (as a
 * fresh install does), read the order of the guard's log lines. Builds on
 * tests/support/wh_lab.h.
 *
 * Memory: nothing returned needs freeing; the caller owns what it passes.
 */
#ifndef RIPPLE_TESTS_GUARD_LAB_H
#define RIPPLE_TESTS_GUARD_LAB_H

#include "ripple/kube.h"
#include "wh_lab.h"

/* Start $RIPPLE_GUARD_BIN for registration name, its log in l->dir/guard.log,
 * with the given extra arguments (NULL-terminated, may be NULL). */
void glab_start(whlab_proc_t *g, const whlab_t *l, const char *name, char *const extra[]);
/* A metric of the guard's /metrics; -1 when absent or unreachable. */
double glab_metric(const whlab_proc_t *g, const char *name);
/* The sum of an API server metric's series whose label name="webhook" (0 when
 * there is none: counters appear at their first increment). */
double glab_apiserver_metric(const char *metric, const char *webhook);
/* 1 when every webhook of registration name has the guard's condition, 0
 * when none has, -1 when it cannot be read. */
int glab_reg_off(ripple_kube_client_t *kc, const char *name);
/* The first webhook's caBundle (base64, as stored) of registration name:
 * malloc'd, "" when it has none, NULL when it cannot be read. */
char *glab_reg_ca(ripple_kube_client_t *kc, const char *name);
/* Register the webhook for l->ns as name (l->name), as a chart's fresh
 * install does: webhook/deploy/registration.sh's registration with the
 * guard's condition already on every webhook and, when ca_file is NULL, no
 * caBundle (else ca_file's), so the API server never calls the webhook until
 * a guard put the CA on and took the condition off. Does not wait. */
void glab_register_disabled(whlab_t *l, const char *name, const char *ca_file);
/* A file's content in base64 (as a caBundle holds it): malloc'd. */
char *glab_b64_file(const char *path);
/* Lines of the guard's log holding event: how many, and the index of the
 * first (-1 when none) in *first. */
int glab_log_count(const whlab_proc_t *g, const char *event, int *first);

#endif
