/*
 * wdiff.c - field diffs and snapshots of objects for change records
 * (wdiff.h).
 *
 * Both walk the object with a node per path that knows what the path is:
 * left out (resourceVersion, managedFields, ripple's annotations), redacted
 * (a pattern matched, or a key of a Secret's data) or kept. The object is
 * outside input and may nest deeper than the stack allows, so the walk stops
 * WD_DEPTH levels down; what lies deeper is compared and measured with an
 * explicit stack on the heap, and copied only when it nests at most WD_DEPTH
 * levels itself (jansson's copy recurses).
 */
#include "wdiff.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

#define WD_DEPTH 64   /* levels walked; also the most a copied deeper value nests */
#define WD_SEGS 64    /* segments in a pattern */
#define WD_PATLEN 512 /* bytes in a pattern */
#define WD_STOP 1     /* max_changes reached: unwind, keeping what was found */
#define WD_REDACTED "(redacted)"
#define WD_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define WD_ANN_PREFIX "cpid.ripple.dev/"

/* A checked pattern: segment i is s[off[i] + 1, off[i + 1]), still escaped. */
typedef struct wpat {
  const char *s;
  size_t n;
  uint16_t off[WD_SEGS + 1];
} wpat_t;

typedef struct wd {
  wpat_t *pat;
  size_t npat;
  wdiff_limits_t lim;
  int secret;
  sbuf_t path; /* the JSON Pointer of the node being diffed */
  json_t *out;
  int truncated;
} wd_t;

/* What a path is. Roles mark the few paths whose children are special. */
enum { R_ROOT, R_META, R_ANN, R_DATA, R_PLAIN };
enum { K_KEEP, K_SKIP, K_REDACT };

typedef struct node {
  uint64_t alive; /* patterns whose segments so far match the path */
  int role, depth;
} node_t;

/* ---- patterns ---------------------------------------------------------- */

static int pat_fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pat_fail(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return RIPPLE_EINVAL;
}

/* Why segment s[0, n) breaks the rules, or NULL when it does not. */
static const char *seg_bad(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '~' && (i + 1 == n || (s[i + 1] != '0' && s[i + 1] != '1')))
      return "\"~\" must be followed by 0 (for ~) or 1 (for /)";
  if (n > 1 && memchr(s, '*', n))
    return "\"*\" stands for one whole segment and cannot be part of a key";
  return NULL;
}

static int pat_parse(const char *p, wpat_t *pt, char *err, size_t cap) {
  if (!p || !*p)
    return pat_fail(err, cap,
                    "redaction pattern is empty; write a JSON Pointer such as /spec/template");
  size_t len = strlen(p);
  if (len > WD_PATLEN)
    return pat_fail(err, cap, "redaction pattern \"%.40s...\" is %zu bytes; at most %d are allowed",
                    p, len, WD_PATLEN);
  if (p[0] != '/')
    return pat_fail(
        err, cap,
        "redaction pattern \"%s\" must start with \"/\" (a JSON Pointer such as /spec/template)",
        p);
  pt->s = p, pt->n = 0;
  for (size_t i = 0, j; i < len; i = j) {
    if (pt->n == WD_SEGS)
      return pat_fail(err, cap, "redaction pattern \"%.40s...\" has more than %d segments", p,
                      WD_SEGS);
    pt->off[pt->n++] = (uint16_t)i;
    for (j = i + 1; j < len && p[j] != '/'; j++) continue;
    if (j == i + 1)
      return pat_fail(
          err, cap, "redaction pattern \"%s\" has an empty segment (\"//\" or a \"/\" at the end)",
          p);
    const char *why = seg_bad(p + i + 1, j - i - 1);
    if (why) return pat_fail(err, cap, "redaction pattern \"%s\": %s", p, why);
  }
  pt->off[pt->n] = (uint16_t)len;
  return RIPPLE_OK;
}

int wdiff_pattern_check(const char *pattern, char *err, size_t cap) {
  wpat_t pt;
  return pat_parse(pattern, &pt, err, cap);
}

/* Whether the escaped pattern segment s[0, n) names key k. */
static int seg_match(const char *s, size_t n, const char *k, size_t kn) {
  if (n == 1 && s[0] == '*') return 1;
  size_t i = 0, j = 0;
  for (; i < n && j < kn; i++, j++) {
    char c = s[i];
    if (c == '~') c = s[++i] == '0' ? '~' : '/';
    if (c != k[j]) return 0;
  }
  return i == n && j == kn;
}

/* ---- nodes ------------------------------------------------------------- */

static int key_is(const char *k, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(k, lit, n) == 0;
}

static int wd_secret(const json_t *o) {
  const char *kind = json_string_value(json_object_get(o, "kind"));
  const json_t *av = json_object_get(o, "apiVersion");
  /* Redact when in doubt: only another group's kind named Secret is not one. */
  return kind && strcmp(kind, "Secret") == 0 &&
         (!json_is_string(av) || strcmp(json_string_value(av), "v1") == 0);
}

/* What key k below p is: K_SKIP (never stored), K_REDACT, or K_KEEP with *c set. */
static int wd_child(const wd_t *w, const node_t *p, const char *k, size_t kn, node_t *c) {
  *c = (node_t){.alive = 0, .role = R_PLAIN, .depth = p->depth + 1};
  if (p->role == R_DATA) return K_REDACT;
  if (p->role == R_META && (key_is(k, kn, "resourceVersion") || key_is(k, kn, "managedFields")))
    return K_SKIP;
  /* kubectl apply keeps a Secret's whole manifest, data included, here. */
  if (p->role == R_ANN && w->secret && key_is(k, kn, WD_LAST_APPLIED)) return K_REDACT;
  if (p->role == R_ANN && kn >= strlen(WD_ANN_PREFIX) &&
      memcmp(k, WD_ANN_PREFIX, strlen(WD_ANN_PREFIX)) == 0)
    return K_SKIP;
  if (p->role == R_ROOT && key_is(k, kn, "metadata")) c->role = R_META;
  if (p->role == R_ROOT && w->secret && (key_is(k, kn, "data") || key_is(k, kn, "stringData")))
    c->role = R_DATA;
  if (p->role == R_META && key_is(k, kn, "annotations")) c->role = R_ANN;
  for (size_t i = 0; i < w->npat; i++) {
    const wpat_t *pt = &w->pat[i];
    if (!(p->alive >> i & 1) || (size_t)p->depth >= pt->n) continue;
    size_t at = pt->off[p->depth];
    if (!seg_match(pt->s + at + 1, pt->off[p->depth + 1] - at - 1, k, kn)) continue;
    if (pt->n == (size_t)c->depth) return K_REDACT;
    c->alive |= (uint64_t)1 << i;
  }
  return K_KEEP;
}

/* A Secret's data is an object of keys; anything else there is hidden whole. */
static int wd_hidden(const node_t *n, const json_t *v) {
  return n->role == R_DATA && v && !json_is_object(v);
}

static node_t wd_root(const wd_t *w) {
  uint64_t all = w->npat == 64 ? UINT64_MAX : ((uint64_t)1 << w->npat) - 1;
  return (node_t){.alive = all, .role = R_ROOT, .depth = 0};
}

/* ---- deep values without recursion ------------------------------------- */

typedef struct wfr {
  const json_t *a, *b;
  void *it;
  size_t i;
} wfr_t;

typedef struct wstk {
  wfr_t *f;
  size_t n, cap;
} wstk_t;

static int stk_push(wstk_t *s, const json_t *a, const json_t *b) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    wfr_t *f = realloc(s->f, cap * sizeof *f);
    if (!f) return RIPPLE_ENOMEM;
    s->f = f, s->cap = cap;
  }
  /* jansson's iterators take a non-const object but do not change it. */
  s->f[s->n++] = (wfr_t){.a = a, .b = b, .it = json_object_iter((json_t *)a), .i = 0};
  return RIPPLE_OK;
}

/* The frame's next child, with its key for an object; NULL when done. */
static const json_t *fr_next(wfr_t *f, const char **k, size_t *kn) {
  if (json_is_array(f->a))
    return f->i < json_array_size(f->a) ? json_array_get(f->a, f->i++) : NULL;
  void *it = f->it;
  if (!it) return NULL;
  f->it = json_object_iter_next((json_t *)f->a, it);
  *k = json_object_iter_key(it), *kn = json_object_iter_key_len(it);
  return json_object_iter_value(it);
}

static int is_box(const json_t *v) { return json_is_object(v) || json_is_array(v); }

static size_t box_size(const json_t *v) {
  return json_is_object(v) ? json_object_size(v) : json_array_size(v);
}

/* Bytes of a JSON string literal as jansson writes it (UTF-8 left as is). */
static size_t str_size(const char *s, size_t n) {
  size_t len = 2;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
      len += 2;
    else
      len += c < 0x20 ? 6 : 1;
  }
  return len;
}

static size_t scalar_size(const json_t *v) {
  if (json_is_string(v)) return str_size(json_string_value(v), json_string_length(v));
  char tmp[64];
  return json_dumpb(v, tmp, sizeof tmp, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* The size of v's compact JSON text and how deep it nests (0 for a scalar). */
static int wd_measure(const json_t *v, size_t *size, size_t *nest) {
  wstk_t s = {0};
  size_t n = 0, d = 0;
  while (v) {
    if (!is_box(v)) {
      n += scalar_size(v);
    } else {
      n += 2 + (box_size(v) ? box_size(v) - 1 : 0);
      if (stk_push(&s, v, NULL) != RIPPLE_OK) {
        free(s.f);
        return RIPPLE_ENOMEM;
      }
      if (s.n > d) d = s.n;
    }
    for (v = NULL; s.n && !v;) {
      const char *k = NULL;
      size_t kn = 0;
      if (!(v = fr_next(&s.f[s.n - 1], &k, &kn))) s.n--;
      if (v && k) n += str_size(k, kn) + 1;
    }
  }
  free(s.f);
  *size = n, *nest = d;
  return RIPPLE_OK;
}

/* 1 if a and b are the same JSON value, 0 if not, or RIPPLE_ENOMEM. */
static int wd_equal(const json_t *a, const json_t *b) {
  wstk_t s = {0};
  int eq = 1;
  while (a && eq == 1) {
    if (json_typeof(a) != json_typeof(b) ||
        (is_box(a) ? box_size(a) != box_size(b) : !json_equal(a, b)))
      eq = 0;
    else if (is_box(a) && stk_push(&s, a, b) != RIPPLE_OK)
      eq = RIPPLE_ENOMEM;
    for (a = NULL; eq == 1 && s.n && !a;) {
      wfr_t *f = &s.f[s.n - 1];
      const char *k = NULL;
      size_t kn = 0;
      if (!(a = fr_next(f, &k, &kn)))
        s.n--;
      else if (k)
        eq = (b = json_object_getn(f->b, k, kn)) != NULL;
      else
        b = json_array_get(f->b, f->i - 1);
    }
  }
  free(s.f);
  return eq;
}

/* ---- copies ------------------------------------------------------------ */

static json_t *wd_truncated(size_t size) {
  return json_pack("{s:I}", "truncated", (json_int_t)size);
}

/* v itself if its text fits max and it nests shallowly enough to copy. */
static json_t *wd_cut(const json_t *v, size_t max) {
  size_t size, nest;
  if (wd_measure(v, &size, &nest) != RIPPLE_OK) return NULL;
  return size <= max && nest <= WD_DEPTH ? json_deep_copy(v) : wd_truncated(size);
}

static json_t *wd_copy(const wd_t *w, const node_t *n, const json_t *v);

static int wd_copy_child(const wd_t *w, const node_t *n, json_t *c, const char *k, size_t kn,
                         const json_t *v) {
  node_t cn;
  int how = wd_child(w, n, k, kn, &cn);
  if (how == K_SKIP) return 0;
  json_t *x = how == K_REDACT ? json_string(WD_REDACTED) : wd_copy(w, &cn, v);
  return json_is_object(c) ? json_object_setn_new(c, k, kn, x) : json_array_append_new(c, x);
}

/* v as a record may hold it: keys left out, redactions applied, long leaves
 * (and anything WD_DEPTH levels down) cut to max_value. NULL: out of memory. */
static json_t *wd_copy(const wd_t *w, const node_t *n, const json_t *v) {
  if (wd_hidden(n, v)) return json_string(WD_REDACTED);
  if (!is_box(v) || n->depth >= WD_DEPTH) return wd_cut(v, w->lim.max_value);
  json_t *c = json_is_object(v) ? json_object() : json_array();
  int rc = c ? 0 : -1;
  if (json_is_object(v)) {
    const char *k;
    size_t kn;
    json_t *x;
    json_object_keylen_foreach((json_t *)v, k, kn, x) {
      if (rc == 0) rc = wd_copy_child(w, n, c, k, kn, x);
    }
  } else {
    char k[24];
    for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
      int kn = snprintf(k, sizeof k, "%zu", i);
      rc = wd_copy_child(w, n, c, k, (size_t)kn, json_array_get(v, i));
    }
  }
  if (rc == 0) return c;
  json_decref(c);
  return NULL;
}

/* An old or new value of a diff entry: the copy, cut whole to max_value. */
static json_t *wd_value(const wd_t *w, const node_t *n, const json_t *v) {
  json_t *c = wd_copy(w, n, v);
  size_t size = 0, nest;
  if (c && wd_measure(c, &size, &nest) != RIPPLE_OK) {
    json_decref(c);
    c = NULL;
  }
  if (!c || size <= w->lim.max_value) return c;
  json_decref(c);
  return wd_truncated(size);
}

/* ---- diffs ------------------------------------------------------------- */

/* Paths are ordered segment by segment: keys that are decimal numbers (as
 * array indexes are) first, in numeric order, then the others in byte order. */
static int all_digits(const char *k, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (k[i] < '0' || k[i] > '9') return 0;
  return n > 0;
}

static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
  int da = all_digits(a, an), db = all_digits(b, bn);
  if (da != db) return db - da;
  if (da && an != bn) return an < bn ? -1 : 1;
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

typedef struct wkey {
  const char *k;
  size_t n;
  const json_t *v;
} wkey_t;

static int wkey_cmp(const void *x, const void *y) {
  const wkey_t *a = x, *b = y;
  return key_cmp(a->k, a->n, b->k, b->n);
}

/* o's keys in path order (free()); NULL: out of memory. */
static wkey_t *wd_keys(const json_t *o, size_t *n) {
  wkey_t *ks = malloc((json_object_size(o) + 1) * sizeof *ks);
  if (!ks) return NULL;
  size_t i = 0, kn;
  const char *k;
  json_t *v;
  json_object_keylen_foreach((json_t *)o, k, kn, v) ks[i++] = (wkey_t){.k = k, .n = kn, .v = v};
  qsort(ks, i, sizeof *ks, wkey_cmp);
  *n = i;
  return ks;
}

static int wd_emit(wd_t *w, const node_t *n, const json_t *a, const json_t *b, int redacted) {
  if (json_array_size(w->out) == w->lim.max_changes) {
    w->truncated = 1;
    return WD_STOP;
  }
  json_t *e = w->path.oom ? NULL : json_object();
  int bad = !e || json_object_set_new(e, "path", json_stringn(w->path.p, w->path.len));
  if (!bad && redacted) bad = json_object_set_new(e, "redacted", json_true());
  if (!bad && !redacted && a) bad = json_object_set_new(e, "old", wd_value(w, n, a));
  if (!bad && !redacted && b) bad = json_object_set_new(e, "new", wd_value(w, n, b));
  if (!bad && json_array_append_new(w->out, e) == 0) return RIPPLE_OK;
  json_decref(e);
  return RIPPLE_ENOMEM;
}

/* One entry without values for a redacted path, if anything below it changed. */
static int wd_redacted(wd_t *w, const json_t *a, const json_t *b) {
  int eq = a && b ? wd_equal(a, b) : 0;
  return eq < 0 ? eq : eq ? RIPPLE_OK : wd_emit(w, NULL, NULL, NULL, 1);
}

static void wd_push(wd_t *w, const char *k, size_t kn) {
  sbuf_putc(&w->path, '/');
  for (size_t i = 0, run = 0; i <= kn; i++) {
    if (i < kn && k[i] != '~' && k[i] != '/') continue;
    sbuf_put(&w->path, k + run, i - run);
    if (i < kn) sbuf_put(&w->path, k[i] == '~' ? "~0" : "~1", 2);
    run = i + 1;
  }
}

static int wd_node(wd_t *w, const node_t *n, const json_t *a, const json_t *b);

/* Key k below p, present in old (a), new (b) or both. */
static int wd_pair(wd_t *w, const node_t *p, const char *k, size_t kn, const json_t *a,
                   const json_t *b) {
  node_t c;
  int how = wd_child(w, p, k, kn, &c), rc;
  if (how == K_SKIP) return RIPPLE_OK;
  size_t mark = w->path.len;
  wd_push(w, k, kn);
  if (how == K_REDACT || wd_hidden(&c, a) || wd_hidden(&c, b))
    rc = wd_redacted(w, a, b);
  else if (!a || !b)
    rc = wd_emit(w, &c, a, b, 0);
  else
    rc = wd_node(w, &c, a, b);
  w->path.len = mark;
  return rc;
}

static int wd_objects(wd_t *w, const node_t *n, const json_t *a, const json_t *b) {
  size_t na = 0, nb = 0, i = 0, j = 0;
  wkey_t *ka = wd_keys(a, &na), *kb = wd_keys(b, &nb);
  int rc = ka && kb ? RIPPLE_OK : RIPPLE_ENOMEM;
  while (rc == RIPPLE_OK && (i < na || j < nb)) {
    int c = i == na ? 1 : j == nb ? -1 : key_cmp(ka[i].k, ka[i].n, kb[j].k, kb[j].n);
    const wkey_t *k = c <= 0 ? &ka[i] : &kb[j];
    rc = wd_pair(w, n, k->k, k->n, c <= 0 ? ka[i].v : NULL, c >= 0 ? kb[j].v : NULL);
    i += c <= 0, j += c >= 0;
  }
  free(ka);
  free(kb);
  return rc;
}

static int wd_arrays(wd_t *w, const node_t *n, const json_t *a, const json_t *b) {
  size_t na = json_array_size(a), nb = json_array_size(b);
  int rc = RIPPLE_OK;
  char k[24];
  for (size_t i = 0; rc == RIPPLE_OK && i < (na > nb ? na : nb); i++) {
    int kn = snprintf(k, sizeof k, "%zu", i);
    rc = wd_pair(w, n, k, (size_t)kn, json_array_get(a, i), json_array_get(b, i));
  }
  return rc;
}

/* Both present: descend while both are the same kind of container and the
 * walk is shallow enough, else one entry if they differ. */
static int wd_node(wd_t *w, const node_t *n, const json_t *a, const json_t *b) {
  if (n->depth < WD_DEPTH && json_is_object(a) && json_is_object(b)) return wd_objects(w, n, a, b);
  if (n->depth < WD_DEPTH && json_is_array(a) && json_is_array(b)) return wd_arrays(w, n, a, b);
  int eq = wd_equal(a, b);
  return eq < 0 ? eq : eq ? RIPPLE_OK : wd_emit(w, n, a, b, 0);
}

/* ---- the API ----------------------------------------------------------- */

static int wd_init(wd_t *w, const wdiff_redact_t *r, const wdiff_limits_t *lim, int secret) {
  memset(w, 0, sizeof *w);
  if (lim) w->lim = *lim;
  if (!w->lim.max_changes) w->lim.max_changes = 256;
  if (!w->lim.max_value) w->lim.max_value = 1024;
  if (!w->lim.max_snapshot) w->lim.max_snapshot = 65536;
  w->secret = secret;
  sbuf_init(&w->path);
  if (!r || !r->n) return RIPPLE_OK;
  if (r->n > WDIFF_REDACT_MAX) return RIPPLE_EINVAL;
  if (!(w->pat = calloc(r->n, sizeof *w->pat))) return RIPPLE_ENOMEM;
  w->npat = r->n;
  for (size_t i = 0; i < r->n; i++)
    if (pat_parse(r->pattern[i], &w->pat[i], NULL, 0) != RIPPLE_OK) return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

static void wd_done(wd_t *w) {
  free(w->pat);
  sbuf_free(&w->path);
  json_decref(w->out);
}

int wdiff_diff(const json_t *old, const json_t *new_, const wdiff_redact_t *r,
               const wdiff_limits_t *lim, json_t **out, int *truncated) {
  if (!json_is_object(old) || !json_is_object(new_) || !out) return RIPPLE_EINVAL;
  wd_t w;
  int rc = wd_init(&w, r, lim, wd_secret(old) || wd_secret(new_));
  if (rc == RIPPLE_OK) rc = (w.out = json_array()) ? RIPPLE_OK : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) {
    node_t root = wd_root(&w);
    rc = wd_objects(&w, &root, old, new_);
  }
  if (rc == WD_STOP) rc = RIPPLE_OK;
  if (rc == RIPPLE_OK) {
    *out = w.out, w.out = NULL;
    if (truncated) *truncated = w.truncated;
  }
  wd_done(&w);
  return rc;
}

int wdiff_snapshot(const json_t *obj, const wdiff_redact_t *r, const wdiff_limits_t *lim,
                   json_t **out, int *truncated) {
  if (!json_is_object(obj) || !out) return RIPPLE_EINVAL;
  wd_t w;
  int rc = wd_init(&w, r, lim, wd_secret(obj)), cut = 0;
  json_t *c = NULL;
  size_t size = 0, nest;
  if (rc == RIPPLE_OK) {
    node_t root = wd_root(&w);
    c = wd_copy(&w, &root, obj);
    rc = c ? wd_measure(c, &size, &nest) : RIPPLE_ENOMEM;
  }
  if (rc == RIPPLE_OK && size > w.lim.max_snapshot) {
    json_t *md = json_object_get(c, "metadata"), *m = json_object();
    if (m && md && json_object_set(m, "metadata", md) != 0) json_decref(m), m = NULL;
    json_decref(c);
    c = m, cut = 1;
    rc = c ? RIPPLE_OK : RIPPLE_ENOMEM;
  }
  wd_done(&w);
  if (rc != RIPPLE_OK) {
    json_decref(c);
    return rc;
  }
  *out = c;
  if (truncated) *truncated = cut;
  return RIPPLE_OK;
}

/* Each value of o (an object) redacted, or o whole when it is not an object. */
static int redact_values(json_t *parent, const char *key) {
  json_t *o = json_object_get(parent, key);
  if (!o) return RIPPLE_OK;
  if (!json_is_object(o))
    return json_object_set_new(parent, key, json_string(WD_REDACTED)) ? RIPPLE_ENOMEM : RIPPLE_OK;
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    if (json_object_set_new(o, k, json_string(WD_REDACTED)) != 0) return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

int wdiff_secret_redact(json_t *obj) {
  if (!json_is_object(obj) || !wd_secret(obj)) return RIPPLE_EINVAL;
  json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
  int rc = redact_values(obj, "data");
  if (rc == RIPPLE_OK) rc = redact_values(obj, "stringData");
  if (rc == RIPPLE_OK && json_is_object(ann) && json_object_get(ann, WD_LAST_APPLIED) &&
      json_object_set_new(ann, WD_LAST_APPLIED, json_string(WD_REDACTED)) != 0)
    rc = RIPPLE_ENOMEM;
  return rc;
}
