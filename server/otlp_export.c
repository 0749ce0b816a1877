/*
 * otlp_export.c - stored ripple records as an OTLP ExportTraceServiceRequest
 * (protobuf), for the exporter (export.c). The mapping is in otlp.h and
 * docs/otlp.md.
 *
 * Records come from the store as canonical JSON (what the server wrote, so
 * always valid) and are parsed with jansson; the protobuf messages are built
 * by hand in an arena and packed by protobuf-c. Strings of the messages point
 * into the parsed documents, which the batch keeps until it is reset.
 */
#include "otlp.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.pb-c.h"

typedef Ripple__Otlp__Span pb_span_t;
typedef Ripple__Otlp__KeyValue pb_kv_t;

/* ---- an arena: everything one batch allocates, freed at once ---------------- */

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char mem[];
} chunk_t;

static void *arena_alloc(chunk_t **head, size_t n) {
  n = (n + 15) & ~(size_t)15;
  chunk_t *c = *head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = *head;
    c->used = 0;
    c->cap = cap;
    *head = c;
  }
  void *p = c->mem + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

static void arena_free(chunk_t **head) {
  for (chunk_t *c = *head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  *head = NULL;
}

/* ---- the batch ------------------------------------------------------------ */

/* Spans of one service: one ResourceSpans in the request. */
typedef struct service {
  const char *name;
  pb_span_t **spans;
  size_t n, cap;
} service_t;

struct otlp_batch {
  chunk_t *arena;
  json_t **docs; /* parsed records: the messages' strings point into them */
  size_t ndocs, capdocs;
  service_t *svc;
  size_t nsvc, capsvc;
  size_t spans;
};

void otlp_root_span_id(const ripple_cpid_t *cpid, uint8_t out[8]) {
  static const uint8_t zero[8];
  /* A CPID ripple made has its variant bits in byte 8; one taken from
   * elsewhere (a client's trace id) may end in 8 zero bytes, which is no span
   * id: its first 8 bytes then (not zero, since a CPID is not nil). */
  memcpy(out, cpid->b + (memcmp(cpid->b + 8, zero, 8) ? 8 : 0), 8);
}

int otlp_batch_new(otlp_batch_t **out) {
  *out = calloc(1, sizeof **out);
  return *out ? RIPPLE_OK : RIPPLE_ENOMEM;
}

void otlp_batch_reset(otlp_batch_t *b) {
  for (size_t i = 0; i < b->ndocs; i++) json_decref(b->docs[i]);
  for (size_t i = 0; i < b->nsvc; i++) free(b->svc[i].spans);
  b->ndocs = b->nsvc = b->spans = 0;
  arena_free(&b->arena);
}

void otlp_batch_free(otlp_batch_t *b) {
  if (!b) return;
  otlp_batch_reset(b);
  free(b->docs);
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
  if (grow((void **)&s->spans, &s->cap, s->n + 1, sizeof *s->spans) != RIPPLE_OK)
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
  k->v = arena_alloc(&b->arena, (cap ? cap : 1) * sizeof *k->v);
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

static int cpid_of(json_t *doc, const char *key, ripple_cpid_t *out) {
  const char *s = json_string_value(json_object_get(doc, key));
  return s ? ripple_cpid_parse(s, strlen(s), out) : RIPPLE_EJSON;
}

static int hex_id(const char *s, uint8_t out[8]) {
  if (!s || strlen(s) != 16) return RIPPLE_EJSON;
  for (int i = 0; i < 8; i++) {
    unsigned v;
    char two[3] = {s[2 * i], s[2 * i + 1], 0};
    if (!isxdigit((unsigned char)two[0]) || !isxdigit((unsigned char)two[1])) return RIPPLE_EJSON;
    v = (unsigned)strtoul(two, NULL, 16);
    out[i] = (uint8_t)v;
  }
  return RIPPLE_OK;
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

/* A mergelog: its CPID's root span, linked to each source's root span. */
static int add_mergelog(otlp_batch_t *b, json_t *doc) {
  ripple_cpid_t cpid;
  uint8_t id[8];
  if (cpid_of(doc, "cpid", &cpid) != RIPPLE_OK) return RIPPLE_EJSON;
  otlp_root_span_id(&cpid, id);
  json_t *src = json_object_get(doc, "sources"), *obj = json_object_get(doc, "object");
  pb_span_t *sp = new_span(b, &cpid, id);
  if (!sp) return RIPPLE_ENOMEM;
  size_t nsrc = json_array_size(src);
  sp->name = nsrc ? "ripple.merge" : "ripple.root";
  sp->start_time_unix_nano = sp->end_time_unix_nano =
      unix_nano(json_string_value(json_object_get(doc, "time")));
  sp->links = arena_alloc(&b->arena, (nsrc ? nsrc : 1) * sizeof *sp->links);
  if (!sp->links) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < nsrc; i++) {
    ripple_cpid_t s;
    const char *text = json_string_value(json_array_get(src, i));
    if (!text || ripple_cpid_parse(text, strlen(text), &s) != RIPPLE_OK) continue;
    Ripple__Otlp__Link *l = arena_alloc(&b->arena, sizeof *l);
    kvs_t la;
    if (!l || kvs_init(b, &la, 1) != RIPPLE_OK) return RIPPLE_ENOMEM;
    ripple__otlp__link__init(l);
    otlp_root_span_id(&s, id);
    l->trace_id = (ProtobufCBinaryData){16, bytes_copy(b, s.b, 16)};
    l->span_id = (ProtobufCBinaryData){8, bytes_copy(b, id, 8)};
    l->flags = 0x100; /* "is remote" known: not remote */
    if (!l->trace_id.data || !l->span_id.data) return RIPPLE_ENOMEM;
    if (kvs_add(b, &la, "ripple.link", "merged_from") != RIPPLE_OK) return RIPPLE_ENOMEM;
    l->attributes = la.v;
    l->n_attributes = la.n;
    sp->links[sp->n_links++] = l;
  }
  const char *kind = json_string_value(json_object_get(obj, "kind"));
  const char *name = json_string_value(json_object_get(obj, "name"));
  const char *uid = json_string_value(json_object_get(obj, "uid"));
  const char *comp = json_string_value(json_object_get(doc, "component"));
  kvs_t a;
  if (kvs_init(b, &a, 10) != RIPPLE_OK) return RIPPLE_ENOMEM;
  int rc = kvs_add(b, &a, "ripple.cpid", json_string_value(json_object_get(doc, "cpid")));
  if (!rc) rc = kvs_add(b, &a, "ripple.component", comp);
  if (!rc)
    rc = kvs_add(b, &a, "ripple.object.api_version",
                 json_string_value(json_object_get(obj, "apiVersion")));
  if (!rc) rc = kvs_add(b, &a, "ripple.object.kind", kind);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.name", name);
  if (!rc) rc = kvs_add(b, &a, "ripple.object.uid", uid);
  if (!rc)
    rc = kvs_add(b, &a, "k8s.namespace.name", json_string_value(json_object_get(obj, "namespace")));
  if (!rc && name) rc = kvs_add(b, &a, semconv_key(b, kind, "name"), name);
  if (!rc && uid) rc = kvs_add(b, &a, semconv_key(b, kind, "uid"), uid);
  if (rc) return rc;
  sp->attributes = a.v;
  sp->n_attributes = a.n;
  return add_to_service(b, comp && *comp ? comp : "unknown", sp);
}

/* A span: its own ids, under its parent or else its CPID's root span. */
static int add_span(otlp_batch_t *b, json_t *doc) {
  ripple_cpid_t cpid;
  uint8_t id[8], parent[8];
  const char *service = json_string_value(json_object_get(doc, "service"));
  if (cpid_of(doc, "cpid", &cpid) != RIPPLE_OK || !service ||
      hex_id(json_string_value(json_object_get(doc, "span_id")), id) != RIPPLE_OK)
    return RIPPLE_EJSON;
  if (hex_id(json_string_value(json_object_get(doc, "parent_id")), parent) != RIPPLE_OK)
    otlp_root_span_id(&cpid, parent);
  pb_span_t *sp = new_span(b, &cpid, id);
  if (!sp) return RIPPLE_ENOMEM;
  sp->parent_span_id = (ProtobufCBinaryData){8, bytes_copy(b, parent, 8)};
  const char *name = json_string_value(json_object_get(doc, "name"));
  sp->name = (char *)(name ? name : "");
  sp->start_time_unix_nano = unix_nano(json_string_value(json_object_get(doc, "start")));
  sp->end_time_unix_nano = unix_nano(json_string_value(json_object_get(doc, "end")));
  json_t *attrs = json_object_get(doc, "attributes");
  kvs_t a;
  if (!sp->parent_span_id.data || kvs_init(b, &a, json_object_size(attrs) + 1) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  int rc = kvs_add(b, &a, "ripple.cpid", json_string_value(json_object_get(doc, "cpid")));
  const char *k;
  json_t *v;
  json_object_foreach(attrs, k, v) {
    if (!rc) rc = kvs_add(b, &a, k, json_string_value(v));
  }
  if (rc) return rc;
  sp->attributes = a.v;
  sp->n_attributes = a.n;
  return add_to_service(b, service, sp);
}

int otlp_batch_add(otlp_batch_t *b, dec_kind_t kind, const char *body, size_t len) {
  json_t *doc = json_loadb(body, len, 0, NULL);
  if (!json_is_object(doc)) {
    json_decref(doc);
    return RIPPLE_EJSON;
  }
  if (grow((void **)&b->docs, &b->capdocs, b->ndocs + 1, sizeof *b->docs) != RIPPLE_OK) {
    json_decref(doc);
    return RIPPLE_ENOMEM;
  }
  b->docs[b->ndocs++] = doc;
  return kind == DEC_MERGELOGS ? add_mergelog(b, doc) : add_span(b, doc);
}

/* ---- packing ---------------------------------------------------------------- */

int otlp_batch_encode(otlp_batch_t *b, sbuf_t *out) {
  static Ripple__Otlp__InstrumentationScope scope = RIPPLE__OTLP__INSTRUMENTATION_SCOPE__INIT;
  scope.name = "ripple";
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.resource_spans = arena_alloc(&b->arena, (b->nsvc + 1) * sizeof *req.resource_spans);
  if (!req.resource_spans) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < b->nsvc; i++) {
    Ripple__Otlp__ResourceSpans *rs = arena_alloc(&b->arena, sizeof *rs);
    Ripple__Otlp__Resource *res = arena_alloc(&b->arena, sizeof *res);
    Ripple__Otlp__ScopeSpans *ss = arena_alloc(&b->arena, sizeof *ss);
    Ripple__Otlp__ScopeSpans **ssv = arena_alloc(&b->arena, sizeof *ssv);
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
