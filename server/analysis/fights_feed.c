/*
 * fights_feed.c - see fights_feed.h.
 */
#include "analysis/fights_feed.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define FEED_DIFFS 64 /* diff entries read of one change; the detector keeps 8 */

static int is_update_span(const dec_batch_t *b, const dec_rec_t *r) {
  static const char op[] = "UPDATE", watch[] = "ripple-watch";
  if (r->operation.len != sizeof op - 1 || memcmp(dec_str(b, r->operation), op, sizeof op - 1) != 0)
    return 0;
  return !(r->service.len == sizeof watch - 1 &&
           memcmp(dec_str(b, r->service), watch, sizeof watch - 1) == 0);
}

/* ---- a span's attributes, read out of its canonical body ------------------------
 *
 * The body is the server's own encoding (ripplex/wire.h): "attributes" an
 * object of strings, escapes only for '"', '\\', control characters and
 * invalid bytes. Reading it with jansson cost five times its decoding per
 * update span (docs/benchmarks.md); this reads the few strings wanted in one
 * pass. In valid JSON the text "attributes":{ can only be that member's key
 * (a quote inside a string is escaped, and a string followed by ':' is a
 * key). */

/* The string at *p (just past its opening quote) into out, unescaped, and
 * *p past its closing quote: 1, or 0 when it did not fit (out is then not a
 * string); -1 when it is malformed. */
static int read_str(const char **p, const char *end, char *out, size_t cap) {
  size_t n = 0;
  int fits = 1;
  for (const char *s = *p; s < end; s++) {
    char c = *s;
    if (c == '"') {
      *p = s + 1;
      if (fits) out[n] = '\0';
      return fits;
    }
    if (c == '\\') {
      if (++s >= end) return -1;
      switch (*s) {
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': /* a control character or U+FFFD: not in a wanted value */
          if (end - s < 5) return -1;
          s += 4;
          fits = 0;
          continue;
        default: c = *s; /* '"', '\\', '/' */
      }
    }
    if (n + 1 < cap)
      out[n++] = c;
    else
      fits = 0;
  }
  return -1;
}

void fights_span_attrs(const char *body, size_t len, fights_attrs_t *a) {
  static const char key[] = "\"attributes\":{";
  const char *end = body + len, *p = memmem(body, len, key, sizeof key - 1);
  memset(a, 0, sizeof *a);
  if (!p) return;
  p += sizeof key - 1;
  while (p < end && *p == '"') {
    char k[32], v[FIGHTS_ATTR_MAX];
    p++;
    int want = read_str(&p, end, k, sizeof k);
    if (want < 0 || p >= end || *p != ':' || ++p >= end || *p != '"') return;
    p++;
    int ok = read_str(&p, end, v, sizeof v);
    if (ok < 0) return;
    char *dst = !want                           ? NULL
                : !strcmp(k, "uid")             ? a->uid
                : !strcmp(k, "resourceVersion") ? a->rv
                : !strcmp(k, "user")            ? a->user
                : !strcmp(k, "subresource")     ? a->sub
                                                : NULL;
    if (dst && ok) memcpy(dst, v, strlen(v) + 1); /* too long: not wanted */
    if (p < end && *p == ',') p++;
  }
}

int fights_feed_spans(fights_t *f, const dec_batch_t *b) {
  if (!f || b->kind != DEC_SPANS) return 0;
  int n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    if (!is_update_span(b, r)) continue;
    fights_attrs_t a;
    char service[FIGHTS_ATTR_MAX];
    if (r->service.len >= sizeof service) continue;
    memcpy(service, dec_str(b, r->service), r->service.len);
    service[r->service.len] = '\0';
    fights_span_attrs(b->body.p + r->body_off, r->body_len, &a);
    fights_write_t w = {a.uid, a.rv, service, a.user, a.sub, r->cpid, r->span_id, r->time};
    n += fights_add_write(f, &w);
  }
  return n;
}

static int feed_change(fights_t *f, const fact_t *v) {
  json_t *o = json_loadb(v->body, v->body_len, 0, NULL);
  const json_t *diff = json_object_get(o, "diff");
  fights_diff_t d[FEED_DIFFS];
  size_t nd = 0, i;
  const json_t *e;
  json_array_foreach(diff, i, e) {
    if (nd == FEED_DIFFS) break;
    const char *path = json_string_value(json_object_get(e, "path"));
    if (!path || json_is_true(json_object_get(e, "redacted")) || !fights_tracked(path)) continue;
    uint64_t h[2] = {FIGHTS_ABSENT, FIGHTS_ABSENT};
    static const char *const keys[] = {"old", "new"};
    for (int k = 0; k < 2; k++) {
      const json_t *val = json_object_get(e, keys[k]);
      char *s = val ? json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
      if (s) h[k] = fights_hash(s, strlen(s)); /* the text goes at once */
      free(s);
    }
    d[nd++] = (fights_diff_t){path, h[0], h[1]};
  }
  fights_change_t c = {v->uid, v->kind, v->ns, v->name, v->prev_rv, v->time, d, nd};
  int n = nd ? fights_add_change(f, &c) : 0;
  json_decref(o);
  return n;
}

int fights_feed_facts(fights_t *f, const det_batch_t *b) {
  if (!f) return 0;
  int n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const fact_t *v = &b->v[i];
    if (v->type == FACT_CHANGE && v->op && !strcmp(v->op, "update") && v->uid && v->prev_rv)
      n += feed_change(f, v);
  }
  return n;
}
