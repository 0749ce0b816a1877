/*
 * decode.c - see decode.h. The wire format is docs/api.md.
 *
 * The body is read in one pass with yajl's event (SAX) parser: its callbacks
 * fill the record being read field by field, and when the record's object
 * closes it is checked and re-encoded with the wire encoder. No tree is built:
 * a tree of small allocations per request was most of the server's CPU time.
 *
 * The contract was set by the decoder this replaced (jansson with
 * JSON_REJECT_DUPLICATES), and yajl is more lenient than jansson in a few
 * places. The strict JSON front end (ripplex/jstrict.h) closes them: a scan
 * of the body before yajl runs refuses invalid UTF-8, \u0000, unpaired
 * surrogate escapes and vertical tab or form feed as white space; the
 * callbacks refuse numbers beyond int64 or double and nesting deeper than
 * 2048 values; after the parse only white space may follow the array. This
 * file adds the check that is the decoder's own:
 *  - duplicate keys, in any object at any depth: a bit per known key of a
 *    record or its object, and the other keys of each open object kept until
 *    it closes and compared then (sorted when there are many, so no body can
 *    make this quadratic).
 * Every such body is refused as malformed JSON, as before.
 *
 * What a record becomes in the batch, and the one mergelog per CPID rule, are
 * decode_batch.c's.
 *
 * Refusals keep their order of precedence: malformed JSON anywhere in the body
 * wins over a body that is not an array, which wins over too many records,
 * which wins over the first bad record. So after the first bad record the
 * parse goes on, checking syntax only.
 */
#include "ingest/decode.h"
#include "ingest/decode_batch.h"
#include "ingest/decode_check.h"

#include "ripplex/cpid.h"
#include "ripplex/jstrict.h"
#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"
#include "ripplex/wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define NONE ((size_t)-1)

typedef enum { V_ABSENT, V_NULL, V_STRING, V_ARRAY, V_OBJECT, V_OTHER } vtype_t;
typedef enum { SUB_NONE, SUB_SOURCES, SUB_TRIGGER, SUB_OBJECT, SUB_ATTRS } sub_t;
typedef enum { TOP_NONE, TOP_ARRAY, TOP_OTHER } top_t;

/* A field as it came: its type, and for a string its length, whether it parsed
 * (a CPID or a time) and where it is kept (NONE: not kept, too long). */
typedef struct sval {
  vtype_t type;
  int ok;
  size_t len;
  size_t off; /* into dctx_t.str */
} sval_t;

typedef struct key {
  const char *s;
  size_t len;
} fkey_t;

#define KEY(s) \
  { (s), sizeof(s) - 1 }
enum { M_CPID, M_SOURCES, M_TIME, M_COMPONENT, M_OBJECT, M_TRIGGER };
static const fkey_t ml_keys[] = {KEY("cpid"),      KEY("sources"), KEY("time"),
                                 KEY("component"), KEY("object"),  KEY("trigger")};
enum { S_CPID, S_SPAN_ID, S_PARENT_ID, S_SERVICE, S_NAME, S_START, S_END, S_ATTRS };
static const fkey_t sp_keys[] = {KEY("cpid"), KEY("span_id"), KEY("parent_id"), KEY("service"),
                                 KEY("name"), KEY("start"),   KEY("end"),       KEY("attributes")};
static const fkey_t obj_keys[] = {KEY("apiVersion"), KEY("kind"), KEY("namespace"), KEY("name"),
                                  KEY("uid")};
#define NFIELDS 8

typedef struct attr_sv {
  sval_t k, v;
} attr_sv_t;

/* The record being read. */
typedef struct rec {
  sval_t f[NFIELDS]; /* by the kind's key index */
  sval_t obj[5];     /* a mergelog's object, by obj_keys index */
  unsigned seen, obj_seen;
  ripple_cpid_t cpid;
  int64_t time[2]; /* a mergelog's time; a span's start and end */
  size_t nsrc, src_bad;
  const char *src_why;    /* why source src_bad is bad */
  size_t ntrig, trig_bad; /* the same of the trigger list */
  const char *trig_why;
  size_t nattr;
} rec_t;

/* The keys of the open objects not tracked by a bit, for duplicates. */
typedef struct kent {
  size_t off, len;
  const char *p;
} kent_t;

typedef struct dctx {
  const dec_limits_t *lim;
  dec_error_t *err;
  long index;
  dec_kind_t kind;
  dec_batch_t *b;
  yajl_handle h;
  const char *json;
  size_t len;
  int rc;        /* the first bad record's error, or RIPPLE_OK */
  int cancel_rc; /* why a callback stopped the parse */
  top_t top;
  size_t depth, nrec, rec_cap, src_cap;
  size_t end; /* just after the top array */
  int in_rec; /* reading a record: its fields are being kept */
  int field, ofield;
  sub_t sub; /* what the container at depth 3 of a record is */
  rec_t r;
  sbuf_t str; /* the kept strings of the record, NUL-terminated */
  attr_sv_t *attr;
  ripple_attr_t *attrs;
  ripple_cpid_t *trig; /* the record's trigger list (at most max_sources kept) */
  size_t trig_cap;
  dec_seen_t seen;
  sbuf_t karena;
  kent_t *keys;
  size_t nkeys, keys_cap;
  uint32_t kstart[JSTRICT_MAX_DEPTH + 1];
} dctx_t;

static int fail(dctx_t *d, int rc, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(dctx_t *d, int rc, const char *field, const char *fmt, ...) {
  d->err->index = d->index;
  snprintf(d->err->field, sizeof d->err->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err->msg, sizeof d->err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* Malformed JSON at byte `at`, named by line and column as people count them. */
static int fail_json(dctx_t *d, size_t at, const char *why) {
  int line = 1, col = 1;
  if (at > d->len) at = d->len; /* yajl's count after the end of the body */
  for (size_t i = 0; i < at; i++) {
    if (d->json[i] == '\n')
      line++, col = 1;
    else
      col++;
  }
  d->index = -1;
  return fail(d, RIPPLE_EJSON, "", "malformed JSON at line %d, column %d: %s", line, col, why);
}

/* ---- duplicate keys -------------------------------------------------------- */

static int key_push(dctx_t *d, const unsigned char *k, size_t n) {
  if (d->nkeys == d->keys_cap) {
    size_t cap = d->keys_cap ? d->keys_cap * 2 : 16;
    kent_t *p = realloc(d->keys, cap * sizeof *p);
    if (!p) return 0;
    d->keys = p;
    d->keys_cap = cap;
  }
  d->keys[d->nkeys++] = (kent_t){d->karena.len, n, NULL};
  sbuf_put(&d->karena, (const char *)k, n);
  return !d->karena.oom;
}

static int kent_cmp(const void *a, const void *b) {
  const kent_t *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return memcmp(x->p, y->p, x->len);
}

/* The object at d->depth closes: were any of its kept keys equal? */
static int keys_dup(dctx_t *d) {
  size_t s = d->kstart[d->depth], m = d->nkeys - s;
  if (m < 2) return 0;
  kent_t *k = d->keys + s;
  int dup = 0;
  for (size_t i = 0; i < m; i++) /* no arena yet when all keys are "" */
    k[i].p = d->karena.p ? d->karena.p + k[i].off : "";
  if (m <= 8) {
    for (size_t i = 0; i < m && !dup; i++)
      for (size_t j = i + 1; j < m && !dup; j++) dup = kent_cmp(&k[i], &k[j]) == 0;
  } else {
    qsort(k, m, sizeof *k, kent_cmp);
    for (size_t i = 1; i < m && !dup; i++) dup = kent_cmp(&k[i - 1], &k[i]) == 0;
  }
  return dup;
}

/* Drops the keys of the object at d->depth. */
static void keys_pop(dctx_t *d) {
  size_t s = d->kstart[d->depth];
  for (size_t i = s; i < d->nkeys; i++) /* sorted, so the first is any of them */
    if (d->keys[i].off < d->karena.len) d->karena.len = d->keys[i].off;
  d->nkeys = s;
}

/* The index of key k in keys, or -1. */
static int key_find(const fkey_t *keys, int n, const unsigned char *k, size_t len) {
  for (int i = 0; i < n; i++)
    if (keys[i].len == len && memcmp(keys[i].s, k, len) == 0) return i;
  return -1;
}

/* A known key of a record or its object: a bit in *seen. 0 for a repeat. */
static int key_bit(unsigned *seen, int i) {
  if (*seen & 1u << i) return 0;
  *seen |= 1u << i;
  return 1;
}

/* ---- checking a record, in the order the fields are named in errors -------- */

/* A string field: required or optional (*out NULL when absent). */
static int get_str(dctx_t *d, const sval_t *v, const char *field, int required, const char **out) {
  *out = NULL;
  if (v->type == V_ABSENT || v->type == V_NULL) {
    if (required) return fail(d, RIPPLE_EINVAL, field, "is required");
    return RIPPLE_OK;
  }
  if (v->type != V_STRING) return fail(d, RIPPLE_EINVAL, field, "must be a string");
  int rc = dec_check_text(d->lim, d->index, field, v->len, d->err);
  if (rc != RIPPLE_OK) return rc;
  *out = d->str.p + v->off;
  return RIPPLE_OK;
}

static int get_cpid(dctx_t *d, const sval_t *v) {
  if (v->type != V_STRING) return fail(d, RIPPLE_EINVAL, "cpid", "must be a CPID string");
  if (!v->ok)
    return fail(d, RIPPLE_EINVAL, "cpid",
                "is not a CPID (a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)");
  return dec_check_cpid(&d->r.cpid, d->index, d->err);
}

/* Not held to max_string: the canonical form of a time (30 bytes) can be longer
 * than what was sent ("2026-11-21T22:06:30Z", 20), and a limit between the two
 * would make the server refuse its own output. */
static int get_time(dctx_t *d, const sval_t *v, const char *field) {
  if (v->type == V_ABSENT || v->type == V_NULL) return fail(d, RIPPLE_EINVAL, field, "is required");
  if (v->type != V_STRING || !v->ok)
    return fail(d, RIPPLE_EINVAL, field,
                "is not an RFC 3339 time like 2026-11-21T22:06:30.123456789Z");
  return RIPPLE_OK;
}

static int get_span_id(dctx_t *d, const sval_t *v, const char *field, int required, uint64_t *out) {
  const char *s;
  *out = 0;
  int rc = get_str(d, v, field, required, &s);
  if (rc != RIPPLE_OK || !s) return rc;
  uint64_t id = 0;
  size_t n = v->len;
  for (size_t i = 0; i < n && n == 16; i++) {
    char c = s[i];
    int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (h < 0) n = 0;
    id = id << 4 | (uint64_t)(h & 15);
  }
  if (n != 16) id = 0; /* the same refusal as a zero id */
  *out = id;
  return dec_check_span_id(id, d->index, field, d->err);
}

static int check_sources(dctx_t *d) {
  const rec_t *r = &d->r;
  const ripple_cpid_t *src = r->nsrc ? d->b->src + d->b->nsrc : NULL;
  if (r->f[M_SOURCES].type != V_ARRAY)
    return fail(d, RIPPLE_EINVAL, "sources", "must be an array (empty for a root)");
  if (r->nsrc > d->lim->max_sources)
    return fail(d, RIPPLE_ERANGE, "sources", "has %zu entries; at most %zu are accepted", r->nsrc,
                d->lim->max_sources);
  for (size_t i = 0; i < r->nsrc; i++) {
    int self = i != r->src_bad && cpid_eq(&src[i], &r->cpid);
    if (i != r->src_bad && !self) continue;
    char field[32];
    snprintf(field, sizeof field, "sources[%zu]", i);
    if (self) return fail(d, RIPPLE_EINVAL, field, "equals cpid: a CPID cannot merge into itself");
    return fail(d, RIPPLE_EINVAL, field, "%s", r->src_why);
  }
  return RIPPLE_OK;
}

/* The trigger list, when there is one: after check_sources, so the sources
 * are known good. Sets the record's flags (b->trig, at the record's
 * sources). */
static int check_trigger(dctx_t *d, size_t off) {
  const rec_t *r = &d->r;
  vtype_t t = r->f[M_TRIGGER].type;
  if (t == V_ABSENT || t == V_NULL) return RIPPLE_OK;
  if (t != V_ARRAY)
    return fail(d, RIPPLE_EINVAL, "trigger",
                "must be an array of CPIDs from sources (or left out: every source then)");
  if (r->trig_bad != NONE) {
    char field[32];
    snprintf(field, sizeof field, "trigger[%zu]", r->trig_bad);
    return fail(d, RIPPLE_EINVAL, field, "%s", r->trig_why);
  }
  return dec_check_trigger(d->b->src + off, r->nsrc, d->trig, r->ntrig, d->b->trig + off, d->index,
                           d->err);
}

static int end_mergelog(dctx_t *d) {
  dec_batch_t *b = d->b;
  rec_t *r = &d->r;
  ripple_mergelog_t ml = {0};
  ripple_objref_t obj = {0};
  int rc = get_cpid(d, &r->f[M_CPID]);
  if (rc == RIPPLE_OK) rc = check_sources(d);
  if (rc == RIPPLE_OK) rc = check_trigger(d, b->nsrc);
  if (rc != RIPPLE_OK) return rc;
  dec_mark_t mark = dec_batch_mark(b); /* the record's start, to take it back */
  size_t off = b->nsrc, n = r->nsrc;
  b->nsrc += n;
  ml.cpid = r->cpid;
  ml.time_ns = r->time[0];
  if ((rc = get_time(d, &r->f[M_TIME], "time")) != RIPPLE_OK) return rc;
  if ((rc = get_str(d, &r->f[M_COMPONENT], "component", 0, &ml.component)) != RIPPLE_OK) return rc;
  vtype_t ot = r->f[M_OBJECT].type;
  if (ot != V_ABSENT && ot != V_NULL) {
    if (ot != V_OBJECT) return fail(d, RIPPLE_EINVAL, "object", "must be an object");
    static const char *const fields[] = {"object.apiVersion", "object.kind", "object.namespace",
                                         "object.name", "object.uid"};
    const char **dst[] = {&obj.api_version, &obj.kind, &obj.namespace_, &obj.name, &obj.uid};
    for (int i = 0; i < 5; i++)
      if ((rc = get_str(d, &r->obj[i], fields[i], 0, dst[i])) != RIPPLE_OK) return rc;
    ml.object = &obj;
  }
  ml.sources = n ? b->src + off : NULL;
  ml.nsources = n;
  size_t body_off = b->body.len;
  /* The encoder puts the trigger list just after the sources. */
  int has_trigger = r->f[M_TRIGGER].type == V_ARRAY;
  ml.trigger = has_trigger ? d->trig : NULL;
  ml.ntrigger = has_trigger ? r->ntrig : 0;
  wire_mergelog(&b->body, &ml);
  if ((rc = dec_batch_add(b, &ml.cpid, ml.time_ns, off, (uint32_t)n, body_off)) != RIPPLE_OK)
    return rc;
  b->rec[b->n - 1].has_trigger = (uint8_t)has_trigger;
  if (n == 0 && (rc = dec_batch_note_uid(b, obj.uid, r->obj[4].len)) != RIPPLE_OK) return rc;
  if ((rc = dec_batch_note_object(b, obj.kind, obj.namespace_, obj.name, ml.component)) !=
      RIPPLE_OK)
    return rc;
  long prev = dec_seen_add(&d->seen, b, b->n - 1);
  if (prev == -2) return RIPPLE_ENOMEM;
  if (prev >= 0) {
    /* A CPID has one mergelog and the first wins, within a request as across
     * requests (a shipper's retry): the repeat is acknowledged, not kept, and
     * counted. */
    dec_batch_rewind(b, &mark);
    b->dups++;
  }
  return RIPPLE_OK;
}

static int check_attrs(dctx_t *d, ripple_span_rec_t *sp) {
  vtype_t t = d->r.f[S_ATTRS].type;
  if (t == V_ABSENT || t == V_NULL) return RIPPLE_OK;
  if (t != V_OBJECT) return fail(d, RIPPLE_EINVAL, "attributes", "must be an object of strings");
  int rc = dec_check_nattrs(d->lim, d->r.nattr, d->index, d->err);
  if (rc != RIPPLE_OK) return rc;
  for (size_t i = 0; i < d->r.nattr; i++) {
    const attr_sv_t *a = &d->attr[i];
    const char *k = d->str.p + a->k.off;
    if (a->v.type != V_STRING) {
      char field[64];
      snprintf(field, sizeof field, "attributes.%.40s", k);
      return fail(d, RIPPLE_EINVAL, field, "must be a string");
    }
    if ((rc = dec_check_attr(d->lim, d->index, k, a->k.len, a->v.len, d->err)) != RIPPLE_OK)
      return rc;
    d->attrs[i] = (ripple_attr_t){k, d->str.p + a->v.off};
  }
  sp->nattrs = d->r.nattr;
  sp->attrs = d->attrs;
  return RIPPLE_OK;
}

static int end_span(dctx_t *d) {
  const sval_t *f = d->r.f;
  ripple_span_rec_t sp = {0};
  sp.cpid = d->r.cpid;
  sp.start_ns = d->r.time[0];
  sp.end_ns = d->r.time[1];
  int rc = get_cpid(d, &f[S_CPID]);
  if (rc == RIPPLE_OK) rc = get_span_id(d, &f[S_SPAN_ID], "span_id", 1, &sp.span_id);
  if (rc == RIPPLE_OK) rc = get_span_id(d, &f[S_PARENT_ID], "parent_id", 0, &sp.parent_id);
  if (rc == RIPPLE_OK) rc = get_str(d, &f[S_SERVICE], "service", 1, &sp.service);
  if (rc == RIPPLE_OK) rc = get_str(d, &f[S_NAME], "name", 1, &sp.name);
  if (rc == RIPPLE_OK) rc = get_time(d, &f[S_START], "start");
  if (rc == RIPPLE_OK) rc = get_time(d, &f[S_END], "end");
  if (rc != RIPPLE_OK) return rc;
  if ((rc = dec_check_span_times(sp.start_ns, sp.end_ns, d->index, d->err)) != RIPPLE_OK) return rc;
  if ((rc = check_attrs(d, &sp)) != RIPPLE_OK) return rc;
  return dec_span_append(d->b, &sp);
}

/* ---- yajl's events --------------------------------------------------------- */

/* Stops the parse: malformed JSON (why) or, with why NULL, out of memory. */
static int stop(dctx_t *d, const char *why) {
  if (why) {
    size_t at = yajl_get_bytes_consumed(d->h);
    d->cancel_rc = fail_json(d, at ? at - 1 : 0, why);
  } else {
    d->cancel_rc = RIPPLE_ENOMEM;
  }
  return 0;
}

/* Keeps a string of the record, NUL-terminated, unless it is too long to be
 * accepted (only its length matters then). */
static int put_str(dctx_t *d, const char *s, size_t n) {
  sbuf_put(&d->str, s, n);
  sbuf_putc(&d->str, '\0');
  return d->str.oom ? stop(d, NULL) : 1;
}

static int keep(dctx_t *d, sval_t *v, const char *s, size_t n) {
  v->type = V_STRING;
  v->len = n;
  v->off = n > d->lim->max_string ? NONE : d->str.len;
  return v->off == NONE ? 1 : put_str(d, s, n);
}

static int field_value(dctx_t *d, vtype_t t, const char *s, size_t n) {
  int f = d->field;
  int span = d->kind == DEC_SPANS;
  d->sub = SUB_NONE;
  if (f < 0) return 1;
  sval_t *v = &d->r.f[f];
  v->type = t;
  if (t == V_ARRAY && !span && f == M_SOURCES) d->sub = SUB_SOURCES;
  if (t == V_ARRAY && !span && f == M_TRIGGER) d->sub = SUB_TRIGGER;
  if (t == V_OBJECT && (span ? f == S_ATTRS : f == M_OBJECT))
    d->sub = span ? SUB_ATTRS : SUB_OBJECT;
  if (t != V_STRING) return 1;
  v->len = n;
  if (f == 0) {
    v->ok = ripple_cpid_parse(s, n, &d->r.cpid) == RIPPLE_OK;
    return 1;
  }
  int ti = span ? (f == S_START ? 0 : f == S_END ? 1 : -1) : (f == M_TIME ? 0 : -1);
  if (ti >= 0) {
    v->ok = ripple_time_parse(s, n, &d->r.time[ti]) == RIPPLE_OK;
    return 1;
  }
  return keep(d, v, s, n);
}

/* Room for one more source of the record (index i). A batch of mergelogs
 * always has its sources array, empty or not: callers index it. */
static int src_room(dctx_t *d, size_t i) {
  dec_batch_t *b = d->b;
  if (b->nsrc + i < d->src_cap) return 1;
  size_t cap = d->src_cap ? d->src_cap * 2 : 256;
  ripple_cpid_t *p = realloc(b->src, cap * sizeof *p);
  if (!p) return stop(d, NULL);
  b->src = p;
  uint8_t *f = realloc(b->trig, cap);
  if (!f) return stop(d, NULL);
  b->trig = f;
  d->src_cap = cap;
  return 1;
}

/* An entry of the trigger list (index i): kept while within max_sources
 * (past it the list is longer than sources can be: only counted). */
static int trigger_value(dctx_t *d, vtype_t t, const char *s, size_t n) {
  rec_t *r = &d->r;
  size_t i = r->ntrig++;
  if (i >= d->lim->max_sources || r->trig_bad != NONE) return 1;
  if (i >= d->trig_cap) {
    size_t cap = d->trig_cap ? d->trig_cap * 2 : 16;
    ripple_cpid_t *p = realloc(d->trig, cap * sizeof *p);
    if (!p) return stop(d, NULL);
    d->trig = p;
    d->trig_cap = cap;
  }
  if (t != V_STRING)
    r->trig_bad = i, r->trig_why = "must be a CPID string";
  else if (ripple_cpid_parse(s, n, &d->trig[i]) != RIPPLE_OK)
    r->trig_bad = i,
    r->trig_why = "is not a CPID (a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)";
  return 1;
}

static int source_value(dctx_t *d, vtype_t t, const char *s, size_t n) {
  rec_t *r = &d->r;
  size_t i = r->nsrc++;
  if (i >= d->lim->max_sources || r->src_bad != NONE) return 1;
  dec_batch_t *b = d->b;
  if (!src_room(d, i)) return 0;
  if (t != V_STRING)
    r->src_bad = i, r->src_why = "must be a CPID string";
  else if (ripple_cpid_parse(s, n, &b->src[b->nsrc + i]) != RIPPLE_OK)
    r->src_bad = i,
    r->src_why = "is not a CPID (a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)";
  return 1;
}

/* A value at depth 3 of a record: in its sources, object or attributes. */
static int member_value(dctx_t *d, vtype_t t, const char *s, size_t n) {
  sval_t *v;
  switch (d->sub) {
    case SUB_SOURCES: return source_value(d, t, s, n);
    case SUB_TRIGGER: return trigger_value(d, t, s, n);
    case SUB_OBJECT:
      if (d->ofield < 0) return 1;
      v = &d->r.obj[d->ofield];
      break;
    case SUB_ATTRS:
      if (d->ofield < 0) return 1;
      v = &d->attr[d->ofield].v;
      break;
    default: return 1;
  }
  v->type = t;
  return t == V_STRING ? keep(d, v, s, n) : 1;
}

/* A value in the top array: a record, read if all before it were good. */
static int rec_begin(dctx_t *d, vtype_t t) {
  d->nrec++;
  if (d->rc != RIPPLE_OK || d->nrec > d->lim->max_records) return 1;
  d->index = (long)d->nrec - 1;
  if (t != V_OBJECT) {
    d->rc = fail(d, RIPPLE_EINVAL, "", "must be an object");
    return 1;
  }
  dec_batch_t *b = d->b;
  if (b->n == d->rec_cap) {
    size_t cap = d->rec_cap ? d->rec_cap * 2 : 64;
    if (cap > d->lim->max_records) cap = d->lim->max_records;
    dec_rec_t *p = realloc(b->rec, cap * sizeof *p);
    if (!p) return stop(d, NULL);
    b->rec = p;
    d->rec_cap = cap;
  }
  if (d->kind == DEC_MERGELOGS && !src_room(d, 0)) return 0;
  memset(&d->r, 0, sizeof d->r);
  d->r.src_bad = NONE;
  d->r.trig_bad = NONE;
  d->str.len = 0;
  d->in_rec = 1;
  return 1;
}

static int on_value(dctx_t *d, vtype_t t, const char *s, size_t n) {
  if (d->depth >= JSTRICT_MAX_DEPTH) return stop(d, "nested more than 2048 levels deep");
  if (d->depth == 0) {
    d->top = t == V_ARRAY ? TOP_ARRAY : TOP_OTHER;
    return 1;
  }
  if (d->depth == 1) return d->top == TOP_ARRAY ? rec_begin(d, t) : 1;
  if (!d->in_rec) return 1;
  if (d->depth == 2) return field_value(d, t, s, n);
  if (d->depth == 3) return member_value(d, t, s, n);
  return 1;
}

static int cb_null(void *u) { return on_value(u, V_NULL, NULL, 0); }
static int cb_boolean(void *u, int v) {
  (void)v;
  return on_value(u, V_OTHER, NULL, 0);
}
static int cb_number(void *u, const char *s, size_t n) {
  jstrict_num_t num;
  int rc = jstrict_number(s, n, &num);
  if (rc != RIPPLE_OK)
    return stop(u, rc == RIPPLE_EJSON ? "a number too large to represent" : NULL);
  return on_value(u, V_OTHER, NULL, 0);
}
static int cb_string(void *u, const unsigned char *s, size_t n) {
  return on_value(u, V_STRING, (const char *)s, n);
}

static int on_start(dctx_t *d, vtype_t t) {
  if (!on_value(d, t, NULL, 0)) return 0;
  d->depth++;
  if (t == V_OBJECT) d->kstart[d->depth] = (uint32_t)d->nkeys;
  return 1;
}
static int cb_start_map(void *u) { return on_start(u, V_OBJECT); }
static int cb_start_array(void *u) { return on_start(u, V_ARRAY); }

static int attr_key(dctx_t *d, const unsigned char *k, size_t n) {
  size_t i = d->r.nattr++;
  d->ofield = -1;
  if (i >= d->lim->max_attrs) return 1;
  /* A key too long to accept is still named in the error, cut to 40 bytes. */
  attr_sv_t *a = &d->attr[i];
  a->k = (sval_t){V_STRING, 0, n, d->str.len};
  a->v = (sval_t){V_ABSENT, 0, 0, NONE};
  if (!put_str(d, (const char *)k, n <= d->lim->max_string || n < 40 ? n : 40)) return 0;
  d->ofield = (int)i;
  return 1;
}

static int cb_map_key(void *u, const unsigned char *k, size_t n) {
  dctx_t *d = u;
  const char *dup = "a key repeated in one object";
  if (d->in_rec && d->depth == 2) {
    int span = d->kind == DEC_SPANS;
    d->field = span ? key_find(sp_keys, 8, k, n) : key_find(ml_keys, 6, k, n);
    if (d->field >= 0) return key_bit(&d->r.seen, d->field) ? 1 : stop(d, dup);
  } else if (d->in_rec && d->depth == 3 && d->sub == SUB_OBJECT) {
    d->ofield = key_find(obj_keys, 5, k, n);
    if (d->ofield >= 0) return key_bit(&d->r.obj_seen, d->ofield) ? 1 : stop(d, dup);
  } else if (d->in_rec && d->depth == 3 && d->sub == SUB_ATTRS) {
    if (!attr_key(d, k, n)) return 0;
  }
  return key_push(d, k, n) ? 1 : stop(d, NULL);
}

static int cb_end_map(void *u) {
  dctx_t *d = u;
  if (keys_dup(d)) return stop(d, "a key repeated in one object");
  keys_pop(d);
  if (--d->depth == 2) d->sub = SUB_NONE;
  if (d->depth == 1 && d->in_rec) {
    d->in_rec = 0;
    int rc = d->kind == DEC_SPANS ? end_span(d) : end_mergelog(d);
    if (rc == RIPPLE_ENOMEM) return stop(d, NULL);
    d->rc = rc;
  }
  return 1;
}

static int cb_end_array(void *u) {
  dctx_t *d = u;
  if (--d->depth == 2) d->sub = SUB_NONE;
  if (d->depth == 0) d->end = yajl_get_bytes_consumed(d->h);
  return 1;
}

/* yajl takes a body that ends in an unterminated string after the array
 * (`[] "`) as complete; jansson did not, so only white space may follow. */
static int trailing(dctx_t *d) {
  size_t at;
  if (jstrict_trailing(d->json, d->len, d->end, &at) != RIPPLE_OK)
    return fail_json(d, at, "something after the array");
  return RIPPLE_OK;
}

static const yajl_callbacks callbacks = {cb_null,    cb_boolean,     NULL,         NULL,
                                         cb_number,  cb_string,      cb_start_map, cb_map_key,
                                         cb_end_map, cb_start_array, cb_end_array};

/* ---- the request ----------------------------------------------------------- */

/* yajl over the whole body; the request's error code, *err filled in. */
static int parse(dctx_t *d, const char *json, size_t len) {
  d->h = yajl_alloc(&callbacks, NULL, d);
  if (!d->h) return RIPPLE_ENOMEM;
  yajl_config(d->h, yajl_allow_comments, 0);
  yajl_config(d->h, yajl_dont_validate_strings, 0);
  yajl_config(d->h, yajl_allow_trailing_garbage, 0);
  yajl_config(d->h, yajl_allow_multiple_values, 0);
  yajl_config(d->h, yajl_allow_partial_values, 0);
  yajl_status st = yajl_parse(d->h, (const unsigned char *)json, len);
  if (st == yajl_status_ok) st = yajl_complete_parse(d->h);
  int rc = d->rc;
  if (st == yajl_status_client_canceled) {
    rc = d->cancel_rc;
  } else if (st != yajl_status_ok) {
    unsigned char *e = yajl_get_error(d->h, 0, (const unsigned char *)json, len);
    char why[128];
    snprintf(why, sizeof why, "%s", e ? (const char *)e : "yajl refused it");
    why[strcspn(why, "\n")] = '\0';
    if (e) yajl_free_error(d->h, e);
    rc = fail_json(d, yajl_get_bytes_consumed(d->h), why);
  } else if (d->top != TOP_ARRAY) {
    d->index = -1;
    rc = fail(d, RIPPLE_EJSON, "", "the body must be a JSON array of %s",
              d->kind == DEC_MERGELOGS ? "mergelogs" : "spans");
  } else if (trailing(d) != RIPPLE_OK) {
    rc = RIPPLE_EJSON;
  } else if (d->nrec > d->lim->max_records) {
    d->index = -1;
    rc = dec_check_count(d->lim, d->nrec, d->err);
  }
  yajl_free(d->h);
  if (rc == RIPPLE_OK && !d->b->rec && !(d->b->rec = malloc(sizeof *d->b->rec)))
    rc = RIPPLE_ENOMEM; /* no records: still an array, as callers expect */
  return rc;
}

int dec_decode(dec_kind_t kind, const char *json, size_t len, const dec_limits_t *lim,
               dec_batch_t *out, dec_error_t *err) {
  memset(out, 0, sizeof *out);
  memset(err, 0, sizeof *err);
  dctx_t *d = calloc(1, sizeof *d);
  int rc = RIPPLE_ENOMEM;
  if (!d) goto done;
  d->lim = lim;
  d->err = err;
  d->index = -1;
  d->kind = kind;
  d->b = out;
  d->json = json;
  d->len = len;
  out->kind = kind;
  sbuf_init(&d->str);
  sbuf_init(&d->karena);
  (void)rnd_bytes(&d->seen.seed, sizeof d->seen.seed); /* without it, a fixed seed still works */
  if (kind == DEC_SPANS) {
    d->attr = malloc((lim->max_attrs + 1) * sizeof *d->attr);
    d->attrs = malloc((lim->max_attrs + 1) * sizeof *d->attrs);
    if (!d->attr || !d->attrs) goto done;
  }
  size_t bad;
  const char *why;
  rc = jstrict_scan(json, len, 0, &bad, &why);
  rc = rc == RIPPLE_OK ? parse(d, json, len) : fail_json(d, bad, why);
done:
  if (d) {
    dec_seen_free(&d->seen);
    free(d->attr);
    free(d->attrs);
    free(d->keys);
    free(d->trig);
    sbuf_free(&d->str);
    sbuf_free(&d->karena);
    free(d);
  }
  if (rc != RIPPLE_OK) {
    if (rc == RIPPLE_ENOMEM && !err->msg[0]) snprintf(err->msg, sizeof err->msg, "out of memory");
    dec_batch_free(out);
  }
  return rc;
}
