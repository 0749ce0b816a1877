/*
 * stamp.h - generation stamps (stamp.c): the generation a context is about,
 * written beside it; stale contexts.
 */
#ifndef RIPPLE_WEBHOOK_STAMP_H
#define RIPPLE_WEBHOOK_STAMP_H

#include <jansson.h>
#include <stdint.h>

#include "core.h"

/* Generation stamps (stamp.c): the generation a context is about, under
 * "<context key>.generation". */
int wh_stamp_key(const char *kind, char *out, size_t cap);
/* metadata.generation, 0 when absent. */
int64_t wh_generation(const json_t *obj);
/* The stamp of kind's context on obj, 0 when absent or malformed. */
int64_t wh_stamp(const json_t *obj, const char *kind);
/* obj's generation is past about (a graceful delete's extra one allowed). */
int wh_gen_behind(const json_t *obj, int64_t about);
/* The same from the parts: generation gen (0: none), being deleted or not. */
int wh_gen_past(int64_t gen, int deleting, int64_t about);
/* obj's context is older than its spec: the stamp is behind its generation
 * (with no stamp, a Deployment past generation 1). */
int wh_ctx_stale(const json_t *obj, const char *kind);
/* The generation the write's object has once stored: 1 for a create, the old
 * one plus one for a spec change, the old one for a subresource; 0 when not
 * known. */
int64_t wh_next_generation(const wh_review_t *r);
/* The stamp a write should leave on its object (the generation it will have
 * once stored), 0 for none. */
int64_t wh_stamp_want(const wh_review_t *r, const char *kind);
/* Add setting the stamp to want to d's patch (or make one), unless the
 * object has it already. */
int wh_stamp_patch(const wh_review_t *r, wh_decision_t *d, int64_t want);

#endif
