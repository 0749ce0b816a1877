/*
 * cache.c - informers behind the engine's lookup (see cache.h).
 *
 * The informers run without add/update/remove handlers, so they never build
 * a tree of an event: they keep each object's text and index its labels and
 * owners. The engine reads that text (the informers' _text reads: no tree,
 * no copy) and builds only what it needs of it. Managed fields are left out
 * of the caches (a third to a half of a Pod's size).
 */
#include "cache.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *group, *kind;
} kinds[] = {
    {"", "Pod"},
    {"", "Service"},
    {"apps", "ReplicaSet"},
    {"apps", "Deployment"},
    {"apps", "StatefulSet"},
    {"apps", "DaemonSet"},
    {"batch", "Job"},
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

typedef struct slot {
  ripple_kube_informer_t *inf; /* NULL: the server does not serve the kind */
  atomic_int synced;
} slot_t;

struct wh_cache {
  slot_t s[NKINDS];
};

static void on_synced(void *ud) {
  slot_t *s = ud;
  atomic_store(&s->synced, 1);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_DEBUG, "informer_synced", NULL);
}

int wh_cache_start(ripple_kube_client_t *c, wh_cache_t **out, char *err, size_t errcap) {
  if (!c || !out) return RIPPLE_EINVAL;
  wh_cache_t *k = calloc(1, sizeof *k);
  if (!k) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < NKINDS; i++) {
    const ripple_kube_resource_t *r;
    ripple_kube_status_t st = {0};
    int rc = ripple_kube_resolve_kind(c, kinds[i].group, kinds[i].kind, &r, &st);
    if (rc == RIPPLE_KUBE_ENOTFOUND) {
      ripple_log(RIPPLE_LOG_WARN, "kind_not_served", "kind=%s", kinds[i].kind);
      atomic_store(&k->s[i].synced, 1);
      continue;
    }
    if (rc == RIPPLE_OK) {
      ripple_kube_watch_opts_t wo = {.strip_managed_fields = 1};
      ripple_kube_informer_handlers_t h = {.synced = on_synced, .ud = &k->s[i]};
      rc = ripple_kube_informer_start(c, r, &wo, &h, &k->s[i].inf);
    }
    if (rc != RIPPLE_OK) {
      snprintf(err, errcap, "cannot watch %s: %s%s%s", kinds[i].kind, ripple_kube_strerror(rc),
               st.message[0] ? ": " : "", st.message);
      wh_cache_free(k);
      return rc;
    }
  }
  *out = k;
  return RIPPLE_OK;
}

void wh_cache_free(wh_cache_t *k) {
  if (!k) return;
  for (size_t i = 0; i < NKINDS; i++) ripple_kube_informer_free(k->s[i].inf);
  free(k);
}

int wh_cache_ready(wh_cache_t *k) {
  if (!k) return 0;
  for (size_t i = 0; i < NKINDS; i++)
    if (!atomic_load(&k->s[i].synced)) return 0;
  return 1;
}

static ripple_kube_informer_t *informer(wh_cache_t *k, const char *kind) {
  for (size_t i = 0; i < NKINDS; i++)
    if (!strcmp(kinds[i].kind, kind)) return k->s[i].inf;
  return NULL;
}

static json_t *get(void *ud, const char *kind, const char *ns, const char *name) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  return inf ? ripple_kube_informer_get(inf, ns, name) : NULL;
}

static void by_owner(void *ud, const char *kind, const char *uid, wh_each_fn fn, void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf) ripple_kube_informer_by_owner(inf, uid, fn, fud);
}

static void select_(void *ud, const char *kind, const char *ns, const char *sel, wh_each_fn fn,
                    void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  size_t n;
  if (inf && ripple_kube_informer_select(inf, ns, sel, fn, fud, &n) != RIPPLE_OK)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_selector", "kind=%s", kind);
}

static void get_text(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                     void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf) ripple_kube_informer_get_text(inf, ns, name, fn, fud);
}

static void by_owner_text(void *ud, const char *kind, const char *uid, wh_text_fn fn, void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf) ripple_kube_informer_by_owner_text(inf, uid, fn, fud);
}

static void select_text(void *ud, const char *kind, const char *ns, const char *sel, wh_text_fn fn,
                        void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf && ripple_kube_informer_select_text(inf, ns, sel, fn, fud, NULL) != RIPPLE_OK)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_selector", "kind=%s", kind);
}

wh_lookup_t wh_cache_lookup(wh_cache_t *k) { return (wh_lookup_t){get, by_owner, select_, k}; }

wh_text_lookup_t wh_cache_text_lookup(wh_cache_t *k) {
  return (wh_text_lookup_t){get_text, by_owner_text, select_text, k};
}

void wh_cache_stats(wh_cache_t *k, uint64_t *informers, uint64_t *objects) {
  *informers = *objects = 0;
  for (size_t i = 0; k && i < NKINDS; i++) {
    if (!k->s[i].inf) continue;
    (*informers)++;
    *objects += ripple_kube_informer_size(k->s[i].inf);
  }
}
