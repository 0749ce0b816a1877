/*
 * annotate.h - contexts on parsed objects (annotate.c): read an object's own,
 * and the JSON Patch that sets or removes one.
 */
#ifndef RIPPLE_WEBHOOK_ANNOTATE_H
#define RIPPLE_WEBHOOK_ANNOTATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxmac.h"
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

/* Whether obj's context (the value under kind's key, exactly as stored) has
 * a valid MAC (ctxmac.h) for kind in ns beside it: WH_CTX_OK, or why not.
 * With no key every context passes (m NULL or without a key). An object
 * without a context is WH_CTX_OK too: nothing to refuse. */
wh_ctx_refusal_t wh_obj_ctx_check(const wh_ctxmac_t *m, const json_t *obj, const char *kind,
                                  const char *ns);
/* Append to *patch (a JSON Patch array, or NULL: a new one) what sets the
 * annotation key to value (a string): a member of the annotations map when
 * the patch's first op adds that map whole (the object had none), else an
 * "add" of its own. The object's annotations must exist once the patch so
 * far is applied. */
int wh_patch_put_annotation(char **patch, size_t *len, const char *key, const char *value);
/* Append to *patch (a JSON Patch array, or NULL: a new one) what makes obj's
 * MAC annotation for kind mac (NUL-terminated), or, mac NULL, removes it;
 * nothing when obj has that already. obj's annotations must exist once the
 * patch so far is applied (a context is set or kept there). */
int wh_obj_patch_mac(const json_t *obj, const char *kind, const char *mac, char **patch,
                     size_t *len);

#endif
