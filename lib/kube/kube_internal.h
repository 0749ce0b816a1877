/*
 * kube_internal.h - what the parts of libripple-kube share: the resolved
 * configuration, the client, and the HTTP transport every request goes
 * through. Not installed; programs use include/ripple/kube.h.
 *
 * The parts call each other top to bottom only: informer.c -> watch.c ->
 * rw.c -> discovery.c -> client.c (this header) -> exec.c (exec.h); every
 * one of them reports errors through status.h. What a lower part needs of a
 * higher one comes as a callback (the client frees discovery's cache through
 * disc_free; discovery reads through a kube_fetch_fn).
 */
#ifndef RIPPLE_KUBE_INTERNAL_H
#define RIPPLE_KUBE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "exec.h"
#include "ripple/kube.h"
#include "ripplex/sbuf.h"
#include "status.h"

/* ---- configuration (config.c) ---------------------------------------------- */

/* A kubeconfig resolved for one context: everything a client needs, with
 * files already read (so a config is self-contained and immutable) except
 * tokenFile, which is re-read when it changes, as client-go does for rotated
 * service-account tokens. */
struct ripple_kube_config {
  char *context; /* "" in-cluster */
  char *server;  /* https://host:port, no trailing slash */
  char *namespace_;
  char *ca_pem;   /* NULL: system CAs */
  char *cert_pem; /* client certificate, or NULL */
  char *key_pem;
  char *token;               /* static bearer token, or NULL */
  char *token_file;          /* or a file holding it */
  kube_exec_t *exec;         /* or a credential plugin */
  char *username, *password; /* basic auth (legacy) */
  char *tls_server_name;
  char *proxy_url;
  int insecure; /* insecure-skip-tls-verify */
};

/* A deep copy (the client keeps its own): RIPPLE_OK or RIPPLE_ENOMEM. */
int kube_config_dup(const ripple_kube_config_t *c, ripple_kube_config_t **out);

/* ---- the client (client.c) -------------------------------------------------- */

typedef struct kube_discovery kube_discovery_t; /* discovery.c */

struct ripple_kube_client {
  ripple_kube_config_t *cfg; /* a private copy */
  ripple_kube_client_opts_t opts;
  char user_agent[64];
  void *share; /* CURLSH: one connection cache and TLS session cache for all threads */
  pthread_mutex_t share_lock[4];
  pthread_mutex_t cred_lock; /* guards the credential below */
  char *cred_token;          /* from tokenFile or exec */
  char *cred_cert, *cred_key;
  int64_t cred_expiry;
  int64_t token_file_mtime;
  pthread_mutex_t disc_lock;
  /* discovery.c's cache, and how to free it: set by discovery.c, which the
   * client never calls (discovery.c calls the client). */
  kube_discovery_t *disc;
  void (*disc_free)(kube_discovery_t *d);
};

/* How a response body is received: collected (NULL sink) or streamed. */
typedef struct kube_stream {
  /* Bytes as they arrive; return nonzero to abort the transfer. */
  int (*data)(void *ud, const char *p, size_t n);
  /* Checked about once a second and on data: nonzero aborts (a stopping watch). */
  int (*cancelled)(void *ud);
  void *ud;
} kube_stream_t;

typedef struct kube_req {
  const char *method;
  const char *path; /* with query string, already escaped */
  const char *content_type;
  const char *body;
  size_t len;
  uint32_t timeout_ms; /* 0: the client's; UINT32_MAX: none (watches) */
  const kube_stream_t *stream;
} kube_req_t;

/* Send a request. *status is the HTTP status (0 without an answer). Without a
 * stream the body is collected in resp. Returns RIPPLE_OK when an answer came
 * (whatever its status; see kube_check), RIPPLE_KUBE_ECONNECT or
 * RIPPLE_KUBE_ECRED otherwise, with st filled in. A 401 with an exec plugin
 * or tokenFile refreshes the credential and retries once. */
int kube_do(ripple_kube_client_t *c, const kube_req_t *rq, long *status, sbuf_t *resp,
            ripple_kube_status_t *st);

/* Map an answer to an error code; for a non-2xx, fill st from the Status
 * object in the body (or the bare status line). */
int kube_check(long status, const char *body, size_t len, ripple_kube_status_t *st);

/* kube_do + kube_check + parse a JSON answer into *out (may be NULL). */
int kube_call(ripple_kube_client_t *c, const kube_req_t *rq, json_t **out,
              ripple_kube_status_t *st);

/* Append s to b escaped for a URL query value or path segment. */
void kube_escape(sbuf_t *b, const char *s);

/* "/apis/apps/v1/namespaces/ns/deployments[/name[/sub]]" (core: "/api/v1/..."). */
void kube_path(sbuf_t *b, const ripple_kube_resource_t *r, const char *ns, const char *name,
               const char *subresource);

/* GET path through the client and parse the answer (kube_call); ud is the
 * ripple_kube_client_t. discovery.c and rw.c read through it (kube_rw.h's
 * kube_fetch_fn). */
int kube_fetch_client(void *ud, const char *path, json_t **out, ripple_kube_status_t *st);

#endif
