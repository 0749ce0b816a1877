/*
 * memo.c - the causes and recent tables (see memo.h).
 *
 * causes probes up to PROBES slots from the CPID's hash and, when all are
 * taken, overwrites the oldest of them. recent maps an object to one slot by
 * a seeded 64-bit hash of kind/namespace/name and keeps that hash to tell
 * objects apart; two objects whose hashes collide in all 64 bits would share
 * an entry, which costs a misattributed source, never a crash.
 */
#include "memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { PROBES = 8 };

typedef struct cause {
  ripple_cpid_t id;
  int64_t t; /* 0: empty */
} cause_t;

typedef struct recent {
  uint64_t key; /* 0: empty */
  int64_t t;
  ripple_ctx_t ctx;
} recent_t;

struct wh_memo {
  pthread_mutex_t cmu, rmu;
  cause_t *causes;
  size_t cmask;
  recent_t *recent;
  size_t rmask;
  int64_t ttl;
  uint64_t seed;
};

static size_t pow2(size_t n) {
  size_t p = 16;
  while (p < n && p < ((size_t)1 << 30)) p <<= 1;
  return p;
}

int wh_memo_new(size_t causes, size_t recent, int64_t recent_ttl_ns, wh_memo_t **out) {
  if (!out) return RIPPLE_EINVAL;
  wh_memo_t *m = calloc(1, sizeof *m);
  if (!m) return RIPPLE_ENOMEM;
  size_t nc = pow2(causes), nr = pow2(recent);
  m->causes = calloc(nc, sizeof *m->causes);
  m->recent = calloc(nr, sizeof *m->recent);
  if (!m->causes || !m->recent || rnd_bytes(&m->seed, sizeof m->seed) != 0) {
    wh_memo_free(m);
    return RIPPLE_ENOMEM;
  }
  m->cmask = nc - 1;
  m->rmask = nr - 1;
  m->ttl = recent_ttl_ns;
  pthread_mutex_init(&m->cmu, NULL);
  pthread_mutex_init(&m->rmu, NULL);
  *out = m;
  return RIPPLE_OK;
}

void wh_memo_free(wh_memo_t *m) {
  if (!m) return;
  if (m->causes && m->recent) {
    pthread_mutex_destroy(&m->cmu);
    pthread_mutex_destroy(&m->rmu);
  }
  free(m->causes);
  free(m->recent);
  free(m);
}

void wh_memo_cause_put(wh_memo_t *m, const ripple_cpid_t *id, int64_t t) {
  if (!m || !id || t <= 0) return;
  size_t h = (size_t)cpid_hash(id, m->seed), victim = h & m->cmask;
  pthread_mutex_lock(&m->cmu);
  for (size_t i = 0; i < PROBES; i++) {
    cause_t *c = &m->causes[(h + i) & m->cmask];
    if (c->t && cpid_eq(&c->id, id)) {
      if (t < c->t) c->t = t;
      goto done;
    }
    if (!c->t) {
      victim = (h + i) & m->cmask;
      break;
    }
    if (c->t < m->causes[victim].t) victim = (h + i) & m->cmask;
  }
  m->causes[victim] = (cause_t){*id, t};
done:
  pthread_mutex_unlock(&m->cmu);
}

int64_t wh_memo_cause_get(wh_memo_t *m, const ripple_cpid_t *id) {
  if (!m || !id) return 0;
  size_t h = (size_t)cpid_hash(id, m->seed);
  int64_t t = 0;
  pthread_mutex_lock(&m->cmu);
  for (size_t i = 0; i < PROBES; i++) {
    const cause_t *c = &m->causes[(h + i) & m->cmask];
    if (c->t && cpid_eq(&c->id, id)) {
      t = c->t;
      break;
    }
  }
  pthread_mutex_unlock(&m->cmu);
  return t;
}

/* FNV-1a over the three parts (with separators), then mixed with the seed. */
static uint64_t object_key(const wh_memo_t *m, const char *kind, const char *ns, const char *name) {
  uint64_t h = 14695981039346656037ULL ^ m->seed;
  const char *parts[3] = {kind ? kind : "", ns ? ns : "", name ? name : ""};
  for (int p = 0; p < 3; p++) {
    for (const unsigned char *s = (const unsigned char *)parts[p]; *s; s++)
      h = (h ^ *s) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h ? h : 1;
}

void wh_memo_recent_put(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                        const ripple_ctx_t *ctx, int64_t now) {
  if (!m || !ctx || !ripple_ctx_is_set(ctx)) return;
  uint64_t k = object_key(m, kind, ns, name);
  pthread_mutex_lock(&m->rmu);
  recent_t *r = &m->recent[k & m->rmask];
  r->key = k;
  r->t = now;
  r->ctx = *ctx;
  pthread_mutex_unlock(&m->rmu);
}

int wh_memo_recent_get(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                       int64_t now, ripple_ctx_t *out) {
  if (!m || !out) return RIPPLE_EINVAL;
  uint64_t k = object_key(m, kind, ns, name);
  int rc = RIPPLE_ENOENT;
  pthread_mutex_lock(&m->rmu);
  const recent_t *r = &m->recent[k & m->rmask];
  if (r->key == k && now - r->t <= m->ttl) {
    *out = r->ctx;
    rc = RIPPLE_OK;
  }
  pthread_mutex_unlock(&m->rmu);
  return rc;
}
