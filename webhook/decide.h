/*
 * decide.h - the decision for one write (decide.c): which context the object
 * gets, the patch, and what the span will say.
 */
#ifndef RIPPLE_WEBHOOK_DECIDE_H
#define RIPPLE_WEBHOOK_DECIDE_H

#include <stdint.h>

#include "core.h"

/* Decide for a decoded review at time now; d is filled in. RIPPLE_OK, or an
 * error after which the write is allowed unchanged. */
int wh_decide(wh_t *w, const wh_review_t *r, wh_certainty_t how, int64_t now, wh_decision_t *d);
void wh_decision_free(wh_decision_t *d);

#endif
