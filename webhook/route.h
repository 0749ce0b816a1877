/*
 * route.h - which replica decides a review: this one, or the Lease's holder.
 *
 * One replica decides every write (docs/webhook.md, "Several replicas"): the
 * holder of the decider Lease (lease.h). The others forward each review to it
 * (forward.h) and relay its answer. When there is no decider to reach (none
 * elected yet, or it does not answer within the forward's timeout), this
 * replica decides itself, as WH_UNCERTAIN (wh.h): nothing is guessed. A
 * replica that has just become the decider also decides as WH_UNCERTAIN
 * for WH_ROUTE_SETTLE_MS, the time its informers need to show the last
 * decisions of the replica that decided before it.
 *
 * Memory: the options are borrowed and must outlive every call. Threads:
 * wh_route_mutate may be called from many threads at once.
 */
#ifndef RIPPLE_WEBHOOK_ROUTE_H
#define RIPPLE_WEBHOOK_ROUTE_H

#include <stdatomic.h>
#include <stddef.h>

#include "forward.h"
#include "lease.h"
#include "ripplex/sbuf.h"
#include "wh.h"

#define WH_ROUTE_SETTLE_MS 1000

typedef struct wh_route {
  wh_t *engine;
  int several; /* 0: a single replica, which decides everything */
  /* The Lease, once its identity is known (after the listener has its port):
   * until then every review is decided as WH_UNCERTAIN. */
  _Atomic(wh_lease_t *) lease;
  wh_fwd_t *fwd;
  char self[WH_LEASE_ID_MAX]; /* this replica's identity in the Lease */
} wh_route_t;

/* Answer one review body as wh_handle_call does (the HTTP status, the answer
 * or the error in out). forwarded: the review came from another replica.
 * apiserver_tp: the API server's traceparent as wh_apiserver_tp returned it
 * (NULL: none), forwarded with the review to the decider. */
int wh_route_mutate(const wh_route_t *rt, int forwarded, const char *apiserver_tp, const char *body,
                    size_t len, sbuf_t *out);
/* -1 for a single replica; else 1 when this replica decides now (it holds
 * the Lease and has settled), 0 when it does not. */
int wh_route_deciding(const wh_route_t *rt);

#endif
