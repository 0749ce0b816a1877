/*
 * tlspeer.c - the client certificate of a libmicrohttpd connection, checked
 * with GnuTLS (tlspeer.h).
 *
 * libmicrohttpd with a trust CA (MHD_OPTION_HTTPS_MEM_TRUST) asks each client
 * for a certificate but does not require one, and does not check what it
 * gets: the handshake succeeds either way. So every request that needs a
 * client is checked here, on the connection's session, before its body is
 * read.
 */
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"
#include "ripplex/tlspeer.h"

/* Whether the certificate's one subject CN, or one of its DNS names, is in
 * names. GnuTLS reads them: its string of a CN may hold a NUL (a UTF8String
 * can), so the length it returns is what is matched, and a NUL in it
 * matches nothing. */
static int named(gnutls_x509_crt_t crt, const char *const *names, size_t nnames, char *cn,
                 size_t cncap) {
  size_t size = cncap, more = 0;
  int one = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &size);
  int two = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 1, 0, NULL, &more);
  if (one != GNUTLS_E_SUCCESS || size >= cncap) {
    cn[0] = '\0';
  } else if (two == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE &&
             tlspeer_name_match(names, nnames, cn, size)) {
    return 1;
  }
  for (unsigned seq = 0;; seq++) {
    char san[TLSPEER_NAME_MAX + 1];
    size_t n = sizeof san;
    int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, san, &n, NULL);
    if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) break;
    if (type == GNUTLS_E_SHORT_MEMORY_BUFFER) continue; /* longer than any name taken */
    if (type < 0) break;
    if (type == GNUTLS_SAN_DNSNAME && tlspeer_name_match(names, nnames, san, n)) return 1;
  }
  return 0;
}

int tlspeer_cert_named(const void *der, size_t len, const char *const *names, size_t nnames,
                       char *cn, size_t cncap) {
  if (!cn || !cncap) return 0;
  cn[0] = '\0';
  if (!der || len > UINT_MAX) return 0;
  gnutls_x509_crt_t crt;
  if (gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS) return 0;
  gnutls_datum_t d = {(unsigned char *)der, (unsigned)len};
  int ok = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_DER) == GNUTLS_E_SUCCESS &&
           named(crt, names, nnames, cn, cncap);
  gnutls_x509_crt_deinit(crt);
  return ok;
}

/* The chain against the daemon's trust CA, now, for client authentication. */
static int verified(gnutls_session_t s, char *why, size_t cap) {
  gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                   .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
  unsigned status = 0;
  int rc = gnutls_certificate_verify_peers(s, &purpose, 1, &status);
  if (rc == GNUTLS_E_SUCCESS && status == 0) return 1;
  gnutls_datum_t text = {0};
  if (rc == GNUTLS_E_SUCCESS && gnutls_certificate_verification_status_print(
                                    status, GNUTLS_CRT_X509, &text, 0) == GNUTLS_E_SUCCESS) {
    snprintf(why, cap, "client certificate refused: %s", (const char *)text.data);
    gnutls_free(text.data);
  } else {
    snprintf(why, cap, "client certificate refused: %s", gnutls_strerror(rc));
  }
  return 0;
}

/* The last chain this thread verified: a connection's requests come one
 * after another on its thread (libmicrohttpd's thread per connection), and
 * a chain's signatures need checking once per connection, not per request
 * (about 90 us each with an RSA CA). Kept for the same session showing the
 * same leaf certificate, for at most TLSPEER_CACHE_NS (expiry still
 * bites). */
#define TLSPEER_CACHE_NS (60 * 1000000000LL)
#define TLSPEER_CACHE_DER 4096
static _Thread_local struct {
  gnutls_session_t s;
  unsigned char der[TLSPEER_CACHE_DER];
  unsigned len;
  int64_t at;
  int named; /* its names matched --client-name (the same list each call) */
} last;

static int verified_cached(gnutls_session_t s, const gnutls_datum_t *leaf, char *why, size_t cap) {
  int64_t now = mono_ns();
  if (last.s == s && last.len && last.len == leaf->size &&
      !memcmp(last.der, leaf->data, leaf->size) && now - last.at < TLSPEER_CACHE_NS)
    return 1;
  last.len = 0;
  last.named = 0;
  if (!verified(s, why, cap)) return 0;
  if (leaf->size <= sizeof last.der) {
    memcpy(last.der, leaf->data, leaf->size);
    last.len = leaf->size, last.s = s, last.at = now;
  }
  return 1;
}

int tlspeer_check(struct MHD_Connection *c, const char *const *names, size_t nnames, char *why,
                  size_t cap) {
  const union MHD_ConnectionInfo *ci =
      c ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION) : NULL;
  gnutls_session_t s = ci ? (gnutls_session_t)ci->tls_session : NULL;
  unsigned nchain = 0;
  const gnutls_datum_t *chain = s ? gnutls_certificate_get_peers(s, &nchain) : NULL;
  if (!chain || !nchain) {
    snprintf(why, cap, "a client certificate is needed");
    return RIPPLE_ENOENT;
  }
  if (!verified_cached(s, &chain[0], why, cap)) return RIPPLE_EINVAL;
  if (!nnames || (last.named && last.s == s && last.len)) return RIPPLE_OK;
  char cn[TLSPEER_NAME_MAX + 1] = "";
  if (tlspeer_cert_named(chain[0].data, chain[0].size, names, nnames, cn, sizeof cn)) {
    last.named = last.s == s && last.len; /* cached with its chain */
    return RIPPLE_OK;
  }
  snprintf(why, cap, "client certificate (CN '%.64s') is not for a name of --client-name", cn);
  return RIPPLE_EINVAL;
}
