/*
 * users.h - who wrote: a controller of the control plane, or a person or CI
 * system (whose writes are root changes).
 *
 * The decision is a small table of Kubernetes user names (docs/webhook.md
 * lists it); --controller-user adds patterns to it. The same table gives the
 * short component name that spans carry as their service.
 */
#ifndef RIPPLE_WEBHOOK_USERS_H
#define RIPPLE_WEBHOOK_USERS_H

#include <stddef.h>

#define WH_SERVICE_MAX 128

typedef enum wh_actor { WH_ACTOR_USER, WH_ACTOR_CONTROLLER } wh_actor_t;

/* Extra controller patterns: an exact name, or a prefix ending in '*'. At
 * most WH_USERS_EXTRA_MAX; the strings are borrowed and must outlive the
 * table's use. */
#define WH_USERS_EXTRA_MAX 32
typedef struct wh_users {
  const char *extra[WH_USERS_EXTRA_MAX];
  size_t nextra;
} wh_users_t;

/* Classify a user name and write the component's short name into service
 * (cap bytes): "deployment-controller", "kube-scheduler", "kwok", "kubelet",
 * or the user name itself for people. extra may be NULL. */
wh_actor_t wh_users_classify(const wh_users_t *extra, const char *user, char *service, size_t cap);

/* Add a pattern; RIPPLE_ERANGE when the table is full. */
int wh_users_add(wh_users_t *u, const char *pattern);

#endif
