/*
 * owners.h - the kinds whose controlling ownerReferences the webhook follows
 * into an informer of their own (docs/webhook.md, "Owner kinds").
 *
 * A write names its controlling owner; the engine then reads that owner,
 * and the program starts a cluster-wide informer of the owner's kind the
 * first time it meets it. Any ServiceAccount may write any ownerReference,
 * so without a list any workload could make the webhook watch (and hold in
 * memory) every object of any kind. Only kinds that own are followed: a
 * built-in list of the workload kinds (and Service, which owns
 * EndpointSlices and is watched from the start anyway), plus the custom
 * resources named by --owner-kind GROUP/KIND. Any other owner kind starts
 * nothing, and is counted (ripple_webhook_owner_kinds_refused_total).
 *
 * Memory: the table holds copies of what it is given; a zeroed table is an
 * empty one (the built-in list only).
 */
#ifndef RIPPLE_WEBHOOK_OWNERS_H
#define RIPPLE_WEBHOOK_OWNERS_H

#include <stddef.h>

#define WH_OWNER_KINDS_MAX 32
#define WH_OWNER_GROUP_MAX 253 /* a DNS subdomain */
#define WH_OWNER_KIND_MAX 63

typedef struct wh_owner_kinds {
  char group[WH_OWNER_KINDS_MAX][WH_OWNER_GROUP_MAX + 1];
  char kind[WH_OWNER_KINDS_MAX][WH_OWNER_KIND_MAX + 1];
  size_t n;
} wh_owner_kinds_t;

/* Add "GROUP/KIND" (--owner-kind): GROUP a non-empty DNS subdomain (lower
 * case letters, digits, '-', '.'), KIND a letter then letters and digits.
 * RIPPLE_EINVAL for anything else, RIPPLE_ERANGE when the table is full. A
 * kind already there is not added twice. */
int wh_owner_kinds_add(wh_owner_kinds_t *t, const char *group_kind);

/* Whether a controlling owner of kind in group ("" the core group) may be
 * followed into an informer: the built-in list or the table (t may be
 * NULL). */
int wh_owner_kind_ok(const wh_owner_kinds_t *t, const char *group, const char *kind);

/* The built-in list, for docs and the chart's RBAC: i-th entry's group and
 * kind, 0 past the end. */
int wh_owner_kind_builtin(size_t i, const char **group, const char **kind);

#endif
