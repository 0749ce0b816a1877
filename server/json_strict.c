/*
 * json_strict.c - see json_strict.h.
 */
#include "json_strict.h"

#include "ripplex/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The 4 hex digits at s[i], or -1 (yajl refuses those itself). */
static long hex4(const unsigned char *s, size_t n, size_t i) {
  if (i + 4 > n) return -1;
  long v = 0;
  for (size_t k = i; k < i + 4; k++) {
    unsigned char c = s[k];
    int h = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (h < 0) return -1;
    v = v << 4 | h;
  }
  return v;
}

#define STOP ((size_t)-1)

/* The escape at s[i] (a backslash): where the next byte to check is, or STOP with
 * *why set for an escape jansson refused. */
static size_t escape(const unsigned char *s, size_t n, size_t i, const char **why) {
  if (i + 1 >= n || s[i + 1] != 'u') return i + 2; /* \\ \" and the rest */
  long cp = hex4(s, n, i + 2);
  if (cp < 0) return i + 2;
  if (cp == 0) {
    *why = "\\u0000 (NUL) is not allowed in a string";
    return STOP;
  }
  if (cp >= 0xd800 && cp <= 0xdbff) {
    long lo = i + 7 < n && s[i + 6] == '\\' && s[i + 7] == 'u' ? hex4(s, n, i + 8) : -1;
    if (lo >= 0xdc00 && lo <= 0xdfff) return i + 12;
  }
  if (cp >= 0xd800 && cp <= 0xdfff) {
    *why = "a \\u escape of an unpaired UTF-16 surrogate";
    return STOP;
  }
  return i + 6;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Eight bytes with nothing to check: ASCII, no backslash, nothing below
 * carriage return (a word with a tab or a newline takes the slow path). */
static int plain8(const unsigned char *s) {
  uint64_t w;
  memcpy(&w, s, sizeof w);
  uint64_t bs = w ^ (ONES * '\\');
  uint64_t any = (w & HIGHS) | ((bs - ONES) & ~bs & HIGHS) | ((w - ONES * 0x0d) & ~w & HIGHS);
  return any == 0;
}

size_t jstrict_scan(const char *json, size_t n, const char **why) {
  const unsigned char *s = (const unsigned char *)json;
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n && plain8(s + i)) {
      i += 8;
      continue;
    }
    unsigned char c = s[i];
    size_t next = i + 1;
    if (c == '\\')
      next = escape(s, n, i, why);
    else if (c == 0x0b || c == 0x0c)
      *why = "a vertical tab or form feed, which JSON does not allow", next = STOP;
    else if (c >= 0x80) {
      size_t l = utf8_len(s + i, n - i);
      next = l ? i + l : STOP;
      *why = "invalid UTF-8";
    }
    if (next == STOP) return i;
    i = next;
  }
  return JSTRICT_OK;
}

/* A JSON integer has no leading zeros, so its digits say how large it is. */
int jstrict_number_ok(const char *s, size_t n) {
  if (!memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n)) {
    size_t neg = s[0] == '-', digits = n - neg;
    if (digits != 19) return digits < 19;
    return memcmp(s + neg, neg ? "9223372036854775808" : "9223372036854775807", 19) <= 0;
  }
  char small[64], *buf = n < sizeof small ? small : malloc(n + 1);
  if (!buf) return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  errno = 0;
  double v = strtod(buf, NULL);
  int ok = !((v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE);
  if (buf != small) free(buf);
  return ok;
}
