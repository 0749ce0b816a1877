/*
 * gzip.c - see gzip.h.
 */
#include "ingest/gzip.h"

#include <stdlib.h>

#include "ripple/ripple.h"

#define ZLIB_CONST
#include <zlib.h>

int gzip_encode(const char *p, size_t n, char **out, size_t *outlen) {
  z_stream z = {0};
  if (n > UINT32_MAX / 2) return RIPPLE_ERANGE;
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return RIPPLE_ENOMEM;
  uLong cap = deflateBound(&z, (uLong)n);
  char *buf = malloc(cap);
  if (!buf) {
    deflateEnd(&z);
    return RIPPLE_ENOMEM;
  }
  z.next_in = (const Bytef *)p;
  z.avail_in = (uInt)n;
  z.next_out = (Bytef *)buf;
  z.avail_out = (uInt)cap;
  int rc = deflate(&z, Z_FINISH);
  *outlen = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    free(buf);
    return RIPPLE_EINVAL;
  }
  *out = buf;
  return RIPPLE_OK;
}

int gzip_decode(const char *p, size_t n, size_t max, char **out, size_t *outlen) {
  z_stream z = {0};
  if (n > UINT32_MAX / 2 || max > UINT32_MAX / 2) return RIPPLE_ERANGE;
  if (inflateInit2(&z, 15 + 16) != Z_OK) return RIPPLE_ENOMEM;
  size_t cap = n * 4 + 1024 < max + 1 ? n * 4 + 1024 : max + 1;
  char *buf = malloc(cap + 1);
  int rc = buf ? Z_OK : Z_MEM_ERROR;
  z.next_in = (const Bytef *)p;
  z.avail_in = (uInt)n;
  while (rc == Z_OK) {
    if (z.total_out == cap) { /* full: grow, up to one byte past max */
      size_t ncap = cap * 2 < max + 1 ? cap * 2 : max + 1;
      char *nb = ncap > cap ? realloc(buf, ncap + 1) : NULL;
      if (!nb) {
        rc = ncap > cap ? Z_MEM_ERROR : Z_BUF_ERROR;
        break;
      }
      buf = nb;
      cap = ncap;
    }
    z.next_out = (Bytef *)buf + z.total_out;
    z.avail_out = (uInt)(cap - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) rc = Z_DATA_ERROR; /* truncated */
    if (rc == Z_BUF_ERROR) rc = Z_OK;                            /* out of room: grow */
  }
  size_t len = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || len > max || z.avail_in != 0) {
    free(buf);
    return rc == Z_MEM_ERROR                  ? RIPPLE_ENOMEM
           : len > max || (rc == Z_BUF_ERROR) ? RIPPLE_ERANGE
                                              : RIPPLE_EJSON;
  }
  buf[len] = '\0';
  *out = buf;
  *outlen = len;
  return RIPPLE_OK;
}
