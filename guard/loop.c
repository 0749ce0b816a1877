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
 *
 * With --ca-bundle the guard also keeps every webhook's caBundle equal to
 * that file, re-read at every --resync, and sets it before it ever removes
 * its condition: the API server then trusts the CA the probes trusted. A
 * registration that is not there yet (404) is waited for.
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
  guard_reg_t reg; /* as last read, or as patched since */
  int have_reg, started;
  int missing; /* the registration is not there (404): logged once, waited for */
  int held;    /* a restore is held back for the caBundle (logged once per hold) */
  int64_t next_read, next_patch, next_bundle;
  uint32_t backoff_ms;
  uint64_t seq;
  char *bundle; /* --ca-bundle's content; NULL before the first read and while unreadable */
  size_t bundle_len;
  char bundle_why[200]; /* why the last read failed ("" when it did not): logged on change */
  char why[256];        /* the last failure */
  guard_round_t round;  /* each webhook's endpoints across rounds */
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

/* May the condition come off? Only once every webhook's caBundle is the CA
 * the probes trusted (always, without --ca-bundle). */
static int ca_ok(const loop_t *l) {
  if (!l->o->ca_bundle) return 1;
  return l->bundle && l->have_reg && guard_reg_ca_equal(&l->reg, l->bundle, l->bundle_len);
}

/* --ca-bundle's file, at start and every --resync: the kubelet rewrites a
 * mounted Secret in place. Unreadable or not PEM: counted each time, logged
 * when the reason changes, and the rounds fail until it is good again; never
 * fatal. */
static void read_bundle(loop_t *l) {
  const char *path = l->o->ca_bundle;
  l->next_bundle = now_ns() + (int64_t)l->o->resync_ms * 1000000;
  char *text = NULL, why[200], q[300], qp[600];
  size_t len = 0;
  ripple_log_quote(path, qp, sizeof qp);
  if (guard_bundle_read(path, &text, &len, why, sizeof why) != RIPPLE_OK) {
    atomic_fetch_add(&l->m->ca_bundle_errors, 1);
    ripple_log_quote(why, q, sizeof q);
    if (strcmp(why, l->bundle_why) != 0)
      ripple_log(RIPPLE_LOG_WARN, "ca_bundle_unreadable", "file=%s why=%s hint=%s", qp, q,
                 "\"rounds fail (the webhook stays or goes out) until it is readable PEM; "
                 "read again every --resync\"");
    snprintf(l->bundle_why, sizeof l->bundle_why, "%s", why);
    free(l->bundle);
    l->bundle = NULL;
    l->bundle_len = 0;
    return;
  }
  l->bundle_why[0] = '\0';
  if (l->bundle && len == l->bundle_len && !memcmp(text, l->bundle, len)) {
    free(text);
    return;
  }
  ripple_log(RIPPLE_LOG_INFO, "ca_bundle_read", "file=%s bytes=%zu", qp, len);
  /* Successes seen with another CA do not count for a restore with this one. */
  if (l->bundle) l->sm.oks = 0;
  free(l->bundle);
  l->bundle = text;
  l->bundle_len = len;
}

/* The registration as it is (a 404 is waited for: the guard may start before
 * the registration is created). */
static void read_reg(loop_t *l) {
  guard_reg_t r;
  ripple_kube_status_t st = {0};
  char why[512], q[600];
  int rc = guard_reg_read(l->kc, l->o->name, &r, &st, why, sizeof why);
  if (rc == RIPPLE_KUBE_ENOTFOUND) {
    if (!l->missing)
      ripple_log(RIPPLE_LOG_INFO, "registration_missing", "name=%s hint=%s", l->o->name,
                 "\"waiting for it to be created; nothing is probed or patched until then\"");
    l->missing = 1;
    l->have_reg = 0;
    backoff(l, &l->next_read);
    return;
  }
  if (rc != RIPPLE_OK) {
    ripple_log_quote(why, q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "registration_unreadable", "name=%s err=%s why=%s backoff_ms=%u",
               l->o->name, ripple_kube_strerror(rc), q, l->backoff_ms ? l->backoff_ms * 2 : 250);
    backoff(l, &l->next_read);
    return;
  }
  guard_reg_free(&l->reg);
  l->reg = r;
  l->have_reg = 1;
  l->backoff_ms = 0;
  l->next_read = now_ns() + (int64_t)l->o->resync_ms * 1000000;
  atomic_store(&l->m->webhook_disabled, r.off != 0);
  /* A guard restarted while the webhook was out keeps it out; a registration
   * that (re)appears is taken as it is, like at a start. */
  if (!l->started || l->missing) {
    guard_sm_init(&l->sm, l->o->fail_after, l->o->recover_after, r.off != 0);
    l->started = 1;
    l->missing = 0;
    ripple_log(RIPPLE_LOG_INFO, "registration",
               "name=%s webhooks=%zu url=%s off=%d ca_bundle_synced=%d", l->o->name, r.n,
               l->o->url ? l->o->url
               : r.n     ? r.t[0].url
                         : "",
               r.off, ca_ok(l));
  }
}

static void patch_failed(loop_t *l, const char *patch, int rc, const ripple_kube_status_t *st) {
  char q[600];
  ripple_log_quote(st->message[0] ? st->message : ripple_kube_strerror(rc), q, sizeof q);
  ripple_log(RIPPLE_LOG_WARN, "patch_failed", "name=%s patch=%s err=%s why=%s", l->o->name, patch,
             ripple_kube_strerror(rc), q);
  backoff(l, &l->next_patch);
  l->next_read = 0; /* it may have changed or gone */
}

/* Every webhook's caBundle made --ca-bundle's content, before anything else:
 * the condition comes off only after this. */
static void sync_ca(loop_t *l) {
  if (!l->bundle || !l->have_reg || ca_ok(l) || now_ns() < l->next_patch) return;
  ripple_kube_status_t st = {0};
  int rc = guard_reg_set_ca(l->kc, l->o->name, &l->reg, l->bundle, l->bundle_len, &st);
  if (rc != RIPPLE_OK) {
    patch_failed(l, "ca_bundle", rc, &st);
    return;
  }
  l->backoff_ms = 0;
  if (guard_reg_ca_adopt(&l->reg, l->bundle, l->bundle_len) != RIPPLE_OK) l->next_read = 0;
  atomic_fetch_add(&l->m->ca_bundle_set, 1);
  char qp[600];
  ripple_log_quote(l->o->ca_bundle, qp, sizeof qp);
  ripple_log(RIPPLE_LOG_WARN, "ca_bundle_set", "name=%s webhooks=%zu file=%s bytes=%zu off=%d",
             l->o->name, l->reg.n, qp, l->bundle_len, l->reg.off);
}

/* Every webhook probed (round.c); the round fails when one does. The probe
 * trusts --ca-bundle's CA when given, and fails while that is unreadable. */
static int probe_all(loop_t *l) {
  if (l->o->ca_bundle && !l->bundle) {
    snprintf(l->why, sizeof l->why, "--ca-bundle %.200s is unreadable or not PEM", l->o->ca_bundle);
    atomic_store(&l->m->last_ok, 0);
    return 0;
  }
  int ok = guard_round_run(&l->round, &l->reg, l->bundle, l->bundle_len, l->why, sizeof l->why);
  if (ok >= 0) atomic_store(&l->m->last_ok, ok);
  return ok;
}

/* Make the registration say what the state machine decided. */
static void reconcile(loop_t *l) {
  int want = l->sm.disabled;
  if (l->reg.off == want || now_ns() < l->next_patch) return;
  if (!want && !ca_ok(l)) return; /* never restored with a caBundle the probes did not use */
  ripple_kube_status_t st = {0};
  int rc = guard_reg_set(l->kc, l->o->name, &l->reg, want, &st);
  if (rc != RIPPLE_OK) {
    patch_failed(l, want ? "off" : "on", rc, &st);
    return;
  }
  l->reg.off = want;
  l->backoff_ms = 0;
  atomic_store(&l->m->webhook_disabled, want);
  atomic_fetch_add(want ? &l->m->disabled : &l->m->restored, 1);
  char q[600];
  ripple_log_quote(want ? l->why : "probes succeed again", q, sizeof q);
  ripple_log(RIPPLE_LOG_WARN, want ? "webhook_disabled" : "webhook_restored",
             "name=%s webhooks=%zu why=%s fails=%u oks=%u recover_need=%u", l->o->name, l->reg.n, q,
             l->sm.fails, l->sm.oks, l->sm.recover_need);
}

/* One round: the caBundle first, then the probes, the decision, the patch. */
static void round_run(loop_t *l) {
  sync_ca(l);
  int ok = probe_all(l);
  if (ok < 0) return;
  int may_restore = ca_ok(l);
  guard_action_t a = guard_sm_step(&l->sm, ok, may_restore, now_ns());
  if (a != GUARD_KEEP) l->next_patch = 0; /* a new decision is tried at once */
  char q[600];
  if (!ok && l->sm.fails == 1) { /* the first failure of a streak */
    ripple_log_quote(l->why, q, sizeof q);
    ripple_log(RIPPLE_LOG_INFO, "probe_failed", "why=%s", q);
  }
  int held = l->sm.disabled && ok && !may_restore && l->sm.oks >= l->sm.recover_need;
  if (held && !l->held)
    ripple_log(RIPPLE_LOG_INFO, "restore_held", "name=%s why=%s", l->o->name,
               "\"the registration's caBundle is not --ca-bundle's yet\"");
  l->held = held;
  reconcile(l);
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
  l.round.o = o, l.round.kc = kc, l.round.m = m;
  for (;;) {
    int64_t t0 = now_ns();
    if (o->ca_bundle && t0 >= l.next_bundle) read_bundle(&l);
    if (now_ns() >= l.next_read) read_reg(&l);
    if (l.have_reg && l.started) round_run(&l);
    atomic_store(&m->ca_bundle_synced, ca_ok(&l));
    if (sleep_until(t0 + (int64_t)o->interval_ms * 1000000, sigs)) break;
  }
  guard_reg_free(&l.reg);
  free(l.bundle);
}
