/*
 * ripplex/httpd.h - the one way ripple's servers listen: libmicrohttpd with a thread
 * per connection on an IPv4 address, optional TLS from PEM text, a
 * connection limit and an idle timeout. ripple-server and ripple-webhook
 * differ in what they answer, not in how they listen.
 *
 * Also the request plumbing both share: a body collected up to a bound, an
 * answer queued, the signals a daemon's main thread waits for.
 *
 * Memory: the caller owns the options' strings for the daemon's lifetime.
 */
#ifndef RIPPLEX_HTTPD_H
#define RIPPLEX_HTTPD_H

#include <microhttpd.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

typedef struct httpd_opts {
  const char *host;               /* IPv4 address */
  uint16_t port;                  /* 0: any free port */
  const char *tls_cert, *tls_key; /* PEM text, both or neither */
  const char *tls_trust;          /* CA (PEM text) clients are asked for a certificate of;
                                   * not required nor checked: tlspeer.h checks. NULL: none */
  unsigned max_connections, timeout_s;
  MHD_AccessHandlerCallback on_request;
  MHD_RequestCompletedCallback on_completed;
  MHD_NotifyConnectionCallback on_connection; /* may be NULL */
  void *cls;                                  /* passed to all three */
} httpd_opts_t;

/* Start listening; *port is the port bound (the one chosen for port 0). On
 * failure err says why in words for the operator (--listen ...). */
int httpd_start(const httpd_opts_t *o, struct MHD_Daemon **out, uint16_t *port, char *err,
                size_t errcap);

/* A request as libmicrohttpd delivers it: the body collected up to a bound.
 * Kept in the connection's con_cls between calls of the access handler. */
typedef struct httpd_req {
  sbuf_t body;
  int too_big;      /* over the bound (or out of memory): answer 413, nothing kept */
  int64_t start_ns; /* mono_ns() when the headers arrived */
} httpd_req_t;

/* Feed one call of the access handler: 1 when the request is complete and is
 * to be answered now (*out is it), 0 when libmicrohttpd is to be told
 * MHD_YES and will call again, RIPPLE_ENOMEM (answer MHD_NO). A
 * Content-Length over max_body marks the request too big before any byte. */
int httpd_req_feed(struct MHD_Connection *c, void **con_cls, const char *data, size_t *size,
                   size_t max_body, httpd_req_t **out);
/* An MHD_RequestCompletedCallback that frees what httpd_req_feed kept. */
void httpd_req_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe);

/* Queue an answer (copied; never cached by clients). */
enum MHD_Result httpd_send(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *p, size_t len);
/* The same with more headers: hdrs is a NULL-terminated list of name, value,
 * name, value, ... (NULL: none). Cache-Control is no-store unless hdrs has one. */
enum MHD_Result httpd_send_headers(struct MHD_Connection *c, unsigned status, const char *type,
                                   const char *p, size_t len, const char *const *hdrs);

/* For a daemon's main thread: SIGINT and SIGTERM blocked in every thread
 * started afterwards (the main thread takes them with sigwait on *sigs), and
 * SIGPIPE ignored (a client that goes away is not a reason to die). */
void httpd_signals(sigset_t *sigs);

#endif
