/*
 * jparse.c - JSON to jansson values for watch events, on yajl's lexer.
 *
 * jansson's own parser reads through a character stream one call per byte and
 * decodes a 6 KiB Pod event about 12,000 times a second on one core; a busy
 * watch delivers more than that. Here yajl (Debian's libyajl2) lexes and
 * validates the whole frame in one call and its callbacks build the jansson
 * values on a stack of open containers. The result accepts exactly what
 * json_loadb(JSON_ALLOW_NUL | JSON_DECODE_ANY) accepts and builds equal
 * values (fuzz_watch checks both against each other), so the rest of the
 * library cannot tell which parser produced an object.
 *
 * yajl 2.1 is more lenient than jansson in a few places; each is closed here:
 *   - it takes \v and \f as whitespace: a raw \v or \f is invalid anywhere in
 *     JSON (control characters are not allowed in strings either), so an
 *     input holding one is refused before yajl sees it;
 *   - its UTF-8 check only looks at the shape of sequences, passing overlong
 *     forms, encoded surrogates and code points above U+10FFFF: strings with
 *     bytes >= 0x80 are checked again strictly (RFC 3629, as jansson does);
 *   - its \u decoding turns a lone surrogate into "?" or CESU bytes and pairs
 *     a high surrogate with any following \u: strings with escapes have their
 *     raw text checked for correctly paired surrogates, which jansson demands;
 *   - its number conversion uses strtod in the current locale and a stale
 *     errno: numbers come raw (yajl_number) and are converted here with
 *     jansson's rules (integer overflow and real overflow are errors,
 *     underflow is not);
 *   - it has no nesting limit: deeper than jansson's 2048 is refused here;
 *   - after the value it lexes one more token to find trailing garbage, and
 *     an unfinished one ("1 \"abc", "{} tru") passes: only whitespace may
 *     follow the value here;
 *   - object keys holding NUL (from \u0000) are refused, as jansson does.
 *
 * Additions for watches, where building jansson values, not reading bytes,
 * is most of the cost of a Pod: a member at a given path (managedFields) can
 * be dropped, the building can be limited to one path (an event's
 * object.metadata, all an informer's index needs), and the place of a value
 * in the input can be reported (the object's JSON text, kept as it is). What
 * is not built is still checked by yajl, so whether a document is valid
 * never depends on the options.
 *
 * Positions: the whole frame is given to yajl in one chunk, so inside a
 * callback yajl_get_bytes_consumed() is the offset just past the current
 * token (for a number too: yajl reads one byte beyond and puts it back). Only
 * a number at the very end of the input is lexed by yajl_complete_parse(),
 * from yajl's own buffer; it ends where the input ends.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "watch_internal.h"
#include "ripplex/sbuf.h"
#include "ripplex/utf8.h"

#define JP_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */
#define JP_INLINE_FRAMES 32

/* Where a value stands relative to the paths of jparse_opts_t: what remains
 * of each path below it, NULL when it is off the path. */
typedef struct jpath {
  const char *const *drop, *const *only, *const *span;
} jpath_t;

static const jpath_t nopath = {NULL, NULL, NULL};

/* One open container (or the root, frame 0) and what to do with the value
 * that comes next in it: for an object, the member whose key was just read;
 * for an array, any element. */
typedef struct jframe {
  json_t *c;  /* the container being built; NULL when it is only checked */
  jpath_t st; /* the container's own paths */
  jpath_t b;  /* paths below the next value */
  int is_obj;
  int build; /* build the next value */
  int off;   /* the next value is off the "only" path: build scalars only */
  int dropped, spanned;
  int quiet;       /* neither built nor on a path: only checked, all below too */
  const char *key; /* the member's key in the input, or NULL: at koff in keys */
  size_t klen, koff;
  size_t mstart, vstart; /* offsets of the member's key and of its value */
} jframe_t;

/* ---- yajl's memory ------------------------------------------------------------------ */

/* yajl allocates its handle, lexer, buffers (2 KiB each) and state stack on
 * every parse and has no way to reset a handle for reuse. Through malloc that
 * cost a third of the time per event (the 2 KiB requests consolidate the
 * small chunks jansson's values just freed), so its memory comes from a
 * block on the parser's stack, falling back to malloc when that runs out.
 * Each piece has its size in front of it, which realloc needs. */
#define JP_ARENA 8192

typedef struct jarena {
  size_t used, last; /* last: offset of the newest piece, which can grow in place */
  _Alignas(max_align_t) unsigned char mem[JP_ARENA];
} jarena_t;

#define JP_HDR sizeof(max_align_t)

static int in_arena(const jarena_t *a, const void *q) {
  uintptr_t x = (uintptr_t)q, b = (uintptr_t)a->mem;
  return x >= b && x < b + JP_ARENA;
}

static size_t piece_size(const void *q) {
  size_t n;
  memcpy(&n, (const unsigned char *)q - JP_HDR, sizeof n);
  return n;
}

static void *ar_malloc(void *ctx, size_t sz) {
  jarena_t *a = ctx;
  size_t need = JP_HDR + (sz + JP_HDR - 1) / JP_HDR * JP_HDR;
  if (sz > JP_ARENA || JP_ARENA - a->used < need) return malloc(sz);
  unsigned char *q = a->mem + a->used;
  memcpy(q, &sz, sizeof sz);
  a->last = a->used;
  a->used += need;
  return q + JP_HDR;
}

static void ar_free(void *ctx, void *q) {
  jarena_t *a = ctx;
  if (!in_arena(a, q)) {
    free(q);
  } else if ((unsigned char *)q - JP_HDR == a->mem + a->last) {
    a->used = a->last; /* the newest piece: its room can be used again */
  }
}

static void *ar_realloc(void *ctx, void *q, size_t sz) {
  jarena_t *a = ctx;
  if (!q) return ar_malloc(ctx, sz);
  if (!in_arena(a, q)) return realloc(q, sz);
  size_t old = piece_size(q), need = JP_HDR + (sz + JP_HDR - 1) / JP_HDR * JP_HDR;
  if ((unsigned char *)q - JP_HDR == a->mem + a->last && a->last + need <= JP_ARENA) {
    memcpy((unsigned char *)q - JP_HDR, &sz, sizeof sz);
    a->used = a->last + need;
    return q;
  }
  void *n = ar_malloc(ctx, sz);
  if (n) memcpy(n, q, old < sz ? old : sz);
  return n; /* the old piece stays until the parse ends */
}

typedef struct jp {
  const char *p;
  size_t n;
  yajl_handle h;
  jframe_t *fr;
  size_t depth, cap; /* fr[depth] is the innermost open container */
  sbuf_t keys;       /* escaped keys of members being built (yajl reuses its buffer) */
  json_t *root;
  jparse_spans_t sp;
  int rc;                         /* why a callback stopped the parse */
  int non_ascii, u_escapes;       /* what jp_scan found */
  int finishing;                  /* in yajl_complete_parse */
  size_t root_end;                /* offset just past the top-level value */
  jframe_t inl[JP_INLINE_FRAMES]; /* last: not cleared */
  jarena_t arena;
} jp_t;

/* Stop the parse from a callback: yajl returns yajl_status_client_canceled. */
static int jp_fail(jp_t *s, int rc) {
  s->rc = rc;
  return 0;
}

/* Offset just past the current token. In yajl_complete_parse the token is a
 * number that ended the input, read back from yajl's own buffer. */
static size_t jp_pos(const jp_t *s) { return s->finishing ? s->n : yajl_get_bytes_consumed(s->h); }

static int in_input(const jp_t *s, const void *q) {
  uintptr_t a = (uintptr_t)q, b = (uintptr_t)s->p;
  return a >= b && a < b + s->n;
}

/* ---- what yajl lets through ------------------------------------------------------ */

/* The value of 4 hex digits (yajl has checked they are). */
static uint32_t hex4(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i];
    v = v << 4 | (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

/* Whether any of 8 bytes is a backslash or not ASCII. */
static int special8(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t b = x ^ (ones * '\\');
  return (((b - ones) & ~b) & high) != 0 || (x & high) != 0;
}

/* The raw text of a string yajl accepted (between the quotes): strict UTF-8
 * and paired surrogates, which yajl does not check. */
static int raw_ok(const unsigned char *p, const unsigned char *end) {
  while (p < end) {
    uint64_t x;
    while (end - p >= 8 && (memcpy(&x, p, 8), !special8(x))) p += 8;
    if (p >= end) break;
    if (*p < 0x80 && *p != '\\') {
      p++;
    } else if (*p >= 0x80) {
      size_t n = utf8_len(p, (size_t)(end - p));
      if (!n) return 0;
      p += n;
    } else if (p[1] != 'u') {
      p += 2;
    } else {
      uint32_t cp = hex4(p + 2);
      p += 6;
      if (cp >= 0xDC00 && cp <= 0xDFFF) return 0; /* a lone low surrogate */
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return 0;
        uint32_t lo = hex4(p + 2);
        if (lo < 0xDC00 || lo > 0xDFFF) return 0;
        p += 6;
      }
    }
  }
  return 1;
}

/* Offset of the opening quote of the string token ending just before the
 * current position: the first quote back that is not escaped, i.e. not
 * preceded by an odd run of backslashes. Outside strings a backslash is
 * invalid, so the run before the opening quote is empty. */
static size_t str_start(const jp_t *s) {
  size_t q = jp_pos(s) - 1; /* the closing quote */
  for (;;) {
    while (s->p[--q] != '"') {
    }
    size_t k = q;
    while (k > 0 && s->p[k - 1] == '\\') k--;
    if ((q - k) % 2 == 0) return q;
  }
}

/* Whether a string or key yajl passed is acceptable to jansson too. Unescaped
 * strings come straight from the input; escaped ones come decoded from
 * yajl's buffer and are checked in their raw form. Most frames are ASCII
 * without \u escapes (see jp_scan), and then there is nothing to check. */
static int str_ok(const jp_t *s, const unsigned char *str, size_t len) {
  if (in_input(s, str)) return !s->non_ascii || raw_ok(str, str + len);
  if (!s->non_ascii && !s->u_escapes) return 1;
  const unsigned char *raw = (const unsigned char *)s->p;
  return raw_ok(raw + str_start(s) + 1, raw + jp_pos(s) - 1);
}

/* Offset of the opening quote of the string or key yajl just passed. */
static size_t str_open(const jp_t *s, const unsigned char *str) {
  return in_input(s, str) ? (size_t)((const char *)str - s->p) - 1 : str_start(s);
}

/* ---- numbers ------------------------------------------------------------------------ */

/* strtod in the C locale whatever the program set: "1.5" must not depend on
 * LC_NUMERIC. */
static locale_t c_locale;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

static int real_value(const char *text, size_t n, json_t **out) {
  char buf[64], *heap = NULL, *num = buf;
  if (n >= sizeof buf && !(num = heap = malloc(n + 1))) return RIPPLE_ENOMEM;
  memcpy(num, text, n);
  num[n] = '\0';
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, c_locale_init);
  errno = 0;
  double d = c_locale ? strtod_l(num, NULL, c_locale) : strtod(num, NULL);
  int overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
  free(heap);
  if (overflow) return RIPPLE_EJSON; /* jansson: "real number overflow" */
  if (out && !(*out = json_real(d))) return RIPPLE_ENOMEM;
  return RIPPLE_OK;
}

/* A number's text as yajl lexed it (JSON's grammar). out NULL: check only. */
static int number_value(const char *text, size_t n, json_t **out) {
  if (memchr(text, '.', n) || memchr(text, 'e', n) || memchr(text, 'E', n))
    return real_value(text, n, out);
  int neg = text[0] == '-';
  /* Accumulate negatively so INT64_MIN fits; overflow is an error, as in
   * jansson ("too big integer"). */
  int64_t v = 0;
  for (size_t i = (size_t)neg; i < n; i++) {
    int d = text[i] - '0';
    if (v < (INT64_MIN + d) / 10) return RIPPLE_EJSON;
    v = v * 10 - d;
  }
  if (!neg && v == INT64_MIN) return RIPPLE_EJSON;
  if (out && !(*out = json_integer(neg ? v : -v))) return RIPPLE_ENOMEM;
  return RIPPLE_OK;
}

/* ---- building --------------------------------------------------------------------- */

/* What remains of a path below the member key, or NULL when key is not the
 * path's next element. */
static const char *const *below(const char *const *path, const char *key, size_t len) {
  if (!path || !path[0] || strncmp(path[0], key, len) != 0 || path[0][len] != '\0') return NULL;
  return path + 1;
}

/* The value that just ended at offset end (v: built, or NULL) goes into the
 * innermost open container. */
static int jp_put(jp_t *s, json_t *v, size_t end) {
  jframe_t *f = &s->fr[s->depth];
  if (f->quiet) return 1;
  if (s->depth == 0) {
    s->root = v;
    s->root_end = end;
    return 1;
  }
  if (!f->is_obj) {
    if (v && json_array_append_new(f->c, v) != 0) return jp_fail(s, RIPPLE_ENOMEM);
    return 1;
  }
  if (v) {
    const char *key = f->key ? f->key : s->keys.p + f->koff;
    if (json_object_setn_new_nocheck(f->c, key, f->klen, v) != 0) return jp_fail(s, RIPPLE_ENOMEM);
  }
  if (!f->key) s->keys.len = f->koff;
  if (f->spanned) s->sp.span = s->p + f->vstart, s->sp.span_len = end - f->vstart;
  if (f->dropped) s->sp.drop = s->p + f->mstart, s->sp.drop_len = end - f->mstart;
  return 1;
}

/* A scalar token of len bytes ending at the current position; v: built or
 * NULL. */
static int jp_scalar(jp_t *s, json_t *v, size_t len) {
  size_t end = jp_pos(s);
  s->fr[s->depth].vstart = end - len;
  return jp_put(s, v, end);
}

static int cb_null(void *ctx) {
  jp_t *s = ctx;
  return jp_scalar(s, s->fr[s->depth].build ? json_null() : NULL, 4);
}

static int cb_boolean(void *ctx, int b) {
  jp_t *s = ctx;
  json_t *v = s->fr[s->depth].build ? json_boolean(b) : NULL;
  return jp_scalar(s, v, b ? 4 : 5);
}

static int cb_number(void *ctx, const char *text, size_t len) {
  jp_t *s = ctx;
  json_t *v = NULL;
  int rc = number_value(text, len, s->fr[s->depth].build ? &v : NULL);
  if (rc != RIPPLE_OK) return jp_fail(s, rc);
  return jp_scalar(s, v, len);
}

static int cb_string(void *ctx, const unsigned char *str, size_t len) {
  jp_t *s = ctx;
  jframe_t *f = &s->fr[s->depth];
  if (!str_ok(s, str, len)) return jp_fail(s, RIPPLE_EJSON);
  json_t *v = NULL;
  if (f->build && !(v = json_stringn_nocheck((const char *)str, len)))
    return jp_fail(s, RIPPLE_ENOMEM);
  if (f->spanned) f->vstart = str_open(s, str);
  return jp_put(s, v, jp_pos(s));
}

/* A member's key: where its value goes and which paths it is on. */
static int cb_map_key(void *ctx, const unsigned char *ukey, size_t klen) {
  jp_t *s = ctx;
  jframe_t *f = &s->fr[s->depth];
  const char *key = (const char *)ukey;
  if (!str_ok(s, ukey, klen)) return jp_fail(s, RIPPLE_EJSON);
  int escaped = !in_input(s, ukey);
  /* As in jansson, keys are C strings; a NUL can only come from an escape. */
  if (escaped && memchr(key, '\0', klen)) return jp_fail(s, RIPPLE_EJSON);
  if (f->quiet) return 1;
  const jpath_t st = f->st;
  jpath_t b = {below(st.drop, key, klen), NULL, below(st.span, key, klen)};
  f->dropped = b.drop && !b.drop[0];
  f->spanned = b.span && !b.span[0];
  f->build = f->c && !f->dropped;
  f->off = 0;
  if (st.only && st.only[0]) {
    const char *const *o = below(st.only, key, klen);
    if (o)
      b.only = o[0] ? o : NULL; /* at the path's end: build everything below */
    else
      f->off = 1;
  }
  if (f->dropped) f->mstart = str_open(s, ukey);
  f->klen = klen;
  f->key = key;
  if (f->build && escaped) {
    f->key = NULL, f->koff = s->keys.len;
    sbuf_put(&s->keys, key, klen);
    if (s->keys.oom) return jp_fail(s, RIPPLE_ENOMEM);
  }
  f->b = b;
  return 1;
}

/* A container opens: a new frame, its value built if the one expected is. */
static int jp_open(jp_t *s, int is_obj) {
  jframe_t *f = &s->fr[s->depth];
  if (s->depth >= JP_MAX_DEPTH) return jp_fail(s, RIPPLE_EJSON);
  if (s->depth + 1 == s->cap) {
    size_t cap = s->cap * 2;
    jframe_t *fr = s->fr == s->inl ? malloc(cap * sizeof *fr) : realloc(s->fr, cap * sizeof *fr);
    if (!fr) return jp_fail(s, RIPPLE_ENOMEM);
    if (s->fr == s->inl) memcpy(fr, s->inl, sizeof s->inl);
    s->fr = fr, s->cap = cap, f = &s->fr[s->depth];
  }
  f->vstart = jp_pos(s) - 1;
  json_t *c = NULL;
  if (f->build && !f->off && !(c = is_obj ? json_object() : json_array()))
    return jp_fail(s, RIPPLE_ENOMEM);
  jframe_t *n = &s->fr[++s->depth];
  n->c = c;
  n->st = f->b;
  n->is_obj = is_obj;
  /* Elements of an array: no paths (they name object members only); on an
   * unfinished "only" path, containers among them are off it. */
  n->b = nopath;
  n->build = c != NULL;
  n->off = !is_obj && n->st.only && n->st.only[0];
  n->dropped = n->spanned = 0;
  n->quiet = !c && !n->st.drop && !n->st.only && !n->st.span;
  n->key = "";
  return 1;
}

static int cb_start_map(void *ctx) { return jp_open(ctx, 1); }
static int cb_start_array(void *ctx) { return jp_open(ctx, 0); }

static int jp_close(void *ctx) {
  jp_t *s = ctx;
  json_t *c = s->fr[s->depth--].c;
  return jp_put(s, c, jp_pos(s));
}

static const yajl_callbacks jp_callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number, /* raw text: converted with jansson's rules */
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = jp_close,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = jp_close,
};

/* One look at the whole frame before yajl: whether it has bytes >= 0x80
 * (strings need the strict UTF-8 check) or \u escapes (escaped strings need
 * the surrogate check). A raw \v or \f, which yajl takes for whitespace, is
 * invalid anywhere. */
static int jp_scan(jp_t *s) {
  if (memchr(s->p, '\v', s->n) || memchr(s->p, '\f', s->n)) return RIPPLE_EJSON;
  const unsigned char *p = (const unsigned char *)s->p, *end = p + s->n;
  uint64_t acc = 0, x;
  for (; end - p >= 8; p += 8) memcpy(&x, p, 8), acc |= x;
  for (; p < end; p++) acc |= *p;
  s->non_ascii = (acc & 0x8080808080808080ULL) != 0;
  /* glibc's memmem is slow for a 2-byte needle; backslashes are few. A
   * backslash and what it escapes are passed over together. */
  const char *b = s->p, *e = s->p + s->n;
  while (e - b >= 2 && (b = memchr(b, '\\', (size_t)(e - b - 1)))) {
    if (b[1] == 'u') {
      s->u_escapes = 1;
      break;
    }
    b += 2;
  }
  return RIPPLE_OK;
}

/* Runs yajl over the input; s->root holds the value on success. */
static int jp_run(jp_t *s) {
  if (jp_scan(s) != RIPPLE_OK) return RIPPLE_EJSON;
  yajl_alloc_funcs af = {ar_malloc, ar_realloc, ar_free, &s->arena};
  if (!(s->h = yajl_alloc(&jp_callbacks, &af, s))) return RIPPLE_ENOMEM;
  yajl_config(s->h, yajl_dont_validate_strings, 0);
  yajl_config(s->h, yajl_allow_trailing_garbage, 0);
  yajl_config(s->h, yajl_allow_multiple_values, 0);
  yajl_config(s->h, yajl_allow_partial_values, 0);
  yajl_status st = yajl_parse(s->h, (const unsigned char *)s->p, s->n);
  s->finishing = 1;
  if (st == yajl_status_ok) st = yajl_complete_parse(s->h);
  yajl_free(s->h);
  if (st == yajl_status_client_canceled) return s->rc;
  if (st != yajl_status_ok) return RIPPLE_EJSON;
  /* yajl's check for trailing garbage lexes one more token and lets an
   * unfinished one pass ("1 \"abc", "{} tru"): only whitespace may follow. */
  for (size_t i = s->root_end; i < s->n; i++) {
    char c = s->p[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return RIPPLE_EJSON;
  }
  return RIPPLE_OK;
}

int jparse_ex(const char *p, size_t n, const jparse_opts_t *o, json_t **out, jparse_spans_t *sp) {
  jp_t st, *s = &st;
  memset(s, 0, offsetof(jp_t, inl));
  s->p = p, s->n = n, s->fr = s->inl, s->cap = JP_INLINE_FRAMES, s->rc = RIPPLE_EJSON;
  s->arena.used = s->arena.last = 0;
  sbuf_init(&s->keys);
  jframe_t *root = &s->fr[0];
  memset(root, 0, sizeof *root);
  root->b = o ? (jpath_t){o->drop, o->only, o->span} : nopath;
  root->build = out != NULL;
  int rc = jp_run(s);
  /* On failure the open containers are still owned by their frames. */
  for (size_t i = 1; rc != RIPPLE_OK && i <= s->depth; i++) json_decref(s->fr[i].c);
  if (rc == RIPPLE_OK && out)
    *out = s->root;
  else
    json_decref(s->root);
  if (rc == RIPPLE_OK && sp) *sp = s->sp;
  if (s->fr != s->inl) free(s->fr);
  sbuf_free(&s->keys);
  return rc;
}

int jparse(const char *p, size_t n, const char *const *skip, json_t **out) {
  jparse_opts_t o = {skip, NULL, NULL};
  return jparse_ex(p, n, &o, out, NULL);
}
