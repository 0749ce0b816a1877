/*
 * state.c - when ripple-guard takes the webhook out of the write path and when
 * it puts it back (guard.h): hysteresis on consecutive probe results, and
 * damping for a webhook that flaps.
 *
 * fail_after consecutive failures disable; recover_after consecutive
 * successes restore. A webhook that fails again within flap_ns of being
 * restored must then show twice as many successes before the next restore (up
 * to recover_max), so a webhook that answers every other second is not put
 * back into the path every other second; a restore that holds for flap_ns
 * brings the need back to recover_after.
 *
 * A restore can also be held back (may_restore 0: the registration's caBundle
 * is not yet the CA the probes trusted); the successes go on counting, so the
 * first good round after the hold ends restores.
 */
#include "guard.h"

void guard_sm_init(guard_sm_t *sm, unsigned fail_after, unsigned recover_after, int disabled) {
  sm->fail_after = fail_after ? fail_after : 1;
  sm->recover_after = recover_after ? recover_after : 1;
  if (!sm->recover_max || sm->recover_max < sm->recover_after)
    sm->recover_max = sm->recover_after * 16;
  if (!sm->flap_ns) sm->flap_ns = 30 * INT64_C(1000000000);
  sm->disabled = disabled ? 1 : 0;
  sm->fails = sm->oks = 0;
  sm->recover_need = sm->recover_after;
  sm->restored_at = 0;
}

static guard_action_t on_fail(guard_sm_t *sm, int64_t now_ns) {
  sm->oks = 0;
  if (sm->fails < UINT32_MAX) sm->fails++;
  if (sm->disabled || sm->fails < sm->fail_after) return GUARD_KEEP;
  sm->disabled = 1;
  if (sm->restored_at && now_ns - sm->restored_at < sm->flap_ns) {
    unsigned need = sm->recover_need * 2;
    sm->recover_need = need > sm->recover_max ? sm->recover_max : need;
  }
  return GUARD_DISABLE;
}

static guard_action_t on_ok(guard_sm_t *sm, int may_restore, int64_t now_ns) {
  sm->fails = 0;
  if (sm->oks < UINT32_MAX) sm->oks++;
  if (!sm->disabled) {
    /* Stable since the last restore: forget the flapping. */
    if (sm->restored_at && now_ns - sm->restored_at >= sm->flap_ns)
      sm->recover_need = sm->recover_after;
    return GUARD_KEEP;
  }
  if (sm->oks < sm->recover_need || !may_restore) return GUARD_KEEP;
  sm->disabled = 0;
  sm->restored_at = now_ns ? now_ns : 1;
  return GUARD_RESTORE;
}

guard_action_t guard_sm_step(guard_sm_t *sm, int ok, int may_restore, int64_t now_ns) {
  return ok ? on_ok(sm, may_restore, now_ns) : on_fail(sm, now_ns);
}

guard_action_t guard_sm_probe(guard_sm_t *sm, int ok, int64_t now_ns) {
  return guard_sm_step(sm, ok, 1, now_ns);
}
