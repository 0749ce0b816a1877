/*
 * roots.h - new roots and the write's own context (roots.c): what both
 * decide.c and deletes.c start from, below both.
 */
#ifndef RIPPLE_WEBHOOK_ROOTS_H
#define RIPPLE_WEBHOOK_ROOTS_H

#include <jansson.h>
#include <stdint.h>

#include "core.h"

/* The object d is about, as the tracer names it. */
ripple_objref_t wh_objref(const wh_review_t *r, const wh_decision_t *d);
/* A root context for d (a person's change, or a controller's write that has
 * no traced source), its mergelog sent through the tracer. */
int wh_decide_new_root(wh_t *w, const wh_review_t *r, wh_decision_t *d);
/* A root for a write whose cause this replica cannot know (WH_UNCERTAIN). */
int wh_decide_unknown(wh_t *w, const wh_review_t *r, int64_t now, wh_decision_t *d);
/* The object's own context in this write; RIPPLE_EBADCTX (and d's
 * bad_annotation set) when malformed, RIPPLE_ENOENT when absent. */
int wh_own_ctx(wh_t *w, const json_t *obj, const char *kind, wh_decision_t *d, ripple_ctx_t *out);

/* A context not taken (ctxmac.h): counted by reason, logged once per reason.
 * Never when dry_run (a dry run changes no count). */
void wh_ctx_refused(wh_t *w, wh_ctx_refusal_t why, const char *kind, int dry_run);
/* A context read back from a stored object obj of kind in ns (the old object
 * of an update or delete, a related object): as wh_own_ctx, but with a key
 * it counts only with a valid MAC beside it; one without is counted
 * (wh_ctx_refused) and reported absent (RIPPLE_ENOENT). d may be NULL (a
 * related object: a malformed value is the tracer's to count). */
int wh_stored_ctx(wh_t *w, const json_t *obj, const char *kind, const char *ns, int dry_run,
                  wh_decision_t *d, ripple_ctx_t *out);

#endif
