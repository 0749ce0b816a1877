/*
 * objtext.h - related objects read from the informers' JSON text
 * (objtext.c): a scan of metadata, stand-ins instead of whole trees. Needs
 * nothing of the engine (its fuzz target drives it alone).
 */
#ifndef RIPPLE_WEBHOOK_OBJTEXT_H
#define RIPPLE_WEBHOOK_OBJTEXT_H

#include <jansson.h>
#include <stddef.h>

typedef struct wh_span {
  const char *p; /* the member's value in the text, NULL when absent */
  size_t n;
} wh_span_t;
/* Give obj "kind" and "apiVersion" when it lacks them (list items do). */
void wh_ensure_kind(json_t *obj, const char *kind);
/* One pass over the members of the JSON object text p[0..n): out[i] is the
 * value of the first member named keys[i]. RIPPLE_EJSON if p is not an
 * object. */
int wh_text_fields(const char *p, size_t n, const char *const *keys, size_t nkeys, wh_span_t *out);
/* A stand-in for a downstream object: kind, apiVersion and metadata's name,
 * namespace, uid, resourceVersion, labels, ownerReferences and kind's context
 * annotation and its MAC (ctxmac.h), as in the whole object; nothing else. *out is a new tree. */
int wh_text_standin(const char *json, size_t len, const char *kind, json_t **out);
/* What identifies a downstream object's context, read from its text alone:
 * its name, namespace and uid and its context annotation's value (ctx NULL when
 * absent). RIPPLE_EJSON when any of it is not plain (escapes, other types,
 * overlong): then only a stand-in reads it right. */
typedef struct wh_ident {
  char name[256], ns[64], uid[64];
  const char *ctx; /* into the text */
  size_t ctx_len;
} wh_ident_t;
int wh_text_ident(const char *json, size_t len, const char *kind, wh_ident_t *out);
/* The whole object as a tree with its kind (wh_ensure_kind), or NULL. */
json_t *wh_text_tree(const char *json, size_t len, const char *kind);

#endif
