/*
 * stall.c - stalled cascades (stall.h): the window of recent writes, which of
 * them a new span follows, and flagging and ending stalls. What matured
 * writes teach is kept by stall_learn.c; the slab, lists and indexes
 * the writes live on are stall_index.c.
 *
 * A write (stall_int.h) is on the window (young, in arrival order, until it
 * matures; then waiting, while an expected next hop is not yet due), on its
 * hop kind's pending list while it may still stall, and on up to three index
 * lists: its object (kind, ns, name), its owner (ns, "Kind/name") and, for a
 * create without a name, (kind, ns, owner). An index list keeps the newest
 * writes of its key (idx_cap); an older one leaves the window (evicted), so
 * a hot object cannot make stall_add slow and nothing is learned from a
 * write whose followers could no longer be found. A stalled write stays on
 * its index lists until the stall ends, so that a late follower, a delete or
 * an unrelated rewrite still finds it.
 *
 * Ticks take events in the order of their times: before each write matures,
 * everything due until then is judged with the model as it was. Only hop
 * kinds with expectations are looked at, and each only from its next_check
 * on, so a tick with nothing due costs a look at each of them.
 *
 * Rules the header leaves open, decided here:
 *  - Decisions take the times of the events, not of the calls that notice
 *    them: flagged_ns is when the wait ran out; a follower (or a delete, or
 *    an unrelated write) admitted after that but seen before the tick that
 *    flags makes the stall flagged and ended at once; a follower meets an
 *    expectation only if admitted before the wait ran out (strictly).
 *  - stall_add first advances the clock to the span's end, as a replay's
 *    stall_tick does, but never more than ADD_AHEAD past the latest
 *    stall_tick (a span from a clock that is ahead cannot push time on). So
 *    a live run, ticking once a second, and a replay see the same.
 *  - A write stalls at most once: on its unmet expectation with the earliest
 *    deadline (ties: by the next hop's service and name).
 *  - A stall's samples, share and p99 are the model's as it is when asked
 *    (those when it was flagged depend on when a tick noticed it).
 *  - A stall expires ttl after it was flagged; beyond max_stalls the oldest
 *    one is dropped, counted as expired.
 *  - A write whose object was deleted (by any change) or written by an
 *    unrelated one expects nothing more, but is still learned from.
 *  - A create without a name takes the name of its first follower that names
 *    an object of its kind (it is "linked"): later writes of that name follow
 *    that create only, and a delete or an unrelated write of the name is one
 *    of its object.
 *  - A span that arrives after it would have matured is only matched as a
 *    follower; a span that arrives late is also matched, as the earlier
 *    write, against the later ones still in the window.
 */
#include "analysis/stall.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/stall_index.h"
#include "analysis/stall_learn.h"
#include "analysis/stall_tab.h"
#include "ripplex/cpid.h"
#include "ripplex/rnd.h"

#define NIL STALL_NIL
#define W(s, i) stall_w(s, i)
#define STR_MAX 1024 /* longer names are not tracked */
#define REL_CACHE 8
#define ADD_AHEAD 10000000000LL /* 10 s */

/* An object has few writes in a horizon; a ReplicaSet owns many Pods. */
static const uint32_t idx_cap[IK_N] = {64, 512, 512};

enum { END_RESOLVED = 1, END_SUPERSEDED, END_EXPIRED };

/* A span as a follower: the new one, or a later write when the new one is late. */
typedef struct bview {
  ripple_cpid_t cpid;
  int64_t end;
  uint32_t hk;
  int op;
} bview_t;

/* related() answers of one stall_add: its candidates mostly share a CPID. */
typedef struct rcache {
  ripple_cpid_t a[REL_CACHE], d[REL_CACHE];
  int v[REL_CACHE];
  unsigned n, next;
} rcache_t;

/* ---- a write's states ------------------------------------------------------ */

static void pend_leave(stall_t *s, uint32_t i) {
  went_t *w = W(s, i);
  if (!(w->flags & F_PEND)) return;
  hkind_t *k = s->kind[w->hk];
  stall_list_unlink(s, &k->phead, &k->ptail, i, L_PEND);
  w->flags &= (uint8_t)~F_PEND;
}

static void win_leave(stall_t *s, uint32_t i) {
  went_t *w = W(s, i);
  if (w->flags & F_YOUNG)
    stall_list_unlink(s, &s->yhead, &s->ytail, i, L_WIN);
  else if (w->flags & F_WAIT)
    stall_list_unlink(s, &s->whead, &s->wtail, i, L_WIN);
  else
    return;
  w->flags &= (uint8_t) ~(F_YOUNG | F_WAIT);
  s->nwin--;
}

/* Frees i once nothing needs it: out of the window and not a stall. */
static void release(stall_t *s, uint32_t i) {
  const went_t *w = W(s, i);
  if ((w->flags & (F_YOUNG | F_WAIT)) || w->st) return;
  pend_leave(s, i);
  stall_went_free(s, i);
}

/* A write whose learning was deferred (advance) is learned from now. */
static void learn_deferred(stall_t *s, uint32_t i) {
  went_t *w = W(s, i);
  if (!(w->flags & F_DEFER)) return;
  w->flags &= (uint8_t)~F_DEFER;
  kind_learn(s, w);
}

/* i cannot stall any more: off its pending list, out of the window if it matured. */
static void done(stall_t *s, uint32_t i) {
  learn_deferred(s, i);
  pend_leave(s, i);
  if (W(s, i)->flags & F_WAIT) win_leave(s, i);
  release(s, i);
}

static void evict(stall_t *s, uint32_t i) {
  s->evicted++;
  pend_leave(s, i);
  win_leave(s, i);
  release(s, i);
}

static void count_end(stall_t *s, int why) {
  if (why == END_RESOLVED)
    s->resolved++;
  else if (why == END_SUPERSEDED)
    s->superseded++;
  else
    s->expired++;
}

static int st_before(const stall_t *s, const srec_t *a, const srec_t *b) {
  if (a->flagged != b->flagged) return a->flagged < b->flagged;
  const went_t *x = W(s, a->w), *y = W(s, b->w);
  if (x->end != y->end) return x->end < y->end;
  return x->span_id < y->span_id;
}

/* Stalls are kept in the order they were flagged, so the oldest expire first. */
static void stall_insert(stall_t *s, srec_t *st) {
  srec_t *p = s->stail;
  while (p && st_before(s, st, p)) p = p->prev;
  st->prev = p;
  st->next = p ? p->next : s->shead;
  if (st->next)
    st->next->prev = st;
  else
    s->stail = st;
  if (p)
    p->next = st;
  else
    s->shead = st;
  s->nstall++;
}

static void stall_end(stall_t *s, srec_t *st, int why) {
  if (st == s->shead)
    s->shead = st->next;
  else
    st->prev->next = st->next;
  if (st == s->stail)
    s->stail = st->prev;
  else
    st->next->prev = st->prev;
  s->nstall--;
  count_end(s, why);
  uint32_t i = st->w;
  W(s, i)->st = NULL;

  free(st);
  release(s, i);
}

/* w's unmet expectation with the earliest deadline (*dl); NULL: all were met in time. */
static const expect_t *due(const hkind_t *k, const went_t *w, int64_t *dl) {
  const expect_t *best = NULL;
  for (uint32_t j = 0; j < k->nexp; j++) {
    const expect_t *e = &k->exp[j];
    if (went_met(w, e)) continue;
    int64_t d = stall_sat_add(w->end, e->wait);
    if (!best || d < *dl) {
      best = e;
      *dl = d;
    }
  }
  return best;
}

/* After i learned of a follower or lost its object: off the pending list when it cannot stall. */
static void settle(stall_t *s, uint32_t i) {
  const went_t *w = W(s, i);
  if (!(w->flags & F_PEND)) return;
  const hkind_t *k = s->kind[w->hk];
  int gone = w->flags & F_GONE;
  int64_t dl = 0;
  const expect_t *e = due(k, w, &dl);
  if (e ? gone && w->gone < dl : k->nexp || gone) done(s, i);
}

static void flag(stall_t *s, uint32_t i, const expect_t *e, int64_t dl) {
  went_t *w = W(s, i);
  s->flagged++;
  /* Ended already by what came after the deadline, before this tick. */
  int64_t late = went_followed(w, e->kb);
  int64_t t_res = late >= 0 ? stall_sat_add(w->end, late) : INT64_MAX;
  int64_t t_gone = (w->flags & F_GONE) ? w->gone : INT64_MAX;
  if (t_res != INT64_MAX || t_gone != INT64_MAX) {
    int64_t t = t_res <= t_gone ? t_res : t_gone;
    count_end(s, t >= stall_sat_add(dl, s->o.ttl_ns) ? END_EXPIRED
                 : t_res <= t_gone                   ? END_RESOLVED
                                                     : END_SUPERSEDED);
    done(s, i);
    return;
  }
  srec_t *st = calloc(1, sizeof *st);
  if (!st) {
    s->flagged--; /* tried again at the next tick */
    return;
  }
  *st = (srec_t){NULL, NULL, i, e->kb, dl};
  learn_deferred(s, i); /* judged: a write that matured while it waited counts now */
  pend_leave(s, i);
  if (w->flags & F_WAIT) win_leave(s, i);
  w->st = st;
  stall_insert(s, st);
  while (s->nstall > s->o.max_stalls) stall_end(s, s->shead, END_EXPIRED);
}

/* ---- followers ------------------------------------------------------------- */

static int related(stall_t *s, rcache_t *rc, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  if (cpid_eq(anc, desc)) return 1;
  for (unsigned j = 0; j < rc->n; j++)
    if (cpid_eq(&rc->a[j], anc) && cpid_eq(&rc->d[j], desc)) return rc->v[j];
  int v = s->related(s->ud, anc, desc) != 0;
  unsigned j = rc->next;
  rc->next = (j + 1) % REL_CACHE;
  if (rc->n < REL_CACHE) rc->n++;
  rc->a[j] = *anc;
  rc->d[j] = *desc;
  rc->v[j] = v;
  return v;
}

static void fol_note(went_t *w, uint32_t kb, int64_t d) {
  for (uint32_t j = 0; j < w->nfol; j++)
    if (w->fol[j].kb == kb) {
      if (d < w->fol[j].delay) w->fol[j].delay = d;
      return;
    }
  if (w->nfol == w->cfol) {
    if (w->cfol >= STALL_NEXT_MAX) return;
    uint8_t c = (uint8_t)(w->cfol ? w->cfol * 2 : 2);
    fol_t *f = realloc(w->fol, c * sizeof *f);
    if (!f) return;
    w->fol = f;
    w->cfol = c;
  }
  w->fol[w->nfol++] = (fol_t){kb, d};
}

/* b came after write a, and their objects are related (same_obj: b wrote a's object).
 * A write of a's own hop kind is not a next hop: a controller writing a
 * status again is the same step repeated, and counting it would make every
 * status write "usually followed" and the last one of each cascade a stall.
 * On a's own object it takes a's place (a is superseded). */
static void relate(stall_t *s, uint32_t a, const bview_t *b, int same_obj, rcache_t *rc) {
  went_t *w = W(s, a);
  int again = b->hk != NIL && b->hk == w->hk;
  int rel = !again && related(s, rc, &w->cpid, &b->cpid), why = 0;
  if (again && !same_obj) return;
  if (rel) {
    uint64_t ud = (uint64_t)b->end - (uint64_t)w->end;
    int64_t d = ud > INT64_MAX ? INT64_MAX : (int64_t)ud;
    if (w->any_delay < 0 || d < w->any_delay) w->any_delay = d;
    if (b->hk != NIL) fol_note(w, b->hk, d);
    if (w->st && (w->st->kb == STALL_ANY || w->st->kb == b->hk)) why = END_RESOLVED;
  }
  if (same_obj && (!rel || b->op == OP_DELETE || again)) {
    if (!(w->flags & F_GONE) || b->end < w->gone) w->gone = b->end;
    w->flags |= F_GONE;
    if (w->st && !why) why = END_SUPERSEDED;
  }
  if (!why) {
    settle(s, a);
    return;
  }
  if (b->end >= stall_sat_add(w->st->flagged, s->o.ttl_ns)) why = END_EXPIRED;
  stall_end(s, w->st, why);
}

/* Relates the new span to each write on an index list, whichever came first. */
/* Does hop kind hk write a subresource ("update replicasets/status")? */
static int writes_sub(const stall_t *s, uint32_t hk) {
  const sstr_t *n = hk != NIL ? s->kind[hk]->name : NULL;
  return n && memchr(n->s, '/', n->len) != NULL;
}

/* Which side of an owner relation the listed writes are on (scan's owner). */
enum { OWNER_NONE, OWNER_LISTED, OWNER_NEW };

/* A write of the owner follows a write of what it owns only when it reports
 * on it, through a subresource (a ReplicaSet's status after its Pod's
 * create); a spec write of the owner comes from above, from a change of its
 * own (the next scale), even when merges make its CPID descend. */
static int owner_follows(const stall_t *s, const bview_t *b) { return writes_sub(s, b->hk); }

static void scan(stall_t *s, const ikey_t *k, uint32_t self, const bview_t *nb, int same_obj,
                 rcache_t *rc, int owner) {
  if (!k) return;
  int l = L_OBJ + k->type; /* k may go with its last write */
  for (uint32_t i = k->head; i != NIL;) {
    const went_t *c = W(s, i);
    uint32_t next = c->next[l];
    if (i != self && c->end < nb->end) {
      if (owner != OWNER_NEW || owner_follows(s, nb)) relate(s, i, nb, same_obj, rc);
    } else if (i != self && c->end > nb->end && self != NIL) {
      bview_t cb = {c->cpid, c->end, c->hk, c->op};
      if (owner != OWNER_LISTED || owner_follows(s, &cb)) relate(s, self, &cb, same_obj, rc);
    }
    i = next;
  }
}

static int seen_has(const uint32_t *v, size_t n, uint32_t x) {
  for (size_t j = 0; j < n; j++)
    if (v[j] == x) return 1;
  return 0;
}

/* The new span names an object of the kind, namespace and owner of creates
 * without a name: it follows the create it was linked to, or else the oldest
 * unlinked one of each hop kind not yet followed by its own hop kind. */
static void anon_forward(stall_t *s, const ikey_t *k, sstr_t *name, const bview_t *nb,
                         rcache_t *rc) {
  if (!k) return;
  uint32_t i;
  for (i = k->head; name && i != NIL; i = W(s, i)->next[L_ANON])
    if (W(s, i)->link == name) {
      if (W(s, i)->end < nb->end) relate(s, i, nb, 1, rc);
      return;
    }
  uint32_t seen[16];
  size_t nseen = 0;
  for (i = k->head; i != NIL;) {
    went_t *c = W(s, i);
    uint32_t next = c->next[L_ANON];
    if (!c->link && c->end < nb->end && !seen_has(seen, nseen, c->hk) &&
        (nb->hk == NIL || went_followed(c, nb->hk) < 0) && related(s, rc, &c->cpid, &nb->cpid)) {
      if (nseen < 16) seen[nseen++] = c->hk;
      if (name) {
        c->link = name;
        name->refs++;
      }
      relate(s, i, nb, 1, rc);
    }
    i = next;
  }
}

static int linked(const stall_t *s, const ikey_t *k, const sstr_t *name) {
  for (uint32_t i = k->head; i != NIL; i = W(s, i)->next[L_ANON])
    if (W(s, i)->link == name) return 1;
  return 0;
}

/* The new span is a create without a name that came late: the same, backwards,
 * against the later writes of objects with its kind, namespace and owner. */
static void anon_backward(stall_t *s, uint32_t self, rcache_t *rc) {
  went_t *n = W(s, self);
  const ikey_t *own = n->key[IK_OWN], *anon = n->key[IK_ANON];
  if (!own || !anon) return;
  for (uint32_t i = own->head; i != NIL;) {
    const went_t *c = W(s, i);
    uint32_t next = c->next[L_OWN];
    if (i != self && c->kind == n->kind && c->obj && c->end > n->end &&
        (n->link ? c->obj == n->link
                 : !linked(s, anon, c->obj) && went_followed(n, c->hk) < 0 &&
                       related(s, rc, &n->cpid, &c->cpid))) {
      if (!n->link) {
        n->link = c->obj;
        n->link->refs++;
      }
      bview_t cb = {c->cpid, c->end, c->hk, c->op};
      relate(s, self, &cb, 1, rc);
    }
    i = next;
  }
}

/* ---- the API --------------------------------------------------------------- */

int stall_new(const stall_opts_t *o, stall_related_fn related_fn, void *ud, stall_t **out) {
  if (!related_fn || !out) return RIPPLE_EINVAL;
  stall_opts_t d = o ? *o : (stall_opts_t){0};
  /* Written so that NaN is refused too. */
  if (!(d.multiple >= 0) || !(d.min_share >= 0 && d.min_share <= 1) || d.min_wait_ns < 0 ||
      d.horizon_ns < 0 || d.ttl_ns < 0 || d.max_window > UINT32_MAX / 4 ||
      d.max_stalls > UINT32_MAX / 4 || d.max_kinds > (1u << 24))
    return RIPPLE_EINVAL;
  if (d.multiple == 0) d.multiple = 3;
  if (d.min_share == 0) d.min_share = 0.9;
  if (!d.min_samples) d.min_samples = 10;
  if (!d.min_wait_ns) d.min_wait_ns = 5000000000LL;
  if (!d.horizon_ns) d.horizon_ns = 600000000000LL;
  if (!d.ttl_ns) d.ttl_ns = 86400000000000LL;
  if (!d.max_window) d.max_window = 200000;
  if (!d.max_stalls) d.max_stalls = 10000;
  if (!d.max_kinds) d.max_kinds = 4096;
  stall_t *s = calloc(1, sizeof *s);
  if (!s) return RIPPLE_ENOMEM;
  s->o = d;
  s->related = related_fn;
  s->ud = ud;
  s->seed = 0x2545f4914f6cdd1dULL;
  (void)rnd_bytes(&s->seed, sizeof s->seed); /* without it, a fixed seed still works */
  s->wfree = s->yhead = s->ytail = s->whead = s->wtail = NIL;
  s->now = s->tick_now = s->max_end = INT64_MIN;
  kinds_init(s);
  *out = s;
  return RIPPLE_OK;
}

void stall_free(stall_t *s) {
  if (!s) return;
  for (srec_t *st = s->shead, *nx; st; st = nx) {
    nx = st->next;
    free(st);
  }
  for (uint32_t i = 0; i < s->nhigh; i++)
    if (W(s, i)->flags & F_USED) free(W(s, i)->fol);
  for (uint32_t c = 0; c < s->nchunk; c++) free(s->chunk[c]);
  free(s->chunk);
  for (size_t j = 0; s->keys.slot && j <= s->keys.mask; j++) free(s->keys.slot[j].p);
  free(s->keys.slot);
  kinds_free(s);
  for (size_t j = 0; s->strs.slot && j <= s->strs.mask; j++) free(s->strs.slot[j].p);
  free(s->strs.slot);
  free(s);
}

static int op_of(const char *op) {
  if (!strcmp(op, "CREATE")) return OP_CREATE;
  if (!strcmp(op, "UPDATE")) return OP_UPDATE;
  if (!strcmp(op, "DELETE")) return OP_DELETE;
  if (!strcmp(op, "CONNECT")) return OP_CONNECT;
  return OP_OTHER;
}

typedef struct names {
  const char *kind, *ns, *obj, *owner;
  size_t lk, lns, lo, low;
} names_t;

static uint32_t went_new(stall_t *s, const stall_span_t *sp, const bview_t *nb, const names_t *n) {
  while (s->nwin >= s->o.max_window) {
    uint32_t old = s->whead != NIL ? s->whead : s->yhead;
    if (old == NIL) break;
    evict(s, old);
  }
  uint32_t i = stall_went_alloc(s);
  if (i == NIL) return NIL;
  went_t *w = W(s, i);
  w->cpid = sp->cpid;
  w->span_id = sp->span_id;
  w->end = sp->end;
  w->hk = nb->hk;
  w->op = (uint8_t)nb->op;
  if (str_ref(s, n->kind, &w->kind) != RIPPLE_OK || str_ref(s, n->ns, &w->ns) != RIPPLE_OK ||
      str_ref(s, n->obj, &w->obj) != RIPPLE_OK || str_ref(s, n->owner, &w->owner) != RIPPLE_OK ||
      (w->obj && stall_index_add(s, i, IK_OBJ, w->kind, w->ns, w->obj) != RIPPLE_OK) ||
      (w->owner && stall_index_add(s, i, IK_OWN, w->ns, w->owner, NULL) != RIPPLE_OK) ||
      (!w->obj && w->op == OP_CREATE &&
       stall_index_add(s, i, IK_ANON, w->kind, w->ns, w->owner) != RIPPLE_OK)) {
    stall_went_free(s, i);
    return NIL;
  }
  hkind_t *k = s->kind[w->hk];
  stall_list_append(s, &s->yhead, &s->ytail, i, L_WIN);
  stall_list_append(s, &k->phead, &k->ptail, i, L_PEND);
  w->flags |= F_YOUNG | F_PEND;
  s->nwin++;
  int64_t first = stall_sat_add(w->end, k->wmin);
  if (first < k->next_check) k->next_check = first;
  /* A full index list lets its oldest write go (not a stall: it must stay findable). */
  for (int t = 0; t < IK_N; t++) {
    const ikey_t *key = w->key[t];
    if (!key || key->n <= idx_cap[t]) continue;
    for (uint32_t j = key->head; j != NIL; j = W(s, j)->next[L_OBJ + t])
      if (j != i && !W(s, j)->st) {
        evict(s, j);
        break;
      }
  }
  return i;
}

/* The writes of the object that owns the new span's (its owner is "Kind/name"). */
static void scan_owner(stall_t *s, const names_t *n, const sstr_t *ns, uint32_t self,
                       const bview_t *nb, rcache_t *rc) {
  const char *slash = memchr(n->owner, '/', n->low);
  sstr_t *kind, *name;
  if (!slash || !str_find(s, n->owner, (size_t)(slash - n->owner), &kind) || !kind ||
      !str_find(s, slash + 1, n->low - (size_t)(slash - n->owner) - 1, &name) || !name)
    return;
  scan(s, stall_key_find(s, IK_OBJ, kind, ns, name), self, nb, 0, rc, OWNER_LISTED);
}

/* The writes of objects the new span's object owns. */
static void scan_owned(stall_t *s, const names_t *n, const sstr_t *ns, uint32_t self,
                       const bview_t *nb, rcache_t *rc) {
  char buf[2 * STR_MAX + 2];
  memcpy(buf, n->kind, n->lk);
  buf[n->lk] = '/';
  memcpy(buf + n->lk + 1, n->obj, n->lo);
  sstr_t *owner;
  if (str_find(s, buf, n->lk + 1 + n->lo, &owner) && owner)
    scan(s, stall_key_find(s, IK_OWN, ns, owner, NULL), self, nb, 0, rc, OWNER_NEW);
}

static void advance(stall_t *s, int64_t now);

void stall_add(stall_t *s, const stall_span_t *sp) {
  if (!s || !sp) return;
  /* A span seen live comes after the tick before its admission: the clock
   * goes to its end first, as a replay's tick does; not further than
   * ADD_AHEAD past the caller's clock, so a span from a clock that is ahead
   * cannot push time on. */
  if (sp->end > s->now && sp->end <= stall_sat_add(s->tick_now, ADD_AHEAD)) advance(s, sp->end);
#define STR(x) ((x) ? (x) : "")
  names_t n = {STR(sp->kind), STR(sp->ns), STR(sp->obj), STR(sp->owner), 0, 0, 0, 0};
  bview_t nb = {sp->cpid, sp->end, kind_intern(s, STR(sp->service), STR(sp->name)),
                op_of(STR(sp->operation))};
#undef STR
  n.lk = strlen(n.kind);
  n.lns = strlen(n.ns);
  n.lo = strlen(n.obj);
  n.low = strlen(n.owner);
  if (n.lk >= STR_MAX || n.lns >= STR_MAX || n.lo >= STR_MAX || n.low >= STR_MAX) return;
  uint32_t self = NIL;
  if (n.lk && nb.hk != NIL && stall_sat_add(sp->end, s->o.horizon_ns) > s->now)
    self = went_new(s, sp, &nb, &n);
  rcache_t rc;
  rc.n = rc.next = 0;
  sstr_t *kind, *ns, *obj, *owner;
  int has_kind = str_find(s, n.kind, n.lk, &kind) && kind, has_ns = str_find(s, n.ns, n.lns, &ns);
  int has_obj = str_find(s, n.obj, n.lo, &obj) && obj,
      has_owner = str_find(s, n.owner, n.low, &owner);
  if (has_kind && has_ns && has_obj)
    scan(s, stall_key_find(s, IK_OBJ, kind, ns, obj), self, &nb, 1, &rc, OWNER_NONE);
  if (n.low && has_ns) scan_owner(s, &n, ns, self, &nb, &rc);
  if (n.lo && has_ns) scan_owned(s, &n, ns, self, &nb, &rc);
  if (n.lo && has_kind && has_ns && has_owner)
    anon_forward(s, stall_key_find(s, IK_ANON, kind, ns, owner), has_obj ? obj : NULL, &nb, &rc);
  if (self != NIL && nb.op == OP_CREATE && !n.lo && n.low && sp->end < s->max_end)
    anon_backward(s, self, &rc);
  if (sp->end > s->max_end) s->max_end = sp->end;
}

static void window_kind_dropped(stall_t *s, hkind_t *k) {
  for (uint32_t i = k->phead; i != NIL;) {
    uint32_t next = W(s, i)->next[L_PEND];
    if (W(s, i)->flags & F_MATURED) done(s, i);
    i = next;
  }
}

/* Pending lists are in arrival order: each is read only as far as writes are
 * old enough for its hop kind's shortest wait, and not at all before its
 * next_check. */
static void flag_due(stall_t *s, int64_t now) {
  for (uint32_t a = 0; a < s->nactive; a++) {
    hkind_t *k = s->kind[s->active[a]];
    if (k->next_check > now) continue;
    int64_t next_check = INT64_MAX;
    for (uint32_t i = k->phead; i != NIL;) {
      const went_t *w = W(s, i);
      uint32_t next = w->next[L_PEND];
      int64_t first = stall_sat_add(w->end, k->wmin), dl = 0;
      if (first > now) {
        if (first < next_check) next_check = first;
        break;
      }
      const expect_t *e = due(k, w, &dl);
      if (!e || ((w->flags & F_GONE) && w->gone < dl))
        done(s, i);
      else if (dl <= now)
        flag(s, i, e, dl);
      else if (dl < next_check)
        next_check = dl;
      i = next;
    }
    k->next_check = next_check;
  }
}

/* Everything due by t, with the model as it is. */
static void step(stall_t *s, int64_t t) {
  kinds_refresh(s, window_kind_dropped);
  flag_due(s, t);
  while (s->shead && stall_sat_add(s->shead->flagged, s->o.ttl_ns) <= t)
    stall_end(s, s->shead, END_EXPIRED);
}

/* Events in the order of their times: what was due before a write matured is
 * judged by the model without it, however seldom the clock is advanced. */
static void advance(stall_t *s, int64_t now) {
  if (now < s->now) return;
  s->now = now;
  while (s->yhead != NIL) {
    uint32_t i = s->yhead;
    went_t *w = W(s, i);
    int64_t at = stall_sat_add(w->end, s->o.horizon_ns);
    if (at > now) break;
    step(s, at);
    /* A write still waiting for a hop it expects (its wait is longer than
     * the horizon) is learned from once it is judged: counted as "not
     * followed" before its wait is over, it would wear its own expectation
     * down and never be flagged. */
    int64_t dl = 0;
    const expect_t *pe = (w->flags & F_PEND) ? due(s->kind[w->hk], w, &dl) : NULL;
    if (pe && dl > at)
      w->flags |= F_DEFER;
    else
      kind_learn(s, w);
    s->matured++;
    stall_list_unlink(s, &s->yhead, &s->ytail, i, L_WIN);
    w->flags = (uint8_t)((w->flags & ~F_YOUNG) | F_MATURED);
    if ((w->flags & F_PEND) && s->kind[w->hk]->nexp) {
      stall_list_append(s, &s->whead, &s->wtail, i, L_WIN);
      w->flags |= F_WAIT;
    } else {
      s->nwin--;
      pend_leave(s, i);
      release(s, i);
    }
  }
  step(s, now);
}

void stall_tick(stall_t *s, int64_t now) {
  if (!s) return;
  if (now > s->tick_now) s->tick_now = now;
  advance(s, now);
}

size_t stall_each(stall_t *s, stall_each_fn fn, void *ud) {
  if (!s || !fn) return 0;
  size_t n = 0;
  for (const srec_t *st = s->shead; st; st = st->next) {
    const went_t *w = W(s, st->w);
    const hkind_t *k = s->kind[w->hk], *b = st->kb == STALL_ANY ? NULL : s->kind[st->kb];
    uint32_t samples;
    double share;
    int64_t p99;
    kind_now(s, w->hk, st->kb, &samples, &share, &p99);
    stall_info_t in = {w->cpid,
                       w->span_id,
                       stall_s(k->service),
                       stall_s(k->name),
                       stall_s(w->kind),
                       stall_s(w->ns),
                       stall_s(w->obj),
                       stall_s(w->owner),
                       b ? stall_s(b->service) : "",
                       b ? stall_s(b->name) : "",
                       w->end,
                       st->flagged,
                       p99,
                       samples,
                       share};
    n++;
    if (fn(ud, &in)) break;
  }
  return n;
}

void stall_stats(stall_t *s, stall_stats_t *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!s) return;
  out->flagged = s->flagged;
  out->resolved = s->resolved;
  out->superseded = s->superseded;
  out->expired = s->expired;
  out->evicted = s->evicted;
  out->matured = s->matured;
  out->active = s->nstall;
  out->window = s->nwin;
  out->kinds = s->nkind;
}

size_t stall_memory(const stall_t *s) {
  return sizeof *s + stall_index_memory(s) + kinds_memory(s) + s->nstall * sizeof(srec_t);
}
