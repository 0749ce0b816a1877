/*
 * shipper.c - delivers mergelogs, spans and details (a write's changes,
 * Events) to the trace server in the background.
 *
 * The promise to callers: enqueueing costs a copy and a short critical section,
 * never a network round trip, and a dead or slow server costs them nothing but
 * dropped records (counted). Tracing is an aid; it must never slow the control
 * plane it observes (paper, section 6.4.1).
 *
 * Shape: a bounded ring of record copies guarded by one mutex; one thread takes
 * up to batch_max records, sends mergelogs and spans as two JSON arrays with
 * libcurl (one connection, kept alive), and retries failures with capped
 * exponential backoff plus jitter, honouring Retry-After. While it retries, the
 * ring keeps filling and, once full, drops. A batch the server refuses with a
 * 4xx (other than 408/429) can never succeed and is dropped as rejected.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "ripplex/tsclient.h"

enum { REC_MERGELOG, REC_SPAN, REC_DETAIL };

/* Details go in requests of at most this many bytes (the server's default
 * body limit is 16 MiB; a snapshot is at most 64 KiB). */
#define DETAILS_REQUEST_MAX (4u << 20)

/* A record copied into one allocation: the struct, then its strings. */
typedef struct rec {
  int type;
  union {
    ripple_mergelog_t ml;
    ripple_span_rec_t sp;
    struct {
      const char *text; /* a detail's JSON, after the struct */
      size_t len;
    } raw;
  } u;
  ripple_objref_t obj;
} rec_t;

struct ripple_shipper {
  ripple_shipper_opts_t o;
  char *url_ml, *url_sp, *url_dt, *auth;

  pthread_mutex_t mu;
  pthread_cond_t more;    /* the thread waits here for records */
  pthread_cond_t drained; /* flushers wait here */
  rec_t **ring;
  size_t head, count, inflight;
  int stop, flush_req;
  pthread_t thread;

  atomic_size_t approx_count; /* lock-free early drop when full */
  atomic_int stopping;        /* read by curl's progress callback */
  struct {
    atomic_uint_fast64_t enqueued, sent, dropped, rejected, abandoned, requests, failures;
  } st;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- copying records ---------------------------------------------------- */

static size_t slen(const char *s) { return s ? strlen(s) + 1 : 0; }

static char *scopy(char **dst, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *r = memcpy(*dst, s, n);
  *dst += n;
  return r;
}

static rec_t *copy_mergelog(const ripple_mergelog_t *ml) {
  const ripple_objref_t *o = ml->object;
  size_t strs = slen(ml->component);
  if (o)
    strs +=
        slen(o->api_version) + slen(o->kind) + slen(o->namespace_) + slen(o->name) + slen(o->uid);
  size_t srcs = ml->nsources * sizeof(ripple_cpid_t);
  size_t trig = ml->trigger ? ml->ntrigger * sizeof(ripple_cpid_t) : 0;
  rec_t *r = malloc(sizeof *r + srcs + trig + strs);
  if (!r) return NULL;
  char *p = (char *)(r + 1);
  r->type = REC_MERGELOG;
  r->u.ml = *ml;
  if (srcs) r->u.ml.sources = memcpy(p, ml->sources, srcs);
  p += srcs;
  r->u.ml.trigger = trig ? memcpy(p, ml->trigger, trig) : NULL;
  r->u.ml.ntrigger = trig ? ml->ntrigger : 0;
  p += trig;
  r->u.ml.component = scopy(&p, ml->component);
  r->u.ml.object = NULL;
  if (o) {
    r->obj.api_version = scopy(&p, o->api_version);
    r->obj.kind = scopy(&p, o->kind);
    r->obj.namespace_ = scopy(&p, o->namespace_);
    r->obj.name = scopy(&p, o->name);
    r->obj.uid = scopy(&p, o->uid);
    r->u.ml.object = &r->obj;
  }
  return r;
}

static rec_t *copy_span(const ripple_span_rec_t *sp) {
  size_t strs = slen(sp->service) + slen(sp->name);
  for (size_t i = 0; i < sp->nattrs; i++) strs += slen(sp->attrs[i].key) + slen(sp->attrs[i].value);
  size_t attrs = sp->nattrs * sizeof(ripple_attr_t);
  rec_t *r = malloc(sizeof *r + attrs + strs);
  if (!r) return NULL;
  ripple_attr_t *a = (ripple_attr_t *)(r + 1);
  char *p = (char *)a + attrs;
  r->type = REC_SPAN;
  r->u.sp = *sp;
  r->u.sp.service = scopy(&p, sp->service);
  r->u.sp.name = scopy(&p, sp->name);
  for (size_t i = 0; i < sp->nattrs; i++) {
    a[i].key = scopy(&p, sp->attrs[i].key);
    a[i].value = scopy(&p, sp->attrs[i].value);
  }
  r->u.sp.attrs = sp->nattrs ? a : NULL;
  return r;
}

/* ---- the queue ---------------------------------------------------------- */

static int enqueue(ripple_shipper_t *s, rec_t *(*copy)(const void *), const void *rec) {
  /* When the ring is full (server down), skip even the copy. */
  if (atomic_load_explicit(&s->approx_count, memory_order_relaxed) >= s->o.queue_capacity) {
    atomic_fetch_add(&s->st.dropped, 1);
    return RIPPLE_EFULL;
  }
  rec_t *r = copy(rec);
  if (!r) {
    atomic_fetch_add(&s->st.dropped, 1);
    return RIPPLE_ENOMEM;
  }
  pthread_mutex_lock(&s->mu);
  if (s->stop || s->count == s->o.queue_capacity) {
    int stopped = s->stop;
    pthread_mutex_unlock(&s->mu);
    free(r);
    if (stopped) return RIPPLE_ESTATE;
    atomic_fetch_add(&s->st.dropped, 1);
    return RIPPLE_EFULL;
  }
  s->ring[(s->head + s->count) % s->o.queue_capacity] = r;
  s->count++;
  atomic_store_explicit(&s->approx_count, s->count, memory_order_relaxed);
  if (s->count == s->o.batch_max) pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
  atomic_fetch_add(&s->st.enqueued, 1);
  return RIPPLE_OK;
}

typedef struct raw_in {
  const char *text;
  size_t len;
} raw_in_t;

static rec_t *copy_detail(const void *p) {
  const raw_in_t *in = p;
  rec_t *r = malloc(sizeof *r + in->len);
  if (!r) return NULL;
  r->type = REC_DETAIL;
  r->u.raw.text = memcpy(r + 1, in->text, in->len);
  r->u.raw.len = in->len;
  return r;
}

int ripple_shipper_enqueue_detail(ripple_shipper_t *s, const char *json, size_t len) {
  if (!s || !json || !len) return RIPPLE_EINVAL;
  raw_in_t in = {json, len};
  return enqueue(s, copy_detail, &in);
}

static rec_t *copy_ml_cb(const void *p) { return copy_mergelog(p); }
static rec_t *copy_sp_cb(const void *p) { return copy_span(p); }

int ripple_shipper_enqueue_mergelog(ripple_shipper_t *s, const ripple_mergelog_t *ml) {
  if (!s || !ml || (ml->nsources && !ml->sources) || ml->ntrigger > ml->nsources)
    return RIPPLE_EINVAL;
  return enqueue(s, copy_ml_cb, ml);
}

int ripple_shipper_enqueue_span(ripple_shipper_t *s, const ripple_span_rec_t *sp) {
  if (!s || !sp || (sp->nattrs && !sp->attrs)) return RIPPLE_EINVAL;
  return enqueue(s, copy_sp_cb, sp);
}

static void sink_ml(void *ud, const ripple_mergelog_t *ml) {
  (void)ripple_shipper_enqueue_mergelog(ud, ml);
}
static void sink_sp(void *ud, const ripple_span_rec_t *sp) {
  (void)ripple_shipper_enqueue_span(ud, sp);
}

ripple_sink_t ripple_shipper_sink(ripple_shipper_t *s) {
  ripple_sink_t k = {sink_ml, sink_sp, s};
  return k;
}

/* ---- sending ------------------------------------------------------------ */

static size_t discard_body(char *p, size_t size, size_t n, void *ud) {
  (void)p;
  (void)ud;
  return size * n;
}

static int abort_if_stopping(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  return atomic_load(&((ripple_shipper_t *)ud)->stopping) ? 1 : 0;
}

typedef enum { SEND_OK, SEND_RETRY, SEND_REJECTED } send_result_t;

static send_result_t post(ripple_shipper_t *s, CURL *c, const char *url, const sbuf_t *body,
                          long *status, long *retry_after) {
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  if (s->auth) h = curl_slist_append(h, s->auth);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->p);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
  atomic_fetch_add(&s->st.requests, 1);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(h);
  *status = 0;
  *retry_after = 0;
  if (rc != CURLE_OK) return SEND_RETRY;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  curl_off_t ra = 0;
  if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
    *retry_after = (long)ra;
  if (*status >= 200 && *status < 300) return SEND_OK;
  if (*status >= 400 && *status < 500 && *status != 408 && *status != 429) return SEND_REJECTED;
  return SEND_RETRY;
}

/* Sleep for ms unless stopping; returns nonzero when stopping. */
static int nap(ripple_shipper_t *s, uint32_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (long)(ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
  pthread_mutex_lock(&s->mu);
  while (!s->stop && pthread_cond_timedwait(&s->more, &s->mu, &ts) == 0) {
  }
  int stop = s->stop;
  pthread_mutex_unlock(&s->mu);
  return stop;
}

/* Send one array until it is acknowledged, refused, or we are told to stop. */
static void deliver(ripple_shipper_t *s, CURL *c, const char *url, const sbuf_t *body, size_t n) {
  uint32_t backoff = s->o.backoff_min_ms;
  uint64_t failed_in_a_row = 0;
  for (;;) {
    long status, retry_after;
    send_result_t r = post(s, c, url, body, &status, &retry_after);
    if (r == SEND_OK) {
      atomic_fetch_add(&s->st.sent, n);
      if (failed_in_a_row)
        ripple_log(RIPPLE_LOG_INFO, "ship_recovered", "url=%s failed_attempts=%llu", url,
                   (unsigned long long)failed_in_a_row);
      return;
    }
    if (r == SEND_REJECTED) {
      atomic_fetch_add(&s->st.rejected, n);
      ripple_log(RIPPLE_LOG_WARN, "ship_rejected", "url=%s status=%ld records=%zu", url, status, n);
      return;
    }
    atomic_fetch_add(&s->st.failures, 1);
    uint32_t wait = backoff;
    if (retry_after > 0) { /* the server knows best, within our cap */
      long ms = retry_after * 1000;
      wait = ms < (long)s->o.backoff_max_ms ? (uint32_t)ms : s->o.backoff_max_ms;
    }
    uint32_t jitter = 0;
    (void)rnd_bytes(&jitter, sizeof jitter);
    wait = wait / 2 + jitter % (wait / 2 + 1); /* "equal jitter": spread retries */
    if (failed_in_a_row++ == 0)
      ripple_log(RIPPLE_LOG_WARN, "ship_failed", "url=%s status=%ld records=%zu retry_in_ms=%u",
                 url, status, n, wait);
    if (nap(s, wait)) {
      atomic_fetch_add(&s->st.abandoned, n);
      return;
    }
    backoff = backoff * 2 > s->o.backoff_max_ms ? s->o.backoff_max_ms : backoff * 2;
  }
}

/* Details in requests of at most DETAILS_REQUEST_MAX bytes, after the
 * records (a detail names objects the spans already know). */
static void send_details(ripple_shipper_t *s, CURL *c, rec_t **batch, size_t n) {
  sbuf_t dt;
  size_t ndt = 0;
  sbuf_init(&dt);
  for (size_t i = 0; i <= n; i++) {
    const rec_t *r = i < n ? batch[i] : NULL;
    if (r && r->type != REC_DETAIL) continue;
    if (ndt && (!r || dt.len + r->u.raw.len + 2 > DETAILS_REQUEST_MAX)) {
      sbuf_putc(&dt, ']');
      if (dt.oom)
        atomic_fetch_add(&s->st.abandoned, ndt);
      else
        deliver(s, c, s->url_dt, &dt, ndt);
      dt.len = 0, dt.oom = 0, ndt = 0;
    }
    if (!r) break;
    sbuf_putc(&dt, ndt++ ? ',' : '[');
    sbuf_put(&dt, r->u.raw.text, r->u.raw.len);
  }
  sbuf_free(&dt);
}

static void send_batch(ripple_shipper_t *s, CURL *c, rec_t **batch, size_t n) {
  sbuf_t ml, sp;
  size_t nml = 0, nsp = 0;
  sbuf_init(&ml);
  sbuf_init(&sp);
  for (size_t i = 0; i < n; i++) {
    if (batch[i]->type == REC_DETAIL) continue;
    sbuf_t *b = batch[i]->type == REC_MERGELOG ? &ml : &sp;
    size_t *k = batch[i]->type == REC_MERGELOG ? &nml : &nsp;
    sbuf_putc(b, (*k)++ ? ',' : '[');
    if (batch[i]->type == REC_MERGELOG)
      wire_mergelog(b, &batch[i]->u.ml);
    else
      wire_span(b, &batch[i]->u.sp);
  }
  if (ml.oom || sp.oom) {
    atomic_fetch_add(&s->st.abandoned, nml + nsp);
    ripple_log(RIPPLE_LOG_ERROR, "ship_oom", "records=%zu", n);
  } else {
    /* Mergelogs first: a span is only findable once its CPID is in the graph. */
    if (nml) sbuf_putc(&ml, ']'), deliver(s, c, s->url_ml, &ml, nml);
    if (nsp) sbuf_putc(&sp, ']'), deliver(s, c, s->url_sp, &sp, nsp);
  }
  sbuf_free(&ml);
  sbuf_free(&sp);
  send_details(s, c, batch, n);
  for (size_t i = 0; i < n; i++) free(batch[i]);
}

static void *run(void *arg) {
  ripple_shipper_t *s = arg;
  CURL *c = curl_easy_init();
  rec_t **batch = malloc(s->o.batch_max * sizeof(rec_t *));
  if (c) {
    tsc_apply(c, &(tsc_policy_t){.timeout_ms = (long)s->o.timeout_ms, .ca_file = s->o.ca_file});
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, abort_if_stopping);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
  }
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    if (s->count < s->o.batch_max && !s->flush_req) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += (long)s->o.flush_interval_ms * 1000000;
      ts.tv_sec += ts.tv_nsec / 1000000000;
      ts.tv_nsec %= 1000000000;
      pthread_cond_timedwait(&s->more, &s->mu, &ts);
      if (s->stop) break;
    }
    size_t n = s->count < s->o.batch_max ? s->count : s->o.batch_max;
    for (size_t i = 0; i < n; i++) batch[i] = s->ring[(s->head + i) % s->o.queue_capacity];
    s->head = (s->head + n) % s->o.queue_capacity;
    s->count -= n;
    s->inflight = n;
    atomic_store_explicit(&s->approx_count, s->count, memory_order_relaxed);
    if (s->count == 0) s->flush_req = 0;
    pthread_mutex_unlock(&s->mu);
    if (n && c && batch)
      send_batch(s, c, batch, n);
    else if (n) { /* could not set up curl: nothing can be sent */
      for (size_t i = 0; i < n; i++) free(batch ? batch[i] : NULL);
      atomic_fetch_add(&s->st.abandoned, n);
    }
    pthread_mutex_lock(&s->mu);
    s->inflight = 0;
    if (s->count == 0) pthread_cond_broadcast(&s->drained);
  }
  pthread_mutex_unlock(&s->mu);
  free(batch);
  if (c) curl_easy_cleanup(c);
  return NULL;
}

/* ---- lifecycle ---------------------------------------------------------- */

static char *join(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  while (n && a[n - 1] == '/') n--;
  char *r = malloc(n + m + 1);
  if (r) snprintf(r, n + m + 1, "%.*s%s", (int)n, a, b);
  return r;
}

static void destroy(ripple_shipper_t *s) {
  free(s->url_ml);
  free(s->url_sp);
  free(s->url_dt);
  free(s->auth);
  free(s->ring);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->more);
  pthread_cond_destroy(&s->drained);
  free(s);
}

int ripple_shipper_new(const ripple_shipper_opts_t *opts, ripple_shipper_t **out) {
  if (!opts || !out || !opts->url || !*opts->url) return RIPPLE_EINVAL;
  if (strncmp(opts->url, "http://", 7) != 0 && strncmp(opts->url, "https://", 8) != 0)
    return RIPPLE_EINVAL;
  pthread_once(&curl_once, curl_init);
  ripple_shipper_t *s = calloc(1, sizeof *s);
  if (!s) return RIPPLE_ENOMEM;
  s->o = *opts;
  if (!s->o.queue_capacity) s->o.queue_capacity = 65536;
  if (!s->o.batch_max) s->o.batch_max = 1024;
  if (s->o.batch_max > s->o.queue_capacity) s->o.batch_max = s->o.queue_capacity;
  if (!s->o.flush_interval_ms) s->o.flush_interval_ms = 200;
  if (!s->o.timeout_ms) s->o.timeout_ms = 5000;
  if (!s->o.backoff_min_ms) s->o.backoff_min_ms = 100;
  if (!s->o.backoff_max_ms) s->o.backoff_max_ms = 10000;
  if (s->o.backoff_max_ms < s->o.backoff_min_ms) s->o.backoff_max_ms = s->o.backoff_min_ms;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->more, NULL);
  pthread_cond_init(&s->drained, NULL);
  s->url_ml = join(opts->url, "/v1/mergelogs");
  s->url_sp = join(opts->url, "/v1/spans");
  s->url_dt = join(opts->url, "/v1/details");
  s->ring = calloc(s->o.queue_capacity, sizeof(rec_t *));
  if (opts->bearer_token) {
    s->auth = malloc(strlen(opts->bearer_token) + 32);
    if (s->auth)
      snprintf(s->auth, strlen(opts->bearer_token) + 32, "Authorization: Bearer %s",
               opts->bearer_token);
  }
  /* Options point into the caller's memory; keep none of it. */
  s->o.url = s->o.bearer_token = s->o.ca_file = NULL;
  if (opts->ca_file && !(s->o.ca_file = strdup(opts->ca_file))) goto oom;
  if (!s->url_ml || !s->url_sp || !s->url_dt || !s->ring || (opts->bearer_token && !s->auth))
    goto oom;
  if (pthread_create(&s->thread, NULL, run, s) != 0) {
    free((char *)s->o.ca_file);
    destroy(s);
    return RIPPLE_ESYS;
  }
  *out = s;
  return RIPPLE_OK;
oom:
  free((char *)s->o.ca_file);
  destroy(s);
  return RIPPLE_ENOMEM;
}

int ripple_shipper_flush(ripple_shipper_t *s, uint32_t timeout_ms) {
  if (!s) return RIPPLE_EINVAL;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
  pthread_mutex_lock(&s->mu);
  s->flush_req = 1;
  pthread_cond_signal(&s->more);
  int rc = RIPPLE_OK;
  while ((s->count || s->inflight) && !s->stop)
    if (pthread_cond_timedwait(&s->drained, &s->mu, &ts) != 0) break;
  if (s->count || s->inflight) rc = RIPPLE_ETIMEDOUT;
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void ripple_shipper_stats(ripple_shipper_t *s, ripple_shipper_stats_t *out) {
  out->enqueued = atomic_load(&s->st.enqueued);
  out->sent = atomic_load(&s->st.sent);
  out->dropped = atomic_load(&s->st.dropped);
  out->rejected = atomic_load(&s->st.rejected);
  out->abandoned = atomic_load(&s->st.abandoned);
  out->requests = atomic_load(&s->st.requests);
  out->failures = atomic_load(&s->st.failures);
  out->queued = atomic_load(&s->approx_count);
}

void ripple_shipper_free(ripple_shipper_t *s, uint32_t timeout_ms) {
  if (!s) return;
  (void)ripple_shipper_flush(s, timeout_ms);
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  atomic_store(&s->stopping, 1);
  pthread_cond_broadcast(&s->more);
  pthread_cond_broadcast(&s->drained);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  for (size_t i = 0; i < s->count; i++) free(s->ring[(s->head + i) % s->o.queue_capacity]);
  atomic_fetch_add(&s->st.abandoned, s->count);
  if (atomic_load(&s->st.abandoned) || atomic_load(&s->st.dropped))
    ripple_log(RIPPLE_LOG_WARN, "ship_incomplete", "dropped=%llu abandoned=%llu",
               (unsigned long long)atomic_load(&s->st.dropped),
               (unsigned long long)atomic_load(&s->st.abandoned));
  free((char *)s->o.ca_file);
  destroy(s);
}
