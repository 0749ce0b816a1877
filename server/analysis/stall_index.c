/*
 * stall_index.c - the stall detector's memory (stall_index.h): the slab its
 * writes live in (chunks of STALL_CHUNK, never moved, so an index is stable),
 * the doubly linked lists a write is on (one link pair per list, L_*), and the
 * index lists by key (object, owner, unnamed create), each a list of the
 * key's writes in arrival order, found through a hash table seeded per
 * detector. What stall.c decides about writes is built on these.
 */
#include "analysis/stall_index.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/stall_tab.h"

#define NIL STALL_NIL
#define W(s, i) stall_w(s, i)

void stall_list_append(stall_t *s, uint32_t *head, uint32_t *tail, uint32_t i, int l) {
  went_t *w = W(s, i);
  w->prev[l] = *tail;
  w->next[l] = NIL;
  if (*tail != NIL)
    W(s, *tail)->next[l] = i;
  else
    *head = i;
  *tail = i;
}

void stall_list_unlink(stall_t *s, uint32_t *head, uint32_t *tail, uint32_t i, int l) {
  went_t *w = W(s, i);
  if (w->prev[l] != NIL)
    W(s, w->prev[l])->next[l] = w->next[l];
  else
    *head = w->next[l];
  if (w->next[l] != NIL)
    W(s, w->next[l])->prev[l] = w->prev[l];
  else
    *tail = w->prev[l];
  w->next[l] = w->prev[l] = NIL;
}

typedef struct kq {
  int type;
  const sstr_t *a, *b, *c;
} kq_t;

static int key_eq(const void *item, const void *key) {
  const ikey_t *k = item;
  const kq_t *q = key;
  return k->type == q->type && k->a == q->a && k->b == q->b && k->c == q->c;
}

static uint64_t key_hash(const stall_t *s, const kq_t *q) {
  uint64_t h = stall_mix(s->seed ^ (uint64_t)q->type);
  h = stall_mix(h ^ (q->a ? q->a->h : 1));
  h = stall_mix(h ^ (q->b ? q->b->h : 2));
  return stall_mix(h ^ (q->c ? q->c->h : 3));
}

const ikey_t *stall_key_find(const stall_t *s, int type, const sstr_t *a, const sstr_t *b,
                             const sstr_t *c) {
  kq_t q = {type, a, b, c};
  return htab_find(&s->keys, key_hash(s, &q), key_eq, &q);
}

int stall_index_add(stall_t *s, uint32_t i, int type, const sstr_t *a, const sstr_t *b,
                    const sstr_t *c) {
  kq_t q = {type, a, b, c};
  uint64_t h = key_hash(s, &q);
  ikey_t *k = htab_find(&s->keys, h, key_eq, &q);
  if (!k) {
    if (!(k = calloc(1, sizeof *k))) return RIPPLE_ENOMEM;
    *k = (ikey_t){h, a, b, c, NIL, NIL, 0, type};
    if (htab_add(&s->keys, h, k) != RIPPLE_OK) {
      free(k);
      return RIPPLE_ENOMEM;
    }
  }
  stall_list_append(s, &k->head, &k->tail, i, L_OBJ + type);
  k->n++;
  W(s, i)->key[type] = k;
  return RIPPLE_OK;
}

void stall_index_del(stall_t *s, uint32_t i, int type) {
  went_t *w = W(s, i);
  ikey_t *k = w->key[type];
  if (!k) return;
  stall_list_unlink(s, &k->head, &k->tail, i, L_OBJ + type);
  w->key[type] = NULL;
  if (--k->n) return;
  htab_del(&s->keys, k->h, k);
  free(k);
}

uint32_t stall_went_alloc(stall_t *s) {
  uint32_t i;
  if (s->wfree != NIL) {
    i = s->wfree;
    s->wfree = W(s, i)->next[L_WIN];
  } else {
    uint32_t c = s->nhigh / STALL_CHUNK;
    if (s->nhigh % STALL_CHUNK == 0) {
      if (s->nhigh >= UINT32_MAX - STALL_CHUNK) return NIL;
      if (c >= s->cchunk) {
        uint32_t cap = s->cchunk ? s->cchunk * 2 : 8;
        went_t **v = realloc(s->chunk, cap * sizeof(went_t *));
        if (!v) return NIL;
        s->chunk = v;
        s->cchunk = cap;
      }
      if (!(s->chunk[c] = malloc(STALL_CHUNK * sizeof(went_t)))) return NIL;
      s->nchunk = c + 1;
    }
    i = s->nhigh++;
  }
  went_t *w = W(s, i);
  memset(w, 0, sizeof *w);
  for (int l = 0; l < L_N; l++) w->next[l] = w->prev[l] = NIL;
  w->hk = NIL;
  w->any_delay = -1;
  w->flags = F_USED;
  return i;
}

void stall_went_free(stall_t *s, uint32_t i) {
  went_t *w = W(s, i);
  for (int t = 0; t < IK_N; t++) stall_index_del(s, i, t);
  str_unref(s, w->kind);
  str_unref(s, w->ns);
  str_unref(s, w->obj);
  str_unref(s, w->owner);
  str_unref(s, w->link);
  free(w->fol);
  memset(w, 0, sizeof *w);
  w->next[L_WIN] = s->wfree;
  s->wfree = i;
}

size_t stall_index_memory(const stall_t *s) {
  size_t b =
      (size_t)s->cchunk * sizeof(went_t *) + (size_t)s->nchunk * STALL_CHUNK * sizeof(went_t);
  for (uint32_t i = 0; i < s->nhigh; i++) {
    const went_t *w = W(s, i);
    if (w->flags & F_USED) b += (size_t)w->cfol * sizeof *w->fol;
  }
  b += htab_memory(&s->keys) + s->keys.n * sizeof(ikey_t) + htab_memory(&s->strs);
  for (size_t j = 0; s->strs.slot && j <= s->strs.mask; j++) {
    const sstr_t *x = s->strs.slot[j].p;
    if (x) b += sizeof *x + x->len + 1;
  }
  return b;
}
