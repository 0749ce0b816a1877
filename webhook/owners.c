/*
 * owners.c - which owner kinds are followed (owners.h).
 */
#include "owners.h"

#include <stdio.h>
#include <string.h>

#include "ripple/ripple.h"

/* Kinds that own in Kubernetes itself. ReplicationController owns Pods;
 * Service owns EndpointSlices (the relation rules read a slice's Service,
 * and Services are watched from the start). Node, which owns mirror Pods,
 * is not followed: no rule reads a Node, and a Node informer would hold
 * every Node's status for nothing. */
static const struct {
  const char *group, *kind;
} builtin[] = {
    {"", "ReplicationController"},
    {"", "Service"},
    {"apps", "Deployment"},
    {"apps", "ReplicaSet"},
    {"apps", "StatefulSet"},
    {"apps", "DaemonSet"},
    {"batch", "Job"},
    {"batch", "CronJob"},
};
enum { NBUILTIN = sizeof builtin / sizeof builtin[0] };

int wh_owner_kind_builtin(size_t i, const char **group, const char **kind) {
  if (i >= NBUILTIN) return 0;
  *group = builtin[i].group;
  *kind = builtin[i].kind;
  return 1;
}

static int alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A DNS subdomain: labels of [a-z0-9-], not starting or ending with '-'. */
static int group_ok(const char *g, size_t n) {
  if (!n || n > WH_OWNER_GROUP_MAX) return 0;
  size_t label = 0;
  for (size_t i = 0; i < n; i++) {
    char c = g[i];
    if (c == '.') {
      if (!label || g[i - 1] == '-') return 0;
      label = 0;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && label))) return 0;
    if (++label > 63) return 0;
  }
  return label && g[n - 1] != '-';
}

static int kind_ok(const char *k) {
  size_t n = strlen(k);
  if (!n || n > WH_OWNER_KIND_MAX ||
      !((k[0] >= 'A' && k[0] <= 'Z') || (k[0] >= 'a' && k[0] <= 'z')))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!alnum(k[i])) return 0;
  return 1;
}

int wh_owner_kinds_add(wh_owner_kinds_t *t, const char *group_kind) {
  if (!t || !group_kind) return RIPPLE_EINVAL;
  const char *slash = strchr(group_kind, '/');
  if (!slash || !group_ok(group_kind, (size_t)(slash - group_kind)) || !kind_ok(slash + 1))
    return RIPPLE_EINVAL;
  size_t glen = (size_t)(slash - group_kind);
  for (size_t i = 0; i < t->n; i++)
    if (strlen(t->group[i]) == glen && !memcmp(t->group[i], group_kind, glen) &&
        !strcmp(t->kind[i], slash + 1))
      return RIPPLE_OK;
  if (t->n == WH_OWNER_KINDS_MAX) return RIPPLE_ERANGE;
  snprintf(t->group[t->n], sizeof t->group[0], "%.*s", (int)glen, group_kind);
  snprintf(t->kind[t->n], sizeof t->kind[0], "%s", slash + 1);
  t->n++;
  return RIPPLE_OK;
}

int wh_owner_kind_ok(const wh_owner_kinds_t *t, const char *group, const char *kind) {
  if (!group || !kind) return 0;
  for (size_t i = 0; i < NBUILTIN; i++)
    if (!strcmp(builtin[i].group, group) && !strcmp(builtin[i].kind, kind)) return 1;
  for (size_t i = 0; t && i < t->n; i++)
    if (!strcmp(t->group[i], group) && !strcmp(t->kind[i], kind)) return 1;
  return 0;
}
