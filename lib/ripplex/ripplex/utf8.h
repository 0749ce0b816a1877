/*
 * ripplex/utf8.h - strict UTF-8 (RFC 3629), as jansson checks it.
 *
 * Inline because the JSON escaper and the strict JSON front end call it for
 * every byte above 0x7f.
 */
#ifndef RIPPLEX_UTF8_H
#define RIPPLEX_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0 if it is not one
 * (truncated, overlong, a surrogate, past U+10FFFF). n > 0. */
static inline size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, cp = c & 0x07;
  else
    return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

#endif
