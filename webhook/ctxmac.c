/*
 * ctxmac.c - the MAC of a context, and the claims of people's roots (see
 * ctxmac.h).
 *
 * The MAC is an HMAC-SHA256 truncated to 128 bits: a forger needs a MAC it
 * has never seen, and 2^128 guesses through kube-apiserver is no attack.
 * What it binds is the value, the kind (so a Deployment's context copied
 * onto its ReplicaSets stays a Deployment's: docs/format.md, "Why a key per
 * kind") and the namespace (so a tenant cannot copy another namespace's
 * context onto its own objects). Not the name: a create with generateName
 * has none at admission, and neither has it a uid.
 */
#include "ctxmac.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/b64.h"

static int space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The key is set on an HMAC context once; every MAC starts from a copy of
 * it, which costs a copy of the two digest states rather than the digest's
 * fetch and the key's pads each time (OpenSSL 3's one-shot HMAC() does
 * both: 1.26 us a MAC here, against about 0.3). */
int wh_ctxmac_set(wh_ctxmac_t *m, const char *text, size_t len) {
  if (!m || !text) return RIPPLE_EINVAL;
  while (len && space((unsigned char)*text)) text++, len--;
  while (len && space((unsigned char)text[len - 1])) len--;
  if (len < WH_CTXMAC_KEY_MIN || len > WH_CTXMAC_KEY_MAX) return RIPPLE_EINVAL;
  wh_ctxmac_clear(m);
  EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
  EVP_MAC_CTX *c = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
  EVP_MAC_free(hmac); /* the context keeps its own reference */
  if (!c) return RIPPLE_ENOMEM;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!EVP_MAC_init(c, (const unsigned char *)text, len, params)) {
    EVP_MAC_CTX_free(c);
    return RIPPLE_ESYS;
  }
  m->keyed = c;
  m->len = len;
  return RIPPLE_OK;
}

void wh_ctxmac_clear(wh_ctxmac_t *m) {
  if (!m) return;
  EVP_MAC_CTX_free(m->keyed); /* wipes the key's state */
  m->keyed = NULL;
  m->len = 0;
}

int wh_ctxmac_keyname(const char *kind, char *out, size_t cap) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  /* The name part (after '/') must stay within 63 characters. */
  if (strlen(kind) + 4 > 63) return RIPPLE_ERANGE;
  int n = snprintf(out, cap, "%s.mac", key);
  return n < 0 || (size_t)n >= cap ? RIPPLE_ERANGE : RIPPLE_OK;
}

/* base64url without padding (RFC 4648 section 5) of a 16-byte MAC: the
 * standard alphabet's two symbols swapped, the padding dropped. */
static int b64url(const unsigned char *p, size_t n, char out[WH_CTXMAC_LEN + 1]) {
  char *b = b64_encode_str(p, n);
  if (!b) return RIPPLE_ENOMEM;
  size_t o = 0;
  for (const char *q = b; *q && *q != '=' && o < WH_CTXMAC_LEN; q++)
    out[o++] = *q == '+' ? '-' : *q == '/' ? '_' : *q;
  out[o] = '\0';
  free(b);
  return o == WH_CTXMAC_LEN ? RIPPLE_OK : RIPPLE_ESYS;
}

int wh_ctxmac_sign(const wh_ctxmac_t *m, const char *kind, const char *ns, const char *val,
                   size_t n, char out[WH_CTXMAC_LEN + 1]) {
  if (!m || !m->len || !kind || !val) return RIPPLE_EINVAL;
  if (!ns) ns = "";
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key); /* lower case, checked */
  if (rc != RIPPLE_OK) return rc;
  static const char prefix[] = "cpid.ripple.dev/", tag[] = "ripple-ctx-v1\n";
  const char *lower = key + sizeof prefix - 1;
  /* The message's parts are separated by "\n", which neither a kind nor a
   * namespace can hold, so no two messages of different parts are equal. */
  if (strchr(ns, '\n')) return RIPPLE_EINVAL;
  unsigned char h[EVP_MAX_MD_SIZE];
  size_t hn = 0;
  EVP_MAC_CTX *c = EVP_MAC_CTX_dup(m->keyed);
  if (!c) return RIPPLE_ENOMEM;
  int ok = EVP_MAC_update(c, (const unsigned char *)tag, sizeof tag - 1) &&
           EVP_MAC_update(c, (const unsigned char *)lower, strlen(lower)) &&
           EVP_MAC_update(c, (const unsigned char *)"\n", 1) &&
           EVP_MAC_update(c, (const unsigned char *)ns, strlen(ns)) &&
           EVP_MAC_update(c, (const unsigned char *)"\n", 1) &&
           EVP_MAC_update(c, (const unsigned char *)val, n) && EVP_MAC_final(c, h, &hn, sizeof h) &&
           hn >= 16;
  EVP_MAC_CTX_free(c);
  rc = ok ? b64url(h, 16, out) : RIPPLE_ESYS;
  OPENSSL_cleanse(h, sizeof h);
  return rc;
}

wh_ctx_refusal_t wh_ctxmac_check(const wh_ctxmac_t *m, const char *kind, const char *ns,
                                 const char *val, size_t n, const char *mac, size_t maclen) {
  if (!mac) return WH_CTX_UNSIGNED;
  char want[WH_CTXMAC_LEN + 1];
  if (maclen != WH_CTXMAC_LEN || wh_ctxmac_sign(m, kind, ns, val, n, want) != RIPPLE_OK)
    return WH_CTX_BAD_MAC;
  return CRYPTO_memcmp(want, mac, WH_CTXMAC_LEN) == 0 ? WH_CTX_OK : WH_CTX_BAD_MAC;
}

const char *wh_ctx_refusal_name(wh_ctx_refusal_t r) {
  static const char *const names[WH_CTX_REFUSAL_N] = {"ok", "unsigned", "bad_mac", "cpid_in_use",
                                                      "untrusted_writer"};
  return (unsigned)r < WH_CTX_REFUSAL_N ? names[r] : "unknown";
}

/* ---- claims --------------------------------------------------------------- */

typedef struct claim {
  ripple_cpid_t id;
  unsigned char user[16]; /* SHA-256 of the user name, truncated */
  int64_t t;              /* 0: free */
} claim_t;

struct wh_claims {
  pthread_mutex_t mu;
  uint64_t seed[2]; /* random: where a CPID lands is not for a client to know */
  size_t mask;
  int64_t ttl_ns;
  claim_t slot[];
};

int wh_claims_new(size_t slots, int64_t ttl_ns, wh_claims_t **out) {
  if (!out || slots < 2 || slots > (1u << 24)) return RIPPLE_EINVAL;
  size_t n = 1;
  while (n < slots) n <<= 1;
  wh_claims_t *c = calloc(1, sizeof *c + n * sizeof(claim_t));
  if (!c) return RIPPLE_ENOMEM;
  if (RAND_bytes((unsigned char *)c->seed, sizeof c->seed) != 1) {
    free(c);
    return RIPPLE_ESYS;
  }
  pthread_mutex_init(&c->mu, NULL);
  c->mask = n - 1;
  c->ttl_ns = ttl_ns;
  *out = c;
  return RIPPLE_OK;
}

void wh_claims_free(wh_claims_t *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* CPIDs are chosen by clients too (kubectl ripple, a W3C trace id): all 16
 * bytes are mixed with seeds of this process, so nobody can pick a CPID
 * that lands on another's claim to push it out. Direct-mapped: a newer
 * claim replaces an older one. */
static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static size_t index_of(const wh_claims_t *c, const ripple_cpid_t *id) {
  uint64_t lo = 0, hi = 0;
  for (int i = 0; i < 8; i++) lo = lo << 8 | id->b[i], hi = hi << 8 | id->b[8 + i];
  return (size_t)(mix(lo ^ c->seed[0]) ^ mix(hi ^ c->seed[1])) & c->mask;
}

static void user_hash(const char *user, unsigned char out[16]) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256((const unsigned char *)user, strlen(user), d);
  memcpy(out, d, 16);
}

void wh_claims_put(wh_claims_t *c, const ripple_cpid_t *id, const char *user, int64_t now) {
  if (!c || !id || !user) return;
  claim_t e = {.id = *id, .t = now ? now : 1};
  user_hash(user, e.user);
  pthread_mutex_lock(&c->mu);
  claim_t *s = &c->slot[index_of(c, id)];
  /* The first claim of a CPID stands: a later one by another user (refused
   * upstream anyway) never takes it over. */
  if (!(s->t && !memcmp(&s->id, id, sizeof *id) && now - s->t <= c->ttl_ns)) *s = e;
  pthread_mutex_unlock(&c->mu);
}

int wh_claims_by(wh_claims_t *c, const ripple_cpid_t *id, const char *user, int64_t now) {
  if (!c || !id || !user) return 0;
  unsigned char u[16];
  user_hash(user, u);
  pthread_mutex_lock(&c->mu);
  const claim_t *s = &c->slot[index_of(c, id)];
  int ok = s->t && !memcmp(&s->id, id, sizeof *id) && now - s->t <= c->ttl_ns &&
           CRYPTO_memcmp(s->user, u, sizeof u) == 0;
  pthread_mutex_unlock(&c->mu);
  return ok;
}
