/*
 * memo.c - the causes, recent and deleting tables (see memo.h).
 *
 * causes probes up to PROBES slots from the CPID's hash and, when all are
 * taken, overwrites the oldest of them. recent, held and deleting are one
 * kind of table (objtab): an object maps to one slot by a seeded 64-bit hash of its
 * key, and the entry keeps the whole key's hash and the uid to tell objects
 * apart. Two keys whose hashes collide in all 64 bits would share an entry;
 * at 2^-64 per pair that is below any other error of a trace.
 */
#include "memo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ripplex/cpid.h"
#include "ripplex/rnd.h"

enum { PROBES = 8, UID_MAX = 48 };

typedef struct cause {
  ripple_cpid_t id;
  int64_t t; /* 0: empty */
} cause_t;

typedef struct entry {
  uint64_t key; /* 0: empty */
  int64_t t;
  int64_t gen;       /* held: the object's generation the context is about (0: unknown) */
  char uid[UID_MAX]; /* "" when not known */
  ripple_ctx_t ctx;
} entry_t;

typedef struct objtab {
  pthread_mutex_t mu;
  entry_t *e;
  size_t mask;
  int64_t ttl;
} objtab_t;

/* A Service's selector (services): keyed by namespace and name, kept whole,
 * so that two Services never share an entry. */
typedef struct svcsel {
  int64_t t; /* 0: empty */
  char ns[64], name[64];
  char sel[WH_MEMO_SELECTOR_MAX];
} svcsel_t;

struct wh_memo {
  pthread_mutex_t cmu;
  cause_t *causes;
  size_t cmask;
  objtab_t recent, held, deleting;
  pthread_mutex_t smu;
  svcsel_t *svc;
  size_t smask;
  uint64_t seed;
  int ok; /* the mutexes were initialised */
};

static size_t pow2(size_t n) {
  size_t p = 16;
  while (p < n && p < ((size_t)1 << 30)) p <<= 1;
  return p;
}

static int tab_init(objtab_t *t, size_t n, int64_t ttl) {
  n = pow2(n);
  if (!(t->e = calloc(n, sizeof *t->e))) return RIPPLE_ENOMEM;
  t->mask = n - 1;
  t->ttl = ttl;
  return RIPPLE_OK;
}

int wh_memo_new(const wh_memo_opts_t *o, wh_memo_t **out) {
  if (!o || !out) return RIPPLE_EINVAL;
  wh_memo_t *m = calloc(1, sizeof *m);
  if (!m) return RIPPLE_ENOMEM;
  size_t nc = pow2(o->causes);
  m->causes = calloc(nc, sizeof *m->causes);
  if (!m->causes || tab_init(&m->recent, o->recent, o->recent_ttl_ns) ||
      tab_init(&m->held, o->held, o->held_ttl_ns) ||
      tab_init(&m->deleting, o->deleting, o->deleting_ttl_ns) ||
      rnd_bytes(&m->seed, sizeof m->seed) != 0) {
    wh_memo_free(m);
    return RIPPLE_ENOMEM;
  }
  m->cmask = nc - 1;
  size_t ns = pow2(o->services);
  if (!(m->svc = calloc(ns, sizeof *m->svc))) {
    wh_memo_free(m);
    return RIPPLE_ENOMEM;
  }
  m->smask = ns - 1;
  pthread_mutex_init(&m->smu, NULL);
  pthread_mutex_init(&m->cmu, NULL);
  pthread_mutex_init(&m->recent.mu, NULL);
  pthread_mutex_init(&m->held.mu, NULL);
  pthread_mutex_init(&m->deleting.mu, NULL);
  m->ok = 1;
  *out = m;
  return RIPPLE_OK;
}

void wh_memo_free(wh_memo_t *m) {
  if (!m) return;
  if (m->ok) {
    pthread_mutex_destroy(&m->cmu);
    pthread_mutex_destroy(&m->smu);
    pthread_mutex_destroy(&m->recent.mu);
    pthread_mutex_destroy(&m->held.mu);
    pthread_mutex_destroy(&m->deleting.mu);
  }
  free(m->causes);
  free(m->svc);
  free(m->recent.e);
  free(m->held.e);
  free(m->deleting.e);
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

/* FNV-1a over the parts (with separators), then mixed with the seed. */
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

static void tab_put(objtab_t *t, uint64_t k, const char *uid, const ripple_ctx_t *ctx, int64_t gen,
                    int64_t now) {
  pthread_mutex_lock(&t->mu);
  entry_t *e = &t->e[k & t->mask];
  e->key = k;
  e->t = now;
  e->gen = gen;
  snprintf(e->uid, sizeof e->uid, "%s", uid ? uid : "");
  e->ctx = *ctx;
  pthread_mutex_unlock(&t->mu);
}

static int tab_get(objtab_t *t, uint64_t k, const char *uid, int64_t now, ripple_ctx_t *out,
                   int64_t *gen) {
  int rc = RIPPLE_ENOENT;
  pthread_mutex_lock(&t->mu);
  const entry_t *e = &t->e[k & t->mask];
  int same = !uid || !*uid || !e->uid[0] || !strcmp(uid, e->uid);
  if (e->key == k && now - e->t <= t->ttl && same) {
    *out = e->ctx;
    if (gen) *gen = e->gen;
    rc = RIPPLE_OK;
  }
  pthread_mutex_unlock(&t->mu);
  return rc;
}

static void tab_forget(objtab_t *t, uint64_t k) {
  pthread_mutex_lock(&t->mu);
  entry_t *e = &t->e[k & t->mask];
  if (e->key == k) e->key = 0;
  pthread_mutex_unlock(&t->mu);
}

void wh_memo_recent_put(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                        const char *uid, const ripple_ctx_t *ctx, int64_t now) {
  if (!m || !ctx || !ripple_ctx_is_set(ctx) || !name || !*name) return;
  tab_put(&m->recent, object_key(m, kind, ns, name), uid, ctx, 0, now);
}

int wh_memo_recent_get(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                       const char *uid, int64_t now, ripple_ctx_t *out) {
  if (!m || !out) return RIPPLE_EINVAL;
  if (!name || !*name) return RIPPLE_ENOENT;
  return tab_get(&m->recent, object_key(m, kind, ns, name), uid, now, out, NULL);
}

void wh_memo_recent_put_gen(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                            const char *uid, const ripple_ctx_t *ctx, int64_t gen, int64_t now) {
  if (!m || !ctx || !ripple_ctx_is_set(ctx) || !name || !*name) return;
  tab_put(&m->recent, object_key(m, kind, ns, name), uid, ctx, gen, now);
}

int wh_memo_recent_get_gen(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                           const char *uid, int64_t now, ripple_ctx_t *out, int64_t *gen) {
  if (!m || !out) return RIPPLE_EINVAL;
  if (!name || !*name) return RIPPLE_ENOENT;
  return tab_get(&m->recent, object_key(m, kind, ns, name), uid, now, out, gen);
}

void wh_memo_recent_forget(wh_memo_t *m, const char *kind, const char *ns, const char *name) {
  if (m && name && *name) tab_forget(&m->recent, object_key(m, kind, ns, name));
}

/* The slot of Service ns/name; locked by the caller. */
static svcsel_t *svc_slot(wh_memo_t *m, const char *ns, const char *name) {
  return &m->svc[object_key(m, "Service", ns, name) & m->smask];
}

static int svc_names_fit(const char *ns, const char *name) {
  return ns && name && *name && strlen(ns) < 64 && strlen(name) < 64;
}

void wh_memo_service_put(wh_memo_t *m, const char *ns, const char *name, const json_t *selector,
                         int64_t now) {
  if (!m || !svc_names_fit(ns, name) || !json_is_object(selector) || !json_object_size(selector))
    return;
  const char *k;
  const json_t *v;
  json_object_foreach((json_t *)selector, k, v) {
    if (!json_is_string(v)) return;
  }
  char sel[WH_MEMO_SELECTOR_MAX];
  size_t n = json_dumpb(selector, sel, sizeof sel, JSON_COMPACT | JSON_SORT_KEYS);
  if (n == 0 || n >= sizeof sel) return; /* too long to keep: the informer must do */
  sel[n] = '\0';
  pthread_mutex_lock(&m->smu);
  svcsel_t *e = svc_slot(m, ns, name);
  e->t = now;
  snprintf(e->ns, sizeof e->ns, "%s", ns);
  snprintf(e->name, sizeof e->name, "%s", name);
  memcpy(e->sel, sel, n + 1);
  pthread_mutex_unlock(&m->smu);
}

void wh_memo_service_forget(wh_memo_t *m, const char *ns, const char *name) {
  if (!m || !svc_names_fit(ns, name)) return;
  pthread_mutex_lock(&m->smu);
  svcsel_t *e = svc_slot(m, ns, name);
  if (e->t && !strcmp(e->ns, ns) && !strcmp(e->name, name)) e->t = 0;
  pthread_mutex_unlock(&m->smu);
}

json_t *wh_memo_service_standin(wh_memo_t *m, const char *ns, const char *name, int64_t now) {
  if (!m || !svc_names_fit(ns, name)) return NULL;
  char sel[WH_MEMO_SELECTOR_MAX];
  int found = 0;
  pthread_mutex_lock(&m->smu);
  const svcsel_t *e = svc_slot(m, ns, name);
  if (e->t && now - e->t <= m->recent.ttl && !strcmp(e->ns, ns) && !strcmp(e->name, name)) {
    memcpy(sel, e->sel, sizeof sel);
    found = 1;
  }
  pthread_mutex_unlock(&m->smu);
  if (!found) return NULL;
  json_t *selector = json_loads(sel, 0, NULL);
  if (!selector) return NULL;
  return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}}", "apiVersion", "v1", "kind", "Service",
                   "metadata", "namespace", ns, "name", name, "spec", "selector", selector);
}

void wh_memo_held_put(wh_memo_t *m, const char *uid, const ripple_ctx_t *ctx, int64_t gen,
                      int64_t now) {
  if (!m || !ctx || !ripple_ctx_is_set(ctx) || !uid || !*uid) return;
  tab_put(&m->held, object_key(m, "", "", uid), uid, ctx, gen, now);
}

int wh_memo_held_get(wh_memo_t *m, const char *uid, int64_t now, ripple_ctx_t *out, int64_t *gen) {
  if (!m || !out) return RIPPLE_EINVAL;
  if (!uid || !*uid) return RIPPLE_ENOENT;
  return tab_get(&m->held, object_key(m, "", "", uid), uid, now, out, gen);
}

/* Namespaces by name (see memo.h), everything else by uid alone. */
static int deleting_key(const wh_memo_t *m, const char *kind, const char *name, const char *uid,
                        uint64_t *k) {
  if (kind && !strcmp(kind, "Namespace") && name && *name) {
    *k = object_key(m, "Namespace", "", name);
    return 1;
  }
  if (!uid || !*uid) return 0;
  *k = object_key(m, "", "", uid);
  return 1;
}

void wh_memo_deleting_put(wh_memo_t *m, const char *kind, const char *name, const char *uid,
                          const ripple_ctx_t *ctx, int64_t now) {
  uint64_t k;
  if (!m || !ctx || !ripple_ctx_is_set(ctx) || !deleting_key(m, kind, name, uid, &k)) return;
  tab_put(&m->deleting, k, uid, ctx, 0, now);
}

int wh_memo_deleting_get(wh_memo_t *m, const char *kind, const char *name, const char *uid,
                         int64_t now, ripple_ctx_t *out) {
  uint64_t k;
  if (!m || !out) return RIPPLE_EINVAL;
  if (!deleting_key(m, kind, name, uid, &k)) return RIPPLE_ENOENT;
  /* A namespace's entry is found by name from the objects inside it, which do not know its
   * uid; an object's by its uid, which is the key. */
  return tab_get(&m->deleting, k, NULL, now, out, NULL);
}

/* ---- handing over to the next decider ---- */

static void put_entry_json(sbuf_t *out, const entry_t *e, int with_gen, int *first) {
  char ctx[RIPPLE_CTX_STRMAX + 1];
  size_t n;
  if (ripple_ctx_encode(&e->ctx, ctx, sizeof ctx, &n) != RIPPLE_OK) return;
  sbuf_puts(out, *first ? "{\"u\":" : ",{\"u\":");
  *first = 0;
  sbuf_json_str(out, e->uid);
  sbuf_puts(out, ",\"c\":");
  sbuf_json_str(out, ctx);
  if (with_gen) sbuf_printf(out, ",\"g\":%lld", (long long)e->gen);
  sbuf_printf(out, ",\"t\":%lld}", (long long)e->t);
}

/* The live entries of t keyed by their uid alone (object_key(m, "", "", uid)). */
static void export_tab(const wh_memo_t *m, objtab_t *t, int64_t now, int with_gen, sbuf_t *out) {
  int first = 1;
  pthread_mutex_lock(&t->mu);
  for (size_t i = 0; i <= t->mask; i++) {
    const entry_t *e = &t->e[i];
    if (!e->key || now - e->t > t->ttl || !e->uid[0]) continue;
    if (e->key != object_key(m, "", "", e->uid)) continue; /* a Namespace's: by name */
    put_entry_json(out, e, with_gen, &first);
  }
  pthread_mutex_unlock(&t->mu);
}

int wh_memo_export(wh_memo_t *m, int64_t now, int64_t max_age_ns, sbuf_t *out) {
  if (!m || !out) return RIPPLE_EINVAL;
  sbuf_puts(out, "{\"v\":1,\"held\":[");
  export_tab(m, &m->held, now, 1, out);
  sbuf_puts(out, "],\"deleting\":[");
  export_tab(m, &m->deleting, now, 0, out);
  sbuf_puts(out, "],\"causes\":[");
  int first = 1;
  pthread_mutex_lock(&m->cmu);
  for (size_t i = 0; i <= m->cmask; i++) {
    const cause_t *c = &m->causes[i];
    if (!c->t || now - c->t > max_age_ns) continue;
    char id[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(&c->id, id);
    sbuf_printf(out, "%s[\"%s\",%lld]", first ? "" : ",", id, (long long)c->t);
    first = 0;
  }
  pthread_mutex_unlock(&m->cmu);
  sbuf_puts(out, "]}");
  return out->oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

/* One exported entry into t, unless t knows a newer one of that uid. */
static int import_entry(wh_memo_t *m, objtab_t *t, const json_t *e, uint32_t max_anc, int64_t now) {
  const char *uid = json_string_value(json_object_get(e, "u"));
  const char *cs = json_string_value(json_object_get(e, "c"));
  const json_t *tv = json_object_get(e, "t"), *gv = json_object_get(e, "g");
  ripple_ctx_t ctx;
  if (!uid || !*uid || strlen(uid) >= UID_MAX || !cs || !json_is_integer(tv) ||
      (gv && !json_is_integer(gv)) || ripple_ctx_decode(cs, strlen(cs), max_anc, &ctx) != RIPPLE_OK)
    return 0;
  int64_t at = (int64_t)json_integer_value(tv), gen = gv ? (int64_t)json_integer_value(gv) : 0;
  if (at <= 0 || at > now || now - at > t->ttl || gen < 0) return 0;
  uint64_t k = object_key(m, "", "", uid);
  pthread_mutex_lock(&t->mu);
  const entry_t *cur = &t->e[k & t->mask];
  int newer = cur->key == k && cur->t >= at;
  pthread_mutex_unlock(&t->mu);
  if (newer) return 0;
  tab_put(t, k, uid, &ctx, gen, at);
  return 1;
}

static size_t import_tab(wh_memo_t *m, objtab_t *t, const json_t *arr, uint32_t max_anc,
                         int64_t now) {
  size_t i, n = 0;
  const json_t *e;
  json_array_foreach(arr, i, e) n += (size_t)import_entry(m, t, e, max_anc, now);
  return n;
}

static size_t import_causes(wh_memo_t *m, const json_t *arr, int64_t now) {
  size_t i, n = 0;
  const json_t *e;
  json_array_foreach(arr, i, e) {
    const char *id = json_string_value(json_array_get(e, 0));
    const json_t *tv = json_array_get(e, 1);
    ripple_cpid_t c;
    if (!id || !json_is_integer(tv) || ripple_cpid_parse(id, strlen(id), &c) != RIPPLE_OK) continue;
    int64_t at = (int64_t)json_integer_value(tv);
    if (at <= 0 || at > now) continue;
    wh_memo_cause_put(m, &c, at); /* keeps the earlier time */
    n++;
  }
  return n;
}

int wh_memo_import(wh_memo_t *m, const char *json, size_t len, uint32_t max_anc, int64_t now,
                   size_t *taken) {
  if (!m || !json) return RIPPLE_EINVAL;
  json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
  const json_t *held = json_object_get(doc, "held"), *del = json_object_get(doc, "deleting"),
               *causes = json_object_get(doc, "causes");
  if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "v")) != 1 ||
      !json_is_array(held) || !json_is_array(del) || !json_is_array(causes)) {
    json_decref(doc);
    return RIPPLE_EJSON;
  }
  size_t n = import_tab(m, &m->held, held, max_anc, now) +
             import_tab(m, &m->deleting, del, max_anc, now) + import_causes(m, causes, now);
  json_decref(doc);
  if (taken) *taken = n;
  return RIPPLE_OK;
}
