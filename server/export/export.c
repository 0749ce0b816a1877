/*
 * export.c - see export.h.
 *
 * The loop: wait until a table has rows past the cursor; skip what is past
 * the backlog bound; read up to `batch` rows of each table; encode them as one
 * OTLP request; POST it, and while it is on the wire read and encode the next
 * rows; on a 2xx (or an answer that can never succeed) move the cursor past
 * the rows sent. A retryable failure leaves the cursor where it is and waits,
 * then sends the same request again (the next one is built anew after it).
 * The cursor is saved after every request that moved it (a new file renamed
 * over the old: a process killed at any moment leaves the old cursor or the
 * new one), synced to disk once a second and at stop; a power loss may lose
 * the last second's saves, which sends those rows again: at least once.
 */
#include "export/export.h"
#include "ripplex/idle.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export/otlp_export.h"
#include "ingest/gzip.h"
#include "ripplex/clock.h"
#include "ripplex/logonce.h"
#include "ripplex/prom.h"
#include "ripplex/rnd.h"

#define LAG_RING 1024
#define WAIT_MS 100 /* the longest idle wait: how late a missed wake-up can be */
#define LAG_BUCKETS 13
static const double lag_bounds[LAG_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                               1,     2.5,  5,     10,   30,  60};

enum { SENT_OK, SENT_RETRY, SENT_REJECTED, RESULTS };
static const char *result_names[RESULTS] = {"ok", "retry", "rejected"};

/* When each commit became visible, to measure how long rows wait: written by
 * the store's writer thread (tail), read by the exporter's (head), without a
 * lock. A sample that finds the ring full is not taken. */
typedef struct lag_ring {
  uint64_t seq[LAG_RING];
  int64_t at[LAG_RING];
  atomic_size_t head, tail;
} lag_ring_t;

/* One read for the reader thread (reader_thread). */
typedef struct slot slot_t;
typedef struct read_job {
  slot_t *slot;
  dec_kind_t kind;
  uint64_t from, to;
  size_t limit;
  int rc;
} read_job_t;

struct exp {
  exp_source_t src; /* the store read, and how commits are told */
  exp_config_t c;
  char *url, *ca_file, *client_cert, *client_key, *cursor_path;
  struct curl_slist *hdrs;
  CURL *curl;
  CURLM *multi;
  struct curl_slist gz_hdr; /* "Content-Encoding: gzip" in front of hdrs */
  otlp_batch_t *batch, *batch2;
  pthread_t thread, rthread;
  int started, rstarted;
  pthread_mutex_t rmu; /* the reader thread's job: */
  pthread_cond_t rcv;
  read_job_t *rjob; /* the read asked for, NULL when done */
  int rstop;

  /* Shared with the store's writer thread, which never takes a lock of ours:
   * a stalled exporter can never hold up a commit. */
  atomic_uint_fast64_t last[2]; /* newest committed row of each table */
  lag_ring_t lag[2];
  atomic_int stop;
  pthread_cond_t wake; /* signalled by the writer without mu: a missed wake-up
                          costs at most one idle wait (WAIT_MS) */

  pthread_mutex_t mu; /* guards everything below: the exporter's thread and readers of stats */
  uint64_t cursor[2]; /* newest row delivered (or given up on) */
  uint64_t exported[2], dropped_backlog[2], dropped_rejected[2], unreadable;
  uint64_t requests[RESULTS], spans_rejected, bytes_sent;
  uint64_t lag_counts[LAG_BUCKETS + 1], lag_count;
  double lag_sum, last_success;
  int64_t saved_at;
  int dirty;
};

/* ---- the cursor file ------------------------------------------------------------- */

/* Decimal digits up to the character stop, without overflow: advances *p. */
static int read_u64(const char **p, char stop, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  if (*s < '0' || *s > '9') return 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return 0;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  if (*s != stop) return 0;
  *p = s + 1;
  *out = v;
  return 1;
}

int exp_cursor_parse(const char *text, uint64_t *ml, uint64_t *sp) {
  static const char head[] = "ripple-otlp-cursor 1 ";
  const char *p = text;
  uint64_t a, b;
  if (strncmp(p, head, sizeof head - 1) != 0) return RIPPLE_EINVAL;
  p += sizeof head - 1;
  if (!read_u64(&p, ' ', &a) || !read_u64(&p, '\n', &b) || *p) return RIPPLE_EINVAL;
  *ml = a;
  *sp = b;
  return RIPPLE_OK;
}

/* Write the cursor atomically (a new file renamed over the old one; synced
 * first when sync is set, so a power loss cannot leave an empty file). */
static int save_cursor(const char *path, uint64_t ml, uint64_t sp, int sync) {
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return RIPPLE_ERANGE;
  FILE *f = fopen(tmp, "w");
  if (!f) return RIPPLE_ESYS;
  int ok = fprintf(f, "ripple-otlp-cursor 1 %" PRIu64 " %" PRIu64 "\n", ml, sp) > 0;
  ok = fflush(f) == 0 && ok && (!sync || fsync(fileno(f)) == 0);
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

/* The saved cursor, checked against the store: one past what the store ever
 * gave out belongs to another database (replaced under the same name), so
 * everything is sent from the start. A missing file starts at the start. */
static void load_cursor(exp_t *e) {
  char *text = NULL;
  uint64_t ml = 0, sp = 0;
  if (sbuf_read_file_max(e->cursor_path, 256, &text, NULL) == RIPPLE_OK &&
      exp_cursor_parse(text, &ml, &sp) != RIPPLE_OK) {
    char q[600];
    ripple_log_quote(e->cursor_path, q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "otlp_cursor_unreadable", "path=%s action=send_all", q);
    ml = sp = 0;
  }
  free(text);
  if (ml > store_last_seq(e->src.store, DEC_MERGELOGS) ||
      sp > store_last_seq(e->src.store, DEC_SPANS)) {
    ripple_log(RIPPLE_LOG_WARN, "otlp_cursor_ahead",
               "mergelogs=%" PRIu64 " spans=%" PRIu64 " stored_mergelogs=%" PRIu64
               " stored_spans=%" PRIu64 " action=send_all",
               ml, sp, atomic_load(&e->last[0]), atomic_load(&e->last[1]));
    ml = sp = 0;
  }
  e->cursor[0] = ml;
  e->cursor[1] = sp;
}

/* ---- the commit hook (the store's writer thread): cheap, never blocks long ------ */

static void committed(void *ud, dec_kind_t kind, uint64_t last_seq) {
  exp_t *e = ud;
  int k = kind == DEC_MERGELOGS ? 0 : 1;
  uint64_t old = atomic_load(&e->last[k]);
  while (last_seq > old && !atomic_compare_exchange_weak(&e->last[k], &old, last_seq)) {
  }
  lag_ring_t *r = &e->lag[k];
  size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  if (tail - atomic_load_explicit(&r->head, memory_order_acquire) < LAG_RING) {
    r->seq[tail % LAG_RING] = last_seq;
    r->at[tail % LAG_RING] = mono_ns();
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
  }
  pthread_cond_signal(&e->wake);
}

/* Rows up to cursor are out: their commits' waits become lag samples. Under mu. */
static void observe_lag(exp_t *e, int k) {
  lag_ring_t *r = &e->lag[k];
  int64_t now = mono_ns();
  size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  for (; head != tail && r->seq[head % LAG_RING] <= e->cursor[k]; head++) {
    double s = (double)(now - r->at[head % LAG_RING]) / 1e9;
    e->lag_counts[prom_bucket(lag_bounds, LAG_BUCKETS, s)]++;
    e->lag_sum += s;
    e->lag_count++;
  }
  atomic_store_explicit(&r->head, head, memory_order_release);
}

/* ---- batches ------------------------------------------------------------------------ */

/* A request being built or sent: the rows after from[] up to to[], encoded
 * (and compressed) into req. Two of them take turns: while one is on the
 * wire, the next is read and encoded, so the endpoint's time and ours
 * overlap. */
struct slot {
  otlp_batch_t *batch;
  sbuf_t req;
  sbuf_t rows_read; /* the bodies read, back to back (ends[] says where each ends) */
  size_t *ends, nends, capends;
  int lost;        /* a row could not be copied (no memory): the read is redone later */
  int gzip, ready; /* ready: built for the cursor in from[] */
  uint64_t from[2], to[2];
  size_t rows[2], bad[2];
};

/* Only copied while the read transaction is open (see reader_thread); read
 * into the batch afterwards. */
static void copy_row(void *ud, uint64_t seq, const char *body, size_t len) {
  slot_t *s = ud;
  (void)seq;
  if (s->nends == s->capends) {
    size_t cap = s->capends ? s->capends * 2 : 1024;
    size_t *e = realloc(s->ends, cap * sizeof *e);
    if (!e) {
      s->lost = 1;
      return;
    }
    s->ends = e;
    s->capends = cap;
  }
  sbuf_put(&s->rows_read, body, len);
  s->ends[s->nends++] = s->rows_read.len;
}

/* The exporter runs at a lower priority than ingest (ripplex/idle.h: normal
 * policy, nice +15): it costs ingest little, yet keeps a guaranteed share of
 * a saturated core (the idle class it had before got none: lag p99 59 s), and
 * the backlog (bounded) absorbs the difference. */
static void sched_background(void) {
  if (!idle_enter()) ripple_log(RIPPLE_LOG_INFO, "otlp_export_priority", "nice=no");
}

/* Reads of the store are made by a second thread at normal priority, which
 * only copies a batch's rows out of SQLite: a reader starved inside its read
 * transaction would keep SQLite from checkpointing the WAL past it, and the
 * WAL would grow with every commit (179 MiB in 10 s of full-rate ingest when
 * the exporter, then in the idle class, read itself; 5 MiB without export). An
 * unprivileged thread may raise its nice value but not lower it again, hence a
 * thread of its own rather than switching back and forth. */
static void *reader_thread(void *arg) {
  exp_t *e = arg;
  pthread_mutex_lock(&e->rmu);
  for (;;) {
    while (!e->rjob && !e->rstop) pthread_cond_wait(&e->rcv, &e->rmu);
    if (!e->rjob) break;
    read_job_t *j = e->rjob;
    pthread_mutex_unlock(&e->rmu);
    j->rc = store_scan(e->src.store, j->kind, j->from, j->limit, copy_row, j->slot, &j->to);
    pthread_mutex_lock(&e->rmu);
    e->rjob = NULL;
    pthread_cond_broadcast(&e->rcv);
  }
  pthread_mutex_unlock(&e->rmu);
  return NULL;
}

/* store_scan on the reader thread; waits for it. */
static int read_rows(exp_t *e, slot_t *s, dec_kind_t kind, uint64_t from, uint64_t *to) {
  read_job_t j = {.slot = s, .kind = kind, .from = from, .limit = e->c.batch, .rc = RIPPLE_ESYS};
  pthread_mutex_lock(&e->rmu);
  /* The job lives on this stack: this thread waits below until the reader
   * has cleared e->rjob. */
  e->rjob = &j; /* cppcheck-suppress autoVariables */
  pthread_cond_broadcast(&e->rcv);
  while (e->rjob) pthread_cond_wait(&e->rcv, &e->rmu);
  pthread_mutex_unlock(&e->rmu);
  *to = j.to;
  return j.rc;
}

/* Read the rows after from[] (committed up to upto[]) into s and encode them. */
static int build(exp_t *e, slot_t *s, const uint64_t from[2], const uint64_t upto[2]) {
  otlp_batch_reset(s->batch);
  s->req.len = 0;
  s->ready = 0;
  for (int k = 0; k < 2; k++) {
    dec_kind_t kind = k ? DEC_SPANS : DEC_MERGELOGS;
    s->from[k] = from[k];
    s->rows_read.len = s->nends = 0;
    s->lost = 0;
    int rc = read_rows(e, s, kind, from[k], &s->to[k]);
    if (rc != RIPPLE_OK) return RIPPLE_ESYS; /* the store cannot be read now */
    if (s->lost || s->rows_read.oom) {
      sbuf_free(&s->rows_read); /* its latched failure goes with it */
      sbuf_init(&s->rows_read);
      return RIPPLE_ENOMEM;
    }
    s->rows[k] = s->nends;
    s->bad[k] = 0;
    for (size_t i = 0, start = 0; i < s->nends; start = s->ends[i++])
      if (otlp_batch_add(s->batch, kind, s->rows_read.p + start, s->ends[i] - start) != RIPPLE_OK)
        s->bad[k]++;
    /* A short read saw every row committed before upto was taken: the seqs in
     * between were deleted or never committed, and are passed. */
    if (s->rows[k] < e->c.batch && upto[k] > s->to[k]) s->to[k] = upto[k];
  }
  s->gzip = 0;
  if (otlp_batch_spans(s->batch)) {
    if (otlp_batch_encode(s->batch, &s->req) != RIPPLE_OK) return RIPPLE_ENOMEM;
    char *z;
    size_t zlen;
    if (e->c.gzip && gzip_encode(s->req.p, s->req.len, &z, &zlen) == RIPPLE_OK) {
      s->req.len = 0;
      sbuf_put(&s->req, z, zlen);
      free(z);
      s->gzip = 1;
    }
    if (s->req.oom) return RIPPLE_ENOMEM;
  }
  s->ready = 1;
  return RIPPLE_OK;
}

static void bound_backlog(exp_t *e) {
  for (int k = 0; k < 2; k++) {
    uint64_t last = atomic_load(&e->last[k]);
    if (last <= e->cursor[k] || last - e->cursor[k] <= e->c.max_backlog) continue;
    uint64_t skip = last - e->cursor[k] - e->c.max_backlog;
    e->cursor[k] += skip;
    e->dropped_backlog[k] += skip;
    e->dirty = 1;
    ripple_log(RIPPLE_LOG_WARN, "otlp_backlog_dropped", "table=%s rows=%" PRIu64 " max_backlog=%zu",
               k ? "spans" : "mergelogs", skip, e->c.max_backlog);
  }
}

/* ---- sending ------------------------------------------------------------------------- */

static size_t collect(void *p, size_t size, size_t n, void *ud) {
  sbuf_t *b = ud;
  if (b->len < 65536) sbuf_put(b, p, size * n);
  return size * n;
}

static int progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  exp_t *e = ud;
  return atomic_load(&e->stop); /* non-zero aborts the transfer */
}

/* Put s on the wire (it goes on while the caller builds the next one). */
static void send_start(exp_t *e, slot_t *s, sbuf_t *answer) {
  e->gz_hdr = (struct curl_slist){.data = (char *)"Content-Encoding: gzip", .next = e->hdrs};
  curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, s->gzip ? &e->gz_hdr : e->hdrs);
  curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, s->req.p);
  curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->req.len);
  curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, answer);
  curl_multi_add_handle(e->multi, e->curl);
  int running;
  curl_multi_perform(e->multi, &running); /* connect and write what the socket takes */
}

/* Drive the request to its end. Returns SENT_OK, SENT_RETRY (with
 * *retry_after_s when the endpoint said) or SENT_REJECTED; *status the HTTP
 * status (0: no answer). */
static int send_finish(exp_t *e, long *status, long *retry_after_s) {
  int running = 1;
  CURLcode cc = CURLE_OK;
  while (running) {
    if (curl_multi_perform(e->multi, &running) != CURLM_OK) break;
    if (running) curl_multi_poll(e->multi, NULL, 0, 100, NULL);
  }
  int left;
  for (CURLMsg *m; (m = curl_multi_info_read(e->multi, &left));)
    if (m->msg == CURLMSG_DONE) cc = m->data.result;
  curl_multi_remove_handle(e->multi, e->curl);
  *status = 0;
  *retry_after_s = 0;
  if (cc == CURLE_OK) {
    curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, status);
    curl_off_t ra = 0;
    if (curl_easy_getinfo(e->curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
      *retry_after_s = (long)(ra < 3600 ? ra : 3600);
  }
  if (cc != CURLE_OK || *status == 0) {
    if (!atomic_load(&e->stop))
      ripple_log(RIPPLE_LOG_WARN, "otlp_export_failed", "error=\"%s\" action=retry",
                 curl_easy_strerror(cc != CURLE_OK ? cc : CURLE_GOT_NOTHING));
    return SENT_RETRY;
  }
  if (*status >= 200 && *status < 300) return SENT_OK;
  if (*status == 429 || *status == 502 || *status == 503 || *status == 504) return SENT_RETRY;
  return SENT_REJECTED;
}

/* The answer to a delivered request: a partial success is counted and said. */
static void delivered(exp_t *e, const sbuf_t *answer) {
  int64_t rejected = 0;
  char msg[256];
  otlp_read_response(answer->p, answer->len, &rejected, msg, sizeof msg);
  if (rejected <= 0) return;
  char q[600];
  ripple_log_quote(msg, q, sizeof q);
  ripple_log(RIPPLE_LOG_WARN, "otlp_partial_success", "rejected_spans=%" PRId64 " message=%s",
             rejected, q);
  pthread_mutex_lock(&e->mu);
  e->spans_rejected += (uint64_t)rejected;
  pthread_mutex_unlock(&e->mu);
}

/* Sleep ms, or less when stopping. Under mu. */
static void wait_ms(exp_t *e, int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
  pthread_cond_timedwait(&e->wake, &e->mu, &ts);
}

/* Full jitter in [d/2, d]. */
static int64_t jitter(int64_t d) {
  uint32_t r = 0;
  (void)rnd_bytes(&r, sizeof r);
  return d / 2 + (int64_t)(r % (uint32_t)(d / 2 + 1));
}

/* What s's answer means for the cursor and the counters; returns the delay
 * before the next round (0: go on at once). */
static int64_t settle(exp_t *e, const slot_t *s, int result, long status, long retry_after,
                      sbuf_t *answer, int *attempt) {
  int sent = otlp_batch_spans(s->batch) != 0;
  if (result == SENT_OK && sent) delivered(e, answer);
  pthread_mutex_lock(&e->mu);
  e->requests[result] += sent;
  e->bytes_sent += result != SENT_RETRY && sent ? s->req.len : 0;
  if (result == SENT_REJECTED) {
    char q[300];
    answer->len = answer->len > 200 ? 200 : answer->len;
    sbuf_putc(answer, '\0');
    ripple_log_quote(answer->p ? answer->p : "", q, sizeof q);
    ripple_log(RIPPLE_LOG_ERROR, "otlp_export_rejected",
               "status=%ld mergelogs=%zu spans=%zu answer=%s action=drop", status, s->rows[0],
               s->rows[1], q);
  }
  int64_t delay = 0;
  if (result == SENT_RETRY) {
    int64_t d = e->c.backoff_min_ms << (*attempt < 16 ? *attempt : 16);
    d = d < e->c.backoff_max_ms ? d : e->c.backoff_max_ms;
    delay = retry_after ? retry_after * 1000 : jitter(d);
    (*attempt)++;
  } else {
    *attempt = 0;
    for (int k = 0; k < 2; k++) {
      /* A bound that skipped rows meanwhile may have moved the cursor further. */
      if (s->to[k] > e->cursor[k]) {
        if (result == SENT_OK)
          e->exported[k] += s->rows[k] - s->bad[k];
        else
          e->dropped_rejected[k] += s->rows[k];
        e->cursor[k] = s->to[k];
      }
      e->unreadable += s->bad[k];
      observe_lag(e, k);
    }
    if (result == SENT_OK && sent) e->last_success = (double)time(NULL);
    e->dirty = 1;
  }
  pthread_mutex_unlock(&e->mu);
  return delay;
}

/* One request: cur (built for the cursor) is sent; meanwhile next is built
 * for the rows after cur's, to be sent next if cur is delivered. Returns the
 * delay before the next round. */
static int64_t round_once(exp_t *e, slot_t **cur, slot_t **next, int *attempt) {
  pthread_mutex_lock(&e->mu);
  bound_backlog(e);
  uint64_t from[2] = {e->cursor[0], e->cursor[1]};
  pthread_mutex_unlock(&e->mu);
  uint64_t upto[2] = {atomic_load(&e->last[0]), atomic_load(&e->last[1])};
  slot_t *c = *cur, *n = *next;
  if (!c->ready || c->from[0] != from[0] || c->from[1] != from[1]) {
    if (from[0] >= upto[0] && from[1] >= upto[1]) return WAIT_MS; /* nothing new */
    if (build(e, c, from, upto) != RIPPLE_OK) return e->c.backoff_max_ms;
  }
  sbuf_t answer;
  sbuf_init(&answer);
  long status = 0, retry_after = 0;
  int result = SENT_OK;
  n->ready = 0;
  if (otlp_batch_spans(c->batch)) {
    send_start(e, c, &answer);
    if (c->to[0] < upto[0] || c->to[1] < upto[1]) (void)build(e, n, c->to, upto);
    result = send_finish(e, &status, &retry_after);
  }
  int64_t delay = settle(e, c, result, status, retry_after, &answer, attempt);
  sbuf_free(&answer);
  c->ready = result == SENT_RETRY; /* the same rows again, as built */
  if (result != SENT_RETRY) {      /* the next one goes next */
    *cur = n;
    *next = c;
  }
  return delay;
}

/* Save the cursor when it moved; synced when a second has passed since the
 * last synced save (or force). Called without mu; the file is written by
 * this thread only. */
static void maybe_save(exp_t *e, int force) {
  pthread_mutex_lock(&e->mu);
  int dirty = e->dirty, sync = force || mono_ns() - e->saved_at >= 1000000000;
  uint64_t ml = e->cursor[0], sp = e->cursor[1];
  e->dirty = 0;
  if (dirty && sync) e->saved_at = mono_ns();
  pthread_mutex_unlock(&e->mu);
  if (dirty && save_cursor(e->cursor_path, ml, sp, sync) != RIPPLE_OK) {
    char q[600];
    ripple_log_quote(e->cursor_path, q, sizeof q);
    ripple_log(RIPPLE_LOG_ERROR, "otlp_cursor_not_saved", "path=%s error=\"%s\"", q,
               strerror(errno));
  }
}

static void *run(void *arg) {
  exp_t *e = arg;
  int attempt = 0;
  slot_t slots[2] = {{.batch = e->batch}, {.batch = e->batch2}}, *cur = &slots[0],
         *next = &slots[1];
  for (int i = 0; i < 2; i++) {
    sbuf_init(&slots[i].req);
    sbuf_init(&slots[i].rows_read);
  }
  sched_background();
  while (!atomic_load(&e->stop)) {
    int64_t delay = round_once(e, &cur, &next, &attempt);
    maybe_save(e, 0);
    if (delay > 0) {
      pthread_mutex_lock(&e->mu); /* exp_stop signals under mu: checked here, never missed */
      if (!atomic_load(&e->stop)) wait_ms(e, delay);
      pthread_mutex_unlock(&e->mu);
    }
  }
  maybe_save(e, 1);
  for (int i = 0; i < 2; i++) {
    sbuf_free(&slots[i].req);
    sbuf_free(&slots[i].rows_read);
    free(slots[i].ends);
  }
  return NULL;
}

/* ---- start and stop ---------------------------------------------------------------- */

static char *dup_opt(const char *s) { return s ? strdup(s) : NULL; }

static int setup_curl(exp_t *e, char *err, size_t cap) {
  e->curl = curl_easy_init();
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
  for (char **p = e->c.headers; h && p && *p; p++) h = curl_slist_append(h, *p);
  if (!e->curl || !h) {
    curl_slist_free_all(h);
    snprintf(err, cap, "out of memory setting up the OTLP client");
    return RIPPLE_ENOMEM;
  }
  e->hdrs = h;
  CURL *c = e->curl;
  curl_easy_setopt(c, CURLOPT_URL, e->url);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)e->c.timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   (long)(e->c.timeout_ms < 5000 ? e->c.timeout_ms : 5000));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, e);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  if (e->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, e->ca_file);
  if (e->client_cert) curl_easy_setopt(c, CURLOPT_SSLCERT, e->client_cert);
  if (e->client_key) curl_easy_setopt(c, CURLOPT_SSLKEY, e->client_key);
  return RIPPLE_OK;
}

int exp_start(const exp_source_t *src, const exp_config_t *c, exp_t **out, char *err,
              size_t errcap) {
  exp_t *e = calloc(1, sizeof *e);
  if (!e) return RIPPLE_ENOMEM;
  e->src = *src;
  e->c = *c;
  e->url = dup_opt(c->url);
  e->ca_file = dup_opt(c->ca_file);
  e->client_cert = dup_opt(c->client_cert);
  e->client_key = dup_opt(c->client_key);
  e->cursor_path = dup_opt(c->cursor_path);
  e->c.headers = NULL; /* copied into the curl list by setup_curl */
  pthread_mutex_init(&e->mu, NULL);
  pthread_mutex_init(&e->rmu, NULL);
  pthread_cond_init(&e->rcv, NULL);
  pthread_cond_init(&e->wake, NULL);
  /* What is committed now; commits from here on come through the hook. */
  atomic_store(&e->last[0], store_max_seq(src->store, DEC_MERGELOGS));
  atomic_store(&e->last[1], store_max_seq(src->store, DEC_SPANS));
  int rc = e->url && e->cursor_path ? RIPPLE_OK : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) rc = otlp_batch_new(&e->batch);
  if (rc == RIPPLE_OK) rc = otlp_batch_new(&e->batch2);
  if (rc == RIPPLE_OK && !(e->multi = curl_multi_init())) rc = RIPPLE_ENOMEM;
  e->c.headers = c->headers;
  if (rc == RIPPLE_OK) rc = setup_curl(e, err, errcap);
  e->c.headers = NULL;
  if (rc == RIPPLE_OK) {
    load_cursor(e);
    if (save_cursor(e->cursor_path, e->cursor[0], e->cursor[1], 1) != RIPPLE_OK) {
      snprintf(err, errcap, "cannot write the OTLP cursor file %s: %s", e->cursor_path,
               strerror(errno));
      rc = RIPPLE_ESYS;
    }
  }
  if (rc == RIPPLE_OK && pthread_create(&e->rthread, NULL, reader_thread, e) != 0) rc = RIPPLE_ESYS;
  e->rstarted = rc == RIPPLE_OK;
  if (rc == RIPPLE_OK && pthread_create(&e->thread, NULL, run, e) != 0) rc = RIPPLE_ESYS;
  if (rc != RIPPLE_OK) {
    exp_stop(e);
    return rc;
  }
  e->started = 1;
  src->subscribe(src->owner, committed, e);
  ripple_log(RIPPLE_LOG_INFO, "otlp_export_started",
             "mergelogs_from=%" PRIu64 " spans_from=%" PRIu64 " backlog_mergelogs=%" PRIu64
             " backlog_spans=%" PRIu64,
             e->cursor[0], e->cursor[1], atomic_load(&e->last[0]) - e->cursor[0],
             atomic_load(&e->last[1]) - e->cursor[1]);
  *out = e;
  return RIPPLE_OK;
}

void exp_stop(exp_t *e) {
  if (!e) return;
  if (e->started) {
    e->src.subscribe(e->src.owner, NULL, NULL);
    atomic_store(&e->stop, 1);
    pthread_mutex_lock(&e->mu);
    pthread_cond_signal(&e->wake);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
  }
  if (e->rstarted) { /* after the exporter: it asks for no more reads */
    pthread_mutex_lock(&e->rmu);
    e->rstop = 1;
    pthread_cond_broadcast(&e->rcv);
    pthread_mutex_unlock(&e->rmu);
    pthread_join(e->rthread, NULL);
  }
  curl_multi_cleanup(e->multi);
  curl_easy_cleanup(e->curl);
  curl_slist_free_all(e->hdrs);
  otlp_batch_free(e->batch);
  otlp_batch_free(e->batch2);
  pthread_cond_destroy(&e->wake);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->rcv);
  pthread_mutex_destroy(&e->rmu);
  free(e->url);
  free(e->ca_file);
  free(e->client_cert);
  free(e->client_key);
  free(e->cursor_path);
  free(e);
}

void exp_stats(exp_t *e, exp_stats_t *out) {
  pthread_mutex_lock(&e->mu);
  for (int k = 0; k < 2; k++) {
    out->cursor[k] = e->cursor[k];
    out->last[k] = atomic_load(&e->last[k]);
    out->exported[k] = e->exported[k];
    out->dropped_backlog[k] = e->dropped_backlog[k];
    out->dropped_rejected[k] = e->dropped_rejected[k];
  }
  out->unreadable = e->unreadable;
  out->requests_ok = e->requests[SENT_OK];
  out->requests_retry = e->requests[SENT_RETRY];
  out->requests_rejected = e->requests[SENT_REJECTED];
  out->spans_rejected = e->spans_rejected;
  pthread_mutex_unlock(&e->mu);
}

void exp_metrics(exp_t *e, sbuf_t *o) {
  static const char *tables[2] = {"table=\"mergelogs\"", "table=\"spans\""};
  pthread_mutex_lock(&e->mu);
  prom_family(o, "ripple_otlp_export_rows_total", "counter",
              "Rows delivered to the OTLP endpoint, by table.");
  for (int k = 0; k < 2; k++)
    prom_sample_u(o, "ripple_otlp_export_rows_total", tables[k], e->exported[k]);
  prom_family(o, "ripple_otlp_export_backlog_rows", "gauge",
              "Rows stored but not yet delivered, by table (an upper bound: deleted rows count).");
  for (int k = 0; k < 2; k++)
    prom_sample_u(
        o, "ripple_otlp_export_backlog_rows", tables[k],
        atomic_load(&e->last[k]) > e->cursor[k] ? atomic_load(&e->last[k]) - e->cursor[k] : 0);
  prom_family(o, "ripple_otlp_export_dropped_rows_total", "counter",
              "Rows never delivered: skipped past the backlog bound, or in a request the "
              "endpoint refused for good.");
  for (int k = 0; k < 2; k++) {
    char l[64];
    snprintf(l, sizeof l, "%s,reason=\"backlog\"", tables[k]);
    prom_sample_u(o, "ripple_otlp_export_dropped_rows_total", l, e->dropped_backlog[k]);
    snprintf(l, sizeof l, "%s,reason=\"rejected\"", tables[k]);
    prom_sample_u(o, "ripple_otlp_export_dropped_rows_total", l, e->dropped_rejected[k]);
  }
  prom_family(o, "ripple_otlp_export_requests_total", "counter",
              "Requests to the OTLP endpoint, by result (ok, retry, rejected).");
  for (int r = 0; r < RESULTS; r++) {
    char l[32];
    snprintf(l, sizeof l, "result=\"%s\"", result_names[r]);
    prom_sample_u(o, "ripple_otlp_export_requests_total", l, e->requests[r]);
  }
  prom_counter(o, "ripple_otlp_export_rejected_spans_total",
               "Spans the endpoint refused in a partial success.", e->spans_rejected);
  prom_counter(o, "ripple_otlp_export_unreadable_rows_total",
               "Stored rows that could not be turned into spans (left out).", e->unreadable);
  prom_counter(o, "ripple_otlp_export_sent_bytes_total", "Request bytes sent (compressed).",
               e->bytes_sent);
  prom_gauge(o, "ripple_otlp_export_last_success_timestamp_seconds",
             "When a request was last delivered (Unix time; 0: never).", e->last_success);
  prom_family(o, "ripple_otlp_export_lag_seconds", "histogram",
              "From a commit to the delivery of its last row.");
  prom_histogram(o, "ripple_otlp_export_lag_seconds", "",
                 &(prom_hist_t){.bounds = lag_bounds,
                                .nbounds = LAG_BUCKETS,
                                .counts = e->lag_counts,
                                .sum = e->lag_sum,
                                .count = e->lag_count});
  pthread_mutex_unlock(&e->mu);
}
