/*
 * forward.h - a replica hands an AdmissionReview to the decider.
 *
 * With several replicas behind a Service, each decision must not depend on
 * which replica kube-proxy picked: one replica, the decider (lease.h),
 * decides every write, and the others forward each review to it over HTTPS
 * and relay its answer (docs/webhook.md, "Several replicas"). A forward is
 * bounded in time; a peer that failed is not asked again for a short while,
 * so that a hung decider costs one timeout, not one per write.
 *
 * Memory: wh_fwd_new copies its options. Threads: wh_fwd_mutate may be
 * called from many threads at once; each thread keeps its own connection to
 * the decider (kept alive between requests).
 */
#ifndef RIPPLE_WEBHOOK_FORWARD_H
#define RIPPLE_WEBHOOK_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

/* The header that marks a forwarded review: its receiver decides it itself,
 * never forwards it again. */
#define WH_FWD_HEADER "X-Ripple-Forwarded"

typedef struct wh_fwd_opts {
  const char *ca_file;  /* CA (PEM) the peers' certificate is checked against; NULL: the system's */
  const char *tls_name; /* the name the peers' certificate is valid for (the webhook
                         * Service's DNS name); NULL: the peer's own host */
  int plain_http;       /* peers serve plain HTTP (tests without certificates) */
  uint32_t timeout_ms;  /* a whole forward; default 300 */
  uint32_t backoff_ms;  /* after a failure, that peer is not asked for this long; default 1000 */
  size_t max_answer;    /* largest answer taken; default 4 MiB */
  /* The replicas' token (handover.h), sent with every forward so that a
   * decider that takes /mutate only from clients of --client-ca takes it
   * from a replica too; NULL: none (plain HTTP). Copied. */
  const char *peer_token;
} wh_fwd_opts_t;

typedef struct wh_fwd wh_fwd_t;

int wh_fwd_new(const wh_fwd_opts_t *o, wh_fwd_t **out);
void wh_fwd_free(wh_fwd_t *f);

/* POST body to https://PEER/mutate, PEER "host:port" (the decider's Lease
 * identity), marked forwarded, with the API server's traceparent header when
 * apiserver_tp is not NULL (wh_apiserver_tp's value: already validated). RIPPLE_OK with the
 * decider's AdmissionReview answer appended to out; RIPPLE_ESYS when it could not be had
 * (unreachable, timed out, not 200, too large, or the peer is backing off after a recent failure);
 * RIPPLE_EINVAL for a malformed peer. out is left as it was on failure. */
int wh_fwd_mutate(wh_fwd_t *f, const char *peer, const char *apiserver_tp, const char *body,
                  size_t len, sbuf_t *out);

/* GET https://PEER<path> with one more header line (header NULL: none), the
 * answer of a 200 appended to out (at most WH_FWD_GET_MAX bytes, within
 * WH_FWD_GET_TIMEOUT_MS): for the handover of a decider's memory
 * (handover.h). RIPPLE_OK, RIPPLE_ESYS (no 200 answer), RIPPLE_EINVAL. */
#define WH_FWD_GET_MAX (64u << 20)
#define WH_FWD_GET_TIMEOUT_MS 3000
int wh_fwd_get(wh_fwd_t *f, const char *peer, const char *path, const char *header,
               const char *value, sbuf_t *out);

#endif
