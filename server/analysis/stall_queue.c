/*
 * stall_queue.c - see stall_queue.h.
 *
 * Two buffers: the writer appends to `pending` under the mutex (once per
 * batch, not per span); the consumer swaps it with its own empty one and
 * feeds the spans without the mutex. Each span is a fixed header and its
 * seven strings, NUL-terminated, cut at the lengths the detector always
 * used (stalls.c before the queue), padded to 8 bytes.
 */
#include "analysis/stall_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NSTR = 7 };
/* service, name, kind, namespace, name, owner, operation: at most these many bytes. */
static const size_t str_max[NSTR] = {255, 255, 127, 255, 255, 383, 15};

typedef struct qrec {
  ripple_cpid_t cpid;
  uint64_t span_id;
  int64_t start, end, queued;
  uint32_t size; /* of the whole record, padded */
  uint16_t len[NSTR];
} qrec_t;

struct stallq {
  pthread_mutex_t mu;
  pthread_cond_t work, fed;
  sbuf_t pending;
  size_t pending_n, busy_n, busy_bytes, cap;
  int64_t pending_oldest, busy_oldest; /* queue times; 0: none */
  uint64_t queued, processed, dropped; /* queued: the last ticket handed out */
  int64_t last_drop_ns;
  int stop;
};

int stallq_new(size_t cap_bytes, stallq_t **out) {
  stallq_t *q = calloc(1, sizeof *q);
  if (!q) return RIPPLE_ENOMEM;
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->work, &a);
  pthread_cond_init(&q->fed, &a);
  pthread_condattr_destroy(&a);
  sbuf_init(&q->pending);
  q->cap = cap_bytes;
  *out = q;
  return RIPPLE_OK;
}

void stallq_free(stallq_t *q) {
  if (!q) return;
  sbuf_free(&q->pending);
  pthread_cond_destroy(&q->work);
  pthread_cond_destroy(&q->fed);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

/* Append one span to pending (the caller holds mu). 0: no room. */
static int put_span(stallq_t *q, const dec_batch_t *b, const dec_rec_t *r, int64_t now) {
  const dec_str_t v[NSTR] = {r->service, r->span_name, r->kind,     r->ns,
                             r->name,    r->owner,     r->operation};
  qrec_t h = {r->cpid, r->span_id, r->time, r->end, now, 0, {0}};
  size_t size = sizeof h;
  for (int i = 0; i < NSTR; i++) {
    h.len[i] = (uint16_t)(v[i].len < str_max[i] ? v[i].len : str_max[i]);
    size += h.len[i] + 1u;
  }
  size = (size + 7u) & ~(size_t)7u;
  if (q->pending.len + q->busy_bytes + size > q->cap) return 0;
  h.size = (uint32_t)size;
  /* Built here, then one append: the writer thread pays this per span. */
  char rec[sizeof h + 255 + 255 + 127 + 255 + 255 + 383 + 15 + NSTR + 8];
  memcpy(rec, &h, sizeof h);
  char *p = rec + sizeof h;
  for (int i = 0; i < NSTR; i++) {
    if (h.len[i]) memcpy(p, dec_str(b, v[i]), h.len[i]);
    p += h.len[i];
    *p++ = '\0';
  }
  memset(p, 0, (size_t)(rec + size - p)); /* the padding */
  size_t at = q->pending.len;
  sbuf_put(&q->pending, rec, size);
  if (q->pending.oom) {
    q->pending.oom = 0;
    q->pending.len = at;
    return 0;
  }
  return 1;
}

void stallq_push(stallq_t *q, const dec_batch_t *b, int64_t now) {
  if (b->kind != DEC_SPANS || !b->n) return;
  pthread_mutex_lock(&q->mu);
  size_t before = q->pending_n;
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    if (!r->kind.len) continue; /* not a write of an object (ripple-watch's, an SDK's) */
    if (!put_span(q, b, r, now)) {
      q->dropped++;
      q->last_drop_ns = now;
      continue;
    }
    if (!q->pending_n++) q->pending_oldest = now;
    q->queued++;
  }
  if (q->pending_n != before) pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mu);
}

static struct timespec deadline(int timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

size_t stallq_take(stallq_t *q, int timeout_ms, stallq_chunk_t *c) {
  struct timespec ts = deadline(timeout_ms);
  pthread_mutex_lock(&q->mu);
  while (!q->pending_n && !q->stop)
    if (pthread_cond_timedwait(&q->work, &q->mu, &ts) == ETIMEDOUT) break;
  size_t n = q->stop ? 0 : q->pending_n;
  if (n) {
    sbuf_t mine = c->buf;
    mine.len = 0;
    c->buf = q->pending;
    q->pending = mine;
    c->off = 0;
    c->n = n;
    c->upto = q->queued;
    q->busy_n = n;
    q->busy_bytes = c->buf.len;
    q->busy_oldest = q->pending_oldest;
    q->pending_n = 0;
    q->pending_oldest = 0;
  }
  pthread_mutex_unlock(&q->mu);
  return n;
}

int stallq_next(stallq_chunk_t *c, stall_span_t *sp) {
  if (c->off + sizeof(qrec_t) > c->buf.len) return 0;
  qrec_t h;
  memcpy(&h, c->buf.p + c->off, sizeof h);
  const char *p = c->buf.p + c->off + sizeof h;
  const char *str[NSTR];
  for (int i = 0; i < NSTR; i++) {
    str[i] = p;
    p += h.len[i] + 1u;
  }
  *sp = (stall_span_t){h.cpid, h.span_id, h.start, h.end,  str[0], str[1],
                       str[2], str[3],    str[4],  str[5], str[6]};
  c->off += h.size;
  return 1;
}

void stallq_done(stallq_t *q, uint64_t upto) {
  pthread_mutex_lock(&q->mu);
  if (upto > q->processed) q->processed = upto;
  q->busy_n = q->busy_bytes = 0;
  q->busy_oldest = 0;
  pthread_cond_broadcast(&q->fed);
  pthread_mutex_unlock(&q->mu);
}

int64_t stallq_clock(stallq_t *q, int64_t now) {
  pthread_mutex_lock(&q->mu);
  int64_t oldest = q->pending_oldest;
  pthread_mutex_unlock(&q->mu);
  return oldest && oldest < now ? oldest : now;
}

int stallq_wait(stallq_t *q, int timeout_ms) {
  struct timespec ts = deadline(timeout_ms);
  pthread_mutex_lock(&q->mu);
  uint64_t target = q->queued;
  while (q->processed < target && !q->stop)
    if (pthread_cond_timedwait(&q->fed, &q->mu, &ts) == ETIMEDOUT) break;
  int ok = q->processed >= target;
  pthread_mutex_unlock(&q->mu);
  return ok;
}

void stallq_stop(stallq_t *q) {
  pthread_mutex_lock(&q->mu);
  q->stop = 1;
  pthread_cond_broadcast(&q->work);
  pthread_cond_broadcast(&q->fed);
  pthread_mutex_unlock(&q->mu);
}

int stallq_stopped(stallq_t *q) {
  pthread_mutex_lock(&q->mu);
  int stop = q->stop;
  pthread_mutex_unlock(&q->mu);
  return stop;
}

void stallq_stats(stallq_t *q, stallq_stats_t *out) {
  pthread_mutex_lock(&q->mu);
  int64_t oldest = q->busy_oldest ? q->busy_oldest : q->pending_oldest;
  *out = (stallq_stats_t){
      q->pending_n + q->busy_n, q->pending.len + q->busy_bytes, 0, q->queued, q->dropped,
      q->last_drop_ns};
  pthread_mutex_unlock(&q->mu);
  if (oldest) {
    int64_t lag = ripple_now_ns() - oldest;
    out->lag_ns = lag > 0 ? lag : 0;
  }
}

void stallq_chunk_free(stallq_chunk_t *c) {
  sbuf_free(&c->buf);
  memset(c, 0, sizeof *c);
}
