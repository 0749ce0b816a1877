/*
 * otlp_export.c - stored ripple records as an OTLP ExportTraceServiceRequest
 * (protobuf), for the exporter (export.c). The mapping is in otlp.h and
 * docs/otlp.md.
 *
 * Records come from the store as canonical JSON (what the server wrote, so
 * always valid: flat objects, one level of "object" or "attributes") and are
 * read with yajl's event parser straight into the batch's arena: no document
 * tree per record (reading with jansson's cost three times as much, most of it
 * allocating and freeing the tree). The protobuf messages are built in the
 * same arena and packed by protobuf-c.
 */
#include "export/otlp_export.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ripplex/arena.h"

#include "ripplex/cpid.h"
#include "ripplex/hex.h"

#include "ingest/otlp.pb-c.h"

typedef Ripple__Otlp__Span pb_span_t;
typedef Ripple__Otlp__KeyValue pb_kv_t;

/* ---- the batch ------------------------------------------------------------ */

/* Spans of one service: one ResourceSpans in the request. */
typedef struct service {
  const char *name;
  pb_span_t **spans;
  size_t n, cap;
} service_t;

/* A stored record as read: every string in the batch's arena, NUL-terminated;
 * NULL when absent. */
typedef struct rec {
  char *cpid, *span_id, *parent_id, *service, *name, *start, *end; /* a span */
  char *time, *component;                                          /* a mergelog */
  char *okind, *ons, *oname, *ouid, *oapi;                         /* its object */
  char **src;                                                      /* a mergelog's sources */
  size_t nsrc, capsrc;
  char **attr; /* a span's attributes: key, value, key, value, ... */
  size_t nattr, capattr;
} rec_t;

struct otlp_batch {
  arena_chunk_t *arena; /* everything one batch allocates (ripplex/arena.h) */
  rec_t rec;            /* the record being read; its arrays are reused */
  const char *key;      /* the key just read (in the arena) */
  int depth, in_attrs;  /* maps open; inside "attributes" */
  int in_object;        /* inside a mergelog's "object" */
  service_t *svc;
  size_t nsvc, capsvc;
  size_t spans;
};

int otlp_batch_new(otlp_batch_t **out) {
  *out = calloc(1, sizeof **out);
  return *out ? RIPPLE_OK : RIPPLE_ENOMEM;
}

void otlp_batch_reset(otlp_batch_t *b) {
  for (size_t i = 0; i < b->nsvc; i++) free(b->svc[i].spans);
  b->nsvc = b->spans = 0;
  arena_free(&b->arena);
}

void otlp_batch_free(otlp_batch_t *b) {
  if (!b) return;
  otlp_batch_reset(b);
  free(b->rec.src);
  free(b->rec.attr);
  free(b->svc);
  free(b);
}

size_t otlp_batch_spans(const otlp_batch_t *b) { return b->spans; }

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return RIPPLE_OK;
  size_t n = *cap ? *cap * 2 : 16;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * size);
  if (!q) return RIPPLE_ENOMEM;
  *p = q;
  *cap = n;
  return RIPPLE_OK;
}

/* The span joins its service's list (services are few: a linear search). */
static int add_to_service(otlp_batch_t *b, const char *name, pb_span_t *sp) {
  service_t *s = NULL;
  for (size_t i = 0; i < b->nsvc && !s; i++)
    if (!strcmp(b->svc[i].name, name)) s = &b->svc[i];
  if (!s) {
    if (grow((void **)&b->svc, &b->capsvc, b->nsvc + 1, sizeof *b->svc) != RIPPLE_OK)
      return RIPPLE_ENOMEM;
    s = &b->svc[b->nsvc++];
    *s = (service_t){.name = name};
  }
  if (grow((void **)&s->spans, &s->cap, s->n + 1, sizeof(void *)) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  s->spans[s->n++] = sp;
  b->spans++;
  return RIPPLE_OK;
}

/* ---- building messages ------------------------------------------------------ */

/* A list of attributes being filled (at most cap). */
typedef struct kvs {
  pb_kv_t **v;
  size_t n, cap;
} kvs_t;

static int kvs_init(otlp_batch_t *b, kvs_t *k, size_t cap) {
  k->n = 0;
  k->cap = cap;
  k->v = arena_alloc(&b->arena, (cap ? cap : 1) * sizeof(void *));
  return k->v ? RIPPLE_OK : RIPPLE_ENOMEM;
}

/* key = a string value; skipped when value is NULL or empty. */
static int kvs_add(otlp_batch_t *b, kvs_t *k, const char *key, const char *value) {
  if (!value || !*value || k->n == k->cap) return RIPPLE_OK;
  pb_kv_t *kv = arena_alloc(&b->arena, sizeof *kv);
  Ripple__Otlp__AnyValue *v = arena_alloc(&b->arena, sizeof *v);
  if (!kv || !v) return RIPPLE_ENOMEM;
  ripple__otlp__key_value__init(kv);
  ripple__otlp__any_value__init(v);
  kv->key = (char *)key;
  v->value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
  v->string_value = (char *)value;
  kv->value = v;
  k->v[k->n++] = kv;
  return RIPPLE_OK;
}

static uint8_t *bytes_copy(otlp_batch_t *b, const void *p, size_t n) {
  uint8_t *q = arena_alloc(&b->arena, n);
  if (q) memcpy(q, p, n);
  return q;
}

/* The arena copy of a string (for text made here, not found in a document). */
static char *str_copy(otlp_batch_t *b, const char *s) {
  size_t n = strlen(s) + 1;
  char *q = arena_alloc(&b->arena, n);
  if (q) memcpy(q, s, n);
  return q;
}

static uint64_t unix_nano(const char *rfc3339) {
  int64_t ns = 0;
  if (!rfc3339 || ripple_time_parse(rfc3339, strlen(rfc3339), &ns) != RIPPLE_OK || ns < 0) return 0;
  return (uint64_t)ns;
}

static int cpid_of(const char *s, ripple_cpid_t *out) {
  return s ? ripple_cpid_parse(s, strlen(s), out) : RIPPLE_EJSON;
}

/* A stored span id (16 hex digits) as bytes. */
static int hex_id(const char *s, uint8_t out[8]) {
  return s && strlen(s) == 16 && hex_decode(s, 8, out, 0) ? RIPPLE_OK : RIPPLE_EJSON;
}

static pb_span_t *new_span(otlp_batch_t *b, const ripple_cpid_t *cpid, const uint8_t id[8]) {
  pb_span_t *sp = arena_alloc(&b->arena, sizeof *sp);
  if (!sp) return NULL;
  ripple__otlp__span__init(sp);
  sp->trace_id = (ProtobufCBinaryData){16, bytes_copy(b, cpid->b, 16)};
  sp->span_id = (ProtobufCBinaryData){8, bytes_copy(b, id, 8)};
  sp->kind = 1; /* internal */
  return sp->trace_id.data && sp->span_id.data ? sp : NULL;
}

/* Kinds with OpenTelemetry semantic-convention attributes (k8s.<kind>.name). */
static const char *semconv_key(otlp_batch_t *b, const char *kind, const char *suffix) {
  static const char *const kinds[] = {"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                                      "Job", "CronJob",    "Node",       "Namespace",   NULL};
  for (size_t i = 0; kind && kinds[i]; i++) {
    if (strcmp(kind, kinds[i]) != 0) continue;
    char key[64], lower[32];
    size_t n = strlen(kind);
    for (size_t j = 0; j <= n; j++) lower[j] = (char)tolower((unsigned char)kind[j]);
    snprintf(key, sizeof key, "k8s.%s.%s", lower, suffix);
    return str_copy(b, key);
  }
  return NULL;
}

/* ---- reading a stored record ------------------------------------------------- */

static char *arena_strn(otlp_batch_t *b, const unsigned char *p, size_t n) {
  char *q = arena_alloc(&b->arena, n + 1);
  if (q) memcpy(q, p, n), q[n] = '\0';
  return q;
}

static int push(char ***v, size_t *n, size_t *cap, char *s) {
  if (grow((void **)v, cap, *n + 1, sizeof **v) != RIPPLE_OK) return 0;
  (*v)[(*n)++] = s;
  return 1;
}

static int on_key(void *ud, const unsigned char *k, size_t n) {
  otlp_batch_t *b = ud;
  b->key = arena_strn(b, k, n);
  return b->key != NULL;
}

static int on_start_map(void *ud) {
  otlp_batch_t *b = ud;
  if (++b->depth == 2 && b->key) {
    b->in_attrs = !strcmp(b->key, "attributes");
    b->in_object = !strcmp(b->key, "object");
  }
  return b->depth <= 2; /* a stored record is never deeper */
}

static int on_end_map(void *ud) {
  otlp_batch_t *b = ud;
  b->depth--;
  b->in_attrs = b->in_object = 0;
  return 1;
}

/* A string value lands in the field its key names. */
static int on_string(void *ud, const unsigned char *p, size_t n) {
  otlp_batch_t *b = ud;
  rec_t *r = &b->rec;
  char *v = arena_strn(b, p, n);
  const char *k = b->key ? b->key : "";
  if (!v) return 0;
  if (b->in_attrs)
    return push(&r->attr, &r->nattr, &r->capattr, (char *)k) &&
           push(&r->attr, &r->nattr, &r->capattr, v);
  if (b->in_object) {
    char **slot = !strcmp(k, "kind")         ? &r->okind
                  : !strcmp(k, "namespace")  ? &r->ons
                  : !strcmp(k, "name")       ? &r->oname
                  : !strcmp(k, "uid")        ? &r->ouid
                  : !strcmp(k, "apiVersion") ? &r->oapi
                                             : NULL;
    if (slot) *slot = v;
    return 1;
  }
  if (!strcmp(k, "sources")) return push(&r->src, &r->nsrc, &r->capsrc, v);
  static const struct {
    const char *key;
    size_t off;
  } fields[] = {{"cpid", offsetof(rec_t, cpid)},
                {"span_id", offsetof(rec_t, span_id)},
                {"parent_id", offsetof(rec_t, parent_id)},
                {"service", offsetof(rec_t, service)},
                {"name", offsetof(rec_t, name)},
                {"start", offsetof(rec_t, start)},
                {"end", offsetof(rec_t, end)},
                {"time", offsetof(rec_t, time)},
                {"component", offsetof(rec_t, component)}};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
    if (!strcmp(k, fields[i].key)) *(char **)((char *)r + fields[i].off) = v;
  return 1;
}

static const yajl_callbacks reader = {.yajl_map_key = on_key,
                                      .yajl_start_map = on_start_map,
                                      .yajl_end_map = on_end_map,
                                      .yajl_string = on_string};

/* Read body into b->rec. */
static int read_record(otlp_batch_t *b, const char *body, size_t len) {
  char **src = b->rec.src, **attr = b->rec.attr;
  size_t capsrc = b->rec.capsrc, capattr = b->rec.capattr;
  b->rec = (rec_t){.src = src, .attr = attr, .capsrc = capsrc, .capattr = capattr};
  b->key = NULL;
  b->depth = b->in_attrs = b->in_object = 0;
  yajl_handle h = yajl_alloc(&reader, NULL, b);
  if (!h) return RIPPLE_ENOMEM;
  int ok = yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok &&
           yajl_complete_parse(h) == yajl_status_ok;
  yajl_free(h);
  return ok && b->rec.cpid ? RIPPLE_OK : RIPPLE_EJSON;
}

/* ---- records as spans ------------------------------------------------------------ */

/* One link from a merge's root span to a source's. */
static Ripple__Otlp__Link *source_link(otlp_batch_t *b, const ripple_cpid_t *src) {
  uint8_t id[8];
  Ripple__Otlp__Link *l = arena_alloc(&b->arena, sizeof *l);
  kvs_t la;
  if (!l || kvs_init(b, &la, 1) != RIPPLE_OK) return NULL;
  ripple__otlp__link__init(l);
  cpid_root_span(src, id);
  l->trace_id = (ProtobufCBinaryData){16, bytes_copy(b, src->b, 16)};
  l->span_id = (ProtobufCBinaryData){8, bytes_copy(b, id, 8)};
  l->flags = 0x100; /* "is remote" known: not remote */
  if (!l->trace_id.data || !l->span_id.data ||
      kvs_add(b, &la, "ripple.link", "merged_from") != RIPPLE_OK)
    return NULL;
  l->attributes = la.v;
  l->n_attributes = la.n;
  return l;
}

/* A mergelog: its CPID's root span, linked to each source's root span. */
static int add_mergelog(otlp_batch_t *b, const rec_t *r) {
  ripple_cpid_t cpid;
  uint8_t id[8];
  if (cpid_of(r->cpid, &cpid) != RIPPLE_OK) return RIPPLE_EJSON;
  cpid_root_span(&cpid, id);
  pb_span_t *sp = new_span(b, &cpid, id);
  if (!sp) return RIPPLE_ENOMEM;
  sp->name = (char *)(r->nsrc ? "ripple.merge" : "ripple.root");
  sp->start_time_unix_nano = sp->end_time_unix_nano = unix_nano(r->time);
  sp->links = arena_alloc(&b->arena, (r->nsrc ? r->nsrc : 1) * sizeof(void *));
  if (!sp->links) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < r->nsrc; i++) {
    ripple_cpid_t s;
    if (cpid_of(r->src[i], &s) != RIPPLE_OK) continue;
    if (!(sp->links[sp->n_links++] = source_link(b, &s))) return RIPPLE_ENOMEM;
  }
  kvs_t a;
  if (kvs_init(b, &a, 10) != RIPPLE_OK) return RIPPLE_ENOMEM;
  int rc = kvs_add(b, &a, "ripple.cpid", r->cpid);
  if (!rc) rc = kvs_add(b, &a, "ripple.component", r->component);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.api_version", r->oapi);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.kind", r->okind);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.name", r->oname);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.uid", r->ouid);
  if (!rc) rc = kvs_add(b, &a, "k8s.namespace.name", r->ons);
  if (!rc && r->oname) rc = kvs_add(b, &a, semconv_key(b, r->okind, "name"), r->oname);
  if (!rc && r->ouid) rc = kvs_add(b, &a, semconv_key(b, r->okind, "uid"), r->ouid);
  if (rc) return rc;
  sp->attributes = a.v;
  sp->n_attributes = a.n;
  return add_to_service(b, r->component && *r->component ? r->component : "unknown", sp);
}

/* The value of a span's attribute key, NULL when it has none. */
static const char *attr_of(const rec_t *r, const char *key) {
  for (size_t i = 0; i + 1 < r->nattr; i += 2)
    if (!strcmp(r->attr[i], key)) return r->attr[i + 1];
  return NULL;
}

static int nonzero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 1;
  return 0;
}

/* The link from a write's span to kube-apiserver's span of that write (the
 * "HTTP POST" that called the webhook, from its traceparent header: the
 * attributes apiserverTraceId and apiserverSpanId, docs/otlp.md): one link
 * into sp->links, or none when either is absent or not lower-case hex of
 * the right length with some non-zero digit (a writer may send anything). */
static int apiserver_link(otlp_batch_t *b, const rec_t *r, pb_span_t *sp) {
  const char *t = attr_of(r, "apiserverTraceId"), *s = attr_of(r, "apiserverSpanId");
  uint8_t trace[16], span[8];
  if (!t || !s || strlen(t) != 32 || strlen(s) != 16 || !hex_decode(t, 16, trace, 0) ||
      !hex_decode(s, 8, span, 0) || !nonzero(trace, 16) || !nonzero(span, 8))
    return RIPPLE_OK;
  Ripple__Otlp__Link *l = arena_alloc(&b->arena, sizeof *l);
  kvs_t la;
  sp->links = arena_alloc(&b->arena, sizeof(void *));
  if (!l || !sp->links || kvs_init(b, &la, 1) != RIPPLE_OK) return RIPPLE_ENOMEM;
  ripple__otlp__link__init(l);
  l->trace_id = (ProtobufCBinaryData){16, bytes_copy(b, trace, 16)};
  l->span_id = (ProtobufCBinaryData){8, bytes_copy(b, span, 8)};
  l->flags = 0x300; /* "is remote" known: remote (another process's span) */
  if (!l->trace_id.data || !l->span_id.data ||
      kvs_add(b, &la, "ripple.link", "apiserver_request") != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  l->attributes = la.v;
  l->n_attributes = la.n;
  sp->links[0] = l;
  sp->n_links = 1;
  return RIPPLE_OK;
}

/* A span: its own ids, under its parent or else its CPID's root span. */
static int add_span(otlp_batch_t *b, const rec_t *r) {
  ripple_cpid_t cpid;
  uint8_t id[8], parent[8];
  if (cpid_of(r->cpid, &cpid) != RIPPLE_OK || !r->service || hex_id(r->span_id, id) != RIPPLE_OK)
    return RIPPLE_EJSON;
  if (hex_id(r->parent_id, parent) != RIPPLE_OK) cpid_root_span(&cpid, parent);
  pb_span_t *sp = new_span(b, &cpid, id);
  if (!sp) return RIPPLE_ENOMEM;
  sp->parent_span_id = (ProtobufCBinaryData){8, bytes_copy(b, parent, 8)};
  sp->name = r->name ? r->name : (char *)"";
  sp->start_time_unix_nano = unix_nano(r->start);
  sp->end_time_unix_nano = unix_nano(r->end);
  kvs_t a;
  if (!sp->parent_span_id.data || kvs_init(b, &a, r->nattr / 2 + 1) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  int rc = kvs_add(b, &a, "ripple.cpid", r->cpid);
  for (size_t i = 0; i + 1 < r->nattr && !rc; i += 2)
    rc = kvs_add(b, &a, r->attr[i], r->attr[i + 1]);
  if (!rc) rc = apiserver_link(b, r, sp);
  if (rc) return rc;
  sp->attributes = a.v;
  sp->n_attributes = a.n;
  return add_to_service(b, r->service, sp);
}

int otlp_batch_add(otlp_batch_t *b, dec_kind_t kind, const char *body, size_t len) {
  int rc = read_record(b, body, len);
  if (rc != RIPPLE_OK) return rc;
  return kind == DEC_MERGELOGS ? add_mergelog(b, &b->rec) : add_span(b, &b->rec);
}

/* ---- packing ---------------------------------------------------------------- */

int otlp_batch_encode(otlp_batch_t *b, sbuf_t *out) {
  static Ripple__Otlp__InstrumentationScope scope = RIPPLE__OTLP__INSTRUMENTATION_SCOPE__INIT;
  scope.name = "ripple";
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.resource_spans = arena_alloc(&b->arena, (b->nsvc + 1) * sizeof(void *));
  if (!req.resource_spans) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < b->nsvc; i++) {
    Ripple__Otlp__ResourceSpans *rs = arena_alloc(&b->arena, sizeof *rs);
    Ripple__Otlp__Resource *res = arena_alloc(&b->arena, sizeof *res);
    Ripple__Otlp__ScopeSpans *ss = arena_alloc(&b->arena, sizeof *ss);
    Ripple__Otlp__ScopeSpans **ssv = arena_alloc(&b->arena, sizeof(void *));
    kvs_t ra;
    if (!rs || !res || !ss || !ssv || kvs_init(b, &ra, 1) != RIPPLE_OK) return RIPPLE_ENOMEM;
    ripple__otlp__resource_spans__init(rs);
    ripple__otlp__resource__init(res);
    ripple__otlp__scope_spans__init(ss);
    if (kvs_add(b, &ra, "service.name", b->svc[i].name) != RIPPLE_OK) return RIPPLE_ENOMEM;
    res->attributes = ra.v;
    res->n_attributes = ra.n;
    ss->scope = &scope;
    ss->spans = b->svc[i].spans;
    ss->n_spans = b->svc[i].n;
    ssv[0] = ss;
    rs->resource = res;
    rs->scope_spans = ssv;
    rs->n_scope_spans = 1;
    req.resource_spans[req.n_resource_spans++] = rs;
  }
  size_t n = ripple__otlp__export_trace_service_request__get_packed_size(&req);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return RIPPLE_ENOMEM;
  size_t packed = ripple__otlp__export_trace_service_request__pack(&req, buf);
  sbuf_put(out, (const char *)buf, packed);
  free(buf);
  return out->oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

void otlp_read_response(const void *body, size_t len, int64_t *rejected, char *msg, size_t cap) {
  *rejected = 0;
  if (cap) msg[0] = '\0';
  if (!len) return;
  Ripple__Otlp__ExportTraceServiceResponse *r =
      ripple__otlp__export_trace_service_response__unpack(NULL, len, body);
  if (!r) return;
  if (r->partial_success) {
    *rejected = r->partial_success->rejected_spans;
    if (cap && r->partial_success->error_message)
      snprintf(msg, cap, "%s", r->partial_success->error_message);
  }
  ripple__otlp__export_trace_service_response__free_unpacked(r, NULL);
}
