/*
 * httpd.c - listening with libmicrohttpd (httpd.h).
 *
 * The deadline: libmicrohttpd's connection timeout is an idle timeout, reset
 * by every byte, and it calls the access handler only once the headers are
 * in, so neither it nor the handler sees a client that sends a header line
 * byte by byte. A daemon with a deadline gets a guard: every connection is
 * listed from libmicrohttpd's "started" to its "closed" notification, each
 * with the time by which its request must have arrived, and a watch thread
 * shuts down the socket of one past it (libmicrohttpd's own thread then sees
 * the end of the stream and closes the connection as usual). libmicrohttpd
 * notifies "closed" before it closes the socket, and the list is changed and
 * walked under one mutex, so the watch never shuts down a descriptor that
 * has been closed and reused.
 */
#include "ripplex/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"

static void no_connection_hook(void *cls, struct MHD_Connection *c, void **socket_ctx,
                               enum MHD_ConnectionNotificationCode code) {
  (void)cls, (void)c, (void)socket_ctx, (void)code;
}

/* ---- the deadline guard ---------------------------------------------------- */

typedef struct guard_conn {
  struct guard_conn *prev, *next;
  int fd;
  _Atomic int64_t deadline_ns; /* 0: none (the request is in, being answered) */
  unsigned calls;              /* of the access handler for this request */
} guard_conn_t;

typedef struct guard {
  struct guard *next_guard; /* in the list of guards (httpd_stop finds its own) */
  struct MHD_Daemon *d;
  httpd_opts_t o; /* the caller's callbacks and cls */
  int64_t deadline_ns;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  guard_conn_t *conns;
  pthread_t watch;
  atomic_uint_fast64_t closed;
} guard_t;

static pthread_mutex_t guards_mu = PTHREAD_MUTEX_INITIALIZER;
static guard_t *guards;

static guard_conn_t *conn_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

static void guard_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                             enum MHD_ConnectionNotificationCode code) {
  guard_t *g = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    guard_conn_t *k = calloc(1, sizeof *k);
    if (k && i) {
      k->fd = i->connect_fd;
      atomic_store(&k->deadline_ns, mono_ns() + g->deadline_ns);
      pthread_mutex_lock(&g->mu);
      k->next = g->conns;
      if (g->conns) g->conns->prev = k;
      g->conns = k;
      pthread_mutex_unlock(&g->mu);
      *socket_ctx = k;
    } else {
      free(k); /* out of memory: this connection goes unguarded */
    }
  } else if (*socket_ctx) {
    guard_conn_t *k = *socket_ctx;
    pthread_mutex_lock(&g->mu);
    if (k->prev)
      k->prev->next = k->next;
    else
      g->conns = k->next;
    if (k->next) k->next->prev = k->prev;
    pthread_mutex_unlock(&g->mu);
    free(k);
    *socket_ctx = NULL;
  }
  if (g->o.on_connection) g->o.on_connection(g->o.cls, c, socket_ctx, code);
}

/* The access handler's calls for one request: the first (headers), any with
 * body, and the last (*size 0 again), after which the request is in and the
 * deadline no longer applies: a slow query is not a slow client. */
static enum MHD_Result guard_request(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version, const char *data,
                                     size_t *size, void **con_cls) {
  guard_t *g = cls;
  guard_conn_t *k = conn_of(c);
  if (k && k->calls++ > 0 && *size == 0) atomic_store(&k->deadline_ns, 0);
  return g->o.on_request(g->o.cls, c, url, method, version, data, size, con_cls);
}

/* An answer went out: the next request on the connection has its deadline. */
static void guard_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                            enum MHD_RequestTerminationCode toe) {
  guard_t *g = cls;
  if (g->o.on_completed) g->o.on_completed(g->o.cls, c, con_cls, toe);
  guard_conn_t *k = conn_of(c);
  if (k) {
    k->calls = 0;
    atomic_store(&k->deadline_ns, mono_ns() + g->deadline_ns);
  }
}

static void *guard_watch(void *arg) {
  guard_t *g = arg;
  pthread_mutex_lock(&g->mu);
  while (!g->stop) {
    int64_t now = mono_ns();
    for (guard_conn_t *k = g->conns; k; k = k->next) {
      int64_t dl = atomic_load(&k->deadline_ns);
      if (dl && now > dl && atomic_compare_exchange_strong(&k->deadline_ns, &dl, 0)) {
        shutdown(k->fd, SHUT_RDWR);
        atomic_fetch_add(&g->closed, 1);
      }
    }
    /* A quarter of a second: deadlines are seconds. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += 250000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&g->cv, &g->mu, &ts);
  }
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

static guard_t *guard_new(const httpd_opts_t *o) {
  guard_t *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->o = *o;
  g->deadline_ns = (int64_t)o->deadline_s * 1000000000;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&g->mu, NULL);
  return g;
}

static void guard_free(guard_t *g) {
  pthread_cond_destroy(&g->cv);
  pthread_mutex_destroy(&g->mu);
  free(g);
}

static guard_t *guard_find(struct MHD_Daemon *d, int unlink) {
  pthread_mutex_lock(&guards_mu);
  guard_t **p = &guards;
  while (*p && (*p)->d != d) p = &(*p)->next_guard;
  guard_t *g = *p;
  if (g && unlink) *p = g->next_guard;
  pthread_mutex_unlock(&guards_mu);
  return g;
}

/* ---- the daemon ------------------------------------------------------------- */

/* libmicrohttpd's messages (a connection refused at a limit, a client gone
 * mid-request, a failed TLS handshake) as log lines, at most LOG_PER_SECOND
 * a second in the process: a client that opens connections as fast as it
 * can must not write the log as fast. The next line that goes out says how
 * many were left out. */
#define LOG_PER_SECOND 10
static atomic_int_fast64_t log_second;
static atomic_uint log_count;
static atomic_uint_fast64_t log_dropped;

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  int64_t sec = mono_ns() / 1000000000, cur = atomic_load(&log_second);
  if (sec != cur && atomic_compare_exchange_strong(&log_second, &cur, sec))
    atomic_store(&log_count, 0);
  if (atomic_fetch_add(&log_count, 1) >= LOG_PER_SECOND) {
    atomic_fetch_add(&log_dropped, 1);
    return;
  }
  char msg[256], q[300];
  vsnprintf(msg, sizeof msg, fmt, ap);
  msg[strcspn(msg, "\r\n")] = '\0';
  ripple_log_quote(msg, q, sizeof q);
  ripple_log(RIPPLE_LOG_INFO, "http_error", "msg=%s left_out=%" PRIu64, q,
             (uint64_t)atomic_exchange(&log_dropped, 0));
}

static struct MHD_Daemon *start_daemon(const httpd_opts_t *o, unsigned flags,
                                       const struct sockaddr_in *sa, guard_t *g) {
  MHD_AccessHandlerCallback req = g ? guard_request : o->on_request;
  MHD_RequestCompletedCallback done = g ? guard_completed : o->on_completed;
  MHD_NotifyConnectionCallback conn = g                  ? guard_connection
                                      : o->on_connection ? o->on_connection
                                                         : no_connection_hook;
  void *cls = g ? (void *)g : o->cls;
  return MHD_start_daemon(flags, 0, NULL, NULL, req, cls, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                          MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT, o->max_connections,
                          MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s,
                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_limit,
                          MHD_OPTION_NOTIFY_COMPLETED, done, cls, MHD_OPTION_NOTIFY_CONNECTION,
                          conn, cls, o->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
                          o->tls_cert, MHD_OPTION_HTTPS_MEM_KEY, o->tls_key,
                          o->tls_cert && o->tls_trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END,
                          o->tls_trust, MHD_OPTION_END);
}

int httpd_start(const httpd_opts_t *o, struct MHD_Daemon **out, uint16_t *port, char *err,
                size_t errcap) {
  if (!o || !o->host || !o->on_request || !out || (!o->tls_cert != !o->tls_key))
    return RIPPLE_EINVAL;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(o->port)};
  if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1) {
    snprintf(err, errcap, "--listen: '%s' is not an IPv4 address", o->host);
    return RIPPLE_EINVAL;
  }
  unsigned flags =
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
  if (o->tls_cert) {
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
      snprintf(err, errcap, "this libmicrohttpd was built without TLS");
      return RIPPLE_EINVAL;
    }
    flags |= MHD_USE_TLS;
  }
  guard_t *g = NULL;
  if (o->deadline_s && !(g = guard_new(o))) return RIPPLE_ENOMEM;
  struct MHD_Daemon *d = start_daemon(o, flags, &sa, g);
  if (!d) {
    if (g) guard_free(g);
    snprintf(err, errcap, "cannot listen on %s:%u (in use, not allowed, or a bad certificate?)",
             o->host, o->port);
    return RIPPLE_ESYS;
  }
  if (g) {
    g->d = d;
    if (pthread_create(&g->watch, NULL, guard_watch, g) != 0) {
      MHD_stop_daemon(d);
      guard_free(g);
      snprintf(err, errcap, "cannot start a thread: %s", strerror(errno));
      return RIPPLE_ESYS;
    }
    pthread_mutex_lock(&guards_mu);
    g->next_guard = guards;
    guards = g;
    pthread_mutex_unlock(&guards_mu);
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  if (port) *port = info ? info->port : o->port;
  *out = d;
  return RIPPLE_OK;
}

void httpd_stop(struct MHD_Daemon *d) {
  if (!d) return;
  guard_t *g = guard_find(d, 1);
  /* The daemon first: its connections end (each unlisted from the guard)
   * while the watch still runs. */
  MHD_stop_daemon(d);
  if (!g) return;
  pthread_mutex_lock(&g->mu);
  g->stop = 1;
  pthread_cond_signal(&g->cv);
  pthread_mutex_unlock(&g->mu);
  pthread_join(g->watch, NULL);
  guard_free(g);
}

uint64_t httpd_deadline_closed(struct MHD_Daemon *d) {
  guard_t *g = guard_find(d, 0);
  return g ? (uint64_t)atomic_load(&g->closed) : 0;
}

/* ---- requests --------------------------------------------------------------- */

static int budget_take(httpd_budget_t *b, size_t n) {
  size_t used = atomic_load(&b->used);
  do {
    if (used + n > b->cap || used + n < used) return 0;
  } while (!atomic_compare_exchange_weak(&b->used, &used, used + n));
  return 1;
}

static void req_give_back(httpd_req_t *r) {
  if (r->budget && r->held) atomic_fetch_sub(&r->budget->used, r->held);
  r->held = 0;
}

int httpd_req_begin(struct MHD_Connection *c, void **con_cls, size_t max_body,
                    httpd_budget_t *budget, httpd_req_t **out) {
  httpd_req_t *r = calloc(1, sizeof *r);
  if (!r) return RIPPLE_ENOMEM;
  r->start_ns = mono_ns();
  r->budget = budget && budget->cap ? budget : NULL;
  const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
  unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
  if (len > max_body) r->too_big = 1;
  /* Only a look: the bytes are taken as they come, so a client that
   * announces a large body and sends nothing holds nothing. */
  else if (r->budget && len > r->budget->cap - atomic_load(&r->budget->used))
    r->over_budget = 1;
  if (r->over_budget) atomic_fetch_add(&r->budget->refused, 1);
  *con_cls = r;
  if (out) *out = r;
  return RIPPLE_OK;
}

int httpd_req_feed(struct MHD_Connection *c, void **con_cls, const char *data, size_t *size,
                   size_t max_body, httpd_req_t **out) {
  httpd_req_t *r = *con_cls;
  if (!r) /* headers only so far */
    return httpd_req_begin(c, con_cls, max_body, NULL, NULL) == RIPPLE_OK ? 0 : RIPPLE_ENOMEM;
  if (*size) { /* a piece of the body */
    if (!r->too_big && r->body.len + *size > max_body) {
      r->too_big = 1;
      sbuf_free(&r->body);
      req_give_back(r);
    }
    if (!r->too_big && !r->over_budget && r->budget) {
      if (budget_take(r->budget, *size)) {
        r->held += *size;
      } else {
        r->over_budget = 1;
        atomic_fetch_add(&r->budget->refused, 1);
        sbuf_free(&r->body);
        req_give_back(r);
      }
    }
    if (!r->too_big && !r->over_budget) sbuf_put(&r->body, data, *size);
    if (r->body.oom) r->too_big = 1;
    *size = 0;
    return 0;
  }
  *out = r;
  return 1;
}

void httpd_req_release(httpd_req_t *r) {
  sbuf_free(&r->body);
  req_give_back(r);
}

void httpd_req_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  httpd_req_t *r = *con_cls;
  if (r) {
    sbuf_free(&r->body);
    req_give_back(r);
  }
  free(r);
  *con_cls = NULL;
}

enum MHD_Result httpd_send(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *p, size_t len) {
  return httpd_send_headers(c, status, type, p, len, NULL);
}

enum MHD_Result httpd_send_headers(struct MHD_Connection *c, unsigned status, const char *type,
                                   const char *p, size_t len, const char *const *hdrs) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, (void *)(p ? p : ""), MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  int cache = 0;
  for (size_t i = 0; hdrs && hdrs[i] && hdrs[i + 1]; i += 2) {
    MHD_add_response_header(r, hdrs[i], hdrs[i + 1]);
    cache |= !strcasecmp(hdrs[i], "Cache-Control");
  }
  if (!cache) MHD_add_response_header(r, "Cache-Control", "no-store");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

void httpd_signals(sigset_t *sigs) {
  sigemptyset(sigs);
  sigaddset(sigs, SIGINT);
  sigaddset(sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
}
