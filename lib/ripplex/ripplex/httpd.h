/*
 * ripplex/httpd.h - the one way ripple's servers listen: libmicrohttpd with a thread
 * per connection on an IPv4 address, optional TLS from PEM text, a
 * connection limit and an idle timeout. ripple-server and ripple-webhook
 * differ in what they answer, not in how they listen.
 *
 * Memory: the caller owns the options' strings for the daemon's lifetime.
 */
#ifndef RIPPLEX_HTTPD_H
#define RIPPLEX_HTTPD_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

typedef struct httpd_opts {
  const char *host;               /* IPv4 address */
  uint16_t port;                  /* 0: any free port */
  const char *tls_cert, *tls_key; /* PEM text, both or neither */
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

#endif
