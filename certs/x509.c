/*
 * x509.c - ripple-certs' certificates (certs.h): a CA and a serving
 * certificate made with OpenSSL 3's EVP APIs (ECDSA P-256), and the check
 * that decides whether a Secret's certificate may be kept.
 *
 * Pure: no Kubernetes, no network, and the time is the caller's, so the unit
 * tests and the fuzz target (tests/fuzz/fuzz_certs.c) drive every branch. A
 * Secret is outside input: anything in it is answered with "replace, because
 * ...", never with a crash, a prompt for a passphrase, or a key in a message.
 */
#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/buffer.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs.h"
#include "ripplex/b64.h"
#include "ripplex/hex.h"
#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"

/* The most one Secret key may hold once decoded, and certificates per key. */
#define CERTS_MAX_PEM (64 * 1024)
#define CERTS_MAX_CHAIN 16

/* ---- Secret data, tokens, names --------------------------------------------- */

/* A Secret's data[key] (v) decoded: 1, or 0 when it is not a string of base64
 * or holds more than CERTS_MAX_PEM bytes. A string longer than the base64 of
 * CERTS_MAX_PEM bytes is refused before anything is allocated for it. */
static int decode_pem(const json_t *v, char **pem, size_t *len) {
  size_t n = json_string_length(v);
  char *p = NULL;
  if (!json_is_string(v) || n > (CERTS_MAX_PEM + 2) / 3 * 4 ||
      b64_decode(json_string_value(v), n, &p, &n) != RIPPLE_OK)
    return 0;
  if (n > CERTS_MAX_PEM) { /* up to 2 more in the last quantum */
    OPENSSL_clear_free(p, n);
    return 0;
  }
  *pem = p;
  *len = n;
  return 1;
}

int certs_token_new(char out[CERTS_TOKEN_LEN + 1]) {
  uint8_t b[CERTS_TOKEN_BYTES];
  if (rnd_bytes(b, sizeof b) != RIPPLE_OK) return RIPPLE_ESYS;
  hex_encode(b, sizeof b, out);
  OPENSSL_cleanse(b, sizeof b);
  return RIPPLE_OK;
}

/* RFC 1123 subdomain: dot-separated labels of [a-z0-9-], each starting and
 * ending with a letter or digit, 63 at most, 253 in all. */
int certs_name_ok(const char *s) {
  size_t n = s ? strlen(s) : 0, label = 0;
  if (n == 0 || n > 253) return 0;
  for (size_t i = 0; i <= n; i++) {
    char c = s[i];
    if (c == '.' || c == '\0') {
      if (label == 0 || s[i - 1] == '-') return 0;
      label = 0;
      continue;
    }
    int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (c != '-' || label == 0)) return 0;
    if (++label > 63) return 0;
  }
  return 1;
}

/* ---- generation ------------------------------------------------------------ */

static int ossl_fail(char *err, size_t cap, const char *what) {
  char e[256] = "no OpenSSL error";
  unsigned long code = ERR_get_error();
  if (code) ERR_error_string_n(code, e, sizeof e);
  ERR_clear_error();
  snprintf(err, cap, "%s: %s", what, e);
  return RIPPLE_ENOMEM;
}

/* A positive 127-bit serial from the kernel's CSPRNG (RFC 5280: at most 20
 * octets; CAs use at least 64 random bits). */
static int set_serial(X509 *x) {
  unsigned char b[16];
  if (rnd_bytes(b, sizeof b) != RIPPLE_OK) return 0;
  b[0] = (unsigned char)((b[0] & 0x7f) | 0x40);
  BIGNUM *bn = BN_bin2bn(b, sizeof b, NULL);
  int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
  BN_free(bn);
  return ok;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
  X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
  int ok = e && X509_add_ext(x, e, -1);
  X509_EXTENSION_free(e);
  return ok;
}

static int set_name(X509 *x, const char *cn, X509 *issuer) {
  X509_NAME *n = X509_get_subject_name(x);
  if (!X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8, (const unsigned char *)"ripple", -1, -1,
                                  0) ||
      !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0))
    return 0;
  return X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
}

/* A certificate for key, signed by ca_key (issuer NULL: self-signed). */
static X509 *new_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *ca_key, int days,
                      time_t now) {
  X509 *x = X509_new();
  time_t t = now;
  int ok = x && X509_set_version(x, X509_VERSION_3) && set_serial(x) &&
           X509_time_adj_ex(X509_getm_notBefore(x), 0, -3600, &t) &&
           X509_time_adj_ex(X509_getm_notAfter(x), days, 0, &t) && X509_set_pubkey(x, key) &&
           set_name(x, cn, issuer) &&
           add_ext(x, issuer ? issuer : x, NID_subject_key_identifier, "hash");
  if (ok && !issuer)
    ok = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
         add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (ok && issuer)
    ok = add_ext(x, issuer, NID_authority_key_identifier, "keyid:always") &&
         add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
         add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") &&
         add_ext(x, issuer, NID_ext_key_usage, "serverAuth");
  if (!ok) {
    X509_free(x);
    return NULL;
  }
  return x;
}

/* An IPv4 literal ("127.0.0.1": a webhook registered by URL) is an IP SAN,
 * which is what TLS clients match an address against; anything else a DNS SAN. */
static int is_ipv4(const char *s) {
  struct in_addr a;
  return inet_pton(AF_INET, s, &a) == 1;
}

static int add_sans(X509 *x, X509 *issuer, const char *const *dns, size_t ndns) {
  sbuf_t b;
  sbuf_init(&b);
  for (size_t i = 0; i < ndns; i++)
    sbuf_printf(&b, "%s%s:%s", i ? "," : "", is_ipv4(dns[i]) ? "IP" : "DNS", dns[i]);
  int ok = !b.oom && add_ext(x, issuer, NID_subject_alt_name, b.p);
  sbuf_free(&b);
  return ok;
}

static int sign(X509 *x, EVP_PKEY *key) { return X509_sign(x, key, EVP_sha256()) > 0; }

/* The text in a memory BIO as a new string. */
static char *bio_text(BIO *b) {
  BUF_MEM *m = NULL;
  BIO_get_mem_ptr(b, &m);
  if (!m) return NULL;
  char *s = malloc(m->length + 1);
  if (!s) return NULL;
  memcpy(s, m->data, m->length);
  s[m->length] = '\0';
  return s;
}

static char *cert_pem(X509 *x) {
  BIO *b = BIO_new(BIO_s_mem());
  char *s = b && PEM_write_bio_X509(b, x) ? bio_text(b) : NULL;
  BIO_free(b);
  return s;
}

/* PKCS #8, unencrypted (what Go's tls.X509KeyPair reads). The BIO's memory is
 * wiped when it is freed. */
static char *key_pem(EVP_PKEY *k) {
  BIO *b = BIO_new(BIO_s_secmem());
  char *s = b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) ? bio_text(b) : NULL;
  BIO_free(b);
  return s;
}

/* dns usable on a certificate: 1, or 0 with err set. */
static int names_ok(const char *const *dns, size_t ndns, char *err, size_t errcap) {
  if (ndns == 0 || ndns > CERTS_MAX_DNS) {
    snprintf(err, errcap, "need 1 to %d DNS names", CERTS_MAX_DNS);
    return 0;
  }
  for (size_t i = 0; i < ndns; i++)
    if (!certs_name_ok(dns[i])) {
      snprintf(err, errcap, "'%s' is not a DNS name (RFC 1123: lower case, digits, '-', '.')",
               dns[i]);
      return 0;
    }
  return 1;
}

/* One serving certificate for req signed by ca, as PEM into out (ca_pem
 * copied as its ca.crt). */
static int make_leaf(const certs_leaf_req_t *req, X509 *ca, EVP_PKEY *ca_key, const char *ca_pem,
                     int days, time_t now, certs_tls_t *out, char *err, size_t errcap) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  /* X.509 caps a commonName at 64 characters; clients read the SANs anyway. */
  const char *cn = strlen(req->dns[0]) <= 64 ? req->dns[0] : "ripple-certs serving certificate";
  X509 *leaf = key ? new_cert(cn, key, ca, ca_key, days, now) : NULL;
  int rc = RIPPLE_OK;
  if (!leaf || !add_sans(leaf, ca, req->dns, req->ndns) || !sign(leaf, ca_key))
    rc = ossl_fail(err, errcap, "making the serving certificate");
  certs_tls_t t = {0};
  if (rc == RIPPLE_OK) {
    t = (certs_tls_t){strdup(ca_pem), cert_pem(leaf), key_pem(key)};
    if (!t.ca_crt || !t.tls_crt || !t.tls_key) {
      certs_tls_free(&t);
      rc = ossl_fail(err, errcap, "writing PEM");
    }
  }
  X509_free(leaf);
  EVP_PKEY_free(key);
  if (rc == RIPPLE_OK) *out = t;
  return rc;
}

int certs_tls_generate_set(const certs_leaf_req_t *reqs, size_t n, int days, time_t now,
                           certs_tls_t *out, char *err, size_t errcap) {
  if (n == 0 || n > CERTS_MAX_TLS || days < 1 || days > 36500) {
    snprintf(err, errcap, "need 1 to %d certificates and 1 to 36500 days", CERTS_MAX_TLS);
    return RIPPLE_EINVAL;
  }
  for (size_t i = 0; i < n; i++)
    if (!names_ok(reqs[i].dns, reqs[i].ndns, err, errcap)) return RIPPLE_EINVAL;
  EVP_PKEY *ca_key = EVP_EC_gen("P-256");
  X509 *ca = ca_key ? new_cert("ripple-certs CA", ca_key, NULL, NULL, days, now) : NULL;
  char *ca_pem = NULL;
  int rc = RIPPLE_OK;
  if (!ca || !sign(ca, ca_key) || !(ca_pem = cert_pem(ca)))
    rc = ossl_fail(err, errcap, "making the CA");
  certs_tls_t t[CERTS_MAX_TLS] = {0};
  for (size_t i = 0; rc == RIPPLE_OK && i < n; i++)
    rc = make_leaf(&reqs[i], ca, ca_key, ca_pem, days, now, &t[i], err, errcap);
  for (size_t i = 0; i < n; i++) {
    if (rc == RIPPLE_OK)
      out[i] = t[i];
    else
      certs_tls_free(&t[i]);
  }
  free(ca_pem);
  X509_free(ca);
  EVP_PKEY_free(ca_key); /* thrown away: a renewal makes a new CA */
  return rc;
}

int certs_tls_generate(const char *const *dns, size_t ndns, int days, time_t now, certs_tls_t *out,
                       char *err, size_t errcap) {
  certs_leaf_req_t req = {dns, ndns};
  return certs_tls_generate_set(&req, 1, days, now, out, err, errcap);
}

void certs_tls_free(certs_tls_t *t) {
  if (t->tls_key) OPENSSL_clear_free(t->tls_key, strlen(t->tls_key));
  free(t->ca_crt);
  free(t->tls_crt);
  memset(t, 0, sizeof *t);
}

/* ---- the check --------------------------------------------------------------- */

/* What a Secret holds, parsed. chain[0] is the leaf. */
typedef struct parsed {
  STACK_OF(X509) * ca, *chain;
  EVP_PKEY *key;
} parsed_t;

/* Never ask for a passphrase: an encrypted key is simply not usable. */
static int no_pass(char *buf, int size, int rwflag, void *u) {
  (void)buf, (void)size, (void)rwflag, (void)u;
  return -1;
}

/* Every certificate in a PEM text (at least one), into a new stack. */
static STACK_OF(X509) * read_certs(const char *pem, size_t len) {
  BIO *b = BIO_new_mem_buf(pem, (int)len);
  STACK_OF(X509) *sk = b ? sk_X509_new_null() : NULL;
  X509 *x;
  while (sk && sk_X509_num(sk) < CERTS_MAX_CHAIN && (x = PEM_read_bio_X509(b, NULL, no_pass, NULL)))
    if (!sk_X509_push(sk, x)) X509_free(x);
  BIO_free(b);
  ERR_clear_error(); /* the read that ended the loop */
  if (sk && sk_X509_num(sk) == 0) {
    sk_X509_free(sk);
    return NULL;
  }
  return sk;
}

static EVP_PKEY *read_key(const char *pem, size_t len) {
  BIO *b = BIO_new_mem_buf(pem, (int)len);
  EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, no_pass, NULL) : NULL;
  BIO_free(b);
  ERR_clear_error();
  return k;
}

/* data[key], decoded: 1, or 0 with why. */
static int field(const json_t *data, const char *key, char **pem, size_t *len, char *why,
                 size_t cap) {
  const json_t *v = json_object_get(data, key);
  if (!v) return snprintf(why, cap, "missing_%s", key), 0;
  if (!decode_pem(v, pem, len)) return snprintf(why, cap, "bad_%s", key), 0;
  return 1;
}

static int parse(const json_t *secret, parsed_t *p, char *why, size_t cap) {
  const json_t *data = json_object_get(secret, "data");
  if (!json_is_object(data)) return snprintf(why, cap, "missing_data"), 0;
  static const char *const keys[] = {CERTS_KEY_CA, CERTS_KEY_CRT, CERTS_KEY_KEY};
  char *pem[3] = {NULL, NULL, NULL};
  size_t len[3] = {0, 0, 0};
  int ok = 1;
  for (int i = 0; i < 3 && ok; i++) ok = field(data, keys[i], &pem[i], &len[i], why, cap);
  if (ok && !(p->ca = read_certs(pem[0], len[0])))
    ok = 0, snprintf(why, cap, "bad_%s", CERTS_KEY_CA);
  if (ok && !(p->chain = read_certs(pem[1], len[1])))
    ok = 0, snprintf(why, cap, "bad_%s", CERTS_KEY_CRT);
  if (ok && !(p->key = read_key(pem[2], len[2])))
    ok = 0, snprintf(why, cap, "bad_%s", CERTS_KEY_KEY);
  free(pem[0]);
  free(pem[1]);
  if (pem[2]) OPENSSL_clear_free(pem[2], len[2]);
  return ok;
}

static void parsed_free(parsed_t *p) {
  sk_X509_pop_free(p->ca, X509_free);
  sk_X509_pop_free(p->chain, X509_free);
  EVP_PKEY_free(p->key);
}

/* Does the leaf chain to one of ca.crt's certificates, for serverAuth, at
 * now? 1 with the chain it built in *chain (leaf to anchor, the caller's),
 * or 0 with why. Intermediates may follow the leaf in tls.crt. */
static int verify(const parsed_t *p, time_t now, STACK_OF(X509) * *chain, char *why, size_t cap) {
  X509_STORE *st = X509_STORE_new();
  X509_STORE_CTX *ctx = X509_STORE_CTX_new();
  STACK_OF(X509) *untrusted = sk_X509_dup(p->chain);
  int ok = st && ctx && untrusted, err = X509_V_OK;
  for (int i = 0; ok && i < sk_X509_num(p->ca); i++)
    ok = X509_STORE_add_cert(st, sk_X509_value(p->ca, i));
  if (ok) (void)sk_X509_shift(untrusted); /* the leaf itself */
  if (ok) ok = X509_STORE_CTX_init(ctx, st, sk_X509_value(p->chain, 0), untrusted);
  if (ok) {
    X509_STORE_CTX_set_time(ctx, 0, now);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    ok = X509_verify_cert(ctx) == 1;
    err = X509_STORE_CTX_get_error(ctx);
    if (ok) ok = (*chain = X509_STORE_CTX_get1_chain(ctx)) != NULL;
  }
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(st);
  sk_X509_free(untrusted);
  ERR_clear_error();
  if (ok) return 1;
  snprintf(why, cap, "%s",
           err == X509_V_ERR_CERT_HAS_EXPIRED     ? "expired"
           : err == X509_V_ERR_CERT_NOT_YET_VALID ? "not_yet_valid"
           : err == X509_V_ERR_INVALID_PURPOSE    ? "not_for_server_auth"
           : err == X509_V_ERR_INVALID_CA         ? "ca_not_a_ca"
           : err == X509_V_OK                     ? "verify_failed"
                                                  : "not_signed_by_ca");
  return 0;
}

/* Does x expire within renew_before_s of now? (Unreadable counts as yes.) */
static int expiring(X509 *x, time_t now, int64_t renew_before_s) {
  time_t t = now + (time_t)renew_before_s;
  return X509_cmp_time(X509_get0_notAfter(x), &t) <= 0;
}

int certs_tls_check(const json_t *secret, const char *const *dns, size_t ndns, time_t now,
                    int64_t renew_before_s, char *why, size_t whycap) {
  parsed_t p = {NULL, NULL, NULL};
  STACK_OF(X509) *chain = NULL;
  int ok = parse(secret, &p, why, whycap);
  X509 *leaf = ok ? sk_X509_value(p.chain, 0) : NULL;
  if (ok && X509_check_private_key(leaf, p.key) != 1) ok = 0, snprintf(why, whycap, "key_mismatch");
  if (ok) ok = verify(&p, now, &chain, why, whycap);
  const unsigned flags = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_WILDCARDS;
  for (size_t i = 0; ok && i < ndns; i++)
    if ((is_ipv4(dns[i]) ? X509_check_ip_asc(leaf, dns[i], 0)
                         : X509_check_host(leaf, dns[i], strlen(dns[i]), flags, NULL)) != 1)
      ok = 0, snprintf(why, whycap, "missing_san");
  /* The leaf, and the CA clients are given: either running out breaks TLS. */
  for (int i = 0; ok && i < sk_X509_num(chain); i++)
    if (expiring(sk_X509_value(chain, i), now, renew_before_s))
      ok = 0, snprintf(why, whycap, "expiring");
  ERR_clear_error();
  sk_X509_pop_free(chain, X509_free);
  parsed_free(&p);
  if (ok) snprintf(why, whycap, "valid");
  return ok;
}

int certs_tls_not_after(const json_t *secret, char *out, size_t cap) {
  const json_t *v = json_object_get(json_object_get(secret, "data"), CERTS_KEY_CRT);
  char *pem = NULL;
  size_t len = 0;
  if (!decode_pem(v, &pem, &len)) return 0;
  STACK_OF(X509) *sk = read_certs(pem, len);
  free(pem);
  struct tm tm;
  int ok = sk && ASN1_TIME_to_tm(X509_get0_notAfter(sk_X509_value(sk, 0)), &tm) == 1 &&
           strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
  sk_X509_pop_free(sk, X509_free);
  ERR_clear_error();
  return ok;
}
