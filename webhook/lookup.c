/*
 * lookup.c - the engine's reads of related objects, always as text (wh.h).
 *
 * A text lookup (the informers') is called directly. Without one, the tree
 * lookup (older callers, the fuzz target) is adapted: each tree is
 * serialised for the callback, which costs what the text reads are there to
 * save, so the program never does it.
 */
#include <stdlib.h>
#include <string.h>

#include "wh.h"

static void text_of(json_t *obj, wh_text_fn fn, void *fud) {
  char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
  if (s) fn(fud, s, strlen(s));
  free(s);
}

typedef struct adapt {
  wh_text_fn fn;
  void *fud;
} adapt_t;

static void each_tree(void *ud, json_t *obj) {
  adapt_t *a = ud;
  text_of(obj, a->fn, a->fud);
}

static int has_text(const wh_text_lookup_t *t) { return t->get || t->by_owner || t->select; }

void wh_lookup_get(const wh_t *w, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                   void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  const wh_lookup_t *l = &w->o.lookup;
  if (!name || !*name) return;
  if (has_text(t)) {
    if (t->get) t->get(t->ud, kind, ns, name, fn, fud);
  } else if (l->get) {
    json_t *obj = l->get(l->ud, kind, ns, name);
    text_of(obj, fn, fud);
    json_decref(obj);
  }
}

void wh_lookup_by_owner(const wh_t *w, const char *kind, const char *uid, wh_text_fn fn,
                        void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  const wh_lookup_t *l = &w->o.lookup;
  adapt_t a = {fn, fud};
  if (has_text(t)) {
    if (t->by_owner) t->by_owner(t->ud, kind, uid, fn, fud);
  } else if (l->by_owner) {
    l->by_owner(l->ud, kind, uid, each_tree, &a);
  }
}

void wh_lookup_select(const wh_t *w, const char *kind, const char *ns, const char *selector,
                      wh_text_fn fn, void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  const wh_lookup_t *l = &w->o.lookup;
  adapt_t a = {fn, fud};
  if (has_text(t)) {
    if (t->select) t->select(t->ud, kind, ns, selector, fn, fud);
  } else if (l->select) {
    l->select(l->ud, kind, ns, selector, each_tree, &a);
  }
}
