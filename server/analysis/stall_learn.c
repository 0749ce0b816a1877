/*
 * stall_learn.c - what the stall detector (stall.h) learns: for each hop
 * kind, how many of its writes matured, how often each other hop kind (and
 * anything at all) followed them and how soon, in log-scale histograms; and
 * the expectations that come out of it (stall_learn.h).
 *
 * Rules the header leaves open, decided here:
 *  - a follower counts only when it came within the horizon (a write matures
 *    at the horizon; a follower seen before the tick that matured it but
 *    admitted later is left out, as a replay would leave it out);
 *  - the specific expectations of a hop kind are checked; "any next hop" only
 *    for a hop kind that has none (a Pod's create expects its binding, not
 *    "anything", though anything follows it at least as often);
 *  - p99 is the upper edge of the bucket that holds the ceil(0.99 n)-th delay;
 *  - a hop kind's counts are halved when it has learned from STALL_HALVE_AT
 *    writes, so that they cannot overflow and old behaviour fades.
 */
#include "analysis/stall_learn.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/stall_tab.h"

/* ---- hop kinds ------------------------------------------------------------- */

typedef struct kkey {
  const sstr_t *service, *name;
} kkey_t;

static int kind_eq(const void *item, const void *key) {
  const hkind_t *k = item;
  const kkey_t *q = key;
  return k->service == q->service && k->name == q->name;
}

static uint64_t kind_hash(const stall_t *s, const sstr_t *a, const sstr_t *b) {
  return stall_mix(s->seed ^ (a ? a->h : 1)) ^ stall_mix((b ? b->h : 2) + 0x9e3779b97f4a7c15ULL);
}

void kinds_init(stall_t *s) {
  /* 1 ms, then 10% wider each; integers so that a delay on an edge always
   * lands in the same bucket. */
  double e = 1e6;
  for (size_t i = 0; i < STALL_NB; i++) {
    s->edge[i] = (int64_t)(e + 0.5);
    e *= 1.1;
  }
}

void kinds_free(stall_t *s) {
  for (uint32_t i = 0; i < s->nkind; i++) {
    hkind_t *k = s->kind[i];
    for (uint32_t j = 0; j < k->npair; j++) free(k->pair[j]);
    free(k->pair);
    free(k->exp);
    free(k);
  }
  free(s->kind);
  free(s->active);
  free(s->dirty);
  free(s->kinds_tab.slot);
}

uint32_t kind_intern(stall_t *s, const char *service, const char *name) {
  if (!service[0] && !name[0]) return STALL_NIL;
  sstr_t *a, *b;
  uint64_t h;
  if (str_find(s, service, strlen(service), &a) && str_find(s, name, strlen(name), &b)) {
    kkey_t q = {a, b};
    const hkind_t *k = htab_find(&s->kinds_tab, kind_hash(s, a, b), kind_eq, &q);
    if (k) return k->id;
  }
  if (s->nkind >= s->o.max_kinds) return STALL_NIL;
  if (s->nkind == s->ckind) {
    uint32_t cap = s->ckind ? s->ckind * 2 : 64;
    hkind_t **kv = realloc(s->kind, cap * sizeof(hkind_t *));
    if (!kv) return STALL_NIL;
    s->kind = kv;
    uint32_t *av = realloc(s->active, cap * sizeof *av);
    if (!av) return STALL_NIL;
    s->active = av;
    uint32_t *dv = realloc(s->dirty, cap * sizeof *dv);
    if (!dv) return STALL_NIL;
    s->dirty = dv;
    s->ckind = cap;
  }
  hkind_t *k = calloc(1, sizeof *k);
  if (!k) return STALL_NIL;
  if (str_ref(s, service, &k->service) != RIPPLE_OK) goto fail;
  if (str_ref(s, name, &k->name) != RIPPLE_OK) goto fail;
  h = kind_hash(s, k->service, k->name);
  if (htab_add(&s->kinds_tab, h, k) != RIPPLE_OK) goto fail;
  k->id = s->nkind;
  k->phead = k->ptail = k->active = STALL_NIL;
  k->any.kb = STALL_ANY;
  k->wmin = k->next_check = INT64_MAX;
  s->kind[s->nkind++] = k;
  return k->id;
fail:
  str_unref(s, k->service);
  str_unref(s, k->name);
  free(k);
  return STALL_NIL;
}

/* The bucket of a delay: the first whose upper edge is above it, or the last. */
static size_t bucket(const stall_t *s, int64_t d) {
  size_t lo = 0, hi = STALL_NB - 1;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d < s->edge[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static int64_t hist_p99(const stall_t *s, const uint32_t *h, uint64_t n) {
  uint64_t rank = n - n / 100, c = 0; /* ceil(0.99 n) */
  for (size_t i = 0; i < STALL_NB; i++)
    if ((c += h[i]) >= rank && c) return s->edge[i];
  return s->edge[STALL_NB - 1];
}

static kpair_t *pair_get(stall_t *s, hkind_t *k, uint32_t kb) {
  for (uint32_t i = 0; i < k->npair; i++)
    if (k->pair[i]->kb == kb) return k->pair[i];
  /* At most STALL_NEXT_MAX next hops per hop kind and 4 per hop kind on
   * average: enough for any controller seen, and a bound for the rest. */
  size_t cap = s->o.max_kinds * 4 > 64 ? s->o.max_kinds * 4 : 64;
  if (k->npair >= STALL_NEXT_MAX || s->npairs >= cap) return NULL;
  if (!(k->npair & (k->npair - 1))) { /* 0, 1, 2, 4...: full */
    uint32_t c = k->npair ? k->npair * 2 : 2;
    kpair_t **pv = realloc(k->pair, c * sizeof(kpair_t *));
    if (!pv) return NULL;
    k->pair = pv;
  }
  kpair_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->kb = kb;
  k->pair[k->npair++] = p;
  s->npairs++;
  return p;
}

static void pair_add(const stall_t *s, kpair_t *p, int64_t d) {
  p->n++;
  p->hist[bucket(s, d)]++;
  p->stale = 1;
}

static int64_t pair_p99(const stall_t *s, kpair_t *p) {
  if (p->stale) p->p99 = hist_p99(s, p->hist, p->n);
  p->stale = 0;
  return p->p99;
}

static void halve(kpair_t *p) {
  p->n = 0;
  for (size_t i = 0; i < STALL_NB; i++) p->n += (p->hist[i] /= 2);
  p->stale = 1;
}

void kind_learn(stall_t *s, const went_t *w) {
  hkind_t *k = s->kind[w->hk];
  if (k->n >= STALL_HALVE_AT) {
    k->n /= 2;
    halve(&k->any);
    for (uint32_t i = 0; i < k->npair; i++) halve(k->pair[i]);
  }
  k->n++;
  if (!k->dirty) s->dirty[s->ndirty++] = k->id;
  k->dirty = 1;
  int64_t hz = s->o.horizon_ns;
  if (w->any_delay >= 0 && w->any_delay < hz) pair_add(s, &k->any, w->any_delay);
  for (uint32_t i = 0; i < w->nfol; i++) {
    kpair_t *p;
    if (w->fol[i].delay < hz && (p = pair_get(s, k, w->fol[i].kb))) pair_add(s, p, w->fol[i].delay);
  }
}

static int64_t wait_of(const stall_t *s, int64_t p99) {
  double w = s->o.multiple * (double)p99;
  int64_t v = w >= 9e18 ? INT64_MAX / 4 : (int64_t)w;
  return v < s->o.min_wait_ns ? s->o.min_wait_ns : v;
}

static int exp_cmp(const stall_t *s, const expect_t *a, const expect_t *b) {
  const hkind_t *x = s->kind[a->kb], *y = s->kind[b->kb];
  int c = strcmp(stall_s(x->service), stall_s(y->service));
  return c ? c : strcmp(stall_s(x->name), stall_s(y->name));
}

static int met_by(const stall_t *s, const hkind_t *k, const kpair_t *p) {
  return k->n && p->n >= s->o.min_samples && (double)p->n >= s->o.min_share * (double)k->n;
}

static expect_t expect_of(const stall_t *s, const hkind_t *k, kpair_t *p) {
  int64_t p99 = pair_p99(s, p);
  return (expect_t){p->kb, (uint32_t)(k->n > UINT32_MAX ? UINT32_MAX : k->n),
                    (double)p->n / (double)k->n, p99, wait_of(s, p99)};
}

/* k's expectations anew. When which ones there are or how long they wait
 * changed, its pending writes are looked at again. */
static int kind_expect(stall_t *s, hkind_t *k) {
  expect_t *e = malloc((k->npair + 1) * sizeof *e);
  if (!e) return RIPPLE_ENOMEM;
  uint32_t n = 0;
  for (uint32_t i = 0; i < k->npair; i++) {
    if (!met_by(s, k, k->pair[i])) continue;
    expect_t x = expect_of(s, k, k->pair[i]);
    size_t j = n++; /* insertion sort: a handful at most */
    while (j && exp_cmp(s, &x, &e[j - 1]) < 0) e[j] = e[j - 1], j--;
    e[j] = x;
  }
  if (!n && met_by(s, k, &k->any)) e[n++] = expect_of(s, k, &k->any);
  int changed = n != k->nexp;
  k->wmin = INT64_MAX;
  for (uint32_t i = 0; i < n; i++) {
    changed |= !changed && (e[i].kb != k->exp[i].kb || e[i].wait != k->exp[i].wait);
    if (e[i].wait < k->wmin) k->wmin = e[i].wait;
  }
  if (changed) k->next_check = INT64_MIN;
  free(k->exp);
  k->exp = e;
  k->nexp = n;
  return RIPPLE_OK;
}

void kinds_refresh(stall_t *s, kind_dropped_fn dropped) {
  uint32_t keep = 0;
  for (uint32_t d = 0; d < s->ndirty; d++) {
    hkind_t *k = s->kind[s->dirty[d]];
    uint32_t had = k->nexp;
    if (kind_expect(s, k) != RIPPLE_OK) { /* the old ones hold till the next try */
      s->dirty[keep++] = k->id;
      continue;
    }
    k->dirty = 0;
    if (k->nexp && k->active == STALL_NIL) {
      k->active = s->nactive;
      s->active[s->nactive++] = k->id;
    } else if (!k->nexp && k->active != STALL_NIL) {
      uint32_t last = s->active[--s->nactive];
      s->active[k->active] = last;
      s->kind[last]->active = k->active;
      k->active = STALL_NIL;
    }
    if (had && !k->nexp) dropped(s, k);
  }
  s->ndirty = keep;
}

void kind_now(const stall_t *s, uint32_t ka, uint32_t kb, uint32_t *samples, double *share,
              int64_t *p99) {
  const hkind_t *k = s->kind[ka];
  const kpair_t *p = NULL;
  if (kb == STALL_ANY)
    p = &k->any;
  else
    for (uint32_t i = 0; !p && i < k->npair; i++)
      if (k->pair[i]->kb == kb) p = k->pair[i];
  /* Read only: stall_each may run beside another stall_each. */
  *samples = (uint32_t)(k->n > UINT32_MAX ? UINT32_MAX : k->n);
  *share = p && k->n ? (double)p->n / (double)k->n : 0;
  *p99 = p && p->n ? hist_p99(s, p->hist, p->n) : 0;
}

int64_t went_followed(const went_t *w, uint32_t kb) {
  if (kb == STALL_ANY) return w->any_delay;
  for (uint32_t i = 0; i < w->nfol; i++)
    if (w->fol[i].kb == kb) return w->fol[i].delay;
  return -1;
}

int went_met(const went_t *w, const expect_t *e) {
  int64_t d = went_followed(w, e->kb);
  return d >= 0 && d < e->wait;
}

void stall_model(stall_t *s, stall_model_fn fn, void *ud) {
  if (!s || !fn) return;
  for (uint32_t i = 0; i < s->nkind; i++) {
    const hkind_t *k = s->kind[i];
    for (uint32_t j = 0; j < k->nexp; j++) {
      const expect_t *e = &k->exp[j];
      const hkind_t *b = e->kb == STALL_ANY ? NULL : s->kind[e->kb];
      fn(ud, stall_s(k->service), stall_s(k->name), b ? stall_s(b->service) : "",
         b ? stall_s(b->name) : "", e->share, e->samples, e->p99);
    }
  }
}

size_t kinds_memory(const stall_t *s) {
  size_t b = (size_t)s->ckind * (sizeof(hkind_t *) + sizeof *s->active + sizeof *s->dirty) +
             htab_memory(&s->kinds_tab);
  for (uint32_t i = 0; i < s->nkind; i++) {
    const hkind_t *k = s->kind[i];
    /* pair_get doubles the list whenever npair is 0 or a power of two. */
    size_t cap = k->npair ? 2 : 0;
    while (cap && cap <= k->npair) cap *= 2;
    b += sizeof *k + cap * sizeof(kpair_t *) + k->npair * sizeof(kpair_t);
    /* kind_expect sized exp for the pairs of its time: at most npair + 1. */
    if (k->exp) b += (k->npair + 1) * sizeof *k->exp;
  }
  return b;
}
