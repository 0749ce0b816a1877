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
 * yajl 2.1 is more lenient than jansson in a few places; the strict JSON
 * front end (ripplex/jstrict.h) closes each, as it does for the trace
 * server's decoder: one scan of the frame before yajl refuses a raw \v or \f,
 * UTF-8 that is not strict and \u escapes of unpaired surrogates (\u0000 is
 * allowed: JSON_ALLOW_NUL), and here keys holding NUL, numbers beyond int64
 * or double (converted with jansson's rules), nesting deeper than jansson's
 * 2048 and anything but white space after the value are refused.
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
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ripplex/jstrict.h"
#include "ripplex/sbuf.h"
#include "watch_internal.h"

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

/* ---- where strings are ---------------------------------------------------------- */

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

/* Offset of the opening quote of the string or key yajl just passed. */
static size_t str_open(const jp_t *s, const unsigned char *str) {
  return in_input(s, str) ? (size_t)((const char *)str - s->p) - 1 : str_start(s);
}

/* ---- numbers ------------------------------------------------------------------------ */

/* A number's text as yajl lexed it (JSON's grammar). out NULL: check only. */
static int number_value(const char *text, size_t n, json_t **out) {
  jstrict_num_t num;
  int rc = jstrict_number(text, n, &num);
  if (rc != RIPPLE_OK || !out) return rc;
  *out = num.real ? json_real(num.d) : json_integer(num.i);
  return *out ? RIPPLE_OK : RIPPLE_ENOMEM;
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
  int escaped = !in_input(s, ukey);
  /* A NUL can only come from an escape. */
  if (escaped && jstrict_key(key, klen) != RIPPLE_OK) return jp_fail(s, RIPPLE_EJSON);
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
  if (s->depth >= JSTRICT_MAX_DEPTH) return jp_fail(s, RIPPLE_EJSON);
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

/* Runs yajl over the input; s->root holds the value on success. */
static int jp_run(jp_t *s) {
  size_t at;
  const char *why;
  if (jstrict_scan(s->p, s->n, JSTRICT_ALLOW_NUL, &at, &why) != RIPPLE_OK) return RIPPLE_EJSON;
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
  /* yajl's check for trailing garbage lets an unfinished token pass. */
  return jstrict_trailing(s->p, s->n, s->root_end, &at);
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
