/*
 * informer.c - an informer: a watch (watch.c) whose events keep a local cache
 * (informer_cache.c) up to date, with add/update/remove callbacks.
 *
 * The watch already knows each object's old state and turns a relist into
 * the events that were missed, so the informer only applies changes, in the
 * watch's thread, before handing them on: a handler that reads the cache sees
 * the state the change produced. Readers on other threads see the cache at
 * some point of the change sequence, never half a change. An informer
 * without handlers never builds a tree of an event: the cache keeps each
 * object's text; reads by name, owner and labels hand out that text, and
 * only ripple_kube_informer_each builds trees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ripplex/logonce.h"
#include "watch_internal.h"

struct ripple_kube_informer {
  ripple_kube_watch_t *w;
  icache_t cache;
  ripple_kube_informer_handlers_t h;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled when synced */
  int synced;
};

static void on_change(void *ud, const wchange_t *ch) {
  ripple_kube_informer_t *inf = ud;
  if (icache_apply(&inf->cache, ch) != RIPPLE_OK)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "kube_informer_drop", "reason=%s", "out_of_memory");
  const ripple_kube_informer_handlers_t *h = &inf->h;
  void (*fn)(void *, json_t *) = ch->type == RIPPLE_KUBE_ADDED     ? h->add
                                 : ch->type == RIPPLE_KUBE_DELETED ? h->remove
                                                                   : NULL;
  if (!fn && !(ch->type == RIPPLE_KUBE_MODIFIED && h->update)) return;
  /* Trees only for a handler that takes them. */
  json_t *obj = ch->obj ? json_incref(ch->obj) : krec_tree(ch->rec);
  if (fn) {
    if (obj) fn(h->ud, obj);
  } else {
    json_t *old = ch->old ? krec_tree(ch->old) : NULL;
    if (obj && old) h->update(h->ud, old, obj);
    json_decref(old);
  }
  json_decref(obj);
}

static void on_synced(void *ud) {
  ripple_kube_informer_t *inf = ud;
  pthread_mutex_lock(&inf->mu);
  inf->synced = 1;
  pthread_cond_broadcast(&inf->cv);
  pthread_mutex_unlock(&inf->mu);
  if (inf->h.synced) inf->h.synced(inf->h.ud);
}

static void informer_destroy(ripple_kube_informer_t *inf) {
  icache_free(&inf->cache);
  pthread_mutex_destroy(&inf->mu);
  pthread_cond_destroy(&inf->cv);
  free(inf);
}

int ripple_kube_informer_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                               const ripple_kube_watch_opts_t *o,
                               const ripple_kube_informer_handlers_t *h,
                               ripple_kube_informer_t **out) {
  if (!c || !r || !out) return RIPPLE_EINVAL;
  ripple_kube_informer_t *inf = calloc(1, sizeof *inf);
  if (!inf) return RIPPLE_ENOMEM;
  if (icache_init(&inf->cache) != RIPPLE_OK) {
    free(inf);
    return RIPPLE_ENOMEM;
  }
  if (h) inf->h = *h;
  pthread_mutex_init(&inf->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&inf->cv, &ca);
  pthread_condattr_destroy(&ca);
  ripple_kube_watch_opts_t wo;
  memset(&wo, 0, sizeof wo);
  if (o) wo = *o;
  wo.resource_version = NULL; /* the cache is filled by a list */
  wo.known = NULL;
  ripple_kube_watch_handlers_t wh = {NULL, on_synced, NULL, NULL, inf};
  /* Without add/update/remove handlers nobody needs trees of events: the
   * watch decodes only metadata and the cache keeps the text. */
  int trees = inf->h.add || inf->h.update || inf->h.remove;
  int rc = kube_watch_start(c, r, &wo, &wh, on_change, trees, &inf->w);
  if (rc != RIPPLE_OK) {
    informer_destroy(inf);
    return rc;
  }
  *out = inf;
  return RIPPLE_OK;
}

void ripple_kube_informer_free(ripple_kube_informer_t *inf) {
  if (!inf) return;
  ripple_kube_watch_free(inf->w); /* no callback runs after this */
  informer_destroy(inf);
}

int ripple_kube_informer_wait_synced(ripple_kube_informer_t *inf, uint32_t timeout_ms) {
  if (!inf) return RIPPLE_EINVAL;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += (time_t)(timeout_ms / 1000);
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  int rc = 0;
  pthread_mutex_lock(&inf->mu);
  while (!inf->synced && rc != ETIMEDOUT) {
    if (timeout_ms)
      rc = pthread_cond_timedwait(&inf->cv, &inf->mu, &ts);
    else
      pthread_cond_wait(&inf->cv, &inf->mu);
  }
  int synced = inf->synced;
  pthread_mutex_unlock(&inf->mu);
  return synced ? RIPPLE_OK : RIPPLE_ETIMEDOUT;
}

void ripple_kube_informer_stats(ripple_kube_informer_t *inf, ripple_kube_watch_stats_t *out) {
  if (!out) return;
  if (inf)
    ripple_kube_watch_stats(inf->w, out);
  else
    memset(out, 0, sizeof *out);
}

/* Reads: see kube.h. Each checks what it cannot use before touching the
 * cache, so fn is never called on a refused read. */
int ripple_kube_informer_get_text(ripple_kube_informer_t *inf, const char *ns, const char *name,
                                  void (*fn)(void *ud, const char *json, size_t len), void *ud) {
  if (!inf || !fn) return RIPPLE_EINVAL;
  return icache_get_text(&inf->cache, ns, name, fn, ud);
}

int ripple_kube_informer_by_owner_text(ripple_kube_informer_t *inf, const char *uid,
                                       void (*fn)(void *ud, const char *json, size_t len),
                                       void *ud) {
  if (!inf || !uid || !fn) return RIPPLE_EINVAL;
  icache_by_owner_text(&inf->cache, uid, fn, ud);
  return RIPPLE_OK;
}

int ripple_kube_informer_select_text(ripple_kube_informer_t *inf, const char *ns,
                                     const char *selector,
                                     void (*fn)(void *ud, const char *json, size_t len), void *ud) {
  if (!inf || !fn) return RIPPLE_EINVAL;
  return icache_select_text(&inf->cache, ns, selector, fn, ud, NULL);
}

int ripple_kube_informer_each(ripple_kube_informer_t *inf, void (*fn)(void *ud, json_t *obj),
                              void *ud) {
  if (!inf || !fn) return RIPPLE_EINVAL;
  icache_each(&inf->cache, fn, ud);
  return RIPPLE_OK;
}

size_t ripple_kube_informer_size(ripple_kube_informer_t *inf) {
  return inf ? icache_size(&inf->cache) : 0;
}
