/*
 * pending.h - bindings whose Pod the informer does not have yet: their spans
 * wait (pending.c). The engine queues them; wh_tick (wh.h) resolves them and
 * emits their spans through emit.h.
 */
#ifndef RIPPLE_WEBHOOK_PENDING_H
#define RIPPLE_WEBHOOK_PENDING_H

#include <stdint.h>

#include "core.h"

#define WH_PENDING_MAX 1024
#define WH_PENDING_TTL_NS (10 * 1000000000LL)

int wh_pending_new(wh_pending_t **out);
void wh_pending_free(wh_pending_t *p);
/* Queue a binding's span until its Pod is known. */
void wh_pending_add(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t now);

#endif
