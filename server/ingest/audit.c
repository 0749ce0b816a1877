/*
 * audit.c - see audit.h. The EventList is read in one pass with yajl's event
 * parser: a stack of roles says what each open container is (the list, its
 * items, an event, its user, objectRef, ...), each role's table maps keys to
 * what their values become, and every container no table names is skipped by
 * counting its depth, unread. Kept strings are copied into the batch's arena;
 * an event that is not kept gives its arena space back.
 *
 * Choices this file makes, for input the apiserver does not send:
 *  - A repeated key: the last value wins, as Go's encoding/json decides (what
 *    the apiserver itself would read). Objects that are Go structs (user,
 *    objectRef, responseStatus, metadata) merge field by field; arrays
 *    (items, groups, sourceIPs) and requestObject/responseObject (raw JSON in
 *    the apiserver) are replaced whole by their last occurrence. Annotations
 *    merge, so of two keys ending in "/ripple-span" the last one wins.
 *  - null is taken as absent: the field keeps what an earlier repeat gave it.
 *    An item that is null, or not an object, is a malformed event.
 *  - A kept string with a NUL byte (from \u0000, which is valid JSON) is cut
 *    before it and ends in "...", like a string cut for length.
 *  - The body must be strict JSON (ripplex/jstrict.h, \u0000 allowed): yajl's
 *    own UTF-8 check lets overlong forms and surrogates through.
 *  - Precedence: malformed JSON anywhere wins over a body that is not an
 *    EventList, which wins over too many items; so the whole body is always
 *    parsed (items past max_events are counted, not read).
 */
#include "ingest/audit.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ripple/ripple.h"
#include "ripplex/arena.h"
#include "ripplex/jstrict.h"
#include "ripplex/utf8.h"

/* Containers open at once; one more is malformed JSON. */
#define AUDIT_MAX_DEPTH 512
/* The deepest container read (an event's user.groups); deeper ones are skipped. */
#define KNOWN_DEPTH 8

/* ---- what each key's value becomes ---------------------------------------- */

/* What an open container is. */
typedef enum role {
  R_ROOT, /* nothing open yet: the body */
  R_TOP,  /* the EventList */
  R_ITEMS,
  R_EVENT,
  R_USER,
  R_IMP,
  R_GROUPS,
  R_IPS,
  R_REF,
  R_STATUS,
  R_REQ,
  R_RESP,
  R_REQMETA,
  R_RESPMETA,
  R_ANNOT,
  R_NROLES
} role_t;

/* The role of a container that is skipped. */
#define SKIP (-1)
/* A callback stopped the parse. */
#define STOP (-2)

typedef enum type {
  T_STR,   /* a string kept in the event at off */
  T_TIME,  /* an RFC 3339 string, as ns since the epoch at off */
  T_CODE,  /* responseStatus.code: an integer */
  T_MAP,   /* an object read as role */
  T_ARR,   /* an array read as role */
  T_CHECK, /* a string not kept (an annotation ripple does not use) */
  T_GROUP, /* an element of user.groups */
  T_IP,    /* an element of sourceIPs */
  T_EVENT, /* an element of items */
  T_KIND,  /* the EventList's kind */
  T_APIV,  /* the EventList's apiVersion */
  T_ITEMS, /* the EventList's items */
  T_BODY   /* the whole body */
} type_t;

typedef struct field {
  const char *key;
  uint8_t len, type, role;
  uint16_t off;
} field_t;

#define FLD(k, t, r, o) \
  { (k), sizeof(k) - 1, (t), (r), (o) }
#define STR(k, m) FLD(k, T_STR, 0, offsetof(audit_event_t, m))
#define TIME(k, m) FLD(k, T_TIME, 0, offsetof(audit_event_t, m))
#define MAP(k, r) FLD(k, T_MAP, r, 0)
#define ARR(k, r) FLD(k, T_ARR, r, 0)
#define END \
  { NULL, 0, 0, 0, 0 }

static const field_t top_fields[] = {FLD("kind", T_KIND, 0, 0), FLD("apiVersion", T_APIV, 0, 0),
                                     FLD("items", T_ITEMS, 0, 0), END};

static const field_t event_fields[] = {STR("auditID", audit_id),
                                       STR("verb", verb),
                                       STR("stage", stage),
                                       STR("userAgent", user_agent),
                                       TIME("requestReceivedTimestamp", received_ns),
                                       TIME("stageTimestamp", stage_ns),
                                       MAP("user", R_USER),
                                       MAP("impersonatedUser", R_IMP),
                                       ARR("sourceIPs", R_IPS),
                                       MAP("objectRef", R_REF),
                                       MAP("responseStatus", R_STATUS),
                                       MAP("requestObject", R_REQ),
                                       MAP("responseObject", R_RESP),
                                       MAP("annotations", R_ANNOT),
                                       END};

static const field_t user_fields[] = {STR("username", user), ARR("groups", R_GROUPS), END};
static const field_t imp_fields[] = {STR("username", impersonated), END};

static const field_t ref_fields[] = {STR("resource", resource),
                                     STR("subresource", subresource),
                                     STR("apiGroup", api_group),
                                     STR("apiVersion", api_version),
                                     STR("namespace", ns),
                                     STR("name", name),
                                     STR("uid", uid),
                                     STR("resourceVersion", rv),
                                     END};

static const field_t status_fields[] = {STR("status", status), STR("reason", reason),
                                        STR("message", message), FLD("code", T_CODE, 0, 0), END};

static const field_t req_fields[] = {STR("kind", req_kind), MAP("metadata", R_REQMETA), END};
static const field_t reqmeta_fields[] = {STR("generateName", generate_name), END};
static const field_t resp_fields[] = {STR("kind", resp_kind), MAP("metadata", R_RESPMETA), END};
static const field_t respmeta_fields[] = {STR("uid", resp_uid), STR("resourceVersion", resp_rv),
                                          STR("name", resp_name), STR("namespace", resp_ns), END};

/* The keys of each object's role (annotations are matched by suffix). */
static const field_t *const tables[R_NROLES] = {
    [R_TOP] = top_fields,          [R_EVENT] = event_fields, [R_USER] = user_fields,
    [R_IMP] = imp_fields,          [R_REF] = ref_fields,     [R_STATUS] = status_fields,
    [R_REQ] = req_fields,          [R_RESP] = resp_fields,   [R_REQMETA] = reqmeta_fields,
    [R_RESPMETA] = respmeta_fields};

static const field_t body_f = FLD("", T_BODY, 0, 0), event_f = FLD("", T_EVENT, 0, 0),
                     group_f = FLD("", T_GROUP, 0, 0), ip_f = FLD("", T_IP, 0, 0),
                     span_f = STR("", span_id), cpid_f = STR("", cpid),
                     check_f = FLD("", T_CHECK, 0, 0);

/* What the elements of each array's role are (and the body's). */
static const field_t *const elements[R_NROLES] = {
    [R_ROOT] = &body_f, [R_ITEMS] = &event_f, [R_GROUPS] = &group_f, [R_IPS] = &ip_f};

static const field_t *lookup(const field_t *f, const unsigned char *k, size_t n) {
  for (; f->key; f++)
    if (f->len == n && !memcmp(f->key, k, n)) return f;
  return NULL;
}

static int ends_with(const unsigned char *k, size_t n, const char *suffix) {
  size_t m = strlen(suffix);
  return n >= m && !memcmp(k + n - m, suffix, m);
}

static const field_t *annotation(const unsigned char *k, size_t n) {
  if (ends_with(k, n, "/ripple-span")) return &span_f;
  if (ends_with(k, n, "/ripple-cpid")) return &cpid_f;
  return &check_f;
}

/* ---- the parse ------------------------------------------------------------ */

typedef struct actx {
  yajl_handle h;
  arena_chunk_t *arena; /* the kept strings (ripplex/arena.h) */
  audit_event_t *ev;
  size_t n, cap, max;
  size_t items, skipped, malformed;
  size_t depth, skip;            /* containers open; of them, skipped */
  uint8_t role[KNOWN_DEPTH + 1]; /* role[k]: the k-th open container, when read */
  const field_t *want;           /* what the value after the last key becomes */
  audit_event_t *cur;            /* the event being read (ev[n]), or NULL */
  arena_mark_t mark;             /* the arena before it */
  int bad, has_ts;               /* it has a wrong field; it has a stageTimestamp */
  size_t nips;                   /* sourceIPs seen */
  int kind_ok, apiv_ok;          /* the EventList's kind and apiVersion */
  size_t end;                    /* just after the body's object */
  int rc;                        /* why a callback stopped the parse */
  char *err;
  size_t errcap;
} actx_t;

static void say(actx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(actx_t *c, const char *fmt, ...) {
  if (!c->errcap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errcap, fmt, ap);
  va_end(ap);
}

/* Stops the parse: the body is refused (why) or, with why NULL, out of memory. */
static int stop(actx_t *c, const char *why) {
  size_t at = yajl_get_bytes_consumed(c->h);
  c->rc = why ? RIPPLE_EJSON : RIPPLE_ENOMEM;
  if (why)
    say(c, "at byte %zu: %s", at ? at - 1 : 0, why);
  else
    say(c, "out of memory reading the EventList");
  return 0;
}

/* s[0..n) kept in the arena: cut before a NUL byte, before bytes that are not
 * UTF-8 (jstrict_scan refused those already) or to AUDIT_STR_MAX bytes at a
 * character boundary, and then ending in "...". NULL when out of memory. */
static const char *keep(actx_t *c, const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t l = s[i] ? utf8_len(s + i, n - i) : 0;
    if (!l || i + l > AUDIT_STR_MAX) break;
    i += l;
  }
  if (!n) return "";
  size_t cut = i < n ? 3 : 0;
  char *p = arena_alloc(&c->arena, i + cut + 1);
  if (!p) return NULL;
  memcpy(p, s, i);
  memcpy(p + i, "...", cut);
  p[i + cut] = '\0';
  return p;
}

static const char **str_at(audit_event_t *e, const field_t *f) {
  return (const char **)(void *)((char *)e + f->off);
}

/* What a value at the current place becomes: an array's element or the value
 * of the last key; NULL for a key no table names. */
static const field_t *target(const actx_t *c) {
  role_t r = (role_t)c->role[c->depth];
  return elements[r] ? elements[r] : c->want;
}

/* A value of the wrong type where t is expected. */
static int wrong(actx_t *c, const field_t *t) {
  switch (t->type) {
    case T_BODY: return stop(c, "the body is not a JSON object (an audit.k8s.io/v1 EventList)");
    case T_ITEMS: return stop(c, "\"items\" is not an array");
    case T_KIND: c->kind_ok = 0; return 1;
    case T_APIV: c->apiv_ok = 0; return 1;
    case T_EVENT:
      if (++c->items <= c->max) c->malformed++;
      return 1;
    default: c->bad = 1; return 1;
  }
}

/* responseStatus.code: an integer that fits an int. */
static int code_of(const char *s, size_t n, int *out) {
  size_t i = n && s[0] == '-';
  if (i == n || n - i > 10) return 0;
  long long v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (s[i] - '0');
  }
  if (s[0] == '-') v = -v;
  if (v < INT_MIN || v > INT_MAX) return 0;
  *out = (int)v;
  return 1;
}

static int on_null(void *u) {
  actx_t *c = u;
  if (c->skip) return 1;
  const field_t *t = target(c);
  return t && (t->type == T_EVENT || t->type == T_BODY) ? wrong(c, t) : 1;
}

static int on_boolean(void *u, int v) {
  actx_t *c = u;
  (void)v;
  if (c->skip) return 1;
  const field_t *t = target(c);
  return t ? wrong(c, t) : 1;
}

static int on_number(void *u, const char *s, size_t n) {
  actx_t *c = u;
  if (c->skip) return 1;
  const field_t *t = target(c);
  if (!t) return 1;
  if (t->type != T_CODE || !code_of(s, n, &c->cur->code)) return wrong(c, t);
  return 1;
}

static int set_str(actx_t *c, const char **slot, const unsigned char *s, size_t n) {
  const char *v = keep(c, s, n);
  if (!v) return stop(c, NULL);
  *slot = v;
  return 1;
}

static int set_time(actx_t *c, const field_t *t, const unsigned char *s, size_t n) {
  int64_t *slot = (int64_t *)(void *)((char *)c->cur + t->off);
  if (ripple_time_parse((const char *)s, n, slot) != RIPPLE_OK) {
    c->bad = 1;
    return 1;
  }
  if (t->off == offsetof(audit_event_t, stage_ns)) c->has_ts = 1;
  return 1;
}

static int on_string(void *u, const unsigned char *s, size_t n) {
  actx_t *c = u;
  if (c->skip) return 1;
  const field_t *t = target(c);
  if (!t) return 1;
  audit_event_t *e = c->cur;
  switch (t->type) {
    case T_STR: return set_str(c, str_at(e, t), s, n);
    case T_TIME: return set_time(c, t, s, n);
    case T_CHECK: return 1;
    case T_GROUP:
      if (e->ngroups_total++ < AUDIT_GROUPS_MAX) return set_str(c, &e->groups[e->ngroups++], s, n);
      return 1;
    case T_IP: return c->nips++ ? 1 : set_str(c, &e->source_ip, s, n);
    case T_KIND: c->kind_ok = n == 9 && !memcmp(s, "EventList", 9); return 1;
    case T_APIV: c->apiv_ok = n == 15 && !memcmp(s, "audit.k8s.io/v1", 15); return 1;
    default: return wrong(c, t);
  }
}

/* ---- events --------------------------------------------------------------- */

static void event_init(audit_event_t *e) {
  static const audit_event_t blank = {.audit_id = "",
                                      .verb = "",
                                      .stage = "",
                                      .user = "",
                                      .impersonated = "",
                                      .user_agent = "",
                                      .source_ip = "",
                                      .resource = "",
                                      .subresource = "",
                                      .api_group = "",
                                      .api_version = "",
                                      .ns = "",
                                      .name = "",
                                      .uid = "",
                                      .rv = "",
                                      .status = "",
                                      .reason = "",
                                      .message = "",
                                      .resp_kind = "",
                                      .resp_uid = "",
                                      .resp_rv = "",
                                      .resp_name = "",
                                      .resp_ns = "",
                                      .req_kind = "",
                                      .generate_name = "",
                                      .span_id = "",
                                      .cpid = ""};
  *e = blank;
  for (size_t i = 0; i < AUDIT_GROUPS_MAX; i++) e->groups[i] = "";
}

/* An item opens as an object: the role it is read as (SKIP past max_events,
 * STOP when out of memory). */
static int event_start(actx_t *c) {
  if (++c->items > c->max) return SKIP;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    audit_event_t *ev = realloc(c->ev, cap * sizeof *ev);
    if (!ev) return stop(c, NULL), STOP;
    c->ev = ev;
    c->cap = cap;
  }
  c->cur = &c->ev[c->n];
  event_init(c->cur);
  c->mark = arena_mark(c->arena);
  c->bad = c->has_ts = 0;
  c->nips = 0;
  return R_EVENT;
}

static int one_of(const char *s, const char *const *set) {
  for (; *set; set++)
    if (!strcmp(s, *set)) return 1;
  return 0;
}

/* The event's object closed: kept, skipped or malformed. */
static void event_end(actx_t *c) {
  static const char *const stages[] = {"ResponseComplete", "Panic", NULL};
  static const char *const verbs[] = {"create", "update",           "patch",
                                      "delete", "deletecollection", NULL};
  const audit_event_t *e = c->cur;
  c->cur = NULL;
  if (c->bad || !*e->audit_id || !*e->verb || !*e->stage || !c->has_ts) {
    c->malformed++;
  } else if (!one_of(e->stage, stages) || !one_of(e->verb, verbs)) {
    c->skipped++;
  } else {
    c->n++;
    return;
  }
  arena_rewind(&c->arena, c->mark);
}

/* A repeated "items": only the last array counts. */
static void items_reset(actx_t *c) { c->n = c->items = c->skipped = c->malformed = 0; }

/* A container opens where t is expected: arrays and objects that restart on
 * a repeated key start empty. */
static void container_reset(actx_t *c, role_t r) {
  audit_event_t *e = c->cur;
  if (r == R_GROUPS) {
    for (size_t i = 0; i < AUDIT_GROUPS_MAX; i++) e->groups[i] = "";
    e->ngroups = e->ngroups_total = 0;
  } else if (r == R_IPS) {
    c->nips = 0;
    e->source_ip = "";
  } else if (r == R_REQ) {
    e->req_kind = e->generate_name = "";
  } else if (r == R_RESP) {
    e->resp_kind = e->resp_uid = e->resp_rv = e->resp_name = e->resp_ns = "";
  }
}

/* The role of a container opened where t is expected, SKIP or STOP. */
static int role_for(actx_t *c, const field_t *t, int is_map) {
  switch (t->type) {
    case T_BODY:
      if (is_map) return R_TOP;
      break;
    case T_ITEMS:
      if (!is_map) return items_reset(c), R_ITEMS;
      break;
    case T_EVENT:
      if (is_map) return event_start(c);
      break;
    case T_MAP:
    case T_ARR:
      if (is_map == (t->type == T_MAP)) return container_reset(c, t->role), t->role;
      break;
    default: break;
  }
  return wrong(c, t) ? SKIP : STOP;
}

static int enter(actx_t *c, int is_map) {
  if (c->depth == AUDIT_MAX_DEPTH) return stop(c, "nesting deeper than 512 levels");
  int role = SKIP;
  if (!c->skip) {
    const field_t *t = target(c);
    role = t ? role_for(c, t, is_map) : SKIP;
    if (role == STOP) return 0;
  }
  c->depth++;
  if (role == SKIP || c->depth > KNOWN_DEPTH) {
    c->skip++;
    return 1;
  }
  c->role[c->depth] = (uint8_t)role;
  c->want = NULL;
  return 1;
}

static int leave(actx_t *c) {
  c->depth--;
  if (c->skip) {
    c->skip--;
  } else if (c->role[c->depth + 1] == R_EVENT) {
    event_end(c);
  }
  if (c->depth == 0) c->end = yajl_get_bytes_consumed(c->h);
  return 1;
}

static int on_start_map(void *u) { return enter(u, 1); }
static int on_start_array(void *u) { return enter(u, 0); }
static int on_end(void *u) { return leave(u); }

static int on_key(void *u, const unsigned char *k, size_t n) {
  actx_t *c = u;
  if (c->skip) return 1;
  role_t r = (role_t)c->role[c->depth];
  c->want = r == R_ANNOT ? annotation(k, n) : lookup(tables[r], k, n);
  return 1;
}

static const yajl_callbacks callbacks = {.yajl_null = on_null,
                                         .yajl_boolean = on_boolean,
                                         .yajl_number = on_number,
                                         .yajl_string = on_string,
                                         .yajl_start_map = on_start_map,
                                         .yajl_map_key = on_key,
                                         .yajl_end_map = on_end,
                                         .yajl_start_array = on_start_array,
                                         .yajl_end_array = on_end};

/* ---- the request ---------------------------------------------------------- */

/* yajl refused the body. */
static int yajl_failure(actx_t *c, const char *body, size_t len) {
  unsigned char *e = yajl_get_error(c->h, 0, (const unsigned char *)body, len);
  char why[128];
  snprintf(why, sizeof why, "%s", e ? (const char *)e : "yajl refused it");
  why[strcspn(why, "\n")] = '\0';
  if (e) yajl_free_error(c->h, e);
  /* yajl's count is past the byte it stopped at. */
  size_t at = yajl_get_bytes_consumed(c->h);
  at = at > len ? len : at ? at - 1 : 0;
  say(c, "malformed JSON at byte %zu: %s", at, why);
  return RIPPLE_EJSON;
}

static int run(actx_t *c, const char *body, size_t len) {
  c->h = yajl_alloc(&callbacks, NULL, c);
  if (!c->h) return RIPPLE_ENOMEM;
  yajl_config(c->h, yajl_allow_comments, 0);
  yajl_config(c->h, yajl_dont_validate_strings, 0);
  yajl_config(c->h, yajl_allow_trailing_garbage, 0);
  yajl_config(c->h, yajl_allow_multiple_values, 0);
  yajl_config(c->h, yajl_allow_partial_values, 0);
  yajl_status st = yajl_parse(c->h, (const unsigned char *)body, len);
  if (st == yajl_status_ok) st = yajl_complete_parse(c->h);
  int rc = RIPPLE_OK;
  if (st == yajl_status_client_canceled)
    rc = c->rc;
  else if (st != yajl_status_ok)
    rc = yajl_failure(c, body, len);
  yajl_free(c->h);
  return rc;
}

/* The checks of the whole body, after a parse that went through. */
static int check(actx_t *c, const char *body, size_t len) {
  size_t at;
  if (!c->end) {
    say(c, "the body is not a JSON object (an audit.k8s.io/v1 EventList)");
    return RIPPLE_EJSON;
  }
  if (jstrict_trailing(body, len, c->end, &at) != RIPPLE_OK) {
    say(c, "malformed JSON at byte %zu: something after the EventList", at);
    return RIPPLE_EJSON;
  }
  if (!c->kind_ok || !c->apiv_ok) {
    say(c, "the body is not an audit.k8s.io/v1 EventList (%s)",
        !c->kind_ok ? "kind is not \"EventList\"" : "apiVersion is not \"audit.k8s.io/v1\"");
    return RIPPLE_EJSON;
  }
  if (c->items > c->max) {
    say(c, "%zu events in one request; at most %zu are accepted", c->items, c->max);
    return RIPPLE_ERANGE;
  }
  return RIPPLE_OK;
}

int audit_parse(const char *body, size_t len, size_t max_events, audit_batch_t *out, char *err,
                size_t errcap) {
  actx_t c = {.max = max_events, .err = err, .errcap = err ? errcap : 0};
  if (c.errcap) err[0] = '\0';
  if (!out || (!body && len)) {
    say(&c, "no body or no batch to fill");
    return RIPPLE_EINVAL;
  }
  size_t at;
  const char *why = "";
  int rc = jstrict_scan(body ? body : "", len, JSTRICT_ALLOW_NUL, &at, &why);
  if (rc != RIPPLE_OK)
    say(&c, "malformed JSON at byte %zu: %s", at, why);
  else
    rc = run(&c, body ? body : "", len);
  if (rc == RIPPLE_OK) rc = check(&c, body, len);
  if (rc != RIPPLE_OK) {
    free(c.ev);
    arena_free(&c.arena);
    return rc;
  }
  *out = (audit_batch_t){
      .ev = c.ev, .n = c.n, .skipped = c.skipped, .malformed = c.malformed, .arena = c.arena};
  return RIPPLE_OK;
}

void audit_batch_free(audit_batch_t *b) {
  if (!b) return;
  free(b->ev);
  arena_chunk_t *head = b->arena;
  arena_free(&head);
  memset(b, 0, sizeof *b);
}
