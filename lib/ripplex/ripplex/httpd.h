/*
 * ripplex/httpd.h - the one way ripple's servers listen: libmicrohttpd with a thread
 * per connection on an IPv4 address, optional TLS from PEM text, a
 * connection limit and an idle timeout. ripple-server and ripple-webhook
 * differ in what they answer, not in how they listen.
 *
 * Also the request plumbing both share: a body collected up to a bound (and,
 * optionally, within a budget of body bytes shared by all connections), an
 * answer queued, the signals a daemon's main thread waits for.
 *
 * Against hostile clients (docs/server.md, "Limits against hostile
 * clients"): an idle timeout (MHD's, reset by every byte), a deadline by
 * which a request's headers and body must have arrived (ours: a byte every
 * few seconds no longer holds a connection and its thread for ever), and a
 * limit of connections per client address.
 *
 * Memory: the caller owns the options' strings for the daemon's lifetime.
 */
#ifndef RIPPLEX_HTTPD_H
#define RIPPLEX_HTTPD_H

#include <microhttpd.h>
#include <signal.h>
#include <stdatomic.h>
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
  /* Hostile clients. timeout_s is libmicrohttpd's: idle, reset by any
   * byte. per_ip_limit: most connections from one IPv4 address
   * (0: no limit of its own). deadline_s: a request's headers and body must
   * have arrived this long after the connection opened or the previous answer
   * went out (0: none); past it the socket is shut down. A daemon with a
   * deadline is stopped with httpd_stop. */
  unsigned per_ip_limit, deadline_s;
  MHD_AccessHandlerCallback on_request;
  MHD_RequestCompletedCallback on_completed;
  /* With a deadline, on_connection's *socket_ctx is the guard's: not to touch. */
  MHD_NotifyConnectionCallback on_connection; /* may be NULL */
  void *cls;                                  /* passed to all three */
} httpd_opts_t;

/* Start listening; *port is the port bound (the one chosen for port 0). On
 * failure err says why in words for the operator (--listen ...). */
int httpd_start(const httpd_opts_t *o, struct MHD_Daemon **out, uint16_t *port, char *err,
                size_t errcap);

/* Stop a daemon that httpd_start started, its deadline watch too. */
void httpd_stop(struct MHD_Daemon *d);
/* Connections shut down at their deadline so far (0 without a deadline). */
uint64_t httpd_deadline_closed(struct MHD_Daemon *d);

/* Body bytes held by all requests together: a request's bytes are taken as
 * they arrive and given back when it is done, so memory for bodies stays
 * near cap (sbuf growth aside) however many connections send at once. */
typedef struct httpd_budget {
  size_t cap;                   /* 0: no budget */
  _Atomic size_t used;          /* bytes held now */
  atomic_uint_fast64_t refused; /* requests refused for want of budget */
} httpd_budget_t;

/* A request as libmicrohttpd delivers it: the body collected up to a bound.
 * Kept in the connection's con_cls between calls of the access handler. */
typedef struct httpd_req {
  sbuf_t body;
  int too_big;            /* over the bound (or out of memory): answer 413, nothing kept */
  int over_budget;        /* the budget ran out: answer 503, nothing kept */
  int64_t start_ns;       /* mono_ns() when the headers arrived */
  httpd_budget_t *budget; /* NULL: none */
  size_t held;            /* bytes taken from it */
} httpd_req_t;

/* The access handler's first call (headers only): keep a new request in
 * *con_cls. A Content-Length over max_body marks it too big, one that the
 * budget cannot take now over budget, both before any byte of the body is
 * read, so the handler can answer at once. RIPPLE_OK or RIPPLE_ENOMEM. */
int httpd_req_begin(struct MHD_Connection *c, void **con_cls, size_t max_body,
                    httpd_budget_t *budget, httpd_req_t **out);

/* Feed one call of the access handler: 1 when the request is complete and is
 * to be answered now (*out is it), 0 when libmicrohttpd is to be told
 * MHD_YES and will call again, RIPPLE_ENOMEM (answer MHD_NO). A
 * Content-Length over max_body marks the request too big before any byte.
 * The first call is httpd_req_begin without a budget, unless the handler
 * called that itself. */
int httpd_req_feed(struct MHD_Connection *c, void **con_cls, const char *data, size_t *size,
                   size_t max_body, httpd_req_t **out);
/* Once answered: the body freed and its bytes given back to the budget now,
 * not when libmicrohttpd has sent the answer (httpd_req_done does the rest). */
void httpd_req_release(httpd_req_t *r);
/* An MHD_RequestCompletedCallback that frees what httpd_req_feed kept and
 * gives its bytes back to the budget. */
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
