/*
 * ripplex/hex.h - bytes as hex digits and back: trace and span ids in OTLP's
 * JSON, W3C traceparents, a CPID as a trace id. Inline and header-only like
 * utf8.h: a handful of lines used per id on the exporter's and the
 * webhook's paths.
 */
#ifndef RIPPLEX_HEX_H
#define RIPPLEX_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The 2n lower-case hex digits of p[0..n) into out, and a NUL. */
static inline void hex_encode(const uint8_t *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

/* The value of one hex digit, or -1; upper case only when upper is set. */
static inline int hex_digit(char c, int upper) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (upper && c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* n bytes into out from the 2n hex digits at s (the caller checks that s has
 * them): 1, or 0 when one is not a hex digit (upper case allowed when upper
 * is set). */
static inline int hex_decode(const char *s, size_t n, uint8_t *out, int upper) {
  for (size_t i = 0; i < n; i++) {
    int hi = hex_digit(s[2 * i], upper), lo = hex_digit(s[2 * i + 1], upper);
    if (hi < 0 || lo < 0) return 0;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 1;
}

#endif
