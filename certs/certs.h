/*
 * certs.h - ripple-certs' parts (docs/certs.md): the serving certificate and
 * its CA, made and checked with OpenSSL (x509.c, pure: no Kubernetes, no
 * clock of its own), and the Secrets ensured through libripple-kube
 * (secret.c). x509.c is a library for the unit tests and the fuzz target.
 *
 * Memory: the caller owns what it passes in. certs_tls_t owns its PEM texts
 * (certs_tls_free wipes and releases them); strings returned are the
 * caller's to free(). Key material is never logged, never put in a message.
 */
#ifndef RIPPLE_CERTS_H
#define RIPPLE_CERTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ripple/kube.h"
#include "ripple/ripple.h"

/* The most --dns names and --token-secret names one run takes. */
#define CERTS_MAX_DNS 32
#define CERTS_MAX_TOKENS 16
/* The most --tls-secret Secrets one run keeps under one CA. */
#define CERTS_MAX_TLS 4
/* The Secret's keys (kubernetes.io/tls, plus the CA as cert-manager does). */
#define CERTS_KEY_CA "ca.crt"
#define CERTS_KEY_CRT "tls.crt"
#define CERTS_KEY_KEY "tls.key"
#define CERTS_KEY_TOKEN "token"
/* A token: 32 random bytes as 64 lower-case hex digits. */
#define CERTS_TOKEN_BYTES 32
#define CERTS_TOKEN_LEN (2 * CERTS_TOKEN_BYTES)

/* ---- certificates (x509.c) ------------------------------------------------ */

/* A CA and a serving certificate signed by it, as PEM (NUL-terminated). */
typedef struct certs_tls {
  char *ca_crt, *tls_crt, *tls_key;
} certs_tls_t;

/* Make a CA (ECDSA P-256, self-signed, CA:TRUE, keyCertSign) and a leaf for
 * the dns names (SANs, serverAuth) signed by it, both valid from an hour
 * before now (clock skew) for days days, with random serials. The CA's key
 * is thrown away: a renewal makes a new CA. RIPPLE_OK, RIPPLE_EINVAL (no
 * names, days out of 1..36500), or RIPPLE_ENOMEM (OpenSSL failed; err says
 * where). */
int certs_tls_generate(const char *const *dns, size_t ndns, int days, time_t now, certs_tls_t *out,
                       char *err, size_t errcap);
/* The names one serving certificate is for. */
typedef struct certs_leaf_req {
  const char *const *dns;
  size_t ndns;
} certs_leaf_req_t;

/* Make one CA and n (1..CERTS_MAX_TLS) serving certificates signed by it,
 * one per request, into out[0..n-1] (each with the CA's PEM as ca_crt), all
 * valid for days days. One CA for several Secrets lets a client of one
 * program (the webhook shipping to the trace server) trust the others
 * without holding their keys. Same errors as certs_tls_generate; out is
 * written only on success. */
int certs_tls_generate_set(const certs_leaf_req_t *reqs, size_t n, int days, time_t now,
                           certs_tls_t *out, char *err, size_t errcap);
/* Wipe the key and free all three; the struct is zeroed (idempotent). */
void certs_tls_free(certs_tls_t *t);

/* May a Secret (a JSON object as the API server returns it) be kept as the
 * serving certificate for the dns names? 1 when its data holds ca.crt,
 * tls.crt and tls.key (base64 of PEM) that decode, tls.crt chains to ca.crt
 * and is valid for serverAuth at now, tls.key is tls.crt's key, every dns
 * name is a SAN (exactly, no wildcards), and no certificate of the chain
 * expires within renew_before_s of now; 0 otherwise, with why set to one logfmt-safe
 * word (missing_tls.crt, bad_tls.key, key_mismatch, not_signed_by_ca,
 * expired, not_yet_valid, missing_san, expiring, ...). Never fails: any input
 * is answered. */
int certs_tls_check(const json_t *secret, const char *const *dns, size_t ndns, time_t now,
                    int64_t renew_before_s, char *why, size_t whycap);

/* The notAfter of tls.crt's (first) certificate in a Secret as RFC 3339 into out (at least
 * 32 bytes); 0 when it has none that decodes. For the log. */
int certs_tls_not_after(const json_t *secret, char *out, size_t cap);

/* A fresh token into out: RIPPLE_OK or RIPPLE_ESYS (no random bytes). */
int certs_token_new(char out[CERTS_TOKEN_LEN + 1]);

/* Is s a name Kubernetes takes for a Secret (RFC 1123 subdomain), or a DNS
 * name a certificate can carry (the same, as host names are)? */
int certs_name_ok(const char *s);

/* ---- the Secrets (secret.c) ----------------------------------------------- */

typedef struct certs_run {
  ripple_kube_client_t *kc;
  const char *server; /* the API server's URL, for messages */
  const char *ns;
  int64_t timeout_ns; /* how long each API call is retried */
  int dry_run;        /* writes are sent with dryRun=All: nothing is stored */
  char err[1024];     /* what failed, for a person, when a call returns < 0 */
} certs_run_t;

typedef struct certs_tls_opts {
  const char *name;
  const char *const *dns;
  size_t ndns;
  int days;
  int64_t renew_before_s;
} certs_tls_opts_t;

/* Ensure the TLS Secret: RIPPLE_OK, or a negative code with r->err set. */
int certs_ensure_tls(certs_run_t *r, const certs_tls_opts_t *o);
/* Ensure n (1..CERTS_MAX_TLS) TLS Secrets whose certificates share one CA
 * (o[0].days for all): kept while each serves its names and all hold the same
 * ca.crt; else one new CA and every certificate are made and written (a
 * renewal of one renews all, so they never stop sharing their CA). */
int certs_ensure_tls_set(certs_run_t *r, const certs_tls_opts_t *o, size_t n);
/* Ensure the token Secret (created if absent, never changed): RIPPLE_OK, or
 * a negative code with r->err set. */
int certs_ensure_token(certs_run_t *r, const char *name);

#endif
