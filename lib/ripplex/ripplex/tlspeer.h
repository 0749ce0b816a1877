/*
 * ripplex/tlspeer.h - who is at the other end of a TLS connection: the
 * client certificate a server asked for (httpd_opts_t.tls_trust), checked
 * against that CA, and the names it is for matched against a list.
 *
 * Two halves. The names (tlspeer_name_*) are pure text functions: which
 * names --client-name takes, and exact matching. The certificate's side
 * (tlspeer_cert_named, tlspeer_check) reads the subject's common name and
 * DNS names with GnuTLS, and verifies the peer's chain with GnuTLS on the
 * connection's session from libmicrohttpd. Both are fuzzed
 * (tests/fuzz/fuzz_client_name.c).
 *
 * Memory: nothing is kept; names are borrowed for the call.
 * Threads: every function may be called from any thread.
 */
#ifndef RIPPLEX_TLSPEER_H
#define RIPPLEX_TLSPEER_H

#include <stddef.h>

/* The longest name taken: a DNS name's 253 bytes. */
#define TLSPEER_NAME_MAX 253

/* Whether name is one a --client-name may give: 1 to TLSPEER_NAME_MAX bytes
 * of letters, digits and - . _ : @ (a DNS name, or a CN such as
 * "system:kube-apiserver" or "kube-apiserver@cluster"). */
int tlspeer_name_valid(const char *name);

/* Whether the len bytes at cand (not NUL-terminated, may hold NULs) are one
 * of names, compared exactly but for the case of ASCII letters (DNS names'
 * case does not matter; a CN differing only in case is not a forgery any CA
 * would sign apart). A candidate with a NUL or over TLSPEER_NAME_MAX bytes
 * matches nothing. */
int tlspeer_name_match(const char *const *names, size_t nnames, const char *cand, size_t len);

/* Whether the certificate (DER, len bytes) is for one of names: its
 * subject's one common name, or one of its DNS names (tlspeer_name_match).
 * 1 yes, 0 no: a malformed certificate, or none of its names. A subject
 * with more than one CN has its CN count for nothing (which one a client
 * means is ambiguous). cn (cncap bytes) gets the CN for the log, "" when
 * there is none to read. The chain is not checked here: tlspeer_check does
 * that first. */
int tlspeer_cert_named(const void *der, size_t len, const char *const *names, size_t nnames,
                       char *cn, size_t cncap);

struct MHD_Connection;
/* The client of connection c (on a daemon started with a trust CA): RIPPLE_OK
 * when it showed a certificate that chains to the CA, is valid now, is for
 * client authentication, and (nnames > 0) whose subject CN or one of whose
 * DNS names is one of names. RIPPLE_ENOENT: no certificate (or no TLS);
 * RIPPLE_EINVAL: a certificate refused. why says which, for the answer and
 * the log (never the certificate's content beyond its refused CN). */
int tlspeer_check(struct MHD_Connection *c, const char *const *names, size_t nnames, char *why,
                  size_t cap);

#endif
