/*
 * http.h - the webhook's HTTPS server: POST /mutate (AdmissionReview),
 * GET /healthz, /readyz and /metrics (or a listener of /metrics alone), and
 * who may POST /mutate (--client-ca).
 */
#ifndef RIPPLE_WEBHOOK_HTTP_H
#define RIPPLE_WEBHOOK_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "route.h"
#include "wh.h"

/* --metrics-listen: the main listener's /metrics moves to a listener of its
 * own (plain HTTP, /metrics and /healthz only), which a NetworkPolicy can
 * keep from Pods that may reach /mutate. */
typedef enum wh_http_metrics {
  WH_METRICS_HERE = 0,  /* everything, /metrics included */
  WH_METRICS_ELSEWHERE, /* everything but /metrics (404) */
  WH_METRICS_ONLY       /* /metrics and /healthz, nothing else */
} wh_http_metrics_t;

typedef struct wh_http_opts {
  const char *host;               /* IPv4 address */
  uint16_t port;                  /* 0: any free port */
  const char *tls_cert, *tls_key; /* PEM text; both NULL: plain HTTP (tests only) */
  size_t max_body;                /* largest AdmissionReview accepted */
  size_t max_connections;
  /* Hostile clients (docs/webhook.md "Listener limits"); 0: the default. */
  unsigned max_connections_per_ip; /* default 128: kube-apiserver's calls fit */
  unsigned request_deadline_s;     /* default 15 */
  wh_t *engine;
  const wh_route_t *route; /* who decides; NULL: this replica, always */
  const char *peer_token;  /* GET /v1/peer/memo needs it (handover.h); NULL: not served */
  /* --client-ca: POST /mutate only from a client with a certificate of this
   * CA (PEM text; needs tls_cert), or a replica showing peer_token; refused
   * before its body is read. client_names (--client-name): the certificate's
   * CN or a DNS name must also be one of them (none: any). Borrowed. */
  const char *client_ca;
  const char *const *client_names;
  size_t nclient_names;
  wh_http_metrics_t metrics;                  /* what this listener answers of /metrics */
  int (*ready)(void *ud);                     /* /readyz */
  void (*gauges)(void *ud, wh_gauges_t *out); /* /metrics */
  void *ud;
} wh_http_opts_t;

typedef struct wh_http wh_http_t;

int wh_http_start(const wh_http_opts_t *o, wh_http_t **out, char *err, size_t errcap);
uint16_t wh_http_port(const wh_http_t *h);
void wh_http_stop(wh_http_t *h);

#endif
