/*
 * ripplex/b64.h - standard base64 (RFC 4648 section 4: the alphabet with '+'
 * and '/', '=' padding), the one codec of ripple: Kubernetes []byte fields
 * (a Secret's data, a webhook's caBundle, an AdmissionReview's patch) and
 * a kubeconfig's *-data fields.
 *
 * The decoder accepts what Go's base64.StdEncoding (the API server, client-go,
 * kubectl) accepts, so ripple takes the same values as Kubernetes does:
 * padding is required, nothing outside the alphabet, the unused low bits of
 * the last character are ignored. Only b64_decode_lines skips CR and LF, as
 * Go does; everywhere else a newline is an error.
 *
 * Memory: encoders append to the caller's sbuf_t or return a new string;
 * decoders return a new buffer (free()). Secret data passes through here, so
 * a decoder wipes what it wrote before it frees it on failure. Errors:
 * RIPPLE_OK or a negative RIPPLE_E* code (ripple/ripple.h); outputs are
 * written only on success.
 */
#ifndef RIPPLEX_B64_H
#define RIPPLEX_B64_H

#include <stddef.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

/* The base64 of n bytes, appended to out (no NUL); an allocation failure
 * latches out->oom as every sbuf append does. */
void b64_encode(sbuf_t *out, const void *p, size_t n);
/* The base64 of n bytes as a new NUL-terminated string (free()); NULL only
 * when out of memory. */
char *b64_encode_str(const void *p, size_t n);

/* The len characters at s (NULs included: a NUL is not base64) decoded into
 * a new buffer *out with a NUL after the *n bytes (n may be NULL; the bytes
 * may hold NULs of their own). RIPPLE_EINVAL when s is not padded standard
 * base64 (a character outside the alphabet, a length that is not a multiple
 * of 4, '=' other than one or two at the end), RIPPLE_ENOMEM. "" is valid
 * and decodes to no bytes. */
int b64_decode(const char *s, size_t len, char **out, size_t *n);
/* The same, CR and LF anywhere skipped: base64 wrapped over lines, as a
 * kubeconfig's block scalar may hold it and kubectl accepts it. */
int b64_decode_lines(const char *s, size_t len, char **out, size_t *n);

#endif
