/*
 * route.c - which replica decides a review (route.h).
 */
#include "route.h"

#include <stdatomic.h>
#include <string.h>

#include "ripplex/clock.h"
#include "ripplex/logonce.h"

/* WH_DECIDER when this replica holds the Lease and has held it long enough
 * for its informers to have caught up; holder gets the decider's identity
 * when another replica is it. */
static wh_certainty_t standing(const wh_route_t *rt, char *holder, size_t cap) {
  int64_t since = 0;
  wh_lease_t *l = atomic_load(&rt->lease);
  if (!l || !wh_lease_state(l, holder, cap, &since, NULL)) return WH_UNCERTAIN;
  holder[0] = '\0';
  return mono_ns() - since >= (int64_t)WH_ROUTE_SETTLE_MS * 1000000 ? WH_DECIDER : WH_UNCERTAIN;
}

int wh_route_deciding(const wh_route_t *rt) {
  if (!rt->several) return -1;
  char holder[WH_LEASE_ID_MAX];
  return standing(rt, holder, sizeof holder) == WH_DECIDER;
}

int wh_route_mutate(const wh_route_t *rt, int forwarded, const char *apiserver_tp, const char *body,
                    size_t len, sbuf_t *out) {
  if (!rt->several) return wh_handle_call(rt->engine, WH_DECIDER, apiserver_tp, body, len, out);
  char holder[256] = "";
  wh_certainty_t how = standing(rt, holder, sizeof holder);
  /* A forwarded review is decided here whatever this replica is now: the
   * Lease may have moved on its way, and forwarding again could loop. */
  if (!strcmp(holder, rt->self)) holder[0] = '\0'; /* its renewal is late */
  if (how == WH_DECIDER || forwarded || !*holder)
    return wh_handle_call(rt->engine, how, apiserver_tp, body, len, out);
  wh_metrics_t *m = wh_metrics(rt->engine);
  if (wh_fwd_mutate(rt->fwd, holder, apiserver_tp, body, len, out) == RIPPLE_OK) {
    atomic_fetch_add(&m->forwarded, 1);
    return 200;
  }
  atomic_fetch_add(&m->forward_failed, 1);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "forward_failed", "decider=%s hint=%s", holder,
                  "deciding here with causes unknown until the decider answers again");
  return wh_handle_call(rt->engine, WH_UNCERTAIN, apiserver_tp, body, len, out);
}
