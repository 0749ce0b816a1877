/*
 * guard.h - ripple-guard's parts (docs/guard.md): the probe/hysteresis state
 * machine, the probe's AdmissionReview and the check of its answer, the
 * registration read from and patched back to the API server, the probe over
 * HTTPS, a Service's endpoints, and the metrics. Everything but probe.c,
 * reg_kube.c and endpoints_kube.c is pure logic, a library for the unit
 * tests and the fuzz targets.
 *
 * Memory: the caller owns what it passes in. guard_reg_t owns its targets'
 * strings (guard_reg_free releases them); text goes into a caller's sbuf_t.
 * Nothing returned is borrowed beyond the call.
 */
#ifndef RIPPLE_GUARD_H
#define RIPPLE_GUARD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ripple/kube.h"
#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

/* The matchCondition the guard adds to every webhook of the configuration to
 * take it out of the write path, and removes to put it back. */
#define GUARD_OFF_NAME "ripple-guard-off"
#define GUARD_OFF_EXPR "false"
/* A namespace that never exists: the probe's ConfigMap is never stored. */
#define GUARD_PROBE_NS "ripple-guard-probe"
#define GUARD_MAX_WEBHOOKS 16

/* ---- the state machine (state.c) ---------------------------------------- */

typedef enum guard_action { GUARD_KEEP, GUARD_DISABLE, GUARD_RESTORE } guard_action_t;

typedef struct guard_sm {
  /* configuration */
  unsigned fail_after;    /* consecutive failures that disable (>= 1) */
  unsigned recover_after; /* consecutive successes that restore (>= 1) */
  unsigned recover_max;   /* the most successes a flapping webhook must show */
  int64_t flap_ns;        /* a disable this soon after a restore is a flap */
  /* state */
  int disabled;          /* the decision: the webhook should be out of the path */
  unsigned fails, oks;   /* consecutive results */
  unsigned recover_need; /* successes needed now (doubles on each flap) */
  int64_t restored_at;   /* when the last restore was decided, 0 never */
} guard_sm_t;

/* disabled: the registration's state when the guard starts (a guard that
 * restarts while the webhook is out keeps it out until it recovers). */
void guard_sm_init(guard_sm_t *sm, unsigned fail_after, unsigned recover_after, int disabled);
/* One round's result at time now_ns: what changed in the decision. While
 * may_restore is 0 (the registration's caBundle is not yet the CA the probes
 * used) a disabled webhook stays disabled, however many rounds succeed; the
 * first good round after it turns 1 restores when enough succeeded. Disabling
 * is never held back. */
guard_action_t guard_sm_step(guard_sm_t *sm, int ok, int may_restore, int64_t now_ns);
/* guard_sm_step with may_restore 1. */
guard_action_t guard_sm_probe(guard_sm_t *sm, int ok, int64_t now_ns);

/* ---- the probe's request and answer (answer.c) --------------------------- */

/* A dry-run AdmissionReview: CREATE of a ConfigMap in GUARD_PROBE_NS. */
void guard_probe_body(sbuf_t *b, const char *uid);
/* RIPPLE_OK when body is an AdmissionReview (admission.k8s.io/v1) answering
 * uid (response.uid equal, response.allowed a boolean); else RIPPLE_EJSON and
 * why names the first thing that was wrong. */
int guard_answer_check(const char *body, size_t len, const char *uid, char *why, size_t cap);

/* ---- the registration (reg.c, reg_kube.c) -------------------------------- */

typedef struct guard_target {
  char *name; /* the webhook's name */
  char *url;  /* clientConfig.url, or https://SERVICE.NS.svc:PORT/PATH */
  char *ca;   /* the caBundle decoded (PEM), NULL when absent */
  size_t ca_len;
  /* clientConfig.service (NULL, 0 for a url): its endpoints are probed */
  char *svc_ns, *svc_name;
  long svc_port;
} guard_target_t;

typedef struct guard_reg {
  guard_target_t t[GUARD_MAX_WEBHOOKS];
  size_t n;
  int off; /* 1 every webhook has GUARD_OFF_NAME, 0 none, -1 some */
} guard_reg_t;

/* The webhooks of a MutatingWebhookConfiguration. On failure why says what. */
int guard_reg_parse(const json_t *cfg, guard_reg_t *out, char *why, size_t cap);
void guard_reg_free(guard_reg_t *r);
/* A strategic merge patch that adds (off) or removes (!off) GUARD_OFF_NAME on
 * every webhook: by the condition's name, so applying it twice is harmless and
 * no index or resourceVersion is needed. */
void guard_reg_patch(const guard_reg_t *r, int off, sbuf_t *out);
/* Is url https on a loopback address (127.x.x.x, localhost, [::1])? */
int guard_url_loopback(const char *url);

int guard_reg_read(ripple_kube_client_t *kc, const char *name, guard_reg_t *out,
                   ripple_kube_status_t *st, char *why, size_t cap);
int guard_reg_set(ripple_kube_client_t *kc, const char *name, const guard_reg_t *r, int off,
                  ripple_kube_status_t *st);

/* ---- the CA bundle kept on the registration (bundle.c, reg_kube.c) -------- */

#define GUARD_BUNDLE_MAX (1u << 20)

/* Does p hold a PEM certificate (BEGIN, then END CERTIFICATE) and no NUL? */
int guard_bundle_is_pem(const char *p, size_t len);
/* --ca-bundle's file into *out (free it), its length in *len: RIPPLE_OK;
 * RIPPLE_ESYS when it cannot be read (or is over GUARD_BUNDLE_MAX),
 * RIPPLE_EINVAL when it is not PEM; why says which, never the content. */
int guard_bundle_read(const char *path, char **out, size_t *len, char *why, size_t cap);
/* 1 when every webhook's caBundle (decoded) is exactly pem, else 0. */
int guard_reg_ca_equal(const guard_reg_t *r, const char *pem, size_t len);
/* A strategic merge patch that sets every webhook's clientConfig.caBundle to
 * base64(pem), keyed by the webhooks' names; url or service are kept. */
void guard_reg_ca_patch(const guard_reg_t *r, const char *pem, size_t len, sbuf_t *out);
/* After that patch succeeded: r's caBundles become copies of pem. */
int guard_reg_ca_adopt(guard_reg_t *r, const char *pem, size_t len);
int guard_reg_set_ca(ripple_kube_client_t *kc, const char *name, const guard_reg_t *r,
                     const char *pem, size_t len, ripple_kube_status_t *st);

/* ---- a Service's endpoints (endpoints.c, endpoints_kube.c) -------------- */

#define GUARD_MAX_ENDPOINTS 64
#define GUARD_ADDR_MAX 46 /* INET6_ADDRSTRLEN */

typedef struct guard_ep {
  char addr[GUARD_ADDR_MAX]; /* an IP address as text, IPv6 without brackets */
  uint16_t port;
  int failing; /* the last probe failed: its streak is logged once */
} guard_ep_t;

typedef struct guard_eps {
  guard_ep_t e[GUARD_MAX_ENDPOINTS];
  size_t n;
  unsigned bad;     /* slices and endpoints skipped as malformed */
  unsigned dropped; /* ready endpoints beyond GUARD_MAX_ENDPOINTS */
  char why[160];    /* what the first malformed one was ("" none) */
} guard_eps_t;

/* The name of svc's port numbered port ("" for an unnamed one) into name:
 * RIPPLE_OK; RIPPLE_ENOENT when the Service has no such port; RIPPLE_EJSON
 * when svc is not shaped like a Service. why says which. */
int guard_svc_port_name(const json_t *svc, long port, char *name, size_t cap, char *why,
                        size_t wcap);
/* Add the ready endpoints of an EndpointSlice (discovery.k8s.io/v1: the
 * first address of each, the port named port_name) to eps, each address and
 * port once: how many were added, or RIPPLE_EJSON when the slice is malformed
 * (skipped). Malformed slices and endpoints are counted in eps->bad. */
int guard_eps_add_slice(guard_eps_t *eps, const json_t *slice, const char *port_name);
/* --endpoints: "HOST:PORT[,HOST:PORT...]", HOST an IPv4 address or [IPv6]. */
int guard_eps_parse_list(const char *s, guard_eps_t *out, char *why, size_t cap);
/* Is addr (an IP address as text) on loopback (127.0.0.0/8, ::1)? */
int guard_addr_loopback(const char *addr);
/* Each endpoint of to that is also in from keeps from's streak. */
void guard_eps_carry(guard_eps_t *to, const guard_eps_t *from);
/* Do a and b hold the same addresses and ports (in any order)? */
int guard_eps_same(const guard_eps_t *a, const guard_eps_t *b);
/* "ADDR:PORT" or "[ADDR]:PORT" into out. */
void guard_ep_text(const guard_ep_t *e, char *out, size_t cap);

/* t's Service's ready endpoints (t->svc_ns set): the Service read for the
 * name of its port t->svc_port, then its EndpointSlices listed by the label
 * kubernetes.io/service-name. */
int guard_eps_read(ripple_kube_client_t *kc, const guard_target_t *t, guard_eps_t *out,
                   ripple_kube_status_t *st, char *why, size_t cap);

/* ---- the probe (probe.c) ------------------------------------------------- */

typedef struct guard_probe_job {
  const guard_target_t *t; /* url and CA */
  const guard_ep_t *ep;    /* NULL: t->url's host; else connect here, TLS still for t->url */
  uint64_t seq;            /* makes the probe's uid */
  int rc;                  /* out: RIPPLE_OK when the answer is one */
  int64_t us;              /* out: how long it took */
  char why[200];           /* out: what happened when it failed */
} guard_probe_job_t;

/* The jobs' dry AdmissionReviews POSTed at once, each within timeout_ms:
 * one slow endpoint does not hold up the others' verdicts. */
void guard_probe_run(guard_probe_job_t *jobs, size_t n, uint32_t timeout_ms);
/* --client-cert, --client-key: the probes present this certificate, as
 * kube-apiserver does to a webhook that takes /mutate only from clients of
 * its CA (ripple-webhook --client-ca). Set once before the first probe; the
 * paths are borrowed for the process's life. NULL: none. */
void guard_probe_client(const char *cert_file, const char *key_file);
/* One dry AdmissionReview POSTed to t within timeout_ms: RIPPLE_OK when the
 * answer is one; otherwise why says what happened (timeout, refused, HTTP
 * status, not an AdmissionReview). */
int guard_probe(const guard_target_t *t, uint32_t timeout_ms, uint64_t seq, char *why, size_t cap);

/* ---- metrics (metrics.c) ------------------------------------------------- */

typedef struct guard_metrics {
  atomic_uint_fast64_t probes, probe_failures, disabled, restored, kube_errors;
  atomic_uint_fast64_t ca_bundle_set, ca_bundle_errors; /* --ca-bundle */
  atomic_int webhook_disabled, last_ok;
  atomic_int ca_bundle_synced; /* the registration's caBundle is --ca-bundle's (1 without it) */
  atomic_int_fast64_t last_probe_us; /* how long the last probe took */
  /* Webhooks registered by Service (or --endpoints): each endpoint probed. */
  atomic_uint_fast64_t ep_probes, ep_probe_failures, partial_rounds, slice_errors;
  atomic_int endpoints, endpoints_answering; /* the last round's */
} guard_metrics_t;

/* Prometheus text exposition. */
void guard_metrics_write(guard_metrics_t *m, sbuf_t *b);

#endif
