/*
 * jstrict.c - the strict JSON front end (ripplex/jstrict.h): the raw-text
 * scan, the trailing-bytes check and the conversion of reals.
 *
 * The scan runs over every byte of every request body and watch event, so it
 * looks at 16 bytes at a time and stops only at the bytes it has to judge:
 * a backslash, a byte >= 0x80, \v and \f. Text with none of them (most of
 * both parsers' input) costs a few vector instructions per 16 bytes.
 */
#include "ripplex/jstrict.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "ripplex/utf8.h"

/* Where the scan goes on after a byte it judged: past it, or STOP. */
#define STOP ((size_t)-1)

/* The byte the fast path stops at. */
static inline int special(unsigned char c) {
  return c >= 0x80 || c == '\\' || c == '\v' || c == '\f';
}

#if defined(__GNUC__)
/* gcc's and clang's vector types: SSE2 on x86-64, NEON on arm64, and plain
 * words where there is neither. */
typedef signed char v16_t __attribute__((vector_size(16)));

/* The offset of the first special byte of s[0..16), or 16. */
static inline unsigned first_special(const unsigned char *s) {
  v16_t x;
  memcpy(&x, s, sizeof x);
  v16_t m = (v16_t)((x < 0) | (x == '\\') | (x == '\v') | (x == '\f'));
  uint64_t w[2];
  memcpy(w, &m, sizeof w);
  for (unsigned h = 0; h < 2; h++) {
    if (!w[h]) continue;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return h * 8 + (unsigned)__builtin_ctzll(w[h]) / 8;
#else
    return h * 8 + (unsigned)__builtin_clzll(w[h]) / 8;
#endif
  }
  return 16;
}
#else
static inline unsigned first_special(const unsigned char *s) {
  unsigned k = 0;
  while (k < 16 && !special(s[k])) k++;
  return k;
}
#endif

/* A hex digit's value plus one; 0 for any other byte. */
static const unsigned char hexval[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

/* The 4 hex digits at s[i], or -1 (yajl refuses those itself). */
static inline long hex4(const unsigned char *s, size_t n, size_t i) {
  if (i + 4 > n) return -1;
  int a = hexval[s[i]] - 1, b = hexval[s[i + 1]] - 1, c = hexval[s[i + 2]] - 1,
      d = hexval[s[i + 3]] - 1;
  if ((a | b | c | d) < 0) return -1;
  return (long)(a << 12 | b << 8 | c << 4 | d);
}

/* The escape at s[i] (a backslash): where the scan goes on, or STOP with *why
 * set for an escape jansson refuses. */
static size_t escape(const unsigned char *s, size_t n, size_t i, unsigned flags, const char **why) {
  if (i + 1 >= n || s[i + 1] != 'u') return i + 2; /* \\ \" and the rest */
  long cp = hex4(s, n, i + 2);
  if (cp < 0) return i + 2;
  if (cp == 0 && !(flags & JSTRICT_ALLOW_NUL)) {
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

/* Judges the special byte at s[i]: where the scan goes on, or STOP with *why
 * set. */
static inline size_t judge(const unsigned char *s, size_t n, size_t i, unsigned flags,
                           const char **why) {
  unsigned char c = s[i];
  if (c == '\\') return escape(s, n, i, flags, why);
  if (c < 0x80) {
    *why = "a vertical tab or form feed, which JSON does not allow";
    return STOP;
  }
  size_t l = utf8_len(s + i, n - i);
  if (l) return i + l;
  *why = "invalid UTF-8";
  return STOP;
}

int jstrict_scan(const char *json, size_t n, unsigned flags, size_t *at, const char **why) {
  const unsigned char *s = (const unsigned char *)json;
  size_t i = 0;
  while (i < n) {
    if (n - i >= 16) {
      unsigned k = first_special(s + i);
      i += k;
      if (k == 16) continue;
    } else if (!special(s[i])) {
      i++;
      continue;
    }
    /* A run of special bytes (text that is not ASCII, escapes one after
     * another) is judged without the vector check in between. */
    do {
      size_t next = judge(s, n, i, flags, why);
      if (next == STOP) {
        *at = i;
        return RIPPLE_EJSON;
      }
      i = next;
    } while (i < n && special(s[i]));
  }
  return RIPPLE_OK;
}

int jstrict_trailing(const char *json, size_t n, size_t end, size_t *at) {
  for (size_t i = end; i < n; i++) {
    char c = json[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      *at = i;
      return RIPPLE_EJSON;
    }
  }
  return RIPPLE_OK;
}

/* "1.5" must not depend on LC_NUMERIC: jansson's own conversion does not. */
static locale_t c_locale;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

int jstrict_real(const char *s, size_t n, double *out) {
  char small[64], *heap = NULL, *num = small;
  if (n >= sizeof small && !(num = heap = malloc(n + 1))) return RIPPLE_ENOMEM;
  memcpy(num, s, n);
  num[n] = '\0';
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, c_locale_init);
  errno = 0;
  double d = c_locale ? strtod_l(num, NULL, c_locale) : strtod(num, NULL);
  int overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
  free(heap);
  if (overflow) return RIPPLE_EJSON; /* jansson: "real number overflow" */
  *out = d;
  return RIPPLE_OK;
}
