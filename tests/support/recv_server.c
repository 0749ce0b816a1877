/*
 * recv_server.c - see recv_server.h.
 */
#include "recv_server.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct recv_server {
  struct MHD_Daemon *d;
  int port;
  pthread_mutex_t mu;
  int status, fail_first, hang;
  atomic_int stopping;
  size_t requests, invalid, mergelogs, spans, triggered;
  char auth[256];
};

typedef struct body {
  char *p;
  size_t len;
} body_t;

static enum MHD_Result reply(struct MHD_Connection *c, int status) {
  static const char ok[] = "{}";
  struct MHD_Response *r = MHD_create_response_from_buffer(2, (void *)ok, MHD_RESPMEM_PERSISTENT);
  enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
  MHD_destroy_response(r);
  return rc;
}

/* The body's records; *triggered: how many of them name a trigger. */
static size_t count_records(const body_t *b, int *valid, size_t *triggered) {
  json_t *j = json_loadb(b->p ? b->p : "", b->len, 0, NULL);
  *valid = json_is_array(j);
  *triggered = 0;
  size_t n = json_array_size(j), i;
  json_t *e;
  json_array_foreach(j, i, e) {
    if (!json_is_object(e)) *valid = 0;
    if (json_array_size(json_object_get(e, "trigger"))) ++*triggered;
  }
  json_decref(j);
  return n;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls) {
  (void)version;
  (void)method;
  recv_server_t *r = cls;
  body_t *b = *con_cls;
  if (!b) {
    *con_cls = calloc(1, sizeof *b);
    return *con_cls ? MHD_YES : MHD_NO;
  }
  if (*size) {
    char *p = realloc(b->p, b->len + *size);
    if (!p) return MHD_NO;
    memcpy(p + b->len, data, *size);
    b->p = p;
    b->len += *size;
    *size = 0;
    return MHD_YES;
  }
  while (r->hang && !atomic_load(&r->stopping)) usleep(10000);
  pthread_mutex_lock(&r->mu);
  r->requests++;
  const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  snprintf(r->auth, sizeof r->auth, "%s", auth ? auth : "");
  int status = r->fail_first > 0 ? 503 : r->status;
  if (r->fail_first > 0) r->fail_first--;
  if (status >= 200 && status < 300) {
    int valid;
    size_t trig, n = count_records(b, &valid, &trig);
    if (!valid) r->invalid++;
    if (strcmp(url, "/v1/mergelogs") == 0) {
      r->mergelogs += n;
      r->triggered += trig;
    } else if (strcmp(url, "/v1/spans") == 0)
      r->spans += n;
  }
  pthread_mutex_unlock(&r->mu);
  return reply(c, atomic_load(&r->stopping) ? 503 : status);
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
                 enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  body_t *b = *con_cls;
  if (b) free(b->p);
  free(b);
  *con_cls = NULL;
}

recv_server_t *recv_start(void) {
  recv_server_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  pthread_mutex_init(&r->mu, NULL);
  r->status = 200;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                          NULL, handle, r, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED,
                          done, r, MHD_OPTION_END);
  if (!r->d) {
    free(r);
    return NULL;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
  r->port = info ? info->port : 0;
  return r;
}

int recv_port(const recv_server_t *r) { return r->port; }

void recv_configure(recv_server_t *r, int status, int fail_first, int hang) {
  pthread_mutex_lock(&r->mu);
  r->status = status;
  r->fail_first = fail_first;
  r->hang = hang;
  pthread_mutex_unlock(&r->mu);
}

static size_t get(recv_server_t *r, const size_t *v) {
  pthread_mutex_lock(&r->mu);
  size_t n = *v;
  pthread_mutex_unlock(&r->mu);
  return n;
}

size_t recv_records(recv_server_t *r, const char *path) {
  return get(r, strcmp(path, "/v1/mergelogs") == 0 ? &r->mergelogs : &r->spans);
}
size_t recv_requests(recv_server_t *r) { return get(r, &r->requests); }
size_t recv_triggered(recv_server_t *r) { return get(r, &r->triggered); }
size_t recv_invalid(recv_server_t *r) { return get(r, &r->invalid); }

void recv_last_auth(recv_server_t *r, char *out, size_t cap) {
  pthread_mutex_lock(&r->mu);
  snprintf(out, cap, "%s", r->auth);
  pthread_mutex_unlock(&r->mu);
}

void recv_stop(recv_server_t *r) {
  atomic_store(&r->stopping, 1);
  MHD_stop_daemon(r->d);
  pthread_mutex_destroy(&r->mu);
  free(r);
}
