/*
 * annotate.h - contexts on parsed objects (annotate.c): read an object's own,
 * and the JSON Patch that sets or removes one.
 */
#ifndef RIPPLE_WEBHOOK_ANNOTATE_H
#define RIPPLE_WEBHOOK_ANNOTATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

/* Read an object's own context from a tree: RIPPLE_OK, RIPPLE_ENOENT (no
 * annotation) or RIPPLE_EBADCTX/RIPPLE_EVERSION (malformed). */
int wh_obj_ctx(const json_t *obj, const char *kind, uint32_t max_anc, ripple_ctx_t *out);
/* The JSON Patch that gives obj (a tree) the context under kind's key, through
 * ripple_object_patch_ctx on the object's metadata only. *changed 0: none. */
int wh_obj_patch(const json_t *obj, const char *kind, const ripple_ctx_t *ctx, char **patch,
                 size_t *len, int *changed);
/* A patch removing kind's annotation (a malformed one nothing replaces). */
int wh_obj_patch_remove(const char *kind, char **patch, size_t *len);

#endif
