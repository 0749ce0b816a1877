/*
 * sources.h - related objects and their contexts (sources.c): the reads
 * through the options' text lookup, the relation rules, the owner.
 */
#ifndef RIPPLE_WEBHOOK_SOURCES_H
#define RIPPLE_WEBHOOK_SOURCES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* Reads of related objects through the options' text_lookup, which may lack
 * any member (sources.c). A get without a name finds nothing. */
void wh_lookup_get(const wh_t *w, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                   void *fud);
void wh_lookup_by_owner(const wh_t *w, const char *kind, const char *uid, wh_text_fn fn, void *fud);
void wh_lookup_select(const wh_t *w, const char *kind, const char *ns, const char *selector,
                      wh_text_fn fn, void *fud);

/* The contexts of the objects related to the write (sources.c). */
typedef struct wh_sources {
  ripple_ctx_t ctx[WH_SOURCES_MAX];
  size_t n;
  size_t skipped; /* related objects beyond WH_SOURCES_MAX */
  /* A related object's latest change is not known here (sources.c,
   * "stale_annotation"): the write's cause cannot be known for sure. */
  int uncertain;
} wh_sources_t;
void wh_sources_gather(wh_t *w, const wh_review_t *r, const json_t *obj, const char *kind,
                       int64_t now, wh_sources_t *s);
/* The context of a related object: the webhook's recent memory first, then
 * the object's annotation. RIPPLE_ENOENT when it has none. */
int wh_related_ctx(wh_t *w, const json_t *obj, const char *kind, int64_t now, ripple_ctx_t *out);
/* The current context of obj's controlling owner (any kind), confirmed by the
 * relation rules; the owner's uid goes to uid (cap bytes) whenever obj has a
 * controlling owner. RIPPLE_ENOENT when there is no owner or no context. */
int wh_owner_ctx(wh_t *w, const json_t *obj, const char *ns, int64_t now, char *uid, size_t cap,
                 ripple_ctx_t *out);

/* "Kind/name" of obj's controlling owner (the ownerReferences entry with
 * controller: true) into out (cap bytes): 1, or 0 with out untouched when
 * there is none or it does not fit. */
int wh_owner_of(const json_t *obj, char *out, size_t cap);

#endif
