/*
 * cache.h - the informers that hold the objects the relation rules need
 * (Pods, Services, ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs,
 * CronJobs, and any kind met as a controlling owner), served to the engine as its
 * lookup (wh.h). The client is borrowed and must outlive the cache. A restarted webhook lists them
 * again and so knows every object's context again.
 */
#ifndef RIPPLE_WEBHOOK_CACHE_H
#define RIPPLE_WEBHOOK_CACHE_H

#include <stdint.h>

#include "ripple/kube.h"
#include "wh.h"

typedef struct wh_cache wh_cache_t;

/* Start one informer per kind the server serves (kinds it does not serve are
 * logged and skipped). Returns at once; the caches fill in the background. */
int wh_cache_start(ripple_kube_client_t *c, wh_cache_t **out, char *err, size_t errcap);
void wh_cache_free(wh_cache_t *k);
/* 1 when every informer has delivered its initial list. */
int wh_cache_ready(wh_cache_t *k);
/* The reads the engine uses (wh.h), as text; want() starts watching a kind
 * met as an owner (custom resources included) in the background. */
wh_text_lookup_t wh_cache_text_lookup(wh_cache_t *k);
void wh_cache_stats(wh_cache_t *k, uint64_t *informers, uint64_t *objects);

#endif
