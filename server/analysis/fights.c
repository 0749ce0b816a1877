/*
 * fights.c - see fights.h.
 *
 * Four fixed tables, all under one mutex:
 *  - spans: writes the webhook named, waiting for their change (set
 *    associative by uid and version, the oldest of a set evicted);
 *  - pending: changes waiting for their write, likewise;
 *  - fields: per (object uid, path) the last joined write and the current
 *    run of reversals (set associative, the least recently written of a set
 *    evicted);
 *  - fights: the fights flagged, a ring (the oldest overwritten).
 * A join happens when the second of a span and a change comes. A version
 * is not one write: kube-apiserver admits every write that starts from it,
 * and all but one then conflict and are retried (admitted again, from the
 * newer version) - the Deployment controller's status write and a person's
 * scale, say, both admitted at version 698. So a change joins only the spans
 * of that version that could have made it (a write of the status
 * subresource never changes /spec, one of scale nothing but
 * /spec/replicas), and only when they name one writer; with two, it is not
 * judged. The webhook
 * sends its span at admission and the watch agent its change after the
 * write, each in order, so the joins of one object come in order too; a
 * write joined out of order (several webhook replicas) is kept as the
 * field's last write only when it is newer, and never judged.
 */
#include "analysis/fights.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define S_UID 64
#define S_RV 32
#define S_WRITER 64
#define S_USER 96
#define S_KIND 64
#define S_NS 64
#define S_NAME 256
#define S_PATH 160
#define PEND_DIFFS 8 /* tracked fields of one change, at most */
#define EP_WRITES 16 /* writes kept of one fight (the first and the latest) */
#define SPAN_SETS 2048
#define PEND_SLOTS 1024
#define WAYS 4

typedef struct wid {
  char writer[S_WRITER], user[S_USER];
  ripple_cpid_t cpid;
  uint64_t span_id;
} wid_t;

/* What a write could change: its subresource. */
enum { SUB_MAIN, SUB_STATUS, SUB_SCALE, SUB_OTHER };

typedef struct sslot {
  uint64_t key;
  int used, sub;
  int64_t time;
  char uid[S_UID], rv[S_RV];
  wid_t w;
} sslot_t;

typedef struct objref {
  char uid[S_UID], kind[S_KIND], ns[S_NS], name[S_NAME];
} objref_t;

typedef struct pdiff {
  uint64_t old_hash, new_hash;
  char path[S_PATH];
} pdiff_t;

typedef struct pslot {
  uint64_t key;
  int used;
  int spec, only_replicas; /* it changed /spec; nothing tracked but /spec/replicas */
  char rv[S_RV];
  objref_t obj;
  int64_t time;
  size_t n;
  pdiff_t d[PEND_DIFFS];
} pslot_t;

/* A field's joined write. */
typedef struct hw {
  uint64_t old_hash, new_hash;
  wid_t w;
  int64_t time; /* when the watch saw the change */
} hw_t;

/* A write of a run of reversals: who is 0 for writer a, 1 for b. */
typedef struct ewrite {
  int who;
  ripple_cpid_t cpid;
  uint64_t span_id;
  int64_t time;
} ewrite_t;

typedef struct episode {
  char a[S_WRITER], b[S_WRITER], ua[S_USER], ub[S_USER];
  uint32_t a_undid_b, b_undid_a;
  int64_t first, last;
  size_t n;
  ewrite_t w[EP_WRITES];
  uint64_t fight; /* its fight's seq once flagged, else 0 */
} episode_t;

typedef struct field {
  uint64_t key;
  int used;
  objref_t obj;
  char path[S_PATH];
  hw_t last;
  episode_t ep;
} field_t;

typedef struct fight {
  uint64_t seq; /* 0: empty */
  objref_t obj;
  char path[S_PATH];
  episode_t ep;
} fight_t;

struct fights {
  pthread_mutex_t mu;
  int64_t window;
  size_t nsets, nfights;
  uint64_t seq, total;
  sslot_t *spans;
  pslot_t *pend;
  field_t *fields;
  fight_t *fights;
};

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t fnv(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t fights_hash(const char *json, size_t len) {
  uint64_t h = fnv(json, len, 0xcbf29ce484222325ULL);
  return h == FIGHTS_ABSENT ? 1 : h;
}

static uint64_t key2(const char *a, const char *b) {
  uint64_t h = fnv(a, strlen(a), 0xcbf29ce484222325ULL);
  h = fnv("\0", 1, h);
  return fnv(b, strlen(b), h);
}

/* Copy s into a fixed field; 0 when it does not fit (never cut a key). */
static int fit(char *dst, size_t cap, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n >= cap) return 0;
  if (n) memcpy(dst, s, n);
  dst[n] = '\0';
  return 1;
}

/* Copy for display: cut to fit. */
static void cut(char *dst, size_t cap, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, s, n);
  dst[n] = '\0';
}

int fights_tracked(const char *p) {
  if (!p || p[0] != '/') return 0;
  if (!strcmp(p, "/status") || !strncmp(p, "/status/", 8)) return 0;
  static const char *const server_set[] = {"/metadata/resourceVersion", "/metadata/generation",
                                           "/metadata/managedFields", "/metadata/uid",
                                           "/metadata/creationTimestamp"};
  for (size_t i = 0; i < sizeof server_set / sizeof *server_set; i++) {
    size_t n = strlen(server_set[i]);
    if (!strncmp(p, server_set[i], n) && (p[n] == '\0' || p[n] == '/')) return 0;
  }
  return 1;
}

/* ---- life ---------------------------------------------------------------------- */

int fights_new(const fights_opts_t *o, fights_t **out) {
  fights_t *f = calloc(1, sizeof *f);
  if (!f) return RIPPLE_ENOMEM;
  size_t maxf = o && o->max_fields ? o->max_fields : 4096;
  f->nsets = (maxf + WAYS - 1) / WAYS;
  f->nfights = o && o->max_fights ? o->max_fights : 1024;
  f->window = o && o->window_ns > 0 ? o->window_ns : FIGHTS_WINDOW_NS;
  f->spans = calloc(SPAN_SETS * WAYS, sizeof *f->spans);
  f->pend = calloc(PEND_SLOTS, sizeof *f->pend);
  f->fields = calloc(f->nsets * WAYS, sizeof *f->fields);
  f->fights = calloc(f->nfights, sizeof *f->fights);
  if (!f->spans || !f->pend || !f->fields || !f->fights || pthread_mutex_init(&f->mu, NULL) != 0) {
    free(f->spans), free(f->pend), free(f->fields), free(f->fights), free(f);
    return RIPPLE_ENOMEM;
  }
  *out = f;
  return RIPPLE_OK;
}

void fights_free(fights_t *f) {
  if (!f) return;
  pthread_mutex_destroy(&f->mu);
  free(f->spans), free(f->pend), free(f->fields), free(f->fights), free(f);
}

uint64_t fights_total(fights_t *f) {
  pthread_mutex_lock(&f->mu);
  uint64_t n = f->total;
  pthread_mutex_unlock(&f->mu);
  return n;
}

int64_t fights_window(const fights_t *f) { return f->window; }

/* ---- fields and their reversals -------------------------------------------------- */

static field_t *field_get(fights_t *f, const objref_t *obj, const char *path) {
  uint64_t k = key2(obj->uid, path);
  field_t *set = &f->fields[(k % f->nsets) * WAYS], *victim = &set[0];
  for (int i = 0; i < WAYS; i++) {
    field_t *e = &set[i];
    if (e->used && e->key == k && !strcmp(e->obj.uid, obj->uid) && !strcmp(e->path, path)) return e;
    if (!e->used || (victim->used && e->last.time < victim->last.time)) victim = e;
  }
  memset(victim, 0, sizeof *victim);
  victim->used = 1;
  victim->key = k;
  victim->obj = *obj;
  cut(victim->path, sizeof victim->path, path);
  return victim;
}

static void ep_add(episode_t *ep, const hw_t *h) {
  int who = strcmp(h->w.writer, ep->a) == 0 ? 0 : 1;
  if (ep->n && ep->w[ep->n - 1].span_id == h->w.span_id && ep->w[ep->n - 1].time == h->time)
    return;                 /* already the run's latest */
  if (ep->n == EP_WRITES) { /* keep the first write, drop the oldest after it */
    memmove(&ep->w[1], &ep->w[2], (EP_WRITES - 2) * sizeof ep->w[0]);
    ep->n--;
  }
  ep->w[ep->n++] = (ewrite_t){who, h->w.cpid, h->w.span_id, h->time};
}

/* cur undid prev (another writer's write): extend the field's run or start
 * one; flag it once both have undone the other. Returns 1 when flagged. */
static int reversal(fights_t *f, field_t *F, const hw_t *prev, const hw_t *cur) {
  episode_t *ep = &F->ep;
  const char *pw = prev->w.writer, *cw = cur->w.writer;
  int same =
      ep->n && cur->time - ep->last <= f->window &&
      ((!strcmp(ep->a, pw) && !strcmp(ep->b, cw)) || (!strcmp(ep->a, cw) && !strcmp(ep->b, pw)));
  if (!same) {
    memset(ep, 0, sizeof *ep);
    memcpy(ep->a, pw, sizeof ep->a);
    memcpy(ep->b, cw, sizeof ep->b);
    memcpy(ep->ua, prev->w.user, sizeof ep->ua);
    memcpy(ep->ub, cur->w.user, sizeof ep->ub);
    ep->first = prev->time;
  }
  ep_add(ep, prev);
  ep_add(ep, cur);
  if (!strcmp(cw, ep->a))
    ep->a_undid_b++;
  else
    ep->b_undid_a++;
  ep->last = cur->time;
  int flagged = 0;
  if (!ep->fight && ep->a_undid_b && ep->b_undid_a) {
    ep->fight = ++f->seq;
    f->total++;
    flagged = 1;
  }
  if (ep->fight) {
    fight_t *g = &f->fights[(ep->fight - 1) % f->nfights];
    if (flagged || g->seq == ep->fight) *g = (fight_t){ep->fight, F->obj, {0}, *ep};
    if (g->seq == ep->fight) memcpy(g->path, F->path, sizeof g->path);
  }
  return flagged;
}

static int field_write(fights_t *f, field_t *F, const hw_t *cur) {
  int flagged = 0;
  const hw_t *p = &F->last;
  if (p->time && cur->time < p->time) return 0; /* out of order: not judged */
  if (p->time && cur->time - p->time <= f->window && strcmp(cur->w.writer, p->w.writer) != 0 &&
      p->new_hash == cur->old_hash && cur->new_hash == p->old_hash)
    flagged = reversal(f, F, p, cur);
  F->last = *cur;
  return flagged;
}

static int join(fights_t *f, const pslot_t *c, const wid_t *w) {
  int n = 0;
  for (size_t i = 0; i < c->n; i++) {
    field_t *F = field_get(f, &c->obj, c->d[i].path);
    hw_t h = {c->d[i].old_hash, c->d[i].new_hash, *w, c->time};
    n += field_write(f, F, &h);
  }
  return n;
}

/* ---- feeding ---------------------------------------------------------------------- */

static int sub_of(const char *sub) {
  if (!sub || !*sub) return SUB_MAIN;
  return !strcmp(sub, "status") ? SUB_STATUS : !strcmp(sub, "scale") ? SUB_SCALE : SUB_OTHER;
}

/* Could a write of this subresource have made the change? */
static int could(int sub, const pslot_t *c) {
  switch (sub) {
    case SUB_MAIN: return 1;
    case SUB_STATUS: return !c->spec;
    case SUB_SCALE: return c->only_replicas;
    default: return 0;
  }
}

static int same_key(const sslot_t *e, uint64_t k, const char *uid, const char *rv) {
  return e->used && e->key == k && !strcmp(e->uid, uid) && !strcmp(e->rv, rv);
}

int fights_add_write(fights_t *f, const fights_write_t *w) {
  if (!w->uid || !*w->uid || !w->rv || !*w->rv || !w->writer || !*w->writer) return 0;
  wid_t id = {.cpid = w->cpid, .span_id = w->span_id};
  cut(id.writer, sizeof id.writer, w->writer);
  cut(id.user, sizeof id.user, w->user);
  int sub = sub_of(w->subresource);
  if (sub == SUB_OTHER) return 0;
  uint64_t k = key2(w->uid, w->rv);
  int n = 0;
  pthread_mutex_lock(&f->mu);
  pslot_t *p = &f->pend[k % PEND_SLOTS];
  if (p->used && p->key == k && !strcmp(p->obj.uid, w->uid) && !strcmp(p->rv, w->rv) &&
      could(sub, p)) {
    p->used = 0;
    n = join(f, p, &id);
  } else {
    sslot_t *set = &f->spans[(k % SPAN_SETS) * WAYS], *s = &set[0];
    for (int i = 1; i < WAYS; i++)
      if (s->used && (!set[i].used || set[i].time < s->time)) s = &set[i];
    if (fit(s->uid, sizeof s->uid, w->uid) && fit(s->rv, sizeof s->rv, w->rv)) {
      s->used = 1;
      s->key = k;
      s->sub = sub;
      s->time = w->time;
      s->w = id;
    } else {
      s->used = 0;
    }
  }
  pthread_mutex_unlock(&f->mu);
  return n;
}

/* The one writer among the spans that could have made change c: the latest
 * span of it, or NULL when none could or two writers could (the others of
 * that writer are used up too). */
static const sslot_t *span_for(fights_t *f, const pslot_t *c, const char *uid, const char *rv) {
  sslot_t *set = &f->spans[(c->key % SPAN_SETS) * WAYS], *best = NULL;
  for (int i = 0; i < WAYS; i++) {
    sslot_t *e = &set[i];
    if (!same_key(e, c->key, uid, rv) || !could(e->sub, c)) continue;
    if (best && strcmp(best->w.writer, e->w.writer) != 0) return NULL; /* ambiguous */
    if (!best || e->time >= best->time) best = e;
  }
  if (!best) return NULL;
  for (int i = 0; i < WAYS; i++)
    if (&set[i] != best && same_key(&set[i], c->key, uid, rv) && could(set[i].sub, c))
      set[i].used = 0;
  best->used = 0;
  return best;
}

/* Is a span of this version waiting that could have made c? */
static int any_span(fights_t *f, const pslot_t *c, const char *uid, const char *rv) {
  const sslot_t *set = &f->spans[(c->key % SPAN_SETS) * WAYS];
  for (int i = 0; i < WAYS; i++)
    if (same_key(&set[i], c->key, uid, rv) && could(set[i].sub, c)) return 1;
  return 0;
}

int fights_add_change(fights_t *f, const fights_change_t *c) {
  if (!c->uid || !*c->uid || !c->prev_rv || !*c->prev_rv) return 0;
  pslot_t in = {.time = c->time, .only_replicas = 1};
  if (!fit(in.obj.uid, sizeof in.obj.uid, c->uid) || !fit(in.rv, sizeof in.rv, c->prev_rv))
    return 0;
  for (size_t i = 0; i < c->ndiff; i++) {
    const fights_diff_t *d = &c->diff[i];
    if (!fights_tracked(d->path)) continue;
    in.spec |= !strncmp(d->path, "/spec/", 6) || !strcmp(d->path, "/spec");
    in.only_replicas &= !strcmp(d->path, "/spec/replicas");
    if (in.n == PEND_DIFFS || !fit(in.d[in.n].path, S_PATH, d->path)) continue;
    in.d[in.n].old_hash = d->old_hash;
    in.d[in.n].new_hash = d->new_hash;
    in.n++;
  }
  if (!in.n) return 0;
  cut(in.obj.kind, sizeof in.obj.kind, c->kind);
  cut(in.obj.ns, sizeof in.obj.ns, c->ns);
  cut(in.obj.name, sizeof in.obj.name, c->name);
  in.key = key2(c->uid, c->prev_rv);
  in.used = 1;
  int n = 0;
  pthread_mutex_lock(&f->mu);
  const sslot_t *s = span_for(f, &in, c->uid, c->prev_rv);
  if (s) {
    wid_t w = s->w;
    n = join(f, &in, &w);
  } else if (!any_span(f, &in, c->uid, c->prev_rv)) {
    f->pend[in.key % PEND_SLOTS] = in; /* none yet: the span may come */
  }                                    /* else two writers could have made it: not judged */
  pthread_mutex_unlock(&f->mu);
  return n;
}

/* ---- answers ---------------------------------------------------------------------- */

static void put_time(sbuf_t *b, const char *key, int64_t ns) {
  char t[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ns, t);
  sbuf_printf(b, "\"%s\":\"%s\"", key, t);
}

static void put_ids(sbuf_t *b, const ripple_cpid_t *cpid, uint64_t span_id) {
  char id[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(cpid, id);
  sbuf_printf(b, "\"cpid\":\"%s\",\"span_id\":\"%016llx\"", id, (unsigned long long)span_id);
}

static void put_obj(sbuf_t *b, const objref_t *o) {
  sbuf_puts(b, "\"object\":{\"kind\":");
  sbuf_json_str(b, o->kind);
  sbuf_puts(b, ",\"namespace\":");
  sbuf_json_str(b, o->ns);
  sbuf_puts(b, ",\"name\":");
  sbuf_json_str(b, o->name);
  sbuf_puts(b, ",\"uid\":");
  sbuf_json_str(b, o->uid);
  sbuf_putc(b, '}');
}

static void put_manager(sbuf_t *b, const char *w, const char *u, uint32_t undid) {
  sbuf_puts(b, "{\"writer\":");
  sbuf_json_str(b, w);
  sbuf_puts(b, ",\"user\":");
  sbuf_json_str(b, u);
  sbuf_printf(b, ",\"reversals\":%u}", undid);
}

static void put_fight(sbuf_t *b, const fight_t *g) {
  const episode_t *ep = &g->ep;
  sbuf_putc(b, '{');
  put_obj(b, &g->obj);
  sbuf_puts(b, ",\"path\":");
  sbuf_json_str(b, g->path);
  sbuf_puts(b, ",\"managers\":[");
  put_manager(b, ep->a, ep->ua, ep->a_undid_b);
  sbuf_putc(b, ',');
  put_manager(b, ep->b, ep->ub, ep->b_undid_a);
  sbuf_printf(b, "],\"reversals\":%u,", ep->a_undid_b + ep->b_undid_a);
  put_time(b, "first", ep->first);
  sbuf_putc(b, ',');
  put_time(b, "last", ep->last);
  sbuf_puts(b, ",\"writes\":[");
  for (size_t i = 0; i < ep->n; i++) {
    sbuf_puts(b, i ? ",{\"writer\":" : "{\"writer\":");
    sbuf_json_str(b, ep->w[i].who ? ep->b : ep->a);
    sbuf_putc(b, ',');
    put_ids(b, &ep->w[i].cpid, ep->w[i].span_id);
    sbuf_putc(b, ',');
    put_time(b, "time", ep->w[i].time);
    sbuf_putc(b, '}');
  }
  sbuf_puts(b, "]}");
}

static int newest_first(const void *x, const void *y) {
  const fight_t *a = *(const fight_t *const *)x, *b = *(const fight_t *const *)y;
  return a->ep.last > b->ep.last ? -1 : a->ep.last < b->ep.last ? 1 : 0;
}

static void put_fields(fights_t *f, const char *uid, sbuf_t *b) {
  sbuf_puts(b, ",\"fields\":[");
  int first = 1;
  for (size_t i = 0; i < f->nsets * WAYS; i++) {
    const field_t *F = &f->fields[i];
    if (!F->used || !F->last.time || strcmp(F->obj.uid, uid) != 0) continue;
    sbuf_puts(b, first ? "{\"path\":" : ",{\"path\":");
    first = 0;
    sbuf_json_str(b, F->path);
    sbuf_puts(b, ",\"writer\":");
    sbuf_json_str(b, F->last.w.writer);
    sbuf_puts(b, ",\"user\":");
    sbuf_json_str(b, F->last.w.user);
    sbuf_putc(b, ',');
    put_ids(b, &F->last.w.cpid, F->last.w.span_id);
    sbuf_putc(b, ',');
    put_time(b, "time", F->last.time);
    sbuf_putc(b, '}');
  }
  sbuf_putc(b, ']');
}

int fights_answer(fights_t *f, int64_t since, const char *uid, size_t limit, sbuf_t *out) {
  if (!limit || limit > FIGHTS_LIMIT_MAX) limit = FIGHTS_LIMIT_MAX;
  const fight_t **v = malloc(f->nfights * sizeof(const fight_t *));
  if (!v) return RIPPLE_ENOMEM;
  pthread_mutex_lock(&f->mu);
  size_t n = 0;
  for (size_t i = 0; i < f->nfights; i++) {
    const fight_t *g = &f->fights[i];
    if (g->seq && g->ep.last >= since && (!uid || !strcmp(g->obj.uid, uid))) v[n++] = g;
  }
  qsort(v, n, sizeof(const fight_t *), newest_first);
  sbuf_printf(out, "{\"enabled\":true,\"window_seconds\":%lld,\"fights\":[",
              (long long)(f->window / 1000000000));
  for (size_t i = 0; i < n && i < limit; i++) {
    if (i) sbuf_putc(out, ',');
    put_fight(out, v[i]);
  }
  sbuf_printf(out, "],\"truncated\":%s", n > limit ? "true" : "false");
  if (uid) put_fields(f, uid, out);
  sbuf_putc(out, '}');
  pthread_mutex_unlock(&f->mu);
  free(v);
  return out->oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}
