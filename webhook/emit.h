/*
 * emit.h - the engine's records on their way to its sink (emit.c): the span
 * of one admitted write, and the tracer's mergelogs named after the writer.
 *
 * Below the engine and every part that emits (decide.c scopes mergelogs,
 * deletes.c and pending.c emit spans of their own), so none of them calls
 * back into engine.c.
 */
#ifndef RIPPLE_WEBHOOK_EMIT_H
#define RIPPLE_WEBHOOK_EMIT_H

#include <stdint.h>

#include "core.h"

/* The longest string the webhook puts in a span's attribute or a mergelog's
 * object, in bytes: well under the trace server's limit on any string
 * (4096, server/ingest/decode.h), which refuses a whole batch for one. A
 * longer one (a user name, a forged review's name) is cut, ends in "...",
 * and the span carries truncated: "true". */
#define WH_ATTR_MAX 1024

/* The span of one admitted write, ending at end. */
void wh_emit_span(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t end);
/* A fresh span id (never 0), from the options' random source when given. */
uint64_t wh_span_id(wh_t *w);

/* The tracer's sink (ud: the engine): each mergelog goes down to w->down,
 * named after the scope's component, or nowhere in a quiet scope. */
void wh_sink_mergelog(void *ud, const ripple_mergelog_t *ml);
/* Make mergelogs from the tracer carry the writer's name, or none at all for
 * a dry run: per thread, for the duration of one decision. */
void wh_sink_scope(const char *component, int quiet);
/* The CPIDs that caused the write being decided (decide.c): a mergelog made
 * in this scope names those of them among its sources as its trigger
 * (ripple.h); none (n 0) leaves it unnamed, every source counting. Copied;
 * reset by wh_sink_scope. */
void wh_sink_trigger(const ripple_cpid_t *ids, size_t n);

#endif
