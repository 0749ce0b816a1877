/*
 * decode_ref.h - the trace server's first POST body decoder, on jansson's
 * tree, kept as the reference for fuzz_decode.c: the product's decoder
 * (server/decode.c, on yajl's event parser) must take and refuse exactly what
 * this one did, with the same errors and the same canonical records. It is
 * included by the one fuzz target that uses it, not built into the server.
 */
#ifndef RIPPLE_FUZZ_DECODE_REF_H
#define RIPPLE_FUZZ_DECODE_REF_H

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ingest/decode.h"
#include "ripplex/cpid.h"
#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"
#include "ripplex/wire.h"

typedef struct dctx {
  const dec_limits_t *lim;
  dec_error_t *err;
  long index;
} ref_ctx_t;

static int fail(ref_ctx_t *d, int rc, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(ref_ctx_t *d, int rc, const char *field, const char *fmt, ...) {
  d->err->index = d->index;
  snprintf(d->err->field, sizeof d->err->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err->msg, sizeof d->err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* A string member: required or optional (*out NULL when absent). */
static int get_str(ref_ctx_t *d, json_t *o, const char *key, int required, const char **out) {
  json_t *v = json_object_get(o, key);
  *out = NULL;
  if (!v || json_is_null(v)) {
    if (required) return fail(d, RIPPLE_EINVAL, key, "is required");
    return RIPPLE_OK;
  }
  if (!json_is_string(v)) return fail(d, RIPPLE_EINVAL, key, "must be a string");
  if (json_string_length(v) > d->lim->max_string)
    return fail(d, RIPPLE_ERANGE, key, "is longer than %zu bytes", d->lim->max_string);
  if (strlen(json_string_value(v)) != json_string_length(v))
    return fail(d, RIPPLE_EINVAL, key, "contains a NUL character");
  *out = json_string_value(v);
  return RIPPLE_OK;
}

static int get_cpid(ref_ctx_t *d, json_t *v, const char *field, ripple_cpid_t *out) {
  if (!json_is_string(v)) return fail(d, RIPPLE_EINVAL, field, "must be a CPID string");
  if (ripple_cpid_parse(json_string_value(v), json_string_length(v), out) != RIPPLE_OK)
    return fail(d, RIPPLE_EINVAL, field,
                "is not a CPID (a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)");
  return RIPPLE_OK;
}

/* Not held to max_string: the canonical form of a time (30 bytes) can be longer
 * than what was sent ("2026-11-21T22:06:30Z", 20), and a limit between the two
 * would make the server refuse its own output. */
static int get_time(ref_ctx_t *d, json_t *o, const char *key, int64_t *out) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return fail(d, RIPPLE_EINVAL, key, "is required");
  if (!json_is_string(v) ||
      ripple_time_parse(json_string_value(v), json_string_length(v), out) != RIPPLE_OK)
    return fail(d, RIPPLE_EINVAL, key,
                "is not an RFC 3339 time like 2026-11-21T22:06:30.123456789Z");
  return RIPPLE_OK;
}

static int get_span_id(ref_ctx_t *d, json_t *o, const char *key, int required, uint64_t *out) {
  const char *s;
  *out = 0;
  int rc = get_str(d, o, key, required, &s);
  if (rc != RIPPLE_OK || !s) return rc;
  uint64_t v = 0;
  size_t n = strlen(s);
  for (size_t i = 0; i < n && n == 16; i++) {
    char c = s[i];
    int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (h < 0) n = 0;
    v = v << 4 | (uint64_t)(h & 15);
  }
  if (n != 16 || v == 0)
    return fail(d, RIPPLE_EINVAL, key, "must be 16 lower-case hex digits, not all zero");
  *out = v;
  return RIPPLE_OK;
}

static int add_rec(dec_batch_t *b, const ripple_cpid_t *cpid, int64_t time, size_t src_off,
                   uint32_t nsrc, size_t body_off) {
  dec_rec_t *r = &b->rec[b->n++];
  r->cpid = *cpid;
  r->time = time;
  r->src_off = src_off;
  r->nsrc = nsrc;
  r->body_off = body_off;
  r->body_len = (uint32_t)(b->body.len - body_off);
  r->uid_off = r->uid_len = 0;
  r->has_trigger = 0;
  return b->body.oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

/* Added after the decoder was replaced: a root's object uid, for the roots
 * index, when dec_uid_ok takes it. */
static int ref_note_uid(dec_batch_t *b, const char *uid) {
  if (!uid || !dec_uid_ok(uid, strlen(uid))) return RIPPLE_OK;
  dec_rec_t *r = &b->rec[b->n - 1];
  r->uid_off = (uint32_t)b->uids.len;
  r->uid_len = (uint32_t)strlen(uid);
  sbuf_put(&b->uids, uid, strlen(uid));
  return b->uids.oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

/* The mergelog CPIDs of the request so far. A CPID has one mergelog: the graph
 * keeps the first, so a second one in the same request would be stored as a
 * row that nothing refers to, which no query returns and retention never
 * deletes. Open addressing over record indexes (+1; 0 is empty), hashed with a
 * per-request random seed so that no client can choose colliding CPIDs. */
typedef struct seen {
  size_t *slot;
  size_t mask;
  uint64_t seed;
} ref_seen_t;

static int seen_init(ref_seen_t *s, size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  s->mask = cap - 1;
  (void)rnd_bytes(&s->seed, sizeof s->seed); /* without it, a fixed seed still works */
  s->slot = calloc(cap, sizeof *s->slot);
  return s->slot ? RIPPLE_OK : RIPPLE_ENOMEM;
}

/* The index of an earlier record with record i's CPID, or -1 after noting it. */
static long seen_add(ref_seen_t *s, const dec_batch_t *b, size_t i) {
  const ripple_cpid_t *c = &b->rec[i].cpid;
  size_t h = (size_t)cpid_hash(c, s->seed) & s->mask;
  for (; s->slot[h]; h = (h + 1) & s->mask)
    if (cpid_eq(&b->rec[s->slot[h] - 1].cpid, c)) return (long)s->slot[h] - 1;
  s->slot[h] = i + 1;
  return -1;
}

static int ref_decode_rest(ref_ctx_t *d, json_t *o, dec_batch_t *b, ref_seen_t *seen,
                           ripple_mergelog_t *mlp, size_t off, size_t n, const ripple_cpid_t *trig,
                           size_t nt, int has_trigger);

/* Added after the decoder was replaced: a mergelog's trigger list (docs/api.md),
 * written plainly (quadratic), its flags set at b->trig + off. */
static int ref_trigger(ref_ctx_t *d, json_t *o, dec_batch_t *b, size_t off, size_t n,
                       ripple_cpid_t **list, size_t *nt) {
  json_t *tr = json_object_get(o, "trigger");
  *nt = 0;
  if (!tr || json_is_null(tr)) return RIPPLE_OK;
  if (!json_is_array(tr))
    return fail(d, RIPPLE_EINVAL, "trigger",
                "must be an array of CPIDs from sources (or left out: every source then)");
  size_t m = json_array_size(tr);
  ripple_cpid_t *t = calloc(m + 1, sizeof *t);
  if (!t) return RIPPLE_ENOMEM;
  *list = t;
  int rc = RIPPLE_OK;
  for (size_t i = 0; i < m && i < d->lim->max_sources && rc == RIPPLE_OK; i++) {
    char field[32];
    snprintf(field, sizeof field, "trigger[%zu]", i);
    rc = get_cpid(d, json_array_get(tr, i), field, &t[i]);
  }
  if (rc != RIPPLE_OK) return rc;
  if (m == 0)
    return fail(d, RIPPLE_EINVAL, "trigger",
                "must name at least one of sources (or be left out: every source then)");
  if (m > n)
    return fail(d, RIPPLE_EINVAL, "trigger",
                "has %zu entries; sources has %zu, and each entry must be one of them", m, n);
  uint8_t *f = b->trig + off;
  memset(f, 0, n);
  for (size_t i = 0; i < m; i++) {
    char field[32];
    snprintf(field, sizeof field, "trigger[%zu]", i);
    size_t at = 0;
    while (at < n && !cpid_eq(&b->src[off + at], &t[i])) at++;
    if (at == n) return fail(d, RIPPLE_EINVAL, field, "is not one of sources");
    if (f[at]) return fail(d, RIPPLE_EINVAL, field, "names a source an earlier entry names");
    f[at] = 1;
  }
  *nt = m;
  return RIPPLE_OK;
}

static int decode_mergelog(ref_ctx_t *d, json_t *o, dec_batch_t *b, ref_seen_t *seen) {
  ripple_mergelog_t ml = {0};
  int rc = get_cpid(d, json_object_get(o, "cpid"), "cpid", &ml.cpid);
  if (rc != RIPPLE_OK) return rc;
  json_t *src = json_object_get(o, "sources");
  if (!json_is_array(src))
    return fail(d, RIPPLE_EINVAL, "sources", "must be an array (empty for a root)");
  size_t n = json_array_size(src);
  if (n > d->lim->max_sources)
    return fail(d, RIPPLE_ERANGE, "sources", "has %zu entries; at most %zu are accepted", n,
                d->lim->max_sources);
  size_t off = b->nsrc;
  ripple_cpid_t *s = realloc(b->src, (off + n + 1) * sizeof *s);
  if (!s) return RIPPLE_ENOMEM;
  b->src = s;
  uint8_t *fl = realloc(b->trig, off + n + 1);
  if (!fl) return RIPPLE_ENOMEM;
  b->trig = fl;
  for (size_t i = 0; i < n; i++) {
    char field[32];
    snprintf(field, sizeof field, "sources[%zu]", i);
    if ((rc = get_cpid(d, json_array_get(src, i), field, &s[off + i])) != RIPPLE_OK) return rc;
    if (cpid_eq(&s[off + i], &ml.cpid))
      return fail(d, RIPPLE_EINVAL, field, "equals cpid: a CPID cannot merge into itself");
  }
  ripple_cpid_t *trig = NULL;
  size_t nt = 0;
  rc = ref_trigger(d, o, b, off, n, &trig, &nt);
  int has_trigger = rc == RIPPLE_OK && json_is_array(json_object_get(o, "trigger"));
  if (rc == RIPPLE_OK) rc = ref_decode_rest(d, o, b, seen, &ml, off, n, trig, nt, has_trigger);
  free(trig);
  return rc;
}

static int ref_decode_rest(ref_ctx_t *d, json_t *o, dec_batch_t *b, ref_seen_t *seen,
                           ripple_mergelog_t *mlp, size_t off, size_t n, const ripple_cpid_t *trig,
                           size_t nt, int has_trigger) {
  ripple_mergelog_t ml = *mlp;
  ripple_objref_t obj = {0};
  ripple_cpid_t *s = b->src;
  int rc;
  b->nsrc += n;
  if ((rc = get_time(d, o, "time", &ml.time_ns)) != RIPPLE_OK) return rc;
  if ((rc = get_str(d, o, "component", 0, &ml.component)) != RIPPLE_OK) return rc;
  json_t *jo = json_object_get(o, "object");
  if (jo && !json_is_null(jo)) {
    if (!json_is_object(jo)) return fail(d, RIPPLE_EINVAL, "object", "must be an object");
    static const char *keys[] = {"apiVersion", "kind", "namespace", "name", "uid"};
    const char **dst[] = {&obj.api_version, &obj.kind, &obj.namespace_, &obj.name, &obj.uid};
    for (int i = 0; i < 5; i++)
      if ((rc = get_str(d, jo, keys[i], 0, dst[i])) != RIPPLE_OK) {
        char field[32];
        snprintf(field, sizeof field, "object.%s", keys[i]);
        snprintf(d->err->field, sizeof d->err->field, "%s", field);
        return rc;
      }
    ml.object = &obj;
  }
  ml.sources = s + off;
  ml.nsources = n;
  size_t body_off = b->body.len, uids_len = b->uids.len;
  ml.trigger = has_trigger ? trig : NULL;
  ml.ntrigger = has_trigger ? nt : 0;
  wire_mergelog(&b->body, &ml);
  if ((rc = add_rec(b, &ml.cpid, ml.time_ns, off, (uint32_t)n, body_off)) != RIPPLE_OK) return rc;
  b->rec[b->n - 1].has_trigger = (uint8_t)has_trigger;
  if (n == 0 && (rc = ref_note_uid(b, obj.uid)) != RIPPLE_OK) return rc;
  long prev = seen_add(seen, b, b->n - 1);
  if (prev >= 0) { /* changed with the decoder: the first mergelog of a CPID is kept */
    b->n--;
    b->nsrc = off;
    b->body.len = body_off;
    b->uids.len = uids_len;
    b->dups++;
  }
  return RIPPLE_OK;
}

static int decode_span(ref_ctx_t *d, json_t *o, dec_batch_t *b, ripple_attr_t *attrs) {
  ripple_span_rec_t sp = {0};
  int rc = get_cpid(d, json_object_get(o, "cpid"), "cpid", &sp.cpid);
  if (rc == RIPPLE_OK) rc = get_span_id(d, o, "span_id", 1, &sp.span_id);
  if (rc == RIPPLE_OK) rc = get_span_id(d, o, "parent_id", 0, &sp.parent_id);
  if (rc == RIPPLE_OK) rc = get_str(d, o, "service", 1, &sp.service);
  if (rc == RIPPLE_OK) rc = get_str(d, o, "name", 1, &sp.name);
  if (rc == RIPPLE_OK) rc = get_time(d, o, "start", &sp.start_ns);
  if (rc == RIPPLE_OK) rc = get_time(d, o, "end", &sp.end_ns);
  if (rc != RIPPLE_OK) return rc;
  if (sp.end_ns < sp.start_ns) return fail(d, RIPPLE_EINVAL, "end", "is before start");
  json_t *ja = json_object_get(o, "attributes");
  if (ja && !json_is_null(ja)) {
    if (!json_is_object(ja))
      return fail(d, RIPPLE_EINVAL, "attributes", "must be an object of strings");
    if (json_object_size(ja) > d->lim->max_attrs)
      return fail(d, RIPPLE_ERANGE, "attributes", "has more than %zu entries", d->lim->max_attrs);
    const char *k;
    json_t *v;
    json_object_foreach(ja, k, v) {
      char field[64];
      snprintf(field, sizeof field, "attributes.%.40s", k);
      if (!json_is_string(v)) return fail(d, RIPPLE_EINVAL, field, "must be a string");
      if (strlen(k) > d->lim->max_string || json_string_length(v) > d->lim->max_string)
        return fail(d, RIPPLE_ERANGE, field, "is longer than %zu bytes", d->lim->max_string);
      attrs[sp.nattrs++] = (ripple_attr_t){k, json_string_value(v)};
    }
    sp.attrs = attrs;
  }
  size_t body_off = b->body.len;
  wire_span(&b->body, &sp);
  return add_rec(b, &sp.cpid, sp.start_ns, 0, 0, body_off);
}

static int ref_decode(dec_kind_t kind, const char *json, size_t len, const dec_limits_t *lim,
                      dec_batch_t *out, dec_error_t *err) {
  memset(out, 0, sizeof *out);
  memset(err, 0, sizeof *err);
  ref_ctx_t d = {lim, err, -1};
  out->kind = kind;
  json_error_t je;
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return fail(&d, RIPPLE_EJSON, "", "malformed JSON at line %d, column %d: %s", je.line,
                je.column, je.text);
  int rc = RIPPLE_OK;
  ripple_attr_t *attrs = NULL;
  ref_seen_t seen = {0};
  if (!json_is_array(root)) {
    rc = fail(&d, RIPPLE_EJSON, "", "the body must be a JSON array of %s",
              kind == DEC_MERGELOGS ? "mergelogs" : "spans");
    goto done;
  }
  size_t n = json_array_size(root);
  if (n > lim->max_records) {
    rc = fail(&d, RIPPLE_ERANGE, "", "%zu records in one request; at most %zu are accepted", n,
              lim->max_records);
    goto done;
  }
  out->rec = malloc((n ? n : 1) * sizeof *out->rec);
  attrs = malloc((lim->max_attrs + 1) * sizeof *attrs);
  if (!out->rec || !attrs || (kind == DEC_MERGELOGS && seen_init(&seen, n) != RIPPLE_OK)) {
    rc = RIPPLE_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < n && rc == RIPPLE_OK; i++) {
    d.index = (long)i;
    json_t *o = json_array_get(root, i);
    if (!json_is_object(o))
      rc = fail(&d, RIPPLE_EINVAL, "", "must be an object");
    else if (kind == DEC_MERGELOGS)
      rc = decode_mergelog(&d, o, out, &seen);
    else
      rc = decode_span(&d, o, out, attrs);
  }
done:
  free(seen.slot);
  free(attrs);
  json_decref(root);
  if (rc != RIPPLE_OK) {
    if (rc == RIPPLE_ENOMEM && !err->msg[0]) snprintf(err->msg, sizeof err->msg, "out of memory");
    dec_batch_free(out);
  }
  return rc;
}

#endif
