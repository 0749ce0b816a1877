/*
 * memo.h - what the webhook remembers between requests, in fixed memory.
 *
 * causes: CPID -> when a write carrying it was first admitted. A span's start
 *   is the admission time of its cause, so the trace shows how long each
 *   component took to react.
 * recent: object (kind, namespace, name) -> the context the webhook last gave
 *   it. The informers' caches lag the API server by a few milliseconds, and a
 *   controller often writes the next object before they catch up (the
 *   scheduler binds a Pod right after its create); a write that cannot carry
 *   an annotation (a deployments/scale) is remembered here only. Entries
 *   older than the TTL are ignored, so the informers stay the source of truth.
 *
 * Both are open-addressed tables of a fixed size, set at creation, that
 * overwrite their oldest entries: no allocation after creation, one mutex
 * each (held for a few hundred nanoseconds).
 */
#ifndef RIPPLE_WEBHOOK_MEMO_H
#define RIPPLE_WEBHOOK_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

typedef struct wh_memo wh_memo_t;

/* causes and recent: entries of each table (rounded up to a power of two). */
int wh_memo_new(size_t causes, size_t recent, int64_t recent_ttl_ns, wh_memo_t **out);
void wh_memo_free(wh_memo_t *m);

/* Remember t for id unless an earlier time is known. */
void wh_memo_cause_put(wh_memo_t *m, const ripple_cpid_t *id, int64_t t);
/* The time for id; 0 when unknown. */
int64_t wh_memo_cause_get(wh_memo_t *m, const ripple_cpid_t *id);

void wh_memo_recent_put(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                        const ripple_ctx_t *ctx, int64_t now);
/* RIPPLE_OK and *out when known and younger than the TTL, else RIPPLE_ENOENT. */
int wh_memo_recent_get(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                       int64_t now, ripple_ctx_t *out);

#endif
