/*
 * cache.c - informers behind the engine's lookup (see cache.h).
 *
 * The informers run without add/update/remove handlers, so they never build
 * a tree of an event: they keep each object's text and index its labels and
 * owners. The engine reads that text (the informers' _text reads: no tree,
 * no copy) and builds only what it needs of it. Managed fields are left out
 * of the caches (a third to a half of a Pod's size).
 *
 * The kinds the relation rules read are watched from the start, and
 * Endpoints, whose delete the webhook writes itself when their Service goes
 * (deletes.c: the API server deletes them without admission). Any other
 * kind that owns (owners.h: ReplicationController, the custom resources of
 * --owner-kind; the engine counts and drops any other) is watched from the
 * first time the engine meets it as a controlling owner: want() only queues the
 * kind, and a thread of this file resolves it through discovery and starts
 * its informer, so no admission ever waits on the API server. Until then the
 * engine's memory of recent writes stands in. Secrets are never watched:
 * their data would sit in this process's memory for nothing.
 */
#include "cache.h"
#include "ripplex/logonce.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *group, *kind;
} base[] = {
    {"", "Pod"},
    {"", "Service"},
    {"", "Endpoints"},
    {"apps", "ReplicaSet"},
    {"apps", "Deployment"},
    {"apps", "StatefulSet"},
    {"apps", "DaemonSet"},
    {"batch", "CronJob"},
    {"batch", "Job"},
};
enum { NBASE = sizeof base / sizeof base[0], SLOTS = 64, WANTS = 16 };
#define RETRY_NS (60 * 1000000000LL) /* a kind that could not be watched is tried again after */

typedef struct slot {
  char group[128], kind[64];
  ripple_kube_informer_t *inf; /* NULL: not served, not allowed, or not started yet */
  atomic_int synced;
  int64_t failed_at; /* when starting it last failed; 0: never */
} slot_t;

struct wh_cache {
  ripple_kube_client_t *client;
  pthread_mutex_t mu; /* guards n, the slots' names and inf, and the wants */
  pthread_cond_t cv;
  slot_t s[SLOTS];
  size_t n;
  char want[WANTS][2][128]; /* group, kind (want() checks that a kind fits a slot) */
  size_t nwant;
  int stop;
  pthread_t starter;
  int started;
};

static void on_synced(void *ud) {
  slot_t *s = ud;
  atomic_store(&s->synced, 1);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_DEBUG, "informer_synced", NULL);
}

/* Start slot s's informer. RIPPLE_OK also when the server does not serve the
 * kind (logged; the slot stays empty). */
static int start_slot(ripple_kube_client_t *c, slot_t *s, char *err, size_t errcap) {
  const ripple_kube_resource_t *r;
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_resolve_kind(c, s->group, s->kind, &r, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND) {
    ripple_log(RIPPLE_LOG_WARN, "kind_not_served", "kind=%s group=%s", s->kind, s->group);
    atomic_store(&s->synced, 1);
    return RIPPLE_OK;
  }
  if (rc == RIPPLE_OK) {
    ripple_kube_watch_opts_t wo = {.strip_managed_fields = 1};
    ripple_kube_informer_handlers_t h = {.synced = on_synced, .ud = s};
    rc = ripple_kube_informer_start(c, r, &wo, &h, &s->inf);
  }
  if (rc != RIPPLE_OK)
    snprintf(err, errcap, "cannot watch %s: %s%s%s", s->kind, ripple_kube_strerror(rc),
             st.message[0] ? ": " : "", st.message);
  return rc;
}

/* The thread that starts informers for the kinds the engine wanted. */
static void *starter(void *ud) {
  wh_cache_t *k = ud;
  pthread_mutex_lock(&k->mu);
  while (!k->stop) {
    if (!k->nwant) {
      pthread_cond_wait(&k->cv, &k->mu);
      continue;
    }
    slot_t tmp = {0};
    snprintf(tmp.group, sizeof tmp.group, "%s", k->want[k->nwant - 1][0]);
    memcpy(tmp.kind, k->want[k->nwant - 1][1], sizeof tmp.kind - 1);
    k->nwant--;
    if (k->n == SLOTS) continue;
    slot_t *s = &k->s[k->n];
    pthread_mutex_unlock(&k->mu);
    char err[512];
    *s = tmp;
    int rc = start_slot(k->client, s, err, sizeof err);
    if (rc != RIPPLE_OK) {
      ripple_log(RIPPLE_LOG_WARN, "owner_kind_unwatched", "kind=%s group=%s error=%s", s->kind,
                 s->group, ripple_kube_strerror(rc));
      s->failed_at = ripple_now_ns();
    } else {
      ripple_log(RIPPLE_LOG_INFO, "owner_kind_watched", "kind=%s group=%s", s->kind, s->group);
    }
    pthread_mutex_lock(&k->mu);
    k->n++; /* published under the lock: readers see the whole slot */
  }
  pthread_mutex_unlock(&k->mu);
  return NULL;
}

int wh_cache_start(ripple_kube_client_t *c, wh_cache_t **out, char *err, size_t errcap) {
  if (!c || !out) return RIPPLE_EINVAL;
  wh_cache_t *k = calloc(1, sizeof *k);
  if (!k) return RIPPLE_ENOMEM;
  k->client = c;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  for (size_t i = 0; i < NBASE; i++) {
    slot_t *s = &k->s[k->n++];
    snprintf(s->group, sizeof s->group, "%s", base[i].group);
    snprintf(s->kind, sizeof s->kind, "%s", base[i].kind);
    int rc = start_slot(c, s, err, errcap);
    if (rc != RIPPLE_OK) {
      wh_cache_free(k);
      return rc;
    }
  }
  if (pthread_create(&k->starter, NULL, starter, k) != 0) {
    snprintf(err, errcap, "cannot start a thread");
    wh_cache_free(k);
    return RIPPLE_ENOMEM;
  }
  k->started = 1;
  *out = k;
  return RIPPLE_OK;
}

void wh_cache_free(wh_cache_t *k) {
  if (!k) return;
  if (k->started) {
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->starter, NULL);
  }
  for (size_t i = 0; i < k->n; i++) ripple_kube_informer_free(k->s[i].inf);
  pthread_cond_destroy(&k->cv);
  pthread_mutex_destroy(&k->mu);
  free(k);
}

int wh_cache_ready(wh_cache_t *k) {
  if (!k) return 0;
  for (size_t i = 0; i < NBASE; i++)
    if (!atomic_load(&k->s[i].synced)) return 0;
  return 1;
}

static ripple_kube_informer_t *informer(wh_cache_t *k, const char *kind) {
  ripple_kube_informer_t *inf = NULL;
  pthread_mutex_lock(&k->mu);
  for (size_t i = 0; i < k->n && !inf; i++)
    if (!strcmp(k->s[i].kind, kind)) inf = k->s[i].inf;
  pthread_mutex_unlock(&k->mu);
  return inf;
}

/* "apps/v1" -> "apps", "v1" -> "" (the core group). */
static void group_of(const char *api_version, char *out, size_t cap) {
  const char *slash = strchr(api_version, '/');
  size_t n = slash ? (size_t)(slash - api_version) : 0;
  if (n >= cap) n = cap - 1;
  memcpy(out, api_version, n);
  out[n] = '\0';
}

static void want(void *ud, const char *api_version, const char *kind) {
  wh_cache_t *k = ud;
  char group[128];
  group_of(api_version, group, sizeof group);
  if (!*kind || strlen(kind) >= sizeof k->s[0].kind || (!*group && !strcmp(kind, "Secret"))) return;
  int64_t now = ripple_now_ns();
  pthread_mutex_lock(&k->mu);
  int known = 0;
  for (size_t i = 0; i < k->n && !known; i++)
    known = !strcmp(k->s[i].kind, kind) && (k->s[i].inf || now - k->s[i].failed_at < RETRY_NS);
  for (size_t i = 0; i < k->nwant && !known; i++) known = !strcmp(k->want[i][1], kind);
  if (!known && k->nwant < WANTS && k->n < SLOTS) {
    snprintf(k->want[k->nwant][0], sizeof k->want[0][0], "%s", group);
    snprintf(k->want[k->nwant][1], sizeof k->want[0][1], "%s", kind);
    k->nwant++;
    pthread_cond_signal(&k->cv);
  }
  pthread_mutex_unlock(&k->mu);
}

/* The engine's reads (wh.h): a kind not watched (yet) finds nothing, as does
 * a name the informer does not hold (RIPPLE_ENOENT). */
static void get_text(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                     void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf) (void)ripple_kube_informer_get_text(inf, ns, name, fn, fud);
}

static void by_owner_text(void *ud, const char *kind, const char *uid, wh_text_fn fn, void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf) (void)ripple_kube_informer_by_owner_text(inf, uid, fn, fud);
}

static void select_text(void *ud, const char *kind, const char *ns, const char *sel, wh_text_fn fn,
                        void *fud) {
  ripple_kube_informer_t *inf = informer(ud, kind);
  if (inf && ripple_kube_informer_select_text(inf, ns, sel, fn, fud) != RIPPLE_OK)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_selector", "kind=%s", kind);
}

wh_text_lookup_t wh_cache_text_lookup(wh_cache_t *k) {
  return (wh_text_lookup_t){get_text, want, by_owner_text, select_text, k};
}

void wh_cache_stats(wh_cache_t *k, uint64_t *informers, uint64_t *objects) {
  *informers = *objects = 0;
  if (!k) return;
  pthread_mutex_lock(&k->mu);
  for (size_t i = 0; i < k->n; i++) {
    if (!k->s[i].inf) continue;
    (*informers)++;
    *objects += ripple_kube_informer_size(k->s[i].inf);
  }
  pthread_mutex_unlock(&k->mu);
}
