/*
 * lease.c - the election's thread (lease.h): reads the Lease, decides with
 * leaserec.c's pure functions, writes, and publishes what it knows for
 * wh_lease_state.
 *
 * The thread owns the view (what it read and wrote) and the Lease object it
 * last saw; after each change it copies the view under the mutex, so that
 * wh_lease_state answers from the last copy and its own clock without I/O.
 * That clock check is what makes a holder whose thread hangs in a request
 * (or is paused) stop being the decider on time.
 *
 * While it holds the Lease the thread renews with the resourceVersion of its
 * own last write, without reading first (client-go's fast path): one request
 * per retry period. A conflict means someone else wrote: it reads and
 * decides again.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease.h"
#include "ripplex/clock.h"
#include "ripplex/logonce.h"

#define MS 1000000LL

static const ripple_kube_resource_t lease_res = {"coordination.k8s.io", "v1", "leases", "Lease", 1};

struct wh_lease {
  ripple_kube_client_t *kc;
  char *ns, *name, *me;
  int64_t dur_s, dur_ns, retry_ns, deadline_ns;
  pthread_mutex_t mu; /* guards stop, paused and the published copy */
  pthread_cond_t cv;  /* on CLOCK_MONOTONIC: wakes the thread to stop or unpause */
  pthread_t thread;
  int stop, paused;
  wh_lease_view_t pub; /* the view as last published */
  int64_t pub_since;
  /* The thread's own (and wh_lease_stop's once the thread is gone). */
  wh_lease_view_t v;
  int64_t since_ns;
  json_t *obj; /* the Lease as last read or written: what an update sends back */
  int trouble; /* an API error was logged and no call has succeeded since */
};

/* ---- logging --------------------------------------------------------------- */

/* Logged once per streak of failures, however many retries it takes. */
static void trouble(wh_lease_t *l, const char *op, int rc, const ripple_kube_status_t *st) {
  if (l->trouble) return;
  l->trouble = 1;
  char msg[600];
  ripple_log_quote(st->message, msg, sizeof msg);
  ripple_log(RIPPLE_LOG_WARN, "lease_api_error",
             "op=%s ns=%s name=%s error=%s http=%ld reason=%s message=%s", op, l->ns, l->name,
             ripple_kube_strerror(rc), st->http, st->reason[0] ? st->reason : "none", msg);
}

static void answered(wh_lease_t *l) {
  if (!l->trouble) return;
  l->trouble = 0;
  ripple_log(RIPPLE_LOG_INFO, "lease_api_ok", "ns=%s name=%s", l->ns, l->name);
}

static const char *holder_text(const wh_lease_rec_t *r, char *buf, size_t cap) {
  if (r->state == WH_LEASE_BAD) return "unknown";
  ripple_log_quote(r->holder, buf, cap);
  return r->state == WH_LEASE_FREE ? "none" : buf;
}

/* Log what wh_lease_observe/_wrote/_step_down reported and publish it. */
static void report(wh_lease_t *l, unsigned f, const char *why) {
  char h[WH_LEASE_ID_MAX * 4 + 3];
  const wh_lease_rec_t *r = &l->v.rec;
  if (f & WH_LEASE_LOST)
    ripple_log(RIPPLE_LOG_WARN, "lease_lost", "ns=%s name=%s reason=%s holder=%s", l->ns, l->name,
               why, holder_text(r, h, sizeof h));
  if ((f & WH_LEASE_NEW_HOLDER) && l->v.held) {
    l->since_ns = mono_ns();
    ripple_log(RIPPLE_LOG_INFO, "lease_decider", "ns=%s name=%s transitions=%lld", l->ns, l->name,
               (long long)r->transitions);
  } else if (f & WH_LEASE_NEW_HOLDER) {
    ripple_log(RIPPLE_LOG_INFO, "lease_holder", "ns=%s name=%s holder=%s transitions=%lld", l->ns,
               l->name, l->v.exists ? holder_text(r, h, sizeof h) : "none",
               (long long)r->transitions);
  }
  pthread_mutex_lock(&l->mu);
  l->pub = l->v;
  l->pub_since = l->since_ns;
  pthread_mutex_unlock(&l->mu);
}

/* ---- requests -------------------------------------------------------------- */

static void keep(wh_lease_t *l, json_t *obj) {
  json_decref(l->obj);
  l->obj = obj;
}

/* A parsed answer, or RIPPLE_EJSON for one that is no Lease. */
static int parse(wh_lease_t *l, const json_t *obj, wh_lease_rec_t *r) {
  int bad = wh_lease_rec_parse(obj, r);
  if (bad > 0)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "lease_malformed", "ns=%s name=%s fields=%d", l->ns, l->name,
                    bad);
  return bad < 0 ? RIPPLE_EJSON : RIPPLE_OK;
}

static int read_lease(wh_lease_t *l) {
  json_t *obj = NULL;
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_get(l->kc, &lease_res, l->ns, l->name, &obj, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND) {
    answered(l);
    keep(l, NULL);
    report(l, wh_lease_observe(&l->v, NULL, l->me, mono_ns()), "deleted");
    return RIPPLE_OK;
  }
  if (rc != RIPPLE_OK) {
    trouble(l, "get", rc, &st);
    return rc;
  }
  answered(l);
  wh_lease_rec_t r;
  if ((rc = parse(l, obj, &r)) != RIPPLE_OK) {
    json_decref(obj);
    return rc;
  }
  keep(l, obj);
  report(l, wh_lease_observe(&l->v, &r, l->me, mono_ns()), "taken");
  return RIPPLE_OK;
}

/* The object to send for plan next: the Lease as last seen (its labels,
 * annotations and owners kept, as client-go keeps them) with next's spec and
 * resourceVersion, or a new one to create. NULL when out of memory. */
static json_t *body(wh_lease_t *l, wh_lease_action_t a, const wh_lease_rec_t *next) {
  json_t *o = a == WH_LEASE_CREATE || !l->obj ? json_object() : json_copy(l->obj);
  json_t *md = json_object_get(l->obj, "metadata");
  md = a != WH_LEASE_CREATE && json_is_object(md) ? json_copy(md) : json_object();
  json_t *spec = wh_lease_spec(next);
  int bad = !o || !md || !spec;
  if (!bad) {
    json_object_del(md, "managedFields"); /* left out, the server keeps them */
    bad |= json_object_set_new(md, "name", json_string(l->name));
    bad |= json_object_set_new(md, "namespace", json_string(l->ns));
    if (a == WH_LEASE_CREATE)
      json_object_del(md, "resourceVersion");
    else
      bad |= json_object_set_new(md, "resourceVersion", json_string(next->rv));
    bad |= json_object_set_new(o, "apiVersion", json_string("coordination.k8s.io/v1"));
    bad |= json_object_set_new(o, "kind", json_string("Lease"));
    bad |= json_object_set(o, "metadata", md);
    bad |= json_object_set(o, "spec", spec);
  }
  json_decref(md);
  json_decref(spec);
  if (bad) json_decref(o);
  return bad ? NULL : o;
}

static const char *const op_names[] = {[WH_LEASE_CREATE] = "create",
                                       [WH_LEASE_TAKE] = "take",
                                       [WH_LEASE_RENEW] = "renew",
                                       [WH_LEASE_RELEASE] = "release"};

/* Write plan a. RIPPLE_OK when stored (and folded into the view), else the
 * client's code; a conflict or a vanished Lease is someone else's write,
 * not trouble: the next read shows it. */
static int write_lease(wh_lease_t *l, wh_lease_action_t a) {
  wh_lease_rec_t next, r;
  int64_t start = mono_ns();
  wh_lease_plan(&l->v, a, l->me, ripple_now_ns(), l->dur_s, &next);
  json_t *o = body(l, a, &next), *out = NULL;
  if (!o) return RIPPLE_ENOMEM;
  ripple_kube_status_t st = {0};
  int rc = a == WH_LEASE_CREATE ? ripple_kube_create(l->kc, &lease_res, l->ns, o, NULL, &out, &st)
                                : ripple_kube_update(l->kc, &lease_res, l->ns, o, NULL, &out, &st);
  json_decref(o);
  if (rc == RIPPLE_KUBE_ECONFLICT || rc == RIPPLE_KUBE_ENOTFOUND) {
    answered(l);
    return rc;
  }
  if (rc != RIPPLE_OK) {
    trouble(l, op_names[a], rc, &st);
    return rc;
  }
  answered(l);
  if ((rc = parse(l, out, &r)) != RIPPLE_OK) {
    json_decref(out);
    return rc;
  }
  keep(l, out);
  unsigned f = wh_lease_wrote(&l->v, a, &r, l->me, start, mono_ns());
  report(l, a == WH_LEASE_RELEASE ? 0 : f, ""); /* release() logs its one line */
  return RIPPLE_OK;
}

/* ---- the thread ------------------------------------------------------------ */

static void tick(wh_lease_t *l) {
  if (wh_lease_step_down(&l->v, mono_ns(), l->deadline_ns))
    report(l, WH_LEASE_LOST, "renew_deadline");
  if (l->v.held) {
    int rc = write_lease(l, WH_LEASE_RENEW);
    if (rc != RIPPLE_KUBE_ECONFLICT && rc != RIPPLE_KUBE_ENOTFOUND) return;
  }
  if (read_lease(l) != RIPPLE_OK) return;
  wh_lease_action_t a = wh_lease_decide(&l->v, l->me, mono_ns(), l->dur_ns);
  if (a != WH_LEASE_WAIT) (void)write_lease(l, a);
}

/* Sleep until mono time `until`, or until stopped or unpaused; with l->mu. */
static void sleep_until(wh_lease_t *l, int64_t until) {
  struct timespec ts = {.tv_sec = until / 1000000000LL, .tv_nsec = until % 1000000000LL};
  int paused = l->paused;
  while (!l->stop && l->paused == paused && mono_ns() < until)
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

static void *run(void *ud) {
  wh_lease_t *l = ud;
  pthread_mutex_lock(&l->mu);
  while (!l->stop) {
    int64_t t0 = mono_ns();
    if (!l->paused) {
      pthread_mutex_unlock(&l->mu);
      tick(l);
      pthread_mutex_lock(&l->mu);
    }
    sleep_until(l, t0 + l->retry_ns);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* ---- the handle ------------------------------------------------------------- */

static int check(const wh_lease_opts_t *o, uint32_t *dur, uint32_t *retry, uint32_t *deadline) {
  if (!o || !o->kc || !o->ns || !*o->ns || !o->name || !*o->name || !o->identity || !*o->identity ||
      strlen(o->identity) >= WH_LEASE_ID_MAX || strlen(o->ns) > 63 || strlen(o->name) > 253)
    return RIPPLE_EINVAL;
  *dur = o->duration_ms ? o->duration_ms : 4000;
  *retry = o->retry_ms ? o->retry_ms : 500;
  *deadline = o->renew_deadline_ms ? o->renew_deadline_ms : 3000;
  /* The safety margin: the holder gives up before anyone may take over. */
  if (*retry >= *deadline || *deadline >= *dur || *dur > WH_LEASE_DUR_MAX_S * 1000u)
    return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

static void lease_free(wh_lease_t *l) {
  json_decref(l->obj);
  free(l->ns);
  free(l->name);
  free(l->me);
  free(l);
}

static int lease_sync_init(wh_lease_t *l) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) return RIPPLE_ESYS;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&l->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0) return RIPPLE_ESYS;
  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    pthread_cond_destroy(&l->cv);
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

int wh_lease_start(const wh_lease_opts_t *o, wh_lease_t **out) {
  uint32_t dur, retry, deadline;
  if (!out || check(o, &dur, &retry, &deadline) != RIPPLE_OK) return RIPPLE_EINVAL;
  wh_lease_t *l = calloc(1, sizeof *l);
  if (!l) return RIPPLE_ENOMEM;
  l->kc = o->kc;
  l->ns = strdup(o->ns), l->name = strdup(o->name), l->me = strdup(o->identity);
  l->dur_s = (dur + 999) / 1000;
  l->dur_ns = l->dur_s * 1000 * MS;
  l->retry_ns = retry * MS, l->deadline_ns = deadline * MS;
  if (!l->ns || !l->name || !l->me) return lease_free(l), RIPPLE_ENOMEM;
  int rc = lease_sync_init(l);
  if (rc != RIPPLE_OK) return lease_free(l), rc;
  if (pthread_create(&l->thread, NULL, run, l) != 0) {
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    lease_free(l);
    return RIPPLE_ESYS;
  }
  *out = l;
  return RIPPLE_OK;
}

/* Give the Lease up when the record is still the one this process wrote
 * naming it (a conditional update: if anyone wrote since, it conflicts and
 * nothing is lost). Others then take it without waiting for it to expire. */
static void release(wh_lease_t *l) {
  const wh_lease_rec_t *r = &l->v.rec;
  if (!l->obj || !l->v.exists || r->state != WH_LEASE_HELD || strcmp(r->holder, l->me) != 0 ||
      strcmp(l->v.mine_rv, r->rv) != 0)
    return;
  if (write_lease(l, WH_LEASE_RELEASE) == RIPPLE_OK)
    ripple_log(RIPPLE_LOG_INFO, "lease_released", "ns=%s name=%s", l->ns, l->name);
}

void wh_lease_release(wh_lease_t *l) {
  if (!l) return;
  pthread_mutex_lock(&l->mu);
  int was = l->stop;
  l->stop = 1; /* wh_lease_state says 0 from here on */
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
  if (was) return;
  pthread_join(l->thread, NULL);
  release(l);
}

void wh_lease_stop(wh_lease_t *l) {
  if (!l) return;
  wh_lease_release(l);
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
  lease_free(l);
}

void wh_lease_pause(wh_lease_t *l, int paused) {
  if (!l) return;
  pthread_mutex_lock(&l->mu);
  l->paused = paused;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

int wh_lease_state(wh_lease_t *l, char *holder, size_t cap, int64_t *since_ns, uint64_t *gen) {
  if (holder && cap) holder[0] = '\0';
  if (since_ns) *since_ns = 0;
  if (gen) *gen = 0;
  if (!l) return 0;
  pthread_mutex_lock(&l->mu);
  int64_t now = mono_ns();
  const wh_lease_view_t *v = &l->pub;
  int decider = !l->stop && wh_lease_is_decider(v, now, l->deadline_ns);
  /* Another holder is live while its record keeps changing; this replica's
   * own name in the record says nothing unless it is the decider now. */
  int live =
      decider || (v->exists && v->rec.state == WH_LEASE_HELD && strcmp(v->rec.holder, l->me) != 0 &&
                  now - v->observed_ns < wh_lease_dur_ns(v, l->dur_ns));
  if (holder && cap && live) snprintf(holder, cap, "%s", v->rec.holder);
  if (since_ns) *since_ns = l->pub_since;
  if (gen) *gen = v->gen;
  pthread_mutex_unlock(&l->mu);
  return decider;
}
