/*
 * kube_rw.h - what discovery.c and rw.c expose beyond kube.h: the engines
 * under ripple_kube_resolve and ripple_kube_list, separated from the
 * transport by a fetch function so that their unit tests can feed them
 * documents (a discovery snapshot, list pages, a 410) without a cluster.
 * Not installed.
 */
#ifndef RIPPLE_KUBE_RW_H
#define RIPPLE_KUBE_RW_H

#include "kube_internal.h"

/* GET path and parse the answer: kube_fetch_client (kube_internal.h) in a
 * program, canned documents in a test. Returns what kube_call returns. */
typedef int (*kube_fetch_fn)(void *ud, const char *path, json_t **out, ripple_kube_status_t *st);

/* ---- discovery.c ------------------------------------------------------------ */

/* Read the whole discovery (/api, /apis and every group version). A group
 * version that fails (an aggregated API that is down) is left out, as kubectl
 * does; /api or /apis failing fails the whole. */
int kube_discovery_fetch(kube_fetch_fn get, void *ud, kube_discovery_t **out,
                         ripple_kube_status_t *st);

void kube_discovery_free(kube_discovery_t *d);

/* Lookups in one snapshot, without refreshing. NULL when nothing matches. */
const ripple_kube_resource_t *kube_discovery_find(const kube_discovery_t *d, const char *name);
const ripple_kube_resource_t *kube_discovery_find_kind(const kube_discovery_t *d, const char *group,
                                                       const char *kind);

/* Move what fresh found into d, keeping every entry d ever handed out alive
 * (callers hold pointers to them for the client's lifetime); frees fresh.
 * RIPPLE_ENOMEM leaves d as it was. */
int kube_discovery_merge(kube_discovery_t *d, kube_discovery_t *fresh);

/* The subresources d lists for r ("scale,status"), comma-separated into
 * buf; 0 if d does not know r (matched by group, version and resource), else
 * 1. The second form looks in the client's cache, if it has one, without
 * fetching. */
int kube_discovery_subs(const kube_discovery_t *d, const ripple_kube_resource_t *r, char *buf,
                        size_t cap);
int kube_discovery_subresources(ripple_kube_client_t *c, const ripple_kube_resource_t *r, char *buf,
                                size_t cap);

/* ---- rw.c ----------------------------------------------------------------------- */

/* The paging loop of ripple_kube_list over base (a collection path with its
 * query string, which may be empty: "/api/v1/configmaps?labelSelector=a%3Db"). */
int kube_list_pages(kube_fetch_fn get, void *get_ud, const char *base, uint32_t page_size,
                    void (*fn)(void *ud, json_t *obj), void *ud, char **rv,
                    ripple_kube_status_t *st);

#endif
