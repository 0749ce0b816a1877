/*
 * ripplex/jstrict.h - the strict JSON front end: the rules that make yajl
 * refuse what jansson refuses, for ripple's two yajl parsers (the trace
 * server's request decoder, server/decode.c, and the Kubernetes client's
 * watch-event parser, lib/kube/jparse.c).
 *
 * Both parsers' contracts were set with jansson, and yajl 2.1 is more lenient
 * in a few places, each closed by one rule here:
 *   - it takes a raw vertical tab or form feed as white space (jstrict_scan);
 *   - its UTF-8 check looks at the shape of sequences only, passing overlong
 *     forms, encoded surrogates and code points past U+10FFFF (jstrict_scan);
 *   - its \u decoding turns a lone surrogate into "?" or CESU bytes, pairs a
 *     high surrogate with any \u after it, and passes \u0000 on as a NUL byte
 *     (jstrict_scan; jstrict_key where NUL is allowed in values only);
 *   - it converts numbers with strtod in the current locale and a stale errno,
 *     and takes integers beyond int64 (jstrict_number);
 *   - it has no nesting limit (JSTRICT_MAX_DEPTH);
 *   - its check for trailing garbage lexes one more token and lets an
 *     unfinished one pass, `[] "` or `1 tru` (jstrict_trailing).
 *
 * Errors: RIPPLE_OK, or RIPPLE_EJSON for JSON jansson refused (RIPPLE_ENOMEM
 * where memory is needed). Where a failure is located, *at (a byte offset)
 * and *why (a static description) are written on failure only.
 */
#ifndef RIPPLEX_JSTRICT_H
#define RIPPLEX_JSTRICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ripple/ripple.h"

/* jansson's JSON_PARSER_MAX_DEPTH. jansson counts every value, scalars too:
 * a value inside this many arrays and objects is refused. yajl keeps its
 * nesting on the heap, so the limit is the caller's to apply. */
#define JSTRICT_MAX_DEPTH 2048

/* jstrict_scan flags: \u0000 is allowed (jansson's JSON_ALLOW_NUL). */
#define JSTRICT_ALLOW_NUL 1u

/* One pass over the raw bytes of a JSON text, before yajl sees it: a raw \v
 * or \f anywhere, UTF-8 that is not strict (RFC 3629), a \u escape of an
 * unpaired UTF-16 surrogate or (without JSTRICT_ALLOW_NUL) of NUL. Checking
 * the whole text rather than each string is exact: in JSON yajl accepts,
 * bytes outside strings are ASCII and never a backslash, and everywhere else
 * yajl refuses the text itself. Malformed escapes are left to yajl. */
int jstrict_scan(const char *json, size_t n, unsigned flags, size_t *at, const char **why);

/* Only JSON white space (space, tab, newline, carriage return) from json[end]
 * to json[n]: what may follow the top-level value. */
int jstrict_trailing(const char *json, size_t n, size_t end, size_t *at);

/* An object key as yajl decoded it: jansson's keys are C strings, so a NUL
 * (which only a \u0000 escape makes) is refused. */
static inline int jstrict_key(const char *key, size_t n) {
  return memchr(key, '\0', n) ? RIPPLE_EJSON : RIPPLE_OK;
}

/* A number's value, as jansson keeps it. */
typedef struct jstrict_num {
  int real; /* 1: d holds it; 0: an integer, i holds it */
  int64_t i;
  double d;
} jstrict_num_t;

/* A real's text converted with jansson's rules: strtod in the C locale
 * whatever the program set; overflow is refused, underflow is not. The
 * non-integer half of jstrict_number. */
int jstrict_real(const char *s, size_t n, double *out);

/* A number's text as yajl lexed it (JSON's grammar: an optional '-', no
 * leading zeros), by jansson's rules: with '.', 'e' or 'E' a real (see
 * jstrict_real), else an integer, refused beyond int64. Inline: the integer
 * case is one pass over the digits. */
static inline int jstrict_number(const char *s, size_t n, jstrict_num_t *out) {
  size_t neg = n && s[0] == '-';
  uint64_t u = 0;
  for (size_t k = neg; k < n; k++) {
    unsigned d = (unsigned)(unsigned char)s[k] - '0';
    if (d > 9) {
      int rc = jstrict_real(s, n, &out->d);
      if (rc == RIPPLE_OK) out->real = 1;
      return rc;
    }
    u = u * 10 + d; /* wraps past 19 digits, which are refused below */
  }
  /* Without leading zeros, more than 19 digits are beyond 9.2e18. */
  if (n - neg > 19 || u > (uint64_t)INT64_MAX + neg) return RIPPLE_EJSON;
  out->real = 0;
  out->i = !neg ? (int64_t)u : u ? -(int64_t)(u - 1) - 1 : 0;
  return RIPPLE_OK;
}

#endif
