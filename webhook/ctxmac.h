/*
 * ctxmac.h - the MAC beside each context the webhook writes (ctxmac.c), and
 * who may set a CPID: contexts the webhook did not issue must not join or
 * fake someone else's trace (docs/format.md, "What a context proves").
 *
 * With --context-key-file, every context the webhook writes on an object
 * gets the annotation "<context key>.mac": the first 16 bytes of
 * HMAC-SHA256(key, "ripple-ctx-v1\n" + kind in lower case + "\n" +
 * namespace + "\n" + the context value exactly as written), base64url
 * without padding (22 characters). A context read back from a stored object
 * counts only with a valid MAC for that object's kind and namespace.
 * The name is not bound: a create with generateName has no name yet.
 *
 * Memory: a key is kept in the wh_ctxmac_t as two digest states of its pads
 * (freed and wiped by wh_ctxmac_clear);
 * the claims table (who started which root) is allocated once by
 * wh_claims_new. Threads: signing and checking only read the key, from any
 * number of threads; the claims table has a mutex of its own.
 */
#ifndef RIPPLE_WEBHOOK_CTXMAC_H
#define RIPPLE_WEBHOOK_CTXMAC_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

#define WH_CTXMAC_KEY_MIN 32
#define WH_CTXMAC_KEY_MAX 1024
#define WH_CTXMAC_LEN 22 /* base64url of 16 bytes, no padding */
/* "cpid.ripple.dev/" + a kind of up to 63 + ".mac" + NUL */
#define WH_CTXMAC_KEYNAME_MAX (RIPPLE_ANNOTATION_KEYMAX + 8)

typedef struct wh_ctxmac {
  size_t len; /* 0: no key, contexts unsigned */
  /* OpenSSL's HMAC-SHA256, keyed once (EVP_MAC_CTX, owned): each MAC
   * starts from a copy of it. */
  void *keyed;
} wh_ctxmac_t;

/* The key from a file's text: white space around it trimmed, at least
 * WH_CTXMAC_KEY_MIN and at most WH_CTXMAC_KEY_MAX bytes left (else
 * RIPPLE_EINVAL); m must be zeroed or cleared before. RIPPLE_ENOMEM,
 * RIPPLE_ESYS (libcrypto). */
int wh_ctxmac_set(wh_ctxmac_t *m, const char *text, size_t len);
/* Forget the key (wiping what holds it); m is then as zeroed. */
void wh_ctxmac_clear(wh_ctxmac_t *m);

/* The annotation that holds kind's MAC, "cpid.ripple.dev/<kind>.mac".
 * RIPPLE_EINVAL for a kind that has no context key, RIPPLE_ERANGE for one
 * whose MAC key would not be a valid annotation name (a kind over 59
 * characters: such contexts stay unsigned). */
int wh_ctxmac_keyname(const char *kind, char *out, size_t cap);

/* The MAC of a context value (val[0..n), exactly as written) on an object
 * of kind in ns ("" when cluster-scoped), NUL-terminated into out. */
int wh_ctxmac_sign(const wh_ctxmac_t *m, const char *kind, const char *ns, const char *val,
                   size_t n, char out[WH_CTXMAC_LEN + 1]);

/* Why a context read from a stored object is not trusted. */
typedef enum wh_ctx_refusal {
  WH_CTX_OK = 0,
  WH_CTX_UNSIGNED,         /* no MAC beside it */
  WH_CTX_BAD_MAC,          /* a MAC that is not this value's, kind's and namespace's */
  WH_CTX_CPID_IN_USE,      /* a person's CPID already issued (another trace) */
  WH_CTX_UNTRUSTED_WRITER, /* a controller not named by --trusted-writer set one */
  WH_CTX_REFUSAL_N
} wh_ctx_refusal_t;
const char *wh_ctx_refusal_name(wh_ctx_refusal_t r);

/* Whether mac (maclen bytes, may be NULL: absent) is the MAC of val on an
 * object of kind in ns: WH_CTX_OK, WH_CTX_UNSIGNED or WH_CTX_BAD_MAC. The
 * comparison is constant-time. Any bytes are accepted as input. */
wh_ctx_refusal_t wh_ctxmac_check(const wh_ctxmac_t *m, const char *kind, const char *ns,
                                 const char *val, size_t n, const char *mac, size_t maclen);

/* Who started which root (a person's CPID), so that a person may write the
 * same CPID again (a conflict's retry, one change over several objects:
 * `kubectl ripple apply` of a file) while nobody else may. A fixed table
 * keyed by CPID, overwritten when full: a forgotten claim errs toward a
 * fresh root, never toward a join. */
typedef struct wh_claims wh_claims_t;
int wh_claims_new(size_t slots, int64_t ttl_ns, wh_claims_t **out);
void wh_claims_free(wh_claims_t *c);
void wh_claims_put(wh_claims_t *c, const ripple_cpid_t *id, const char *user, int64_t now);
/* 1 when id was claimed by user within the TTL, else 0. */
int wh_claims_by(wh_claims_t *c, const ripple_cpid_t *id, const char *user, int64_t now);

#endif
