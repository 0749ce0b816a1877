/*
 * users.c - the table of controller identities (see users.h).
 *
 * Kubernetes' own components authenticate as fixed user names; a controller
 * of kube-controller-manager run with --use-service-account-credentials acts
 * as the ServiceAccount kube-system/<name> (deployment-controller,
 * generic-garbage-collector, ...). Operators run as ServiceAccounts of their
 * own namespaces, so every ServiceAccount is taken for a controller: an
 * operator whose writes were roots would cut every trace through it in two.
 * A CI system that runs as a ServiceAccount and should start traces is named
 * by --root-user.
 */
#include "users.h"

#include <stdio.h>
#include <string.h>

#include "ripple/ripple.h"

typedef struct pattern {
  const char *match;   /* exact, or a prefix when it ends in '*' */
  const char *service; /* NULL: the ServiceAccount's name */
} pattern_t;

static const pattern_t builtin[] = {
    {"system:kube-controller-manager", "kube-controller-manager"},
    {"system:kube-scheduler", "kube-scheduler"},
    {"system:node:*", "kubelet"},
    {"kwok-controller", "kwok"},
    {"system:apiserver", "kube-apiserver"},
    {"system:kube-proxy", "kube-proxy"},
    /* kube-system's: deployment-controller, ...; others': operators. */
    {"system:serviceaccount:*", NULL},
};

/* Whether user matches p: exactly, or p's prefix when p ends in '*'. */
static int matches(const char *p, const char *user) {
  size_t n = strlen(p);
  if (n && p[n - 1] == '*') return strncmp(user, p, n - 1) == 0;
  return strcmp(user, p) == 0;
}

static void put(char *out, size_t cap, const char *s) {
  if (cap) snprintf(out, cap, "%s", s && *s ? s : "unknown");
}

/* A ServiceAccount is named by its own name, anything else by itself. */
static const char *short_name(const char *user) {
  const char *colon = strrchr(user, ':');
  return colon && !strncmp(user, "system:serviceaccount:", 22) ? colon + 1 : user;
}

wh_actor_t wh_users_classify(const wh_users_t *extra, const char *user, char *service, size_t cap) {
  if (!user) user = "";
  for (size_t i = 0; extra && i < extra->nroots; i++) {
    if (!matches(extra->roots[i], user)) continue;
    put(service, cap, user);
    return WH_ACTOR_USER;
  }
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
    if (!matches(builtin[i].match, user)) continue;
    put(service, cap, builtin[i].service ? builtin[i].service : short_name(user));
    return WH_ACTOR_CONTROLLER;
  }
  for (size_t i = 0; extra && i < extra->nextra; i++) {
    if (!matches(extra->extra[i], user)) continue;
    put(service, cap, short_name(user));
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

int wh_users_add_root(wh_users_t *u, const char *pattern) {
  if (!u || !pattern || !*pattern) return RIPPLE_EINVAL;
  if (u->nroots == WH_USERS_EXTRA_MAX) return RIPPLE_ERANGE;
  u->roots[u->nroots++] = pattern;
  return RIPPLE_OK;
}

int wh_users_add_trusted(wh_users_t *u, const char *pattern) {
  if (!u || !pattern || !*pattern) return RIPPLE_EINVAL;
  if (u->ntrusted == WH_USERS_EXTRA_MAX) return RIPPLE_ERANGE;
  u->trusted[u->ntrusted++] = pattern;
  return RIPPLE_OK;
}

int wh_users_trusted(const wh_users_t *u, const char *user) {
  if (!u || !user) return 0;
  for (size_t i = 0; i < u->ntrusted; i++)
    if (matches(u->trusted[i], user)) return 1;
  return 0;
}
