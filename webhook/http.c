/*
 * http.c - the webhook's HTTP(S) server on libmicrohttpd (see http.h).
 *
 * One thread per connection, as the trace server does: the API server keeps
 * its connections to a webhook alive and sends requests on them one at a
 * time, so a connection's thread handles them back to back with no hand-off.
 * Bodies over the limit are refused as soon as that is known; every error is
 * a JSON object that says what was wrong.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "handover.h"
#include "ripplex/httpd.h"
#include "ripplex/logonce.h"
#include "ripplex/sbuf.h"
#include "ripplex/tlspeer.h"

struct wh_http {
  struct MHD_Daemon *d;
  wh_http_opts_t o;
};

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg) {
  sbuf_t b;
  sbuf_init(&b);
  sbuf_puts(&b, "{\"error\":");
  sbuf_json_str(&b, msg);
  sbuf_puts(&b, "}");
  enum MHD_Result rc = httpd_send(c, status, "application/json", b.p, b.len);
  sbuf_free(&b);
  return rc;
}

static enum MHD_Result count_tp(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value) {
  (void)kind, (void)value;
  if (key && !strcasecmp(key, "traceparent")) ++*(int *)cls;
  return MHD_YES;
}

/* kube-apiserver's traceparent header (its own tracing, wh.h), valid or
 * NULL: one header only, since W3C leaves several to the receiver and the
 * first need not be the API server's. */
static const char *apiserver_tp(wh_http_t *h, struct MHD_Connection *c) {
  int n = 0;
  MHD_get_connection_values(c, MHD_HEADER_KIND, count_tp, &n);
  if (!n) return NULL;
  const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "traceparent");
  return wh_apiserver_tp(h->o.engine, n == 1 && v ? v : WH_APISERVER_TP_MANY);
}

static enum MHD_Result handle_mutate(wh_http_t *h, struct MHD_Connection *c, httpd_req_t *r) {
  if (r->too_big) {
    atomic_fetch_add(&wh_metrics(h->o.engine)->bad_requests, 1);
    char msg[128];
    snprintf(msg, sizeof msg, "the AdmissionReview is larger than %zu bytes (--max-body)",
             h->o.max_body);
    return send_error(c, 413, msg);
  }
  sbuf_t out;
  sbuf_init(&out);
  const char *body = r->body.p ? r->body.p : "";
  int status;
  const char *tp = apiserver_tp(h, c);
  if (h->o.route) {
    int fwd = MHD_lookup_connection_value(c, MHD_HEADER_KIND, WH_FWD_HEADER) != NULL;
    status = wh_route_mutate(h->o.route, fwd, tp, body, r->body.len, &out);
  } else {
    status = wh_handle_call(h->o.engine, WH_DECIDER, tp, body, r->body.len, &out);
  }
  enum MHD_Result rc = out.oom
                           ? send_error(c, 500, "out of memory")
                           : httpd_send(c, (unsigned)status, "application/json", out.p, out.len);
  sbuf_free(&out);
  return rc;
}

/* This replica's memory, for the next decider (handover.h): only to a peer
 * that shows the token of the serving key the replicas share. */
static enum MHD_Result handle_memo(wh_http_t *h, struct MHD_Connection *c) {
  const char *got = MHD_lookup_connection_value(c, MHD_HEADER_KIND, WH_PEER_HEADER);
  if (!h->o.peer_token || !wh_peer_token_ok(h->o.peer_token, got))
    return send_error(c, 401, "a peer's token is needed (" WH_PEER_HEADER ")");
  sbuf_t b;
  sbuf_init(&b);
  wh_t *w = h->o.engine;
  /* Causes older than the oldest hop worth timing are not handed over. */
  int rc = wh_memo_export(w->memo, wh_now(w), 600 * 1000000000LL, &b);
  enum MHD_Result r = rc != RIPPLE_OK ? send_error(c, 500, "out of memory")
                                      : httpd_send(c, 200, "application/json", b.p, b.len);
  sbuf_free(&b);
  return r;
}

static enum MHD_Result handle_metrics(wh_http_t *h, struct MHD_Connection *c) {
  wh_gauges_t g;
  memset(&g, 0, sizeof g);
  if (h->o.gauges) h->o.gauges(h->o.ud, &g);
  sbuf_t b;
  sbuf_init(&b);
  wh_metrics_write(wh_metrics(h->o.engine), &g, &b);
  enum MHD_Result rc = b.oom ? send_error(c, 500, "out of memory")
                             : httpd_send(c, 200, "text/plain; version=0.0.4", b.p, b.len);
  sbuf_free(&b);
  return rc;
}

/* --metrics-listen's listener: /metrics and /healthz, nothing of the rest. */
static enum MHD_Result route_metrics(wh_http_t *h, struct MHD_Connection *c, const char *url,
                                     const char *method) {
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return send_error(c, 405, "GET /metrics or /healthz");
  if (!strcmp(url, "/healthz")) return httpd_send(c, 200, "text/plain", "ok\n", 3);
  if (!strcmp(url, "/metrics")) return handle_metrics(h, c);
  return send_error(c, 404, "no such endpoint here; try /metrics, /healthz");
}

static enum MHD_Result route(wh_http_t *h, struct MHD_Connection *c, const char *url,
                             const char *method, httpd_req_t *r) {
  if (h->o.metrics == WH_METRICS_ONLY) return route_metrics(h, c, url, method);
  int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
  if (!strcmp(url, "/mutate")) {
    if (!post) return send_error(c, 405, "POST an AdmissionReview (admission.k8s.io/v1)");
    return handle_mutate(h, c, r);
  }
  if (!get) return send_error(c, 404, "no such endpoint; POST /mutate");
  if (!strcmp(url, "/healthz")) return httpd_send(c, 200, "text/plain", "ok\n", 3);
  if (!strcmp(url, "/v1/peer/memo")) return handle_memo(h, c);
  if (!strcmp(url, "/readyz")) {
    if (h->o.ready && !h->o.ready(h->o.ud))
      return send_error(c, 503, "not ready: the informers have not synced yet");
    return httpd_send(c, 200, "text/plain", "ok\n", 3);
  }
  if (!strcmp(url, "/metrics")) {
    if (h->o.metrics == WH_METRICS_ELSEWHERE)
      return send_error(c, 404, "/metrics is served on --metrics-listen's address");
    return handle_metrics(h, c);
  }
  return send_error(c, 404, "no such endpoint; try /mutate, /healthz, /readyz, /metrics");
}

/* --client-ca: whether a /mutate request may go on, asked when only its
 * headers have arrived, so that nothing of a stranger's body is read, let
 * alone decided, shipped or remembered. A replica forwarding to the decider
 * has no API server's certificate; it shows the replicas' token instead.
 * 0: go on; else *rc is the refusal queued. */
static int refused(wh_http_t *h, struct MHD_Connection *c, enum MHD_Result *rc) {
  const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, WH_PEER_HEADER);
  if (tok && h->o.peer_token && wh_peer_token_ok(h->o.peer_token, tok)) return 0;
  char why[256];
  int st = tlspeer_check(c, h->o.client_names, h->o.nclient_names, why, sizeof why);
  if (st == RIPPLE_OK) return 0;
  atomic_fetch_add(&wh_metrics(h->o.engine)->unauthenticated, 1);
  char q[320]; /* why may hold a client's CN: quoted, it cannot forge a log line */
  ripple_log_quote(why, q, sizeof q);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "mutate_refused", "reason=%s hint=%s", q,
                  "only kube-apiserver (--client-ca) and the other replicas may POST /mutate");
  *rc = send_error(c, st == RIPPLE_ENOENT ? 401 : 403, why);
  return 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls) {
  (void)version;
  wh_http_t *h = cls;
  httpd_req_t *r = NULL;
  enum MHD_Result refusal;
  if (!*con_cls && h->o.client_ca && !strcmp(url, "/mutate") && refused(h, c, &refusal))
    return refusal;
  int rc = httpd_req_feed(c, con_cls, data, size, h->o.max_body, &r);
  if (rc <= 0) return rc == 0 ? MHD_YES : MHD_NO;
  return route(h, c, url, method, r);
}

int wh_http_start(const wh_http_opts_t *o, wh_http_t **out, char *err, size_t errcap) {
  if (!o || !o->engine || !out || !o->host || (!o->tls_cert != !o->tls_key) ||
      (o->client_ca && !o->tls_cert))
    return RIPPLE_EINVAL;
  wh_http_t *h = calloc(1, sizeof *h);
  if (!h) return RIPPLE_ENOMEM;
  h->o = *o;
  if (!h->o.max_body) h->o.max_body = 8u << 20;
  if (!h->o.max_connections) h->o.max_connections = 256;
  /* kube-apiserver is one address with many connections (one per admission
   * call in flight, each answered in about a millisecond), so the limit per
   * address is half of all: far above its calls, and one other client
   * (a Pod that trickles bytes) still cannot take every slot. The deadline
   * is far above the registration's timeoutSeconds (1; 30 at most), after
   * which the API server has given up anyway, and above the idle timeout,
   * so an idle kept-alive connection ends by the idle timeout. */
  if (!h->o.max_connections_per_ip)
    h->o.max_connections_per_ip = (unsigned)h->o.max_connections / 2;
  if (!h->o.request_deadline_s) h->o.request_deadline_s = 15;
  httpd_opts_t ho = {.host = o->host,
                     .port = o->port,
                     .tls_cert = o->tls_cert,
                     .tls_key = o->tls_key,
                     .tls_trust = o->client_ca,
                     .max_connections = (unsigned)h->o.max_connections,
                     .timeout_s = 10,
                     .per_ip_limit = h->o.max_connections_per_ip,
                     .deadline_s = h->o.request_deadline_s,
                     .on_request = on_request,
                     .on_completed = httpd_req_done,
                     .cls = h};
  int rc = httpd_start(&ho, &h->d, &h->o.port, err, errcap);
  if (rc != RIPPLE_OK) {
    free(h);
    return rc;
  }
  *out = h;
  return RIPPLE_OK;
}

uint16_t wh_http_port(const wh_http_t *h) { return h->o.port; }

void wh_http_stop(wh_http_t *h) {
  if (!h) return;
  httpd_stop(h->d);
  free(h);
}
