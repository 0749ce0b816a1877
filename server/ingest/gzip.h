/*
 * gzip.h - one gzip member in memory, both ways (zlib): the API's large
 * answers and the OTLP exporter's requests are compressed, OTLP requests that
 * arrive compressed are inflated. Output is malloc'd and the caller's.
 */
#ifndef RIPPLE_SERVER_GZIP_H
#define RIPPLE_SERVER_GZIP_H

#include <stddef.h>

/* p (n bytes) as one gzip member at level 1 (fast): RIPPLE_OK with *out of
 * *outlen bytes, RIPPLE_ENOMEM or RIPPLE_EINVAL when zlib fails. */
int gzip_encode(const char *p, size_t n, char **out, size_t *outlen);
/* The data of a gzip member, at most max bytes: RIPPLE_OK with *out (NUL
 * after its *outlen bytes), RIPPLE_ERANGE when it inflates past max (a
 * request's size limit holds for what it inflates to), RIPPLE_EJSON when p is
 * not gzip, RIPPLE_ENOMEM. */
int gzip_decode(const char *p, size_t n, size_t max, char **out, size_t *outlen);

#endif
