/*
 * pending.c - bindings whose Pod the webhook does not know yet.
 *
 * The scheduler binds a Pod within milliseconds of its create, often before
 * the informer has it; a Pod created with generateName had no name at its
 * admission, so nothing remembered it under the name the binding names.
 * Guessing (from the name's prefix, say) could take another Pod's context,
 * which relates two unrelated changes; so the binding is allowed unchanged
 * (its Pod keeps the context it was created with) and only its span waits
 * here until the informer has the Pod of that name and uid. Entries older
 * than WH_PENDING_TTL are dropped and counted. wh_tick resolves them; the
 * program calls it from a timer thread, tests call it directly.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "objtext.h"
#include "pending.h"
#include "sources.h"

typedef struct pend {
  char ns[64], name[256], uid[64];
  char user[256], service[WH_SERVICE_MAX];
  int64_t admitted, answered;
  uint64_t span_id;                             /* named in the answer's audit annotation */
  char apiserver_trace[33], apiserver_span[17]; /* the review's (review.h) */
} pend_t;

struct wh_pending {
  pthread_mutex_t mu;
  pend_t q[WH_PENDING_MAX];
  size_t n;
};

int wh_pending_new(wh_pending_t **out) {
  wh_pending_t *p = calloc(1, sizeof *p);
  if (!p) return RIPPLE_ENOMEM;
  pthread_mutex_init(&p->mu, NULL);
  *out = p;
  return RIPPLE_OK;
}

void wh_pending_free(wh_pending_t *p) {
  if (!p) return;
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void wh_pending_add(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t now) {
  wh_pending_t *p = w->pending;
  pthread_mutex_lock(&p->mu);
  if (p->n == WH_PENDING_MAX) {
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_add(&w->m.pending_dropped, 1);
    return;
  }
  pend_t *e = &p->q[p->n++];
  snprintf(e->ns, sizeof e->ns, "%s", r->ns);
  snprintf(e->name, sizeof e->name, "%s", r->name);
  snprintf(e->uid, sizeof e->uid, "%s", d->uid);
  snprintf(e->user, sizeof e->user, "%s", r->user);
  snprintf(e->service, sizeof e->service, "%s", d->service);
  e->admitted = d->start_ns;
  e->answered = now;
  e->span_id = d->span_id;
  memcpy(e->apiserver_trace, r->apiserver_trace, sizeof e->apiserver_trace);
  memcpy(e->apiserver_span, r->apiserver_span, sizeof e->apiserver_span);
  pthread_mutex_unlock(&p->mu);
}

typedef struct found {
  const char *uid;
  json_t *pod;
} found_t;

static void take(void *ud, const char *json, size_t len) {
  found_t *f = ud;
  json_t *pod;
  if (wh_text_standin(json, len, "Pod", &pod) != RIPPLE_OK) return;
  const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
  if (*f->uid && (!uid || strcmp(uid, f->uid) != 0)) { /* another Pod of that name */
    json_decref(pod);
    return;
  }
  json_decref(f->pod);
  f->pod = pod;
}

/* The span of a binding whose Pod is now known, as wh_handle would have
 * emitted it. 1 when done (emitted, or nothing to emit), 0 to wait. */
static int resolve(wh_t *w, const pend_t *e, int64_t now) {
  found_t f = {e->uid, NULL};
  wh_lookup_get(w, "Pod", e->ns, e->name, take, &f);
  if (!f.pod) return 0;
  wh_decision_t d;
  memset(&d, 0, sizeof d);
  snprintf(d.kind, sizeof d.kind, "Pod");
  snprintf(d.service, sizeof d.service, "%s", e->service);
  const json_t *m = json_object_get(f.pod, "metadata");
  const char *uid = json_string_value(json_object_get(m, "uid"));
  const char *rv = json_string_value(json_object_get(m, "resourceVersion"));
  snprintf(d.uid, sizeof d.uid, "%s", uid ? uid : "");
  snprintf(d.rv, sizeof d.rv, "%s", rv ? rv : "");
  wh_owner_of(f.pod, d.owner, sizeof d.owner);
  int rc = wh_related_ctx(w, f.pod, "Pod", now, &d.ctx);
  json_decref(f.pod);
  if (rc != RIPPLE_OK) return 1; /* a Pod without a context: nothing to trace */
  int64_t t = wh_memo_cause_get(w->memo, &d.ctx.cpid);
  d.start_ns = t > 0 && t <= e->admitted ? t : e->admitted;
  d.traced = 1;
  d.how = RIPPLE_MERGE_UNCHANGED;
  d.span_id = e->span_id;
  wh_review_t r = {.op = WH_OP_CREATE,
                   .op_name = "CREATE",
                   .kind = "Binding",
                   .group = "",
                   .resource = "pods",
                   .subresource = "binding",
                   .ns = e->ns,
                   .name = e->name,
                   .user = e->user};
  memcpy(r.apiserver_trace, e->apiserver_trace, sizeof r.apiserver_trace);
  memcpy(r.apiserver_span, e->apiserver_span, sizeof r.apiserver_span);
  wh_emit_span(w, &r, &d, e->answered);
  atomic_fetch_add(&w->m.pending_resolved, 1);
  return 1;
}

void wh_tick(wh_t *w) {
  wh_pending_t *p = w->pending;
  int64_t now = wh_clock(w);
  pthread_mutex_lock(&p->mu);
  size_t queued = p->n;
  pthread_mutex_unlock(&p->mu);
  if (!queued) return;
  /* Resolve a copy outside the lock: lookups take the informers' locks. */
  pend_t *work = malloc(sizeof p->q);
  if (!work) return; /* the next tick tries again */
  pthread_mutex_lock(&p->mu);
  size_t n = p->n;
  memcpy(work, p->q, n * sizeof *work);
  p->n = 0;
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < n; i++) {
    if (resolve(w, &work[i], now)) continue;
    if (now - work[i].answered > WH_PENDING_TTL_NS) {
      atomic_fetch_add(&w->m.pending_dropped, 1);
      continue;
    }
    pthread_mutex_lock(&p->mu);
    if (p->n < WH_PENDING_MAX)
      p->q[p->n++] = work[i];
    else
      atomic_fetch_add(&w->m.pending_dropped, 1);
    pthread_mutex_unlock(&p->mu);
  }
  free(work);
}
