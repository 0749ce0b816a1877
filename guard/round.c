/*
 * round.c - one probe round of ripple-guard (loop.h): every webhook of the
 * registration probed, by its URL, or, when it is registered by Service,
 * each of the Service's ready endpoints on its own (docs/guard.md,
 * "Replicas").
 *
 * A webhook registered by Service runs as replicas behind it, and kube-proxy
 * sends each new connection to any of them: one hung replica would fail a
 * probe through the Service now and then, and two such rounds in a row
 * would take all tracing out of the write path while the other replicas
 * answer. So each endpoint is probed (at once, each on its own connection,
 * TLS still checked for the Service's name), and the webhook fails the round
 * only when none answers or none is ready. The hung replica itself is the
 * kubelet's to take out of the Service (its readinessProbe); here its
 * failures are counted and logged once per streak.
 *
 * The endpoints are read every --resync and, before a round is failed, again
 * (at most once a second): a rollout that replaced every Pod since the last
 * read must not look like a dead webhook. A Service whose endpoints cannot be
 * read (RBAC, the API server) keeps the last ones read, or is probed by its
 * URL until they can be.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "loop.h"
#include "ripplex/logonce.h"

#define REREAD_MIN_NS 1000000000LL /* endpoints re-read before a failure at most this often */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The webhook as probed: --url (and --ca) in place of its clientConfig, the
 * CA given in place of its caBundle. */
static guard_target_t as_probed(const guard_opts_t *o, const guard_target_t *t0, const char *ca,
                                size_t ca_len) {
  guard_target_t t = *t0; /* borrowed strings */
  if (o->url) {
    t.url = (char *)o->url;
    t.ca = (char *)o->ca;
    t.ca_len = o->ca ? strlen(o->ca) : 0;
    t.svc_ns = t.svc_name = NULL; /* that URL is what is probed */
  }
  if (ca) t.ca = (char *)ca, t.ca_len = ca_len;
  return t;
}

static void log_read(const guard_target_t *t, const guard_eps_t *e) {
  char q[200];
  ripple_log_quote(e->why, q, sizeof q);
  char svc[300];
  snprintf(svc, sizeof svc, "%s/%s", t->svc_ns ? t->svc_ns : "", t->svc_ns ? t->svc_name : "");
  ripple_log(e->bad ? RIPPLE_LOG_WARN : RIPPLE_LOG_INFO, "endpoints",
             "webhook=%s service=%s ready=%zu malformed=%u dropped=%u why=%s", t->name,
             t->svc_ns ? svc : "--endpoints", e->n, e->bad, e->dropped, e->bad ? q : "\"\"");
}

/* Read webhook i's endpoints (t registered by Service): 1 when the set
 * changed, 0 when not (or the read failed: the last set stays). */
static int read_eps(guard_round_t *g, size_t i, const guard_target_t *t) {
  static guard_eps_t fresh; /* one thread: kept off the stack */
  ripple_kube_status_t st = {0};
  char why[200], q[300];
  int64_t now = now_ns();
  g->next_read[i] = now + (int64_t)g->o->resync_ms * 1000000;
  g->read_at[i] = now;
  if (guard_eps_read(g->kc, t, &fresh, &st, why, sizeof why) != RIPPLE_OK) {
    atomic_fetch_add(&g->m->kube_errors, 1);
    if (strcmp(why, g->read_why) != 0) {
      ripple_log_quote(why, q, sizeof q);
      ripple_log(RIPPLE_LOG_WARN, "endpoints_unreadable", "webhook=%s why=%s probing=%s", t->name,
                 q, g->known[i] ? "the endpoints read before" : "the Service's URL");
    }
    snprintf(g->read_why, sizeof g->read_why, "%s", why);
    return 0;
  }
  g->read_why[0] = '\0';
  if (fresh.bad) atomic_fetch_add(&g->m->slice_errors, fresh.bad);
  int changed = !g->known[i] || !guard_eps_same(&fresh, &g->eps[i]) || fresh.bad != g->eps[i].bad;
  guard_eps_carry(&fresh, &g->eps[i]);
  g->eps[i] = fresh;
  g->known[i] = 1;
  if (changed) log_read(t, &fresh);
  return changed;
}

/* Webhook i's endpoints up to date: --endpoints, or its Service's when due.
 * 1 when it is probed by endpoints, 0 by its URL. */
static int eps_for(guard_round_t *g, size_t i, const guard_target_t *t) {
  if (g->o->endpoints) {
    if (!g->known[i]) {
      g->eps[i] = *g->o->endpoints, g->known[i] = 1;
      log_read(t, &g->eps[i]);
    }
    return 1;
  }
  if (!t->svc_ns) return 0;
  char key[300];
  snprintf(key, sizeof key, "%s/%s:%ld", t->svc_ns, t->svc_name, t->svc_port);
  if (strcmp(key, g->key[i]) != 0) { /* another Service at this index: start over */
    snprintf(g->key[i], sizeof g->key[i], "%s", key);
    g->known[i] = 0;
    g->next_read[i] = 0;
  }
  if (now_ns() >= g->next_read[i]) read_eps(g, i, t);
  return g->known[i];
}

/* Each endpoint's result: counted, and a streak logged at its start and end. */
static int tally(guard_round_t *g, const guard_target_t *t, guard_eps_t *eps,
                 const guard_probe_job_t *jobs, const char **first_why, const guard_ep_t **first) {
  int answered = 0;
  int64_t slowest = 0;
  for (size_t k = 0; k < eps->n; k++) {
    guard_ep_t *e = &eps->e[k];
    char ep[GUARD_ADDR_MAX + 10], q[300];
    guard_ep_text(e, ep, sizeof ep);
    atomic_fetch_add(&g->m->ep_probes, 1);
    if (jobs[k].us > slowest) slowest = jobs[k].us;
    if (jobs[k].rc == RIPPLE_OK) {
      if (e->failing)
        ripple_log(RIPPLE_LOG_INFO, "endpoint_answers", "webhook=%s endpoint=%s", t->name, ep);
      e->failing = 0;
      answered++;
      continue;
    }
    atomic_fetch_add(&g->m->ep_probe_failures, 1);
    if (!*first) *first = e, *first_why = jobs[k].why;
    if (e->failing) continue;
    e->failing = 1;
    ripple_log_quote(jobs[k].why, q, sizeof q);
    ripple_log(RIPPLE_LOG_INFO, "endpoint_failed", "webhook=%s endpoint=%s why=%s", t->name, ep, q);
  }
  atomic_store(&g->m->last_probe_us, slowest);
  return answered;
}

/* Every endpoint of webhook i probed at once: 1 when one answered, 0 when
 * none did (or none is ready), -1 when one is refused (not on loopback). */
static int probe_eps(guard_round_t *g, size_t i, const guard_target_t *t, char *why, size_t cap) {
  static guard_probe_job_t jobs[GUARD_MAX_ENDPOINTS]; /* one thread */
  guard_eps_t *eps = &g->eps[i];
  for (size_t k = 0; k < eps->n && !g->o->allow_remote; k++)
    if (!guard_addr_loopback(eps->e[k].addr)) {
      RIPPLE_LOG_ONCE(RIPPLE_LOG_ERROR, "probe_refused", "endpoint=%s hint=%s", eps->e[k].addr,
                      "\"not on loopback; --allow-remote to probe it\"");
      return -1;
    }
  if (!eps->n) {
    snprintf(why, cap, "no ready endpoint%s%s", t->svc_ns ? " of service " : "",
             t->svc_ns ? t->svc_name : "");
    return 0;
  }
  for (size_t k = 0; k < eps->n; k++)
    jobs[k] = (guard_probe_job_t){.t = t, .ep = &eps->e[k], .seq = ++g->seq};
  guard_probe_run(jobs, eps->n, g->o->probe_timeout_ms);
  const char *first_why = "";
  const guard_ep_t *first = NULL;
  int answered = tally(g, t, eps, jobs, &first_why, &first);
  g->total += (int)eps->n;
  g->answering += answered;
  if (answered && answered < (int)eps->n) g->partial = 1;
  if (!answered) {
    char ep[GUARD_ADDR_MAX + 10] = "";
    if (first) guard_ep_text(first, ep, sizeof ep);
    snprintf(why, cap, "none of %zu endpoints answered (%s: %.150s)", eps->n, ep, first_why);
  }
  return answered > 0;
}

/* Webhook i by its endpoints; before it is failed, its Service's endpoints
 * are read again (a rollout may have replaced them) and, if they changed,
 * probed once more. */
static int probe_service(guard_round_t *g, size_t i, const guard_target_t *t, char *why,
                         size_t cap) {
  int total = g->total, answering = g->answering;
  int ok = probe_eps(g, i, t, why, cap);
  if (ok != 0 || g->o->endpoints || now_ns() - g->read_at[i] < REREAD_MIN_NS) return ok;
  if (!read_eps(g, i, t)) return ok;
  g->total = total, g->answering = answering; /* the new set's count instead */
  return probe_eps(g, i, t, why, cap);
}

/* Webhook t by its URL (as before endpoints): 1 answered, 0 not, -1 refused. */
static int probe_url(guard_round_t *g, const guard_target_t *t, char *why, size_t cap) {
  if (!g->o->allow_remote && !guard_url_loopback(t->url)) {
    RIPPLE_LOG_ONCE(RIPPLE_LOG_ERROR, "probe_refused", "url=%s hint=%s", t->url,
                    "not on loopback; --allow-remote to probe it");
    return -1;
  }
  int64_t t0 = now_ns();
  int rc = guard_probe(t, g->o->probe_timeout_ms, ++g->seq, why, cap);
  atomic_store(&g->m->last_probe_us, (now_ns() - t0) / 1000);
  return rc == RIPPLE_OK;
}

int guard_round_run(guard_round_t *g, const guard_reg_t *reg, const char *ca, size_t ca_len,
                    char *why, size_t cap) {
  int ok = 1;
  g->total = g->answering = g->partial = 0;
  for (size_t i = 0; i < reg->n && ok == 1; i++) {
    guard_target_t t = as_probed(g->o, &reg->t[i], ca, ca_len);
    ok = eps_for(g, i, &t) ? probe_service(g, i, &t, why, cap) : probe_url(g, &t, why, cap);
    if (ok < 0) return -1;
    atomic_fetch_add(&g->m->probes, 1);
    if (!ok) atomic_fetch_add(&g->m->probe_failures, 1);
  }
  if (ok && g->partial) atomic_fetch_add(&g->m->partial_rounds, 1);
  atomic_store(&g->m->endpoints, g->total);
  atomic_store(&g->m->endpoints_answering, g->answering);
  return ok;
}
