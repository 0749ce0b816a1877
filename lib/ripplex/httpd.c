/*
 * httpd.c - listening with libmicrohttpd (httpd.h).
 */
#include "ripplex/httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include "ripple/ripple.h"

static void no_connection_hook(void *cls, struct MHD_Connection *c, void **socket_ctx,
                               enum MHD_ConnectionNotificationCode code) {
  (void)cls, (void)c, (void)socket_ctx, (void)code;
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
  MHD_NotifyConnectionCallback conn = o->on_connection ? o->on_connection : no_connection_hook;
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, 0, NULL, NULL, o->on_request, o->cls, MHD_OPTION_SOCK_ADDR, &sa,
      MHD_OPTION_CONNECTION_LIMIT, o->max_connections, MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s,
      MHD_OPTION_NOTIFY_COMPLETED, o->on_completed, o->cls, MHD_OPTION_NOTIFY_CONNECTION, conn,
      o->cls, o->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, o->tls_cert,
      MHD_OPTION_HTTPS_MEM_KEY, o->tls_key, MHD_OPTION_END);
  if (!d) {
    snprintf(err, errcap, "cannot listen on %s:%u (in use, not allowed, or a bad certificate?)",
             o->host, o->port);
    return RIPPLE_ESYS;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  if (port) *port = info ? info->port : o->port;
  *out = d;
  return RIPPLE_OK;
}
