/*
 * users.h - who wrote: a controller (Kubernetes' own, or an operator), or a
 * person or CI system (whose writes are root changes).
 *
 * The decision is a small table of Kubernetes user names (docs/webhook.md
 * lists it): the control plane's fixed identities and every ServiceAccount
 * are controllers, everybody else is a person. --root-user names identities
 * that start roots even though they look like controllers (a CI system's
 * ServiceAccount); --controller-user names controllers that are not
 * ServiceAccounts. The same table gives the short component name that spans
 * carry as their service. --trusted-writer names the controllers whose own
 * contexts the webhook takes (instrumented controllers that propagate them):
 * any other controller's context in its write is ignored (ctxmac.h).
 */
#ifndef RIPPLE_WEBHOOK_USERS_H
#define RIPPLE_WEBHOOK_USERS_H

#include <stddef.h>

#define WH_SERVICE_MAX 128

typedef enum wh_actor { WH_ACTOR_USER, WH_ACTOR_CONTROLLER } wh_actor_t;

/* Configured patterns: an exact name, or a prefix ending in '*'. At most
 * WH_USERS_EXTRA_MAX of each; the strings are borrowed and must outlive the
 * table's use. Root patterns win over everything else. */
#define WH_USERS_EXTRA_MAX 32
typedef struct wh_users {
  const char *extra[WH_USERS_EXTRA_MAX]; /* more controllers */
  size_t nextra;
  const char *roots[WH_USERS_EXTRA_MAX]; /* people after all */
  size_t nroots;
  const char *trusted[WH_USERS_EXTRA_MAX]; /* controllers whose contexts count */
  size_t ntrusted;
} wh_users_t;

/* Classify a user name and write the component's short name into service
 * (cap bytes): "deployment-controller", "kube-scheduler", "kwok", "kubelet",
 * or the user name itself for people. extra may be NULL. */
wh_actor_t wh_users_classify(const wh_users_t *extra, const char *user, char *service, size_t cap);

/* Add a controller pattern; RIPPLE_ERANGE when the table is full. */
int wh_users_add(wh_users_t *u, const char *pattern);
/* Add a pattern of identities whose writes are roots; RIPPLE_ERANGE when full. */
int wh_users_add_root(wh_users_t *u, const char *pattern);
/* Add a pattern of writers whose own contexts are taken (--trusted-writer). */
int wh_users_add_trusted(wh_users_t *u, const char *pattern);
/* Whether user is such a writer. u may be NULL (nobody is). */
int wh_users_trusted(const wh_users_t *u, const char *user);

#endif
