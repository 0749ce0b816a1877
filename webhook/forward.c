/*
 * forward.c - a replica hands an AdmissionReview to the decider (forward.h).
 *
 * libcurl, one easy handle per thread (libmicrohttpd gives each connection a
 * thread, and kube-apiserver sends a connection's requests one after the
 * other), so the TLS connection to the decider is kept alive and reused with
 * no lock. The peer is reached at its address but its certificate is checked
 * against the name it is valid for (CURLOPT_RESOLVE), since the replicas
 * share the webhook Service's certificate, which names the Service, not each
 * Pod.
 */
#include "forward.h"
#include "handover.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"
#include "ripplex/tsclient.h"

struct wh_fwd {
  wh_fwd_opts_t o;
  char *ca_file, *tls_name;
  char token_line[sizeof WH_PEER_HEADER + WH_PEER_TOKEN_LEN + 2]; /* "X-Ripple-Peer: ..." */
  pthread_key_t key;                                              /* the thread's CURL handle */
  pthread_mutex_t mu;
  char failed[128];    /* the peer that failed last */
  int64_t retry_at_ns; /* ... and when it may be asked again (mono_ns) */
};

static void handle_free(void *h) { curl_easy_cleanup(h); }

int wh_fwd_new(const wh_fwd_opts_t *o, wh_fwd_t **out) {
  if (!o || !out) return RIPPLE_EINVAL;
  wh_fwd_t *f = calloc(1, sizeof *f);
  if (!f) return RIPPLE_ENOMEM;
  f->o = *o;
  if (!f->o.timeout_ms) f->o.timeout_ms = 300;
  if (!f->o.backoff_ms) f->o.backoff_ms = 1000;
  if (!f->o.max_answer) f->o.max_answer = 4u << 20;
  f->o.peer_token = NULL; /* only its header line is kept */
  if (o->peer_token) {
    if (strlen(o->peer_token) != WH_PEER_TOKEN_LEN) {
      free(f);
      return RIPPLE_EINVAL;
    }
    snprintf(f->token_line, sizeof f->token_line, "%s: %s", WH_PEER_HEADER, o->peer_token);
  }
  if ((o->ca_file && !(f->ca_file = strdup(o->ca_file))) ||
      (o->tls_name && !(f->tls_name = strdup(o->tls_name)))) {
    free(f->ca_file);
    free(f);
    return RIPPLE_ENOMEM;
  }
  if (pthread_key_create(&f->key, handle_free) != 0) {
    free(f->ca_file);
    free(f->tls_name);
    free(f);
    return RIPPLE_ENOMEM;
  }
  pthread_mutex_init(&f->mu, NULL);
  *out = f;
  return RIPPLE_OK;
}

void wh_fwd_free(wh_fwd_t *f) {
  if (!f) return;
  OPENSSL_cleanse(f->token_line, sizeof f->token_line);
  /* Other threads' handles are freed as their threads end; this one's now. */
  CURL *h = pthread_getspecific(f->key);
  if (h) {
    curl_easy_cleanup(h);
    pthread_setspecific(f->key, NULL);
  }
  pthread_key_delete(f->key);
  pthread_mutex_destroy(&f->mu);
  free(f->ca_file);
  free(f->tls_name);
  free(f);
}

/* "host:port" into its parts; the host an IPv4 address or a name. */
static int split_peer(const char *peer, char *host, size_t cap, unsigned *port) {
  const char *colon = strrchr(peer, ':');
  if (!colon || colon == peer || (size_t)(colon - peer) >= cap) return RIPPLE_EINVAL;
  char *end;
  unsigned long p = strtoul(colon + 1, &end, 10);
  if (*end || !p || p > 65535) return RIPPLE_EINVAL;
  for (const char *c = peer; c < colon; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '.' || *c == '-'))
      return RIPPLE_EINVAL;
  memcpy(host, peer, (size_t)(colon - peer));
  host[colon - peer] = '\0';
  *port = (unsigned)p;
  return RIPPLE_OK;
}

static int backing_off(wh_fwd_t *f, const char *peer) {
  pthread_mutex_lock(&f->mu);
  int off = !strcmp(f->failed, peer) && mono_ns() < f->retry_at_ns;
  pthread_mutex_unlock(&f->mu);
  return off;
}

static void note(wh_fwd_t *f, const char *peer, int ok) {
  pthread_mutex_lock(&f->mu);
  if (!ok) {
    snprintf(f->failed, sizeof f->failed, "%s", peer);
    f->retry_at_ns = mono_ns() + (int64_t)f->o.backoff_ms * 1000000;
  } else if (!strcmp(f->failed, peer)) {
    f->failed[0] = '\0';
  }
  pthread_mutex_unlock(&f->mu);
}

typedef struct sink {
  sbuf_t *out;
  size_t start, max;
} sink_t;

static size_t on_data(char *p, size_t size, size_t n, void *ud) {
  sink_t *s = ud;
  size_t len = size * n;
  if (s->out->len - s->start + len > s->max) return 0; /* too large: the transfer fails */
  sbuf_put(s->out, p, len);
  return s->out->oom ? 0 : len;
}

static CURL *thread_handle(wh_fwd_t *f) {
  CURL *h = pthread_getspecific(f->key);
  if (h) return h;
  if (!(h = curl_easy_init())) return NULL;
  tsc_policy_t p = {.timeout_ms = f->o.timeout_ms, .ca_file = f->ca_file};
  tsc_apply(h, &p);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  if (pthread_setspecific(f->key, h) != 0) {
    curl_easy_cleanup(h);
    return NULL;
  }
  return h;
}

/* One request to the peer: a POST of body when it is not NULL, else a GET;
 * the answer's status (0: none came). */
static long request(wh_fwd_t *f, CURL *h, const char *host, unsigned port, const char *path,
                    struct curl_slist *hdrs, const char *body, size_t len, sink_t *s) {
  const char *name = f->tls_name && !f->o.plain_http ? f->tls_name : host;
  char url[512], resolve[320];
  snprintf(url, sizeof url, "%s://%s:%u%s", f->o.plain_http ? "http" : "https", name, port, path);
  struct curl_slist *res = NULL;
  if (name != host) {
    snprintf(resolve, sizeof resolve, "%s:%u:%s", name, port, host);
    res = curl_slist_append(NULL, resolve);
  }
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_RESOLVE, res);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  if (body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_setopt(h, CURLOPT_RESOLVE, NULL);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(res);
  return status;
}

static long post(wh_fwd_t *f, CURL *h, const char *host, unsigned port, const char *tp,
                 const char *body, size_t len, sink_t *s) {
  struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  hdrs = curl_slist_append(hdrs, WH_FWD_HEADER ": 1");
  if (*f->token_line) hdrs = curl_slist_append(hdrs, f->token_line);
  /* The API server's trace context, so that the decider's span names its
   * span as this replica's would have; only a validated value (55 bytes of
   * hex and dashes) is ever put in a header line. */
  char tp_line[96];
  if (tp && strlen(tp) < 64) {
    snprintf(tp_line, sizeof tp_line, "traceparent: %s", tp);
    hdrs = curl_slist_append(hdrs, tp_line);
  }
  long status = request(f, h, host, port, "/mutate", hdrs, body, len, s);
  curl_slist_free_all(hdrs);
  return status;
}

int wh_fwd_get(wh_fwd_t *f, const char *peer, const char *path, const char *header,
               const char *value, sbuf_t *out) {
  char host[256], line[512];
  unsigned port;
  if (!f || !peer || !path || split_peer(peer, host, sizeof host, &port) != RIPPLE_OK)
    return RIPPLE_EINVAL;
  CURL *h = thread_handle(f);
  if (!h) return RIPPLE_ESYS;
  struct curl_slist *hdrs = NULL;
  if (header && value) {
    snprintf(line, sizeof line, "%s: %s", header, value);
    hdrs = curl_slist_append(NULL, line);
  }
  sink_t s = {out, out->len, WH_FWD_GET_MAX};
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)WH_FWD_GET_TIMEOUT_MS);
  long status = request(f, h, host, port, path, hdrs, NULL, 0, &s);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)f->o.timeout_ms);
  curl_slist_free_all(hdrs);
  if (status != 200 || out->oom) {
    out->len = s.start;
    if (out->p) out->p[out->len] = '\0';
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}

int wh_fwd_mutate(wh_fwd_t *f, const char *peer, const char *apiserver_tp, const char *body,
                  size_t len, sbuf_t *out) {
  char host[256];
  unsigned port;
  if (!f || !peer || split_peer(peer, host, sizeof host, &port) != RIPPLE_OK) return RIPPLE_EINVAL;
  if (backing_off(f, peer)) return RIPPLE_ESYS;
  CURL *h = thread_handle(f);
  if (!h) return RIPPLE_ESYS;
  sink_t s = {out, out->len, f->o.max_answer};
  long status = post(f, h, host, port, apiserver_tp, body, len, &s);
  int ok = status == 200 && out->len > s.start && !out->oom;
  note(f, peer, ok);
  if (!ok) {
    out->len = s.start; /* nothing of a failed answer is kept */
    if (out->p) out->p[out->len] = '\0';
    return RIPPLE_ESYS;
  }
  return RIPPLE_OK;
}
