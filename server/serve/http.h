/*
 * http.h - serving the trace server's API over HTTP(S).
 */
#ifndef RIPPLE_SERVER_HTTP_H
#define RIPPLE_SERVER_HTTP_H

#include <stdint.h>

#include "serve/server.h"
#include "serve/web.h"

typedef struct http_opts {
  const char *host;      /* IPv4 address to listen on */
  uint16_t port;         /* 0: any free port (see http_port) */
  size_t max_body;       /* bytes per request body */
  size_t max_audit_body; /* bytes per POST /v1/audit body (0: max_body) */
  size_t max_connections;
  /* Hostile clients (docs/server.md, "Limits against hostile clients"; 0: none). */
  size_t max_body_in_flight;       /* body bytes held by all requests together */
  unsigned max_connections_per_ip; /* connections from one address */
  unsigned idle_timeout_s;         /* a connection with no byte for this long is closed */
  unsigned request_deadline_s;     /* headers and body must arrive within this */
  char **writer_tokens;            /* NULL-terminated; NULL or empty: POSTs are open */
  char **reader_tokens;            /* the same for GETs (health checks are always open) */
  const char *tls_cert;            /* PEM text; NULL: plain HTTP */
  const char *tls_key;
  const web_t *web; /* the dashboard's files (borrowed); NULL: not installed */
  /* More of /metrics (the exporter's); NULL: none. */
  void (*more_metrics)(void *ud, sbuf_t *out);
  void *more_metrics_ud;
} http_opts_t;

typedef struct http http_t;

int http_start(srv_t *srv, const http_opts_t *o, http_t **out, char *err, size_t errcap);
uint16_t http_port(const http_t *h);
void http_stop(http_t *h);

/* Does an Accept-Encoding header's value (NULL: absent) take gzip: listed,
 * any case, with a q that is not 0? */
int http_gzip_wanted(const char *accept_encoding);

#endif
