/*
 * jparse.c - a fast JSON parser that builds jansson values, for watch events.
 *
 * jansson's own parser reads through a character stream one call per byte and
 * decodes a 6 KiB Pod event about 12,000 times a second on one core; a busy
 * watch delivers more than that. This parser works on the whole frame in
 * memory: strings without escapes are built straight from the input, ASCII
 * runs are scanned in a tight loop, integers are converted inline. It accepts
 * exactly what json_loadb(JSON_ALLOW_NUL | JSON_DECODE_ANY) accepts and builds
 * equal values (fuzz_watch checks both against each other), so the rest of
 * the library cannot tell which parser produced an object.
 *
 * Additions for watches, where building jansson values, not reading bytes,
 * is most of the cost of a Pod: a member at a given path (managedFields) can
 * be dropped, the building can be limited to one path (an event's
 * object.metadata, all an informer's index needs), and the place of a value
 * in the input can be reported (the object's JSON text, kept as it is). What
 * is not built is still checked, so whether a document is valid never
 * depends on the options.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "watch_internal.h"

#define JP_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef struct jp {
  const char *p, *end;
  int depth;
  sbuf_t tmp; /* unescaped strings */
  jparse_spans_t *sp;
} jp_t;

/* Where a value stands relative to the paths of jparse_opts_t: what remains
 * of each path below it, NULL when it is off the path. */
typedef struct jpath {
  const char *const *drop, *const *only, *const *span;
} jpath_t;

static const jpath_t nopath = {NULL, NULL, NULL};

static int jp_value(jp_t *s, jpath_t st, json_t **out);

static void jp_ws(jp_t *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

/* Length of the valid UTF-8 sequence starting at p (first byte >= 0x80), or 0
 * when it is invalid: overlong forms, surrogates and code points above
 * U+10FFFF are refused, as RFC 3629 and jansson do. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if ((size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

static int hex4(const char *p, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (uint32_t)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

static void put_utf8(sbuf_t *b, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp, n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
  } else {
    u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
  }
  sbuf_put(b, u, n);
}

/* One escape after the backslash at s->p; appends the decoded bytes. */
static int jp_escape(jp_t *s) {
  if (s->end - s->p < 2) return RIPPLE_EJSON;
  char c = s->p[1];
  s->p += 2;
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k = c ? strchr(from, c) : NULL;
  if (k) {
    sbuf_putc(&s->tmp, to[k - from]);
    return RIPPLE_OK;
  }
  uint32_t cp, lo;
  if (c != 'u' || s->end - s->p < 4 || hex4(s->p, &cp) != 0) return RIPPLE_EJSON;
  s->p += 4;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return RIPPLE_EJSON; /* a lone low surrogate */
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' || hex4(s->p + 2, &lo) != 0 ||
        lo < 0xDC00 || lo > 0xDFFF)
      return RIPPLE_EJSON;
    s->p += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  put_utf8(&s->tmp, cp);
  return RIPPLE_OK;
}

/* Whether any of 8 bytes is a quote, a backslash, a control character or
 * not ASCII: the bytes that end the fast scan of a string. */
static int special8(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
  uint64_t zero_q = (q - ones) & ~q, zero_b = (b - ones) & ~b, ctl = (x - ones * 0x20) & ~x;
  return ((zero_q | zero_b | ctl) & high) != 0 || (x & high) != 0;
}

/* A string at s->p (the opening quote). str and len: the decoded bytes, either
 * in the input (no escapes) or in s->tmp. */
static int jp_string(jp_t *s, const char **str, size_t *len) {
  const unsigned char *p = (const unsigned char *)s->p + 1, *end = (const unsigned char *)s->end;
  const unsigned char *start = p;
  int escaped = 0;
  s->tmp.len = 0;
  for (;;) {
    uint64_t x;
    while (end - p >= 8 && (memcpy(&x, p, 8), !special8(x))) p += 8;
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    if (p >= end || *p < 0x20) return RIPPLE_EJSON;
    if (*p == '"') break;
    if (*p >= 0x80) {
      size_t n = utf8_len(p, end);
      if (!n) return RIPPLE_EJSON;
      p += n;
      continue;
    }
    /* A backslash: from here on the string is assembled in tmp. */
    escaped = 1;
    sbuf_put(&s->tmp, (const char *)start, (size_t)(p - start));
    s->p = (const char *)p;
    if (jp_escape(s) != RIPPLE_OK) return RIPPLE_EJSON;
    p = start = (const unsigned char *)s->p;
  }
  if (escaped) {
    sbuf_put(&s->tmp, (const char *)start, (size_t)(p - start));
    if (s->tmp.oom) return RIPPLE_ENOMEM;
    *str = s->tmp.p ? s->tmp.p : "";
    *len = s->tmp.len;
  } else {
    *str = (const char *)start;
    *len = (size_t)(p - start);
  }
  s->p = (const char *)p + 1;
  return RIPPLE_OK;
}

/* strtod in the C locale whatever the program set: "1.5" must not depend on
 * LC_NUMERIC. */
static locale_t c_locale;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

static int jp_number(jp_t *s, json_t **out) {
  const char *p = s->p, *end = s->end, *start = p;
  int neg = 0, real = 0;
  if (p < end && *p == '-') p++, neg = 1;
  if (p >= end || *p < '0' || *p > '9') return RIPPLE_EJSON;
  if (*p == '0') {
    p++;
  } else {
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (p < end && *p == '.') {
    real = 1, p++;
    if (p >= end || *p < '0' || *p > '9') return RIPPLE_EJSON;
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    real = 1, p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || *p < '0' || *p > '9') return RIPPLE_EJSON;
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  s->p = p;
  if (!real) {
    /* Accumulate negatively so INT64_MIN fits; overflow is an error, as in
     * jansson ("too big integer"). */
    int64_t v = 0;
    for (const char *q = start + neg; q < p; q++) {
      int d = *q - '0';
      if (v < (INT64_MIN + d) / 10) return RIPPLE_EJSON;
      v = v * 10 - d;
    }
    if (!neg && v == INT64_MIN) return RIPPLE_EJSON;
    if (out && !(*out = json_integer(neg ? v : -v))) return RIPPLE_ENOMEM;
    return RIPPLE_OK;
  }
  char buf[64], *heap = NULL, *num = buf;
  size_t n = (size_t)(p - start);
  if (n >= sizeof buf && !(num = heap = malloc(n + 1))) return RIPPLE_ENOMEM;
  memcpy(num, start, n);
  num[n] = '\0';
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, c_locale_init);
  errno = 0;
  double d = c_locale ? strtod_l(num, NULL, c_locale) : strtod(num, NULL);
  int overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
  free(heap);
  if (overflow) return RIPPLE_EJSON;
  if (out && !(*out = json_real(d))) return RIPPLE_ENOMEM;
  return RIPPLE_OK;
}

static int jp_literal(jp_t *s, const char *word, json_t *v, json_t **out) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return RIPPLE_EJSON;
  s->p += n;
  if (out) *out = v;
  return RIPPLE_OK;
}

/* What remains of a path below the member key, or NULL when key is not the
 * path's next element. */
static const char *const *below(const char *const *path, const char *key, size_t len) {
  if (!path || !path[0] || strlen(path[0]) != len || memcmp(path[0], key, len) != 0) return NULL;
  return path + 1;
}

static int is_container(const jp_t *s) { return s->p < s->end && (*s->p == '{' || *s->p == '['); }

/* The key may live in tmp, which the value's strings reuse: copy it. */
static const char *keep_key(jp_t *s, const char *k, size_t klen, char *buf, size_t cap,
                            char **heap) {
  if (k != s->tmp.p) return k;
  char *key = klen < cap ? buf : (*heap = malloc(klen + 1));
  if (key) memcpy(key, k, klen);
  return key;
}

static int jp_member(jp_t *s, jpath_t st, json_t *obj) {
  const char *mstart = s->p, *k;
  size_t klen;
  if (s->p >= s->end || *s->p != '"') return RIPPLE_EJSON;
  int rc = jp_string(s, &k, &klen);
  if (rc != RIPPLE_OK) return rc;
  /* As in jansson, keys are C strings; a NUL can only come from an escape. */
  if (k == s->tmp.p && memchr(k, '\0', klen)) return RIPPLE_EJSON;
  char kbuf[256], *heap = NULL;
  const char *key = keep_key(s, k, klen, kbuf, sizeof kbuf, &heap);
  if (!key) return RIPPLE_ENOMEM;
  jp_ws(s);
  if (s->p >= s->end || *s->p != ':') {
    free(heap);
    return RIPPLE_EJSON;
  }
  s->p++;
  jp_ws(s);
  jpath_t b = {below(st.drop, key, klen), NULL, below(st.span, key, klen)};
  int dropped = b.drop && !b.drop[0], build = obj && !dropped;
  if (st.only && st.only[0]) {
    const char *const *o = below(st.only, key, klen);
    if (o)
      b.only = o[0] ? o : NULL; /* at the path's end: build everything below */
    else if (is_container(s))
      build = 0; /* off the path: containers are only checked */
  }
  const char *vstart = s->p;
  json_t *v = NULL;
  rc = jp_value(s, b, build ? &v : NULL);
  if (rc == RIPPLE_OK && v && json_object_setn_new_nocheck(obj, key, klen, v) != 0)
    rc = RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK && b.span && !b.span[0] && s->sp)
    s->sp->span = vstart, s->sp->span_len = (size_t)(s->p - vstart);
  if (rc == RIPPLE_OK && dropped && s->sp)
    s->sp->drop = mstart, s->sp->drop_len = (size_t)(s->p - mstart);
  free(heap);
  return rc;
}

static int jp_object(jp_t *s, jpath_t st, json_t **out) {
  json_t *obj = NULL;
  if (out && !(obj = json_object())) return RIPPLE_ENOMEM;
  s->p++;
  jp_ws(s);
  int rc = RIPPLE_OK;
  if (s->p < s->end && *s->p == '}') {
    s->p++;
  } else {
    for (;;) {
      if ((rc = jp_member(s, st, obj)) != RIPPLE_OK) break;
      jp_ws(s);
      if (s->p < s->end && *s->p == ',') {
        s->p++;
        jp_ws(s);
        continue;
      }
      if (s->p < s->end && *s->p == '}') {
        s->p++;
      } else {
        rc = RIPPLE_EJSON;
      }
      break;
    }
  }
  if (rc != RIPPLE_OK) {
    json_decref(obj);
    return rc;
  }
  if (out) *out = obj;
  return RIPPLE_OK;
}

/* Paths name object members only; elements of an array on an unfinished
 * "only" path are off it. */
static int jp_array(jp_t *s, jpath_t st, json_t **out) {
  json_t *arr = NULL;
  if (out && !(arr = json_array())) return RIPPLE_ENOMEM;
  s->p++;
  jp_ws(s);
  int rc = RIPPLE_OK;
  if (s->p < s->end && *s->p == ']') {
    s->p++;
  } else {
    int off = st.only && st.only[0];
    for (;;) {
      json_t *v = NULL;
      int build = arr && !(off && is_container(s));
      if ((rc = jp_value(s, nopath, build ? &v : NULL)) != RIPPLE_OK) break;
      if (v && json_array_append_new(arr, v) != 0) {
        rc = RIPPLE_ENOMEM;
        break;
      }
      jp_ws(s);
      if (s->p < s->end && *s->p == ',') {
        s->p++;
        jp_ws(s);
        continue;
      }
      if (s->p < s->end && *s->p == ']') {
        s->p++;
      } else {
        rc = RIPPLE_EJSON;
      }
      break;
    }
  }
  if (rc != RIPPLE_OK) {
    json_decref(arr);
    return rc;
  }
  if (out) *out = arr;
  return RIPPLE_OK;
}

/* One value at s->p. out NULL: check it, build nothing. */
static int jp_value(jp_t *s, jpath_t st, json_t **out) {
  if (s->p >= s->end) return RIPPLE_EJSON;
  int rc;
  switch (*s->p) {
    case '{':
    case '[':
      if (++s->depth > JP_MAX_DEPTH) return RIPPLE_EJSON;
      rc = *s->p == '{' ? jp_object(s, st, out) : jp_array(s, st, out);
      s->depth--;
      return rc;
    case '"': {
      const char *str;
      size_t len;
      if ((rc = jp_string(s, &str, &len)) != RIPPLE_OK) return rc;
      if (out && !(*out = json_stringn_nocheck(str, len))) return RIPPLE_ENOMEM;
      return RIPPLE_OK;
    }
    case 't': return jp_literal(s, "true", json_true(), out);
    case 'f': return jp_literal(s, "false", json_false(), out);
    case 'n': return jp_literal(s, "null", json_null(), out);
    default: return jp_number(s, out);
  }
}

int jparse_ex(const char *p, size_t n, const jparse_opts_t *o, json_t **out, jparse_spans_t *sp) {
  jp_t s = {p, p + n, 0, {0}, sp};
  sbuf_init(&s.tmp);
  if (sp) memset(sp, 0, sizeof *sp);
  jpath_t st = o ? (jpath_t){o->drop, o->only, o->span} : nopath;
  json_t *v = NULL;
  jp_ws(&s);
  int rc = jp_value(&s, st, out ? &v : NULL);
  jp_ws(&s);
  if (rc == RIPPLE_OK && s.p != s.end) rc = RIPPLE_EJSON;
  sbuf_free(&s.tmp);
  if (rc != RIPPLE_OK) {
    json_decref(v);
    return rc;
  }
  if (out) *out = v;
  return RIPPLE_OK;
}

int jparse(const char *p, size_t n, const char *const *skip, json_t **out) {
  jparse_opts_t o = {skip, NULL, NULL};
  return jparse_ex(p, n, &o, out, NULL);
}
