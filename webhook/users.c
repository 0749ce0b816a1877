/*
 * users.c - the table of controller identities (see users.h).
 *
 * Kubernetes' own components authenticate as fixed user names; a controller
 * of kube-controller-manager run with --use-service-account-credentials acts
 * as the ServiceAccount kube-system/<name> (deployment-controller,
 * generic-garbage-collector, ...). Every ServiceAccount of kube-system is
 * taken for a controller: that namespace belongs to the control plane.
 * ServiceAccounts of other namespaces are users (CI systems run as them)
 * unless --controller-user names them.
 */
#include "users.h"

#include <stdio.h>
#include <string.h>

#include "ripple/ripple.h"

typedef struct pattern {
  const char *match;   /* exact, or a prefix when it ends in '*' */
  const char *service; /* NULL: the part after the prefix */
} pattern_t;

static const pattern_t builtin[] = {
    {"system:serviceaccount:kube-system:*", NULL}, /* deployment-controller, ... */
    {"system:kube-controller-manager", "kube-controller-manager"},
    {"system:kube-scheduler", "kube-scheduler"},
    {"system:node:*", "kubelet"},
    {"kwok-controller", "kwok"},
    {"system:apiserver", "kube-apiserver"},
    {"system:kube-proxy", "kube-proxy"},
    {"system:serviceaccount:kube-public:*", NULL},
};

/* Whether user matches p; *rest is what the '*' matched. */
static int matches(const char *p, const char *user, const char **rest) {
  size_t n = strlen(p);
  if (n && p[n - 1] == '*') {
    if (strncmp(user, p, n - 1) != 0) return 0;
    *rest = user + n - 1;
    return 1;
  }
  *rest = "";
  return strcmp(user, p) == 0;
}

static void put(char *out, size_t cap, const char *s) {
  if (cap) snprintf(out, cap, "%s", s && *s ? s : "unknown");
}

wh_actor_t wh_users_classify(const wh_users_t *extra, const char *user, char *service, size_t cap) {
  const char *rest;
  if (!user) user = "";
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
    if (!matches(builtin[i].match, user, &rest)) continue;
    put(service, cap, builtin[i].service ? builtin[i].service : rest);
    return WH_ACTOR_CONTROLLER;
  }
  for (size_t i = 0; extra && i < extra->nextra; i++) {
    if (!matches(extra->extra[i], user, &rest)) continue;
    /* A ServiceAccount is named by its own name, anything else by itself. */
    const char *colon = strrchr(user, ':');
    put(service, cap, colon && !strncmp(user, "system:serviceaccount:", 22) ? colon + 1 : user);
    return WH_ACTOR_CONTROLLER;
  }
  put(service, cap, user);
  return WH_ACTOR_USER;
}

int wh_users_add(wh_users_t *u, const char *pattern) {
  if (!u || !pattern || !*pattern) return RIPPLE_EINVAL;
  if (u->nextra == WH_USERS_EXTRA_MAX) return RIPPLE_ERANGE;
  u->extra[u->nextra++] = pattern;
  return RIPPLE_OK;
}
