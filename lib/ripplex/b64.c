/*
 * b64.c - standard base64 (ripplex/b64.h), ripple's one codec for Kubernetes
 * []byte fields and kubeconfig *-data fields.
 *
 * The decoder follows Go's base64.StdEncoding, the decoder on the other side
 * of every value ripple reads: what the API server or kubectl refuses is
 * refused here, and what they take is taken (the unused bits of a last,
 * partial quantum are not checked, as Go does not check them).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/b64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 4 * ceil(n / 3) characters of p[0..n) into dst (no NUL). */
static void encode_to(char *dst, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i += 3, dst += 4) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    dst[0] = alphabet[v >> 18 & 63];
    dst[1] = alphabet[v >> 12 & 63];
    dst[2] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
    dst[3] = i + 2 < n ? alphabet[v & 63] : '=';
  }
}

void b64_encode(sbuf_t *out, const void *p, size_t n) {
  enum { CHUNK = 48 }; /* bytes per append: 64 characters */
  const unsigned char *s = p;
  char q[CHUNK / 3 * 4];
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t k = n - i < CHUNK ? n - i : CHUNK;
    encode_to(q, s + i, k);
    sbuf_put(out, q, (k + 2) / 3 * 4);
  }
}

char *b64_encode_str(const void *p, size_t n) {
  if (n > (SIZE_MAX - 1) / 4 * 3) return NULL;
  size_t len = (n + 2) / 3 * 4;
  char *s = malloc(len + 1); /* the exact size: no copies left behind by growing */
  if (!s) return NULL;
  encode_to(s, p, n);
  s[len] = '\0';
  return s;
}

static int value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Into buf (room for len / 4 * 3 bytes), their number in *n: 1, or 0 when s
 * is not base64. k counts the characters of the current quantum, pad the '='
 * that end it. */
static int decode_to(unsigned char *buf, const char *s, size_t len, int lines, size_t *n) {
  size_t o = 0, k = 0, pad = 0;
  uint32_t acc = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (lines && (c == '\r' || c == '\n')) continue;
    if (c == '=') {
      if (k < 2 || k + pad >= 4) return 0; /* "=" too early, or a third one */
      pad++;
      continue;
    }
    int v = value(c);
    if (v < 0 || pad) return 0; /* not base64, or data after the padding */
    acc = acc << 6 | (uint32_t)v;
    if (++k == 4) {
      buf[o++] = (unsigned char)(acc >> 16);
      buf[o++] = (unsigned char)(acc >> 8);
      buf[o++] = (unsigned char)acc;
      k = 0, acc = 0;
    }
  }
  if (k + pad != (k ? 4u : 0u)) return 0; /* a partial quantum not padded to 4 */
  if (k == 2) buf[o++] = (unsigned char)(acc >> 4);
  if (k == 3) buf[o++] = (unsigned char)(acc >> 10), buf[o++] = (unsigned char)(acc >> 2);
  *n = o;
  return 1;
}

static int decode(const char *s, size_t len, int lines, char **out, size_t *n) {
  size_t cap = len / 4 * 3 + 1, got = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) return RIPPLE_ENOMEM;
  if (!decode_to(buf, s, len, lines, &got)) {
    explicit_bzero(buf, cap); /* what was decoded before the error may be a secret's */
    free(buf);
    return RIPPLE_EINVAL;
  }
  buf[got] = '\0';
  *out = (char *)buf;
  if (n) *n = got;
  return RIPPLE_OK;
}

int b64_decode(const char *s, size_t len, char **out, size_t *n) {
  return decode(s, len, 0, out, n);
}

int b64_decode_lines(const char *s, size_t len, char **out, size_t *n) {
  return decode(s, len, 1, out, n);
}
