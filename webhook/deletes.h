/*
 * deletes.h - whose change a delete belongs to (deletes.c); decide.c hands
 * every delete here.
 */
#ifndef RIPPLE_WEBHOOK_DELETES_H
#define RIPPLE_WEBHOOK_DELETES_H

#include <stdint.h>

#include "core.h"

/* The span's context is the delete's cause. */
int wh_decide_delete(wh_t *w, const wh_review_t *r, wh_actor_t actor, wh_certainty_t how,
                     int64_t now, wh_decision_t *d);

#endif
