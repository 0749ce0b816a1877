/*
 * details_work.c - storing what POST /v1/details and POST /v1/audit bring
 * (trace_details.h: tdet_start, tdet_stop, tdet_ingest, tdet_ingest_audit,
 * tdet_pending): parsed into facts (details.h), stored, and fed to the field
 * fights (fights_feed.h), by the details' own worker thread. trace_details.c
 * answers with them.
 */
#include "analysis/trace_details.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/details.h"
#include "analysis/fights_feed.h"
#include "ripplex/clock.h"
#include "ripplex/idle.h"

/* ---- ingest ---------------------------------------------------------------- */

static int put_batch(tdet_t *s, det_batch_t *b, int64_t since, dec_error_t *err) {
  int rc = facts_put_since(s->core->facts, b->v, b->n, since);
  if (rc == RIPPLE_OK) return 200;
  if (rc == RIPPLE_EFULL) {
    snprintf(err->msg, sizeof err->msg,
             "the details queue is full (--details-queue) or behind by seconds; retry later");
    return 429;
  }
  snprintf(err->msg, sizeof err->msg, "storing details failed; retry later");
  return 503;
}

static int ingest_details(tdet_t *s, const char *body, size_t len, int64_t since, size_t *accepted,
                          dec_error_t *err) {
  det_batch_t b;
  *accepted = 0;
  int rc = det_decode(body, len, &s->limits, &b, err);
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&s->details_refused, 1);
    return rc == RIPPLE_ENOMEM ? 503 : rc == RIPPLE_ERANGE ? 413 : 400;
  }
  int status = put_batch(s, &b, since, err);
  if (status == 200) {
    *accepted = b.n;
    for (size_t i = 0; i < b.n; i++)
      atomic_fetch_add(&s->details_stored[b.v[i].type == FACT_CHANGE ? 0 : 1], 1);
    fights_feed_facts(s->fights, &b); /* once stored: a refused batch comes again */
  }
  det_batch_free(&b);
  return status;
}

static int ingest_audit(tdet_t *s, const char *body, size_t len, int64_t since, size_t *accepted,
                        dec_error_t *err) {
  audit_batch_t a;
  det_batch_t b;
  *accepted = 0;
  int rc = audit_parse(body, len, s->limits.max_records, &a, err->msg, sizeof err->msg);
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&s->details_refused, 1);
    return rc == RIPPLE_ENOMEM ? 503 : rc == RIPPLE_ERANGE ? 413 : 400;
  }
  atomic_fetch_add(&s->audit_skipped, a.skipped);
  atomic_fetch_add(&s->audit_malformed, a.malformed);
  int status = 503;
  if (det_from_audit(&a, &b) == RIPPLE_OK) {
    status = put_batch(s, &b, since, err);
    if (status == 200) {
      *accepted = b.n;
      atomic_fetch_add(&s->details_stored[2], b.n);
    }
    det_batch_free(&b);
  } else {
    snprintf(err->msg, sizeof err->msg, "out of memory; retry later");
  }
  audit_batch_free(&a);
  return status;
}

/* ---- the details' worker --------------------------------------------------------
 *
 * Details are parsed and stored by one thread at a background priority
 * (nice +15, ripplex/idle.h), not by the connection's thread: a flood of
 * audit events then takes a small share of the CPU beside ingest of
 * mergelogs and spans, never all of it, and is never starved. Requests
 * wait for it in a queue bounded by bytes; past the bound they are refused at
 * once with 429 (kube-apiserver's batch backend and the shipper retry). */

#define DWORK_MAX_BYTES ((size_t)256 << 20)

/* On a core saturated by ingest, nice +15 alone gets a few percent and the
 * details' lag grows up to the queue's bound (docs/benchmarks.md, "Issue 28:
 * details lag"). So a request that waited DWORK_LATE_NS for the worker is
 * parsed by its own connection's thread, at the connection's priority, while
 * a budget of CPU time lasts: DWORK_SHARE_MS of every second of a core, at
 * most DWORK_BURST_NS at once. Late details get that share for sure, and
 * ingest loses at most that share to them. */
#define DWORK_LATE_NS 1000000000LL
/* A queue whose oldest request has waited this long is behind: new requests
 * are refused (429) rather than queued behind it, so what is accepted is
 * stored within seconds (the details' lag is bounded by time, not only by
 * the queue's bytes) and a flood costs ingest no more than the details'
 * share of the CPU. */
#define DWORK_BEHIND_NS 2000000000LL
#define DWORK_RETRY_NS 100000000LL /* budget spent: look again this much later */
#define DWORK_SHARE_MS 50
#define DWORK_BURST_NS 250000000LL

typedef struct djob {
  int audit;
  const char *body;
  size_t len, accepted;
  int64_t since; /* mono_ns: when it was queued, where the details' lag starts */
  dec_error_t *err;
  int status, done;
  struct djob *next;
} djob_t;

struct dwork {
  tdet_t *s;
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  djob_t *head, *tail;
  size_t bytes, jobs;           /* bodies queued or being parsed */
  int64_t budget_ns, budget_at; /* late requests' CPU budget, refilled at budget_at */
  int stop, started;
  pthread_t thread;
};

static void run_job(tdet_t *s, djob_t *j) {
  j->status = j->audit ? ingest_audit(s, j->body, j->len, j->since, &j->accepted, j->err)
                       : ingest_details(s, j->body, j->len, j->since, &j->accepted, j->err);
}

static void *dwork_run(void *arg) {
  dwork_t *w = arg;
  if (!idle_enter()) ripple_log(RIPPLE_LOG_INFO, "details_priority", "nice=no");
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->head && !w->stop) pthread_cond_wait(&w->work, &w->mu);
    djob_t *j = w->head;
    if (!j) break; /* stopping, nothing left */
    w->head = j->next;
    if (!w->head) w->tail = NULL;
    pthread_mutex_unlock(&w->mu);
    run_job(w->s, j);
    pthread_mutex_lock(&w->mu);
    w->bytes -= j->len;
    w->jobs--;
    j->done = 1;
    pthread_cond_broadcast(&w->done);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int tdet_start(tdet_t *s) {
  dwork_t *w = calloc(1, sizeof *w);
  if (!w) return RIPPLE_ENOMEM;
  w->s = s;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->work, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* submit waits until a mono_ns() time */
  pthread_cond_init(&w->done, &ca);
  pthread_condattr_destroy(&ca);
  w->budget_ns = DWORK_BURST_NS;
  w->budget_at = mono_ns();
  if (pthread_create(&w->thread, NULL, dwork_run, w) != 0) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w);
    return RIPPLE_ESYS;
  }
  s->dwork = w;
  return RIPPLE_OK;
}

void tdet_stop(tdet_t *s) {
  dwork_t *w = s->dwork;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->work);
  pthread_cond_destroy(&w->done);
  free(w);
  s->dwork = NULL;
}

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Under mu: refill the late requests' budget; 1 when some is left. */
static int budget_left(dwork_t *w, int64_t now) {
  w->budget_ns += (now - w->budget_at) / 1000 * DWORK_SHARE_MS;
  if (w->budget_ns > DWORK_BURST_NS) w->budget_ns = DWORK_BURST_NS;
  w->budget_at = now;
  return w->budget_ns > 0;
}

/* Under mu: take j out of the queue; 0 when the worker already has. */
static int unqueue(dwork_t *w, djob_t *j) {
  djob_t *prev = NULL;
  for (djob_t *q = w->head; q; prev = q, q = q->next) {
    if (q != j) continue;
    if (prev)
      prev->next = j->next;
    else
      w->head = j->next;
    if (w->tail == j) w->tail = prev;
    return 1;
  }
  return 0;
}

/* Under mu, j queued: wait for the worker, or once j is late and the budget
 * allows, parse it on this thread (see DWORK_LATE_NS). */
static void await_job(dwork_t *w, djob_t *j) {
  int64_t at = j->since + DWORK_LATE_NS;
  int queued = 1;
  while (!j->done) {
    int64_t now = mono_ns();
    if (queued && now >= at) {
      if (budget_left(w, now) && (queued = unqueue(w, j))) {
        atomic_fetch_add(&w->s->details_late, 1);
        pthread_mutex_unlock(&w->mu);
        int64_t cpu = thread_cpu_ns();
        run_job(w->s, j);
        cpu = thread_cpu_ns() - cpu;
        pthread_mutex_lock(&w->mu);
        w->budget_ns -= cpu;
        w->bytes -= j->len;
        w->jobs--;
        j->done = 1;
        return;
      }
      at = now + DWORK_RETRY_NS;
    }
    if (!queued) {
      pthread_cond_wait(&w->done, &w->mu);
      continue;
    }
    struct timespec ts = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
    pthread_cond_timedwait(&w->done, &w->mu, &ts);
  }
}

static int submit(tdet_t *s, int audit, const char *body, size_t len, size_t *accepted,
                  dec_error_t *err) {
  dwork_t *w = s->dwork;
  djob_t j = {audit, body, len, 0, mono_ns(), err, 503, 0, NULL};
  *accepted = 0;
  pthread_mutex_lock(&w->mu);
  int behind = w->head && j.since - w->head->since > DWORK_BEHIND_NS;
  if (w->stop || behind || (w->bytes && w->bytes + len > DWORK_MAX_BYTES)) {
    int stopping = w->stop;
    pthread_mutex_unlock(&w->mu);
    if (!stopping) atomic_fetch_add(&s->details_busy, 1);
    snprintf(err->msg, sizeof err->msg, "%s",
             stopping ? "the server is stopping"
             : behind ? "the details are behind by more than 2 s; retry later"
                      : "too many details are waiting; retry later");
    return stopping ? 503 : 429;
  }
  w->bytes += len;
  w->jobs++;
  /* The job lives on this stack: this thread waits below until the worker
   * (or this thread) marked it done, and it leaves the queue before that. */
  if (w->tail)
    w->tail->next = &j;
  else
    w->head = &j; /* cppcheck-suppress autoVariables */
  w->tail = &j;   /* cppcheck-suppress autoVariables */
  pthread_cond_signal(&w->work);
  await_job(w, &j);
  pthread_mutex_unlock(&w->mu);
  *accepted = j.accepted;
  return j.status;
}

void tdet_pending(tdet_t *s, size_t *requests, size_t *bytes) {
  dwork_t *w = s->dwork;
  *requests = *bytes = 0;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  *requests = w->jobs;
  *bytes = w->bytes;
  pthread_mutex_unlock(&w->mu);
}

int tdet_ingest(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err) {
  return submit(s, 0, body, len, accepted, err);
}

int tdet_ingest_audit(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err) {
  return submit(s, 1, body, len, accepted, err);
}
