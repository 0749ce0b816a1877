/*
 * loop.c - ripple-guard's control loop (loop.h): probe every interval, feed
 * the state machine, and make the registration agree with its decision.
 *
 * One thread does it all, so there is nothing to lock: the registration is
 * read at start, every --resync and after a failed patch; a patch that fails
 * (the API server down, a conflict, RBAC) is retried with a doubling backoff
 * up to 10 s, never fatally. The sleep between probes is sigtimedwait, so
 * SIGINT/SIGTERM end the loop at once. On its way out the guard leaves the
 * registration as it is: the webhook's own timeoutSeconds 1 and failurePolicy
 * Ignore keep the cluster working without a guard.
 */
#include "loop.h"
#include "ripplex/logonce.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 10000

typedef struct loop {
  const guard_opts_t *o;
  ripple_kube_client_t *kc;
  guard_metrics_t *m;
  guard_sm_t sm;
  guard_reg_t reg;
  int have_reg, started;
  int64_t next_read, next_patch;
  uint32_t backoff_ms;
  uint64_t seq;
  char why[256]; /* the last failure */
} loop_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void backoff(loop_t *l, int64_t *until) {
  l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : BACKOFF_MIN_MS;
  if (l->backoff_ms > BACKOFF_MAX_MS) l->backoff_ms = BACKOFF_MAX_MS;
  *until = now_ns() + (int64_t)l->backoff_ms * 1000000;
  atomic_fetch_add(&l->m->kube_errors, 1);
}

/* The registration, with the probe targets overridden by --url/--ca. */
static void read_reg(loop_t *l) {
  guard_reg_t r;
  ripple_kube_status_t st = {0};
  char why[512], q[600];
  int rc = guard_reg_read(l->kc, l->o->name, &r, &st, why, sizeof why);
  if (rc != RIPPLE_OK) {
    ripple_log_quote(why, q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "registration_unreadable", "name=%s err=%s why=%s backoff_ms=%u",
               l->o->name, ripple_kube_strerror(rc), q, l->backoff_ms ? l->backoff_ms * 2 : 250);
    backoff(l, &l->next_read);
    return;
  }
  for (size_t i = 0; i < r.n && l->o->url; i++) {
    free(r.t[i].url);
    free(r.t[i].ca);
    r.t[i].url = strdup(l->o->url);
    r.t[i].ca = l->o->ca ? strdup(l->o->ca) : NULL;
    r.t[i].ca_len = l->o->ca ? strlen(l->o->ca) : 0;
  }
  guard_reg_free(&l->reg);
  l->reg = r;
  l->have_reg = 1;
  l->backoff_ms = 0;
  l->next_read = now_ns() + (int64_t)l->o->resync_ms * 1000000;
  atomic_store(&l->m->webhook_disabled, r.off != 0);
  if (!l->started) { /* a guard restarted while the webhook was out keeps it out */
    guard_sm_init(&l->sm, l->o->fail_after, l->o->recover_after, r.off != 0);
    l->started = 1;
    ripple_log(RIPPLE_LOG_INFO, "registration", "name=%s webhooks=%zu url=%s off=%d", l->o->name,
               r.n, r.n ? r.t[0].url : "", r.off);
  }
}

/* Every webhook probed; the round fails when one does. */
static int probe_all(loop_t *l) {
  int ok = 1;
  for (size_t i = 0; i < l->reg.n && ok; i++) {
    const guard_target_t *t = &l->reg.t[i];
    if (!l->o->allow_remote && !guard_url_loopback(t->url)) {
      RIPPLE_LOG_ONCE(RIPPLE_LOG_ERROR, "probe_refused", "url=%s hint=%s", t->url,
                      "not on loopback; --allow-remote to probe it");
      return -1;
    }
    int64_t t0 = now_ns();
    int rc = guard_probe(t, l->o->probe_timeout_ms, ++l->seq, l->why, sizeof l->why);
    atomic_store(&l->m->last_probe_us, (now_ns() - t0) / 1000);
    atomic_fetch_add(&l->m->probes, 1);
    if (rc != RIPPLE_OK) {
      atomic_fetch_add(&l->m->probe_failures, 1);
      ok = 0;
    }
  }
  atomic_store(&l->m->last_ok, ok);
  return ok;
}

/* Make the registration say what the state machine decided. */
static void reconcile(loop_t *l) {
  int want = l->sm.disabled;
  if (l->reg.off == want || now_ns() < l->next_patch) return;
  ripple_kube_status_t st = {0};
  int rc = guard_reg_set(l->kc, l->o->name, &l->reg, want, &st);
  char q[600];
  if (rc != RIPPLE_OK) {
    ripple_log_quote(st.message[0] ? st.message : ripple_kube_strerror(rc), q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "patch_failed", "name=%s want_off=%d err=%s why=%s", l->o->name,
               want, ripple_kube_strerror(rc), q);
    backoff(l, &l->next_patch);
    l->next_read = 0; /* it may have changed or gone */
    return;
  }
  l->reg.off = want;
  l->backoff_ms = 0;
  atomic_store(&l->m->webhook_disabled, want);
  atomic_fetch_add(want ? &l->m->disabled : &l->m->restored, 1);
  ripple_log_quote(want ? l->why : "probes succeed again", q, sizeof q);
  ripple_log(RIPPLE_LOG_WARN, want ? "webhook_disabled" : "webhook_restored",
             "name=%s webhooks=%zu why=%s fails=%u oks=%u recover_need=%u", l->o->name, l->reg.n, q,
             l->sm.fails, l->sm.oks, l->sm.recover_need);
}

/* Sleep until deadline, or until a signal: 1 when one came. */
static int sleep_until(int64_t deadline, const sigset_t *sigs) {
  int64_t left = deadline - now_ns();
  if (left <= 0) left = 1000000;
  struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
  int sig = sigtimedwait(sigs, NULL, &ts);
  if (sig > 0) {
    ripple_log(RIPPLE_LOG_INFO, "stopping", "signal=%d registration=unchanged", sig);
    return 1;
  }
  return 0;
}

void guard_loop(const guard_opts_t *o, ripple_kube_client_t *kc, guard_metrics_t *m,
                const sigset_t *sigs) {
  loop_t l;
  memset(&l, 0, sizeof l);
  l.o = o, l.kc = kc, l.m = m;
  for (;;) {
    int64_t t0 = now_ns();
    if (now_ns() >= l.next_read) read_reg(&l);
    if (l.have_reg && l.started) {
      int ok = probe_all(&l);
      if (ok >= 0) {
        guard_action_t a = guard_sm_probe(&l.sm, ok, now_ns());
        if (a != GUARD_KEEP) l.next_patch = 0; /* a new decision is tried at once */
        if (!ok && l.sm.fails == 1) {          /* the first failure of a streak */
          char q[600];
          ripple_log_quote(l.why, q, sizeof q);
          ripple_log(RIPPLE_LOG_INFO, "probe_failed", "why=%s", q);
        }
      }
      reconcile(&l);
    }
    if (sleep_until(t0 + (int64_t)o->interval_ms * 1000000, sigs)) break;
  }
  guard_reg_free(&l.reg);
}
