/*
 * otlp_receive.c - OTLP/HTTP trace requests (protobuf or JSON) as ripple
 * spans, for POST /v1/traces: a controller instrumented with an OpenTelemetry
 * SDK sends its reconcile spans, and those that belong to a CPID join its
 * trace. The rule (docs/otlp.md):
 *
 *   - a span with a string attribute ripple.cpid joins that CPID;
 *   - else a span whose trace id is a CPID the server knows joins it;
 *   - every other span is rejected (counted, and named in the answer's
 *     partial success, which OTLP clients never retry).
 *
 * Each span becomes a ripple span made to pass the server's checks: text is
 * made valid UTF-8 (invalid bytes become U+FFFD, NULs are dropped) and cut to
 * the server's string limit, repeated attribute keys keep the first, and
 * attributes past the limit are left out. Two outputs, from the same walk:
 *
 *   - otlp_receive_batch (the server's): records straight into a dec_batch_t,
 *     through the checks and the record building that POST /v1/spans uses
 *     (decode_check.h), with no JSON in between;
 *   - otlp_receive: a JSON array of the same spans for dec_decode(), the
 *     route the server took before; kept as the reference the fuzz target
 *     fuzz_otlp holds the direct path to, and for tests that read the spans.
 *
 * Both decoders are bounded: protobuf is declared so that unpacking never
 * recurses more than six messages deep (otlp.proto) and allocates from a
 * budget; JSON goes through jansson, whose depth is bounded.
 */
#include "ingest/decode_check.h"
#include "ingest/otlp.h"

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/otlp.pb-c.h"
#include "ripplex/clock.h"
#include "ripplex/hex.h"
#include "ripplex/utf8.h"

/* ---- one span at a time into the output array -------------------------------- */

typedef struct conv {
  const otlp_recv_t *r;
  sbuf_t *out;
  otlp_result_t *res;
  char *tmp; /* lim->max_string + 4 bytes: sanitised text */
  /* The open span's attribute keys (sanitised), for repeats. */
  sbuf_t keys;
  size_t key_end[256];
  size_t nattrs, max_attrs;
  int first;
  struct direct *d; /* otlp_receive_batch: records, not JSON */
} conv_t;

/* What otlp_receive_batch keeps of the open span: its strings, NUL-terminated
 * in text (offsets: text moves as it grows), and the record. */
typedef struct direct {
  dec_batch_t *b;
  dec_error_t *err;
  int rc;     /* the first span the checks refused (a bug in this file) */
  size_t cap; /* records b->rec has room for */
  int open;   /* the open span was accepted */
  ripple_span_rec_t sp;
  sbuf_t text;
  size_t service, name, key[256], val[256];
  ripple_attr_t attrs[256];
} direct_t;

typedef struct span_view {
  const uint8_t *trace_id, *span_id, *parent;
  size_t trace_len, span_len, parent_len;
  const char *name, *service, *cpid_attr; /* cpid_attr: NULL when absent */
  size_t name_len, service_len, cpid_attr_len;
  uint64_t start, end;
  int status_code;
  const char *status_msg;
} span_view_t;

static void reject(conv_t *c, const char *why) {
  c->res->rejected++;
  if (!c->res->msg[0])
    snprintf(c->res->msg, sizeof c->res->msg, "span %zu: %s", c->res->spans - 1, why);
}

/* s (n bytes) as valid UTF-8 without NUL, at most max bytes, in c->tmp. */
static size_t sanitise(conv_t *c, const char *s, size_t n) {
  size_t max = c->r->lim->max_string, o = 0;
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    if (u[i] - 1u < 0x7fu) { /* ASCII but NUL: most text, one byte at a time */
      if (o + 1 > max) break;
      c->tmp[o++] = s[i++];
      continue;
    }
    size_t l = u[i] ? utf8_len(u + i, n - i) : 0;
    if (!u[i]) {
      i++;
      continue;
    }
    const char *p = l ? s + i : "\xef\xbf\xbd";
    size_t pn = l ? l : 3;
    if (o + pn > max) break;
    memcpy(c->tmp + o, p, pn);
    o += pn;
    i += l ? l : 1;
  }
  return o;
}

static void put_text(conv_t *c, const char *s, size_t n) {
  sbuf_json_strn(c->out, c->tmp, sanitise(c, s, n));
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static void put_hex(sbuf_t *b, const uint8_t *p, size_t n) {
  char text[33];
  hex_encode(p, n, text);
  sbuf_putc(b, '"');
  sbuf_put(b, text, 2 * n);
  sbuf_putc(b, '"');
}

/* s (n bytes) sanitised into the open span's text; its offset there. */
static size_t keep_text(conv_t *c, const char *s, size_t n) {
  size_t off = c->d->text.len;
  sbuf_put(&c->d->text, c->tmp, sanitise(c, s, n));
  sbuf_putc(&c->d->text, '\0');
  return off;
}

/* span_attr for otlp_receive_batch. */
static void direct_attr(conv_t *c, const char *k, size_t kn, const char *v, size_t vn) {
  direct_t *d = c->d;
  size_t off = keep_text(c, k, kn), n = d->text.len - off - 1;
  for (size_t i = 0; i < c->nattrs && !d->text.oom; i++)
    if (!memcmp(d->text.p + d->key[i], d->text.p + off, n + 1)) {
      d->text.len = off; /* a repeated key: the first value stays */
      return;
    }
  d->key[c->nattrs] = off;
  d->val[c->nattrs++] = keep_text(c, v, vn);
}

/* Write an attribute of the open span: cut, sanitised, first of its key. */
static void span_attr(conv_t *c, const char *k, size_t kn, const char *v, size_t vn) {
  if (!kn || c->nattrs >= c->max_attrs) return;
  if (c->d) {
    direct_attr(c, k, kn, v, vn);
    return;
  }
  size_t n = sanitise(c, k, kn);
  for (size_t i = 0, off = 0; i < c->nattrs; off = c->key_end[i++])
    if (c->key_end[i] - off == n && !memcmp(c->keys.p + off, c->tmp, n)) return;
  sbuf_put(&c->keys, c->tmp, n);
  c->key_end[c->nattrs] = c->keys.len;
  sbuf_puts(c->out, c->nattrs++ ? "," : "");
  sbuf_json_strn(c->out, c->tmp, n);
  sbuf_putc(c->out, ':');
  put_text(c, v, vn);
}

/* The attributes the receiver adds: a foreign trace id, an error status. */
static void span_extra(conv_t *c, const span_view_t *v, int own) {
  if (!own) {
    char hex[33];
    hex_encode(v->trace_id, 16, hex);
    span_attr(c, "otel.trace_id", 13, hex, 32);
  }
  if (v->status_code == 2) {
    span_attr(c, "otel.status_code", 16, "ERROR", 5);
    if (v->status_msg)
      span_attr(c, "otel.status_description", 23, v->status_msg, strlen(v->status_msg));
  }
}

/* 8 bytes as the span id the JSON wire form's 16 hex digits are. */
static uint64_t be64(const uint8_t *p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; i++) x = x << 8 | p[i];
  return x;
}

/* span_begin's record for otlp_receive_batch: what the JSON would say. */
static int direct_begin(conv_t *c, const span_view_t *v, const ripple_cpid_t *cpid, int own) {
  direct_t *d = c->d;
  d->text.len = 0;
  d->sp = (ripple_span_rec_t){.cpid = *cpid,
                              .span_id = be64(v->span_id),
                              .start_ns = (int64_t)v->start,
                              .end_ns = (int64_t)v->end};
  if (own && v->parent_len == 8 && !all_zero(v->parent, 8)) d->sp.parent_id = be64(v->parent);
  d->service = keep_text(c, v->service, v->service_len);
  d->name = keep_text(c, v->name, v->name_len);
  d->open = 1;
  span_extra(c, v, own);
  return 1;
}

/* The open span through the server's checks into the batch. Its index is
 * the one it has in otlp_receive's JSON array. */
static void direct_end(conv_t *c) {
  direct_t *d = c->d;
  if (!d->open || d->rc != RIPPLE_OK || d->text.oom) return;
  d->open = 0;
  dec_batch_t *b = d->b;
  if (b->n >= c->r->lim->max_records) return; /* refused whole (dec_check_count) */
  if (b->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 64;
    dec_rec_t *p = realloc(b->rec, cap * sizeof *p);
    if (!p) {
      d->rc = RIPPLE_ENOMEM;
      return;
    }
    b->rec = p;
    d->cap = cap;
  }
  const char *t = d->text.p;
  d->sp.service = t + d->service;
  d->sp.name = t + d->name;
  for (size_t i = 0; i < c->nattrs; i++)
    d->attrs[i] = (ripple_attr_t){t + d->key[i], t + d->val[i]};
  d->sp.attrs = d->attrs;
  d->sp.nattrs = c->nattrs;
  long index = (long)c->res->accepted - 1;
  d->rc = dec_check_span(c->r->lim, &d->sp, index, d->err);
  if (d->rc == RIPPLE_OK) d->rc = dec_span_append(b, &d->sp);
}

/* Open a span's record, or reject it (0). */
static int span_begin(conv_t *c, const span_view_t *v) {
  ripple_cpid_t cpid;
  c->res->spans++;
  if (v->span_len != 8 || all_zero(v->span_id, 8))
    return reject(c, "span id is not 8 bytes, not all zero"), 0;
  if (v->trace_len != 16 || all_zero(v->trace_id, 16))
    return reject(c, "trace id is not 16 bytes, not all zero"), 0;
  if (v->cpid_attr) {
    if (ripple_cpid_parse(v->cpid_attr, v->cpid_attr_len, &cpid) != RIPPLE_OK)
      return reject(c, "attribute ripple.cpid is not a CPID"), 0;
  } else {
    memcpy(cpid.b, v->trace_id, 16);
    if (!c->r->known(c->r->ud, &cpid))
      return reject(c, "its trace id is not a CPID this server knows, and it has no ripple.cpid"),
             0;
  }
  if (v->start > INT64_MAX || v->end > INT64_MAX || v->end < v->start)
    return reject(c, "its end is before its start, or a time is out of range"), 0;
  int own = !memcmp(cpid.b, v->trace_id, 16);
  c->nattrs = 0;
  c->res->accepted++;
  if (c->d) return direct_begin(c, v, &cpid, own);
  char text[RIPPLE_TIME_STRLEN + 1], id[37];
  ripple_cpid_format(&cpid, id);
  sbuf_puts(c->out, c->first ? "{\"cpid\":\"" : ",{\"cpid\":\"");
  c->first = 0;
  sbuf_puts(c->out, id);
  sbuf_puts(c->out, "\",\"span_id\":");
  put_hex(c->out, v->span_id, 8);
  if (own && v->parent_len == 8 && !all_zero(v->parent, 8)) {
    sbuf_puts(c->out, ",\"parent_id\":");
    put_hex(c->out, v->parent, 8);
  }
  sbuf_puts(c->out, ",\"service\":");
  put_text(c, v->service, v->service_len);
  sbuf_puts(c->out, ",\"name\":");
  put_text(c, v->name, v->name_len);
  time_text((int64_t)v->start, text);
  sbuf_printf(c->out, ",\"start\":\"%s\"", text);
  time_text((int64_t)v->end, text);
  sbuf_printf(c->out, ",\"end\":\"%s\",\"attributes\":{", text);
  c->keys.len = 0;
  span_extra(c, v, own);
  return 1;
}

static void span_end(conv_t *c) {
  if (c->d)
    direct_end(c);
  else
    sbuf_puts(c->out, "}}");
}

/* ---- protobuf ------------------------------------------------------------------ */

/* protobuf-c allocates from this: a request may not take more than its budget.
 * The request's messages come from an arena (chunks, freed all at once: one
 * chunk per 64 KiB instead of a malloc per message, string and array, which
 * was most of decoding's time); the budget counts every byte asked for, given
 * back or not. Array values, unpacked and freed one at a time while the
 * spans are read, come from the heap and give their bytes back. */
typedef struct budget {
  size_t left;
  char *chunk; /* the newest; each starts with a pointer to the one before */
  size_t used, cap;
} budget_t;

#define ARENA_CHUNK ((size_t)64 << 10)
#define ARENA_HEAD ((size_t)16) /* the chunk before; keeps what follows aligned */
#define ARENA_SPARE 64          /* chunks kept between requests: 4 MiB */

/* Whole chunks kept for the next request rather than given back to the C
 * library, which returns them to the kernel: a request's megabyte of
 * messages then page-faulted in again each time (a sixth of decoding).
 * Shared by the connections' threads; a lock per chunk taken or given. */
static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static char *spare; /* a list through the chunks' heads */
static size_t nspare;

static char *chunk_new(size_t cap) {
  char *c = NULL;
  if (cap == ARENA_CHUNK) {
    pthread_mutex_lock(&spare_mu);
    if ((c = spare)) memcpy(&spare, c, sizeof spare), nspare--;
    pthread_mutex_unlock(&spare_mu);
  }
  return c ? c : malloc(cap);
}

static void chunk_drop(char *c, size_t cap) {
  if (cap == ARENA_CHUNK) {
    pthread_mutex_lock(&spare_mu);
    int keep = nspare < ARENA_SPARE;
    if (keep) memcpy(c, &spare, sizeof spare), spare = c, nspare++;
    pthread_mutex_unlock(&spare_mu);
    if (keep) return;
  }
  free(c);
}

/* Each chunk's head: the chunk before it and its size. */
typedef struct chunk_head {
  char *prev;
  size_t cap;
} chunk_head_t;
_Static_assert(sizeof(chunk_head_t) <= ARENA_HEAD, "a chunk's head fits before its messages");

static void *arena_alloc(void *ud, size_t n) {
  budget_t *b = ud;
  if (n > b->left) return NULL;
  b->left -= n;
  n = (n + 15) & ~(size_t)15;
  if (b->cap - b->used < n) {
    size_t cap = n + ARENA_HEAD > ARENA_CHUNK ? n + ARENA_HEAD : ARENA_CHUNK;
    char *c = chunk_new(cap);
    if (!c) return NULL;
    chunk_head_t h = {b->chunk, cap};
    memcpy(c, &h, sizeof h);
    b->chunk = c, b->used = ARENA_HEAD, b->cap = cap;
  }
  void *p = b->chunk + b->used;
  b->used += n;
  return p;
}

static void arena_free(void *ud, void *ptr) { (void)ud, (void)ptr; }

static void arena_release(budget_t *b) {
  while (b->chunk) {
    chunk_head_t h;
    memcpy(&h, b->chunk, sizeof h);
    chunk_drop(b->chunk, h.cap);
    b->chunk = h.prev;
  }
}

static void *budget_alloc(void *ud, size_t n) {
  budget_t *b = ud;
  if (n > b->left) return NULL;
  size_t *p = malloc(sizeof(size_t) + n);
  if (!p) return NULL;
  b->left -= n;
  p[0] = n;
  return p + 1;
}

static void budget_free(void *ud, void *ptr) {
  if (!ptr) return;
  size_t *p = (size_t *)ptr - 1;
  ((budget_t *)ud)->left += p[0];
  free(p);
}

static const char *pb_string(const Ripple__Otlp__AnyValue *v) {
  return v && v->value_case == RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE ? v->string_value : NULL;
}

/* One value as text, into b (scalars; an array one level deep). */
static void pb_value_text(const Ripple__Otlp__AnyValue *v, ProtobufCAllocator *a, sbuf_t *b,
                          int depth) {
  if (!v) return;
  switch (v->value_case) {
    case RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE: sbuf_puts(b, v->string_value); break;
    case RIPPLE__OTLP__ANY_VALUE__VALUE_BOOL_VALUE:
      sbuf_puts(b, v->bool_value ? "true" : "false");
      break;
    case RIPPLE__OTLP__ANY_VALUE__VALUE_INT_VALUE: sbuf_printf(b, "%" PRId64, v->int_value); break;
    case RIPPLE__OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE:
      sbuf_printf(b, "%.17g", v->double_value);
      break;
    case RIPPLE__OTLP__ANY_VALUE__VALUE_ARRAY_VALUE: {
      Ripple__Otlp__ArrayValue *arr =
          depth ? NULL
                : ripple__otlp__array_value__unpack(a, v->array_value.len, v->array_value.data);
      sbuf_putc(b, '[');
      for (size_t i = 0; arr && i < arr->n_values && b->len < 65536; i++) {
        sbuf_puts(b, i ? ", " : "");
        pb_value_text(arr->values[i], a, b, depth + 1);
      }
      if (!arr) sbuf_puts(b, "...");
      sbuf_putc(b, ']');
      if (arr) ripple__otlp__array_value__free_unpacked(arr, a);
      break;
    }
    case RIPPLE__OTLP__ANY_VALUE__VALUE_KVLIST_VALUE: sbuf_puts(b, "{...}"); break;
    case RIPPLE__OTLP__ANY_VALUE__VALUE_BYTES_VALUE:
      for (size_t i = 0; i < v->bytes_value.len && i < 2048; i++)
        sbuf_printf(b, "%02x", v->bytes_value.data[i]);
      break;
    default: break;
  }
}

static void pb_attrs(conv_t *c, Ripple__Otlp__KeyValue **kv, size_t n, ProtobufCAllocator *a) {
  sbuf_t text;
  sbuf_init(&text);
  for (size_t i = 0; i < n; i++) {
    if (!kv[i]->key || !strcmp(kv[i]->key, "ripple.cpid")) continue;
    text.len = 0;
    pb_value_text(kv[i]->value, a, &text, 0);
    span_attr(c, kv[i]->key, strlen(kv[i]->key), text.p ? text.p : "", text.len);
  }
  sbuf_free(&text);
}

static void pb_span(conv_t *c, const Ripple__Otlp__Span *s, const char *service,
                    ProtobufCAllocator *a) {
  span_view_t v = {.trace_id = s->trace_id.data,
                   .trace_len = s->trace_id.len,
                   .span_id = s->span_id.data,
                   .span_len = s->span_id.len,
                   .parent = s->parent_span_id.data,
                   .parent_len = s->parent_span_id.len,
                   .name = s->name ? s->name : "",
                   .service = service,
                   .start = s->start_time_unix_nano,
                   .end = s->end_time_unix_nano,
                   .status_code = s->status ? s->status->code : 0,
                   .status_msg = s->status ? s->status->message : NULL};
  v.name_len = strlen(v.name);
  v.service_len = strlen(service);
  for (size_t i = 0; i < s->n_attributes; i++)
    if (s->attributes[i]->key && !strcmp(s->attributes[i]->key, "ripple.cpid")) {
      v.cpid_attr = pb_string(s->attributes[i]->value);
      v.cpid_attr = v.cpid_attr ? v.cpid_attr : "";
      v.cpid_attr_len = strlen(v.cpid_attr);
      break;
    }
  if (!span_begin(c, &v)) return;
  pb_attrs(c, s->attributes, s->n_attributes, a);
  span_end(c);
}

static const char *pb_service(const Ripple__Otlp__Resource *r) {
  for (size_t i = 0; r && i < r->n_attributes; i++)
    if (r->attributes[i]->key && !strcmp(r->attributes[i]->key, "service.name")) {
      const char *s = pb_string(r->attributes[i]->value);
      if (s && *s) return s;
    }
  return "unknown_service";
}

static int receive_pb(conv_t *c, const void *body, size_t len) {
  budget_t bud = {.left = (size_t)32 << 20};
  bud.left += len * 4;
  ProtobufCAllocator arena = {.alloc = arena_alloc, .free = arena_free, .allocator_data = &bud};
  ProtobufCAllocator a = {.alloc = budget_alloc, .free = budget_free, .allocator_data = &bud};
  Ripple__Otlp__ExportTraceServiceRequest *req =
      ripple__otlp__export_trace_service_request__unpack(&arena, len, body);
  if (!req) {
    arena_release(&bud);
    snprintf(c->res->msg, sizeof c->res->msg,
             bud.left < 4096 ? "the request needs more memory than a request may use; send "
                               "smaller batches"
                             : "the body is not an OTLP ExportTraceServiceRequest in protobuf");
    return bud.left < 4096 ? RIPPLE_ENOMEM : RIPPLE_EJSON;
  }
  for (size_t i = 0; i < req->n_resource_spans; i++) {
    const Ripple__Otlp__ResourceSpans *rs = req->resource_spans[i];
    const char *service = pb_service(rs->resource);
    for (size_t j = 0; j < rs->n_scope_spans; j++)
      for (size_t k = 0; k < rs->scope_spans[j]->n_spans; k++)
        pb_span(c, rs->scope_spans[j]->spans[k], service, &a);
  }
  arena_release(&bud); /* req with it */
  return RIPPLE_OK;
}

/* ---- JSON (the OTLP/JSON mapping: lowerCamelCase, hex ids, 64-bit integers
 * as strings or numbers) -------------------------------------------------------- */

/* An OTLP/JSON id: exactly 2n hex digits, either case. */
static int hex_bytes(const char *s, uint8_t *out, size_t n) {
  return s && strlen(s) == 2 * n && hex_decode(s, n, out, 1);
}

/* A uint64 that is a decimal string or a non-negative integer. */
static uint64_t json_u64(const json_t *v) {
  if (json_is_integer(v)) return json_integer_value(v) < 0 ? 0 : (uint64_t)json_integer_value(v);
  const char *s = json_string_value(v);
  if (!s || !*s) return 0;
  char *end;
  unsigned long long n = strtoull(s, &end, 10);
  return *end || s[0] == '-' ? UINT64_MAX : (uint64_t)n;
}

static void json_value_text(json_t *v, sbuf_t *b) {
  json_t *x;
  if ((x = json_object_get(v, "stringValue")) && json_is_string(x))
    sbuf_put(b, json_string_value(x), json_string_length(x));
  else if ((x = json_object_get(v, "boolValue")) && json_is_boolean(x))
    sbuf_puts(b, json_is_true(x) ? "true" : "false");
  else if ((x = json_object_get(v, "intValue")))
    sbuf_printf(b, "%" PRId64, (int64_t)json_u64(x));
  else if ((x = json_object_get(v, "doubleValue")) && json_is_number(x))
    sbuf_printf(b, "%.17g", json_number_value(x));
  else if ((x = json_object_get(v, "arrayValue")) || (x = json_object_get(v, "kvlistValue")) ||
           (x = json_object_get(v, "bytesValue"))) {
    char *t = json_dumps(x, JSON_COMPACT | JSON_ENCODE_ANY);
    if (t) sbuf_puts(b, t);
    free(t);
  }
}

static void json_span(conv_t *c, json_t *s, const char *service) {
  uint8_t tid[16], sid[8], pid[8];
  json_t *attrs = json_object_get(s, "attributes"), *st = json_object_get(s, "status"), *a;
  const char *name = json_string_value(json_object_get(s, "name"));
  const char *parent = json_string_value(json_object_get(s, "parentSpanId"));
  span_view_t v = {
      .trace_id = tid,
      .trace_len = hex_bytes(json_string_value(json_object_get(s, "traceId")), tid, 16) ? 16 : 0,
      .span_id = sid,
      .span_len = hex_bytes(json_string_value(json_object_get(s, "spanId")), sid, 8) ? 8 : 0,
      .parent = pid,
      .parent_len = parent && hex_bytes(parent, pid, 8) ? 8 : 0,
      .name = name ? name : "",
      .service = service,
      .start = json_u64(json_object_get(s, "startTimeUnixNano")),
      .end = json_u64(json_object_get(s, "endTimeUnixNano")),
      .status_code = (int)json_integer_value(json_object_get(st, "code")),
      .status_msg = json_string_value(json_object_get(st, "message"))};
  v.name_len = strlen(v.name);
  v.service_len = strlen(service);
  size_t i;
  json_array_foreach(attrs, i, a) {
    const char *k = json_string_value(json_object_get(a, "key"));
    if (!k || strcmp(k, "ripple.cpid") != 0) continue;
    v.cpid_attr = json_string_value(json_object_get(json_object_get(a, "value"), "stringValue"));
    v.cpid_attr = v.cpid_attr ? v.cpid_attr : "";
    v.cpid_attr_len = strlen(v.cpid_attr);
    break;
  }
  if (!span_begin(c, &v)) return;
  sbuf_t text;
  sbuf_init(&text);
  json_array_foreach(attrs, i, a) {
    json_t *k = json_object_get(a, "key");
    if (!json_is_string(k) || !strcmp(json_string_value(k), "ripple.cpid")) continue;
    text.len = 0;
    json_value_text(json_object_get(a, "value"), &text);
    span_attr(c, json_string_value(k), json_string_length(k), text.p ? text.p : "", text.len);
  }
  sbuf_free(&text);
  span_end(c);
}

static const char *json_service(json_t *resource) {
  size_t i;
  json_t *a;
  json_array_foreach(json_object_get(resource, "attributes"), i, a) {
    const char *k = json_string_value(json_object_get(a, "key"));
    const char *s = json_string_value(json_object_get(json_object_get(a, "value"), "stringValue"));
    if (k && s && *s && !strcmp(k, "service.name")) return s;
  }
  return "unknown_service";
}

static int receive_json(conv_t *c, const void *body, size_t len) {
  json_error_t e;
  json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
  json_t *rss = json_object_get(doc, "resourceSpans");
  if (!json_is_object(doc) || (rss && !json_is_array(rss))) {
    snprintf(c->res->msg, sizeof c->res->msg,
             doc ? "the body is not an OTLP ExportTraceServiceRequest (resourceSpans must be an "
                   "array)"
                 : "the body is not JSON: %s",
             e.text);
    json_decref(doc);
    return RIPPLE_EJSON;
  }
  size_t i, j, k;
  json_t *rs, *ss, *sp;
  json_array_foreach(rss, i, rs) {
    const char *service = json_service(json_object_get(rs, "resource"));
    json_array_foreach(json_object_get(rs, "scopeSpans"), j, ss) {
      json_array_foreach(json_object_get(ss, "spans"), k, sp) {
        if (json_is_object(sp))
          json_span(c, sp, service);
        else
          c->res->spans++, reject(c, "not an object");
      }
    }
  }
  json_decref(doc);
  return RIPPLE_OK;
}

int otlp_receive(otlp_encoding_t enc, const void *body, size_t len, const otlp_recv_t *r,
                 sbuf_t *out, otlp_result_t *res) {
  memset(res, 0, sizeof *res);
  conv_t c = {.r = r, .out = out, .res = res, .first = 1};
  c.max_attrs = r->lim->max_attrs < 256 ? r->lim->max_attrs : 256;
  c.tmp = malloc(r->lim->max_string + 4);
  if (!c.tmp) return RIPPLE_ENOMEM;
  sbuf_init(&c.keys);
  sbuf_putc(out, '[');
  int rc = enc == OTLP_PROTOBUF ? receive_pb(&c, body, len) : receive_json(&c, body, len);
  sbuf_putc(out, ']');
  if (rc == RIPPLE_OK && (out->oom || c.keys.oom)) rc = RIPPLE_ENOMEM;
  sbuf_free(&c.keys);
  free(c.tmp);
  return rc;
}

int otlp_receive_batch(otlp_encoding_t enc, const void *body, size_t len, const otlp_recv_t *r,
                       dec_batch_t *out, otlp_result_t *res, dec_error_t *err) {
  memset(res, 0, sizeof *res);
  memset(out, 0, sizeof *out);
  memset(err, 0, sizeof *err);
  out->kind = DEC_SPANS;
  err->index = -1;
  direct_t *d = malloc(sizeof *d);
  conv_t c = {.r = r, .res = res, .first = 1, .d = d};
  c.max_attrs = r->lim->max_attrs < 256 ? r->lim->max_attrs : 256;
  c.tmp = malloc(r->lim->max_string + 4);
  int rc = RIPPLE_ENOMEM;
  if (!d || !c.tmp) goto done;
  *d = (direct_t){.b = out, .err = err};
  sbuf_init(&d->text);
  /* The canonical bodies take about 1.5 times the protobuf: room for them at
   * once rather than a doubling and a copy per power of two. */
  size_t cap = len * 2 + 256;
  if ((out->body.p = malloc(cap))) out->body.cap = cap, out->body.p[0] = '\0';
  rc = enc == OTLP_PROTOBUF ? receive_pb(&c, body, len) : receive_json(&c, body, len);
  if (rc == RIPPLE_OK && d->text.oom) rc = RIPPLE_ENOMEM;
  /* dec_decode's precedence: too many records over a bad one. */
  if (rc == RIPPLE_OK) rc = dec_check_count(r->lim, res->accepted, err);
  if (rc == RIPPLE_OK) rc = d->rc;
  /* An empty batch still has its records array, as callers of dec_decode expect. */
  if (rc == RIPPLE_OK && !out->rec && !(out->rec = malloc(sizeof *out->rec))) rc = RIPPLE_ENOMEM;
  sbuf_free(&d->text);
done:
  if (rc == RIPPLE_EJSON || (rc == RIPPLE_ENOMEM && res->msg[0]))
    snprintf(err->msg, sizeof err->msg, "%s", res->msg);
  else if (rc == RIPPLE_ENOMEM)
    snprintf(err->msg, sizeof err->msg, "out of memory");
  if (rc != RIPPLE_OK) dec_batch_free(out);
  free(c.tmp);
  free(d);
  return rc;
}

void otlp_response(otlp_encoding_t enc, const otlp_result_t *res, sbuf_t *out) {
  if (enc == OTLP_JSON) {
    if (!res->rejected) {
      sbuf_puts(out, "{}");
      return;
    }
    sbuf_printf(out,
                "{\"partialSuccess\":{\"rejectedSpans\":\"%zu\",\"errorMessage\":", res->rejected);
    sbuf_json_str(out, res->msg);
    sbuf_puts(out, "}}");
    return;
  }
  Ripple__Otlp__ExportTraceServiceResponse r = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_RESPONSE__INIT;
  Ripple__Otlp__ExportTracePartialSuccess ps = RIPPLE__OTLP__EXPORT_TRACE_PARTIAL_SUCCESS__INIT;
  if (res->rejected) {
    ps.rejected_spans = (int64_t)res->rejected;
    ps.error_message = (char *)res->msg;
    r.partial_success = &ps;
  }
  uint8_t buf[512];
  size_t n = ripple__otlp__export_trace_service_response__get_packed_size(&r);
  if (n <= sizeof buf)
    sbuf_put(out, (const char *)buf, ripple__otlp__export_trace_service_response__pack(&r, buf));
}
