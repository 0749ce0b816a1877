/*
 * httpd.c - listening with libmicrohttpd (httpd.h).
 */
#include "ripplex/httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"

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
      MHD_OPTION_HTTPS_MEM_KEY, o->tls_key,
      o->tls_cert && o->tls_trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, o->tls_trust,
      MHD_OPTION_END);
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

int httpd_req_feed(struct MHD_Connection *c, void **con_cls, const char *data, size_t *size,
                   size_t max_body, httpd_req_t **out) {
  httpd_req_t *r = *con_cls;
  if (!r) { /* headers only so far */
    if (!(r = calloc(1, sizeof *r))) return RIPPLE_ENOMEM;
    r->start_ns = mono_ns();
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > max_body) r->too_big = 1;
    *con_cls = r;
    return 0;
  }
  if (*size) { /* a piece of the body */
    if (!r->too_big && r->body.len + *size > max_body) {
      r->too_big = 1;
      sbuf_free(&r->body);
    }
    if (!r->too_big) sbuf_put(&r->body, data, *size);
    if (r->body.oom) r->too_big = 1;
    *size = 0;
    return 0;
  }
  *out = r;
  return 1;
}

void httpd_req_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  httpd_req_t *r = *con_cls;
  if (r) sbuf_free(&r->body);
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
