/*
 * details.c - see details.h.
 *
 * Records are small and few next to spans (one per change the watch agent
 * sees, one per Event), so jansson reads them: clarity over speed here. The
 * canonical record is built field by field from what was checked.
 */
#include "analysis/details.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ripple/ripple.h"

/* Every allocation of a batch, freed together. */
typedef struct det_mem {
  char **p;
  size_t n, cap;
} det_mem_t;

static char *keep(det_mem_t *m, char *s) {
  if (!s) return NULL;
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **np = realloc(m->p, cap * sizeof *np);
    if (!np) {
      free(s);
      return NULL;
    }
    m->p = np;
    m->cap = cap;
  }
  m->p[m->n++] = s;
  return s;
}

static const char *keep_str(det_mem_t *m, const char *s) {
  return s && *s ? keep(m, strdup(s)) : NULL;
}

void det_batch_free(det_batch_t *b) {
  det_mem_t *m = b->mem;
  for (size_t i = 0; m && i < m->n; i++) free(m->p[i]);
  if (m) free(m->p);
  free(m);
  free(b->v);
  *b = (det_batch_t){0};
}

static int batch_init(det_batch_t *b, size_t n) {
  *b = (det_batch_t){0};
  b->v = calloc(n ? n : 1, sizeof *b->v);
  b->mem = calloc(1, sizeof(det_mem_t));
  if (!b->v || !b->mem) {
    det_batch_free(b);
    return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

/* ---- checking one record --------------------------------------------------- */

typedef struct chk {
  dec_error_t *err;
  long index;
  const dec_limits_t *lim;
} chk_t;

__attribute__((format(printf, 4, 5))) static int fail(chk_t *c, int rc, const char *field,
                                                      const char *fmt, ...) {
  c->err->index = c->index;
  snprintf(c->err->field, sizeof c->err->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* An optional string field: absent or null is NULL. */
static int opt_str(chk_t *c, const json_t *o, const char *key, const char *field,
                   const char **out) {
  const json_t *v = json_object_get(o, key);
  *out = NULL;
  if (!v || json_is_null(v)) return RIPPLE_OK;
  if (!json_is_string(v)) return fail(c, RIPPLE_EINVAL, field, "must be a string");
  if (json_string_length(v) > c->lim->max_string)
    return fail(c, RIPPLE_ERANGE, field, "is longer than %zu bytes", c->lim->max_string);
  if (memchr(json_string_value(v), '\0', json_string_length(v)))
    return fail(c, RIPPLE_EINVAL, field, "must not contain NUL");
  *out = json_string_value(v);
  return RIPPLE_OK;
}

static int req_time(chk_t *c, const json_t *o, const char *key, int64_t *out) {
  const json_t *v = json_object_get(o, key);
  const char *s = json_string_value(v);
  if (!s) return fail(c, RIPPLE_EINVAL, key, "is required: an RFC 3339 time");
  if (ripple_time_parse(s, json_string_length(v), out) != RIPPLE_OK)
    return fail(c, RIPPLE_EINVAL, key, "must be an RFC 3339 time");
  return RIPPLE_OK;
}

static void set_str(json_t *o, const char *key, const char *v) {
  if (v && *v) json_object_set_new(o, key, json_string(v));
}

/* The object a record is about, copied into out.object; its keys into f. */
static int check_object(chk_t *c, const json_t *rec, json_t *out, fact_t *f) {
  const json_t *o = json_object_get(rec, "object");
  if (!json_is_object(o)) return fail(c, RIPPLE_EINVAL, "object", "is required: an object");
  static const char *const keys[] = {"apiVersion", "kind", "namespace", "name", "uid"};
  static const char *const fields[] = {"object.apiVersion", "object.kind", "object.namespace",
                                       "object.name", "object.uid"};
  const char *v[5];
  for (int i = 0; i < 5; i++) {
    int rc = opt_str(c, o, keys[i], fields[i], &v[i]);
    if (rc != RIPPLE_OK) return rc;
  }
  if (!v[1] || !*v[1]) return fail(c, RIPPLE_EINVAL, "object.kind", "is required");
  if (!v[3] || !*v[3]) return fail(c, RIPPLE_EINVAL, "object.name", "is required");
  if (v[4] && *v[4] && !dec_uid_ok(v[4], strlen(v[4])))
    return fail(c, RIPPLE_EINVAL, "object.uid",
                "must be 1 to 128 letters, digits or '-' (an object's metadata.uid)");
  json_t *obj = json_object();
  for (int i = 0; i < 5; i++) set_str(obj, keys[i], v[i]);
  json_object_set_new(out, "object", obj);
  f->kind = v[1], f->ns = v[2], f->name = v[3], f->uid = v[4];
  return RIPPLE_OK;
}

/* A Secret's values never stay, whoever sent them. */
static int secret_path(const char *path) {
  return !strncmp(path, "/data/", 6) || !strcmp(path, "/data") ||
         !strncmp(path, "/stringData/", 12) || !strcmp(path, "/stringData");
}

static json_t *redact_secret_snapshot(const json_t *snap) {
  json_t *s = json_deep_copy(snap);
  static const char *const keys[] = {"data", "stringData"};
  for (int k = 0; s && k < 2; k++) {
    json_t *d = json_object_get(s, keys[k]);
    const char *key;
    json_t *val;
    if (!json_is_object(d)) {
      if (d) json_object_set_new(s, keys[k], json_string("(redacted)"));
      continue;
    }
    json_object_foreach(d, key, val) { json_object_set_new(d, key, json_string("(redacted)")); }
  }
  return s;
}

static int check_diff(chk_t *c, const json_t *diff, int secret, json_t *out) {
  if (!json_is_array(diff)) return fail(c, RIPPLE_EINVAL, "diff", "must be an array");
  json_t *d = json_array();
  size_t i;
  const json_t *e;
  json_array_foreach(diff, i, e) {
    const char *path = json_string_value(json_object_get(e, "path"));
    if (!json_is_object(e) || !path || path[0] != '/') {
      json_decref(d);
      return fail(c, RIPPLE_EINVAL, "diff", "entry %zu needs a \"path\", a JSON Pointer", i);
    }
    json_t *ne = json_object();
    json_object_set_new(ne, "path", json_string(path));
    int red = json_is_true(json_object_get(e, "redacted")) || (secret && secret_path(path));
    if (red) {
      json_object_set_new(ne, "redacted", json_true());
    } else {
      json_t *o = json_object_get(e, "old"), *n = json_object_get(e, "new");
      if (o) json_object_set(ne, "old", o);
      if (n) json_object_set(ne, "new", n);
    }
    json_array_append_new(d, ne);
  }
  json_object_set_new(out, "diff", d);
  return RIPPLE_OK;
}

static int check_change(chk_t *c, const json_t *rec, json_t *out, fact_t *f) {
  const char *op;
  int rc = opt_str(c, rec, "op", "op", &op);
  if (rc != RIPPLE_OK) return rc;
  if (!op || (strcmp(op, "create") != 0 && strcmp(op, "update") != 0 && strcmp(op, "delete") != 0))
    return fail(c, RIPPLE_EINVAL, "op", "must be create, update or delete");
  f->op = op;
  json_object_set_new(out, "op", json_string(op));
  const char *cpid = NULL;
  if ((rc = opt_str(c, rec, "resourceVersion", "resourceVersion", &f->rv)) != RIPPLE_OK ||
      (rc = opt_str(c, rec, "previousResourceVersion", "previousResourceVersion", &f->prev_rv)) !=
          RIPPLE_OK ||
      (rc = opt_str(c, rec, "cpid", "cpid", &cpid)) != RIPPLE_OK)
    return rc;
  ripple_cpid_t id;
  if (cpid && ripple_cpid_parse(cpid, strlen(cpid), &id) != RIPPLE_OK)
    return fail(c, RIPPLE_EINVAL, "cpid", "is not a CPID");
  f->cpid = cpid;
  set_str(out, "resourceVersion", f->rv);
  set_str(out, "previousResourceVersion", f->prev_rv);
  set_str(out, "cpid", cpid);
  int secret = f->kind && !strcmp(f->kind, "Secret");
  const json_t *diff = json_object_get(rec, "diff"), *snap = json_object_get(rec, "snapshot");
  if (diff && (rc = check_diff(c, diff, secret, out)) != RIPPLE_OK) return rc;
  if (snap && !json_is_object(snap)) return fail(c, RIPPLE_EINVAL, "snapshot", "must be an object");
  if (snap)
    json_object_set_new(out, "snapshot",
                        secret ? redact_secret_snapshot(snap) : json_copy((json_t *)snap));
  if (json_is_true(json_object_get(rec, "truncated")))
    json_object_set_new(out, "truncated", json_true());
  return RIPPLE_OK;
}

static int check_event(chk_t *c, const json_t *rec, json_t *out, fact_t *f) {
  static const char *const keys[] = {"reason", "message", "eventType", "source", "uid", "action"};
  for (int i = 0; i < 6; i++) {
    const char *v;
    int rc = opt_str(c, rec, keys[i], keys[i], &v);
    if (rc != RIPPLE_OK) return rc;
    set_str(out, keys[i], v);
  }
  const json_t *n = json_object_get(rec, "count");
  if (n && !json_is_null(n)) {
    if (!json_is_integer(n) || json_integer_value(n) < 0)
      return fail(c, RIPPLE_EINVAL, "count", "must be a non-negative integer");
    json_object_set_new(out, "count", json_integer(json_integer_value(n)));
  }
  const char *first;
  int rc = opt_str(c, rec, "firstTime", "firstTime", &first);
  if (rc != RIPPLE_OK) return rc;
  set_str(out, "firstTime", first);
  f->op = NULL;
  return RIPPLE_OK;
}

static int check_record(chk_t *c, const json_t *rec, det_mem_t *m, fact_t *f) {
  if (!json_is_object(rec)) return fail(c, RIPPLE_EINVAL, "", "must be an object");
  const char *type = json_string_value(json_object_get(rec, "type"));
  int change = type && !strcmp(type, "change"), event = type && !strcmp(type, "event");
  if (!change && !event) return fail(c, RIPPLE_EINVAL, "type", "must be \"change\" or \"event\"");
  json_t *out = json_object();
  json_object_set_new(out, "type", json_string(type));
  *f = (fact_t){.type = change ? FACT_CHANGE : FACT_EVENT};
  int rc = req_time(c, rec, "time", &f->time);
  if (rc == RIPPLE_OK) json_object_set(out, "time", json_object_get(rec, "time"));
  if (rc == RIPPLE_OK) rc = check_object(c, rec, out, f);
  if (rc == RIPPLE_OK) rc = change ? check_change(c, rec, out, f) : check_event(c, rec, out, f);
  char *body = rc == RIPPLE_OK ? json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
  json_decref(out);
  if (rc != RIPPLE_OK) return rc;
  if (!body || !keep(m, body)) return RIPPLE_ENOMEM;
  f->body = body;
  f->body_len = strlen(body);
  if (f->body_len > DET_RECORD_MAX)
    return fail(c, RIPPLE_ERANGE, "", "is %zu bytes of JSON; at most %d are stored", f->body_len,
                DET_RECORD_MAX);
  /* The keys point into the request's tree; copy them before it goes. */
  const char **s[] = {&f->uid, &f->kind, &f->ns, &f->name, &f->rv, &f->prev_rv, &f->cpid, &f->op};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    if (!*s[i] || !**s[i]) {
      *s[i] = NULL; /* absent and empty are one */
      continue;
    }
    if (!(*s[i] = keep_str(m, *s[i]))) return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

int det_decode(const char *json, size_t len, const dec_limits_t *lim, det_batch_t *out,
               dec_error_t *err) {
  json_error_t je;
  *err = (dec_error_t){.index = -1};
  *out = (det_batch_t){0};
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    snprintf(err->msg, sizeof err->msg, "malformed JSON: %s (at byte %d)", je.text, je.position);
    return RIPPLE_EJSON;
  }
  if (!json_is_array(root)) {
    json_decref(root);
    snprintf(err->msg, sizeof err->msg, "the body must be a JSON array of records");
    return RIPPLE_EJSON;
  }
  size_t n = json_array_size(root);
  if (n > lim->max_records) {
    json_decref(root);
    snprintf(err->msg, sizeof err->msg, "%zu records; at most %zu per request", n,
             lim->max_records);
    return RIPPLE_ERANGE;
  }
  int rc = batch_init(out, n);
  chk_t c = {err, 0, lim};
  for (size_t i = 0; i < n && rc == RIPPLE_OK; i++) {
    c.index = (long)i;
    rc = check_record(&c, json_array_get(root, i), out->mem, &out->v[i]);
  }
  json_decref(root);
  if (rc != RIPPLE_OK) {
    det_batch_free(out);
    return rc;
  }
  out->n = n;
  return RIPPLE_OK;
}

/* ---- audit events ---------------------------------------------------------- */

static json_t *audit_body(const audit_event_t *e) {
  char t[RIPPLE_TIME_STRLEN + 1];
  json_t *o = json_object();
  json_object_set_new(o, "type", json_string("audit"));
  ripple_time_format(e->stage_ns, t);
  json_object_set_new(o, "time", json_string(t));
  if (e->received_ns) {
    ripple_time_format(e->received_ns, t);
    json_object_set_new(o, "received", json_string(t));
  }
  set_str(o, "auditID", e->audit_id);
  set_str(o, "verb", e->verb);
  set_str(o, "stage", e->stage);
  set_str(o, "user", e->user);
  json_t *g = json_array();
  for (size_t i = 0; i < e->ngroups; i++) json_array_append_new(g, json_string(e->groups[i]));
  json_object_set_new(o, "groups", g);
  set_str(o, "impersonatedUser", e->impersonated);
  set_str(o, "userAgent", e->user_agent);
  set_str(o, "sourceIP", e->source_ip);
  json_t *ref = json_object();
  set_str(ref, "resource", e->resource);
  set_str(ref, "subresource", e->subresource);
  set_str(ref, "apiGroup", e->api_group);
  set_str(ref, "apiVersion", e->api_version);
  set_str(ref, "namespace", e->ns);
  set_str(ref, "name", *e->name ? e->name : e->resp_name);
  set_str(ref, "uid", *e->uid ? e->uid : e->resp_uid);
  set_str(ref, "kind", *e->resp_kind ? e->resp_kind : e->req_kind);
  set_str(ref, "resourceVersion", e->rv);
  set_str(ref, "generateName", e->generate_name);
  json_object_set_new(o, "object", ref);
  if (e->code) json_object_set_new(o, "code", json_integer(e->code));
  set_str(o, "status", e->status);
  set_str(o, "reason", e->reason);
  set_str(o, "message", e->message);
  set_str(o, "writtenResourceVersion", e->resp_rv);
  set_str(o, "spanId", e->span_id);
  set_str(o, "cpid", e->cpid);
  return o;
}

int det_from_audit(const audit_batch_t *a, det_batch_t *out) {
  int rc = batch_init(out, a->n);
  for (size_t i = 0; i < a->n && rc == RIPPLE_OK; i++) {
    const audit_event_t *e = &a->ev[i];
    json_t *o = audit_body(e);
    char *body = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(o);
    if (!body || !keep(out->mem, body)) {
      rc = RIPPLE_ENOMEM;
      break;
    }
    /* The audit arena outlives the put: keys may point into it. */
    out->v[i] = (fact_t){FACT_AUDIT,
                         e->stage_ns,
                         *e->uid ? e->uid : e->resp_uid,
                         *e->resp_kind ? e->resp_kind : e->req_kind,
                         e->ns,
                         *e->name ? e->name : e->resp_name,
                         e->resp_rv,
                         e->rv,
                         e->span_id,
                         e->cpid,
                         e->verb,
                         body,
                         strlen(body)};
  }
  if (rc != RIPPLE_OK) {
    det_batch_free(out);
    return rc;
  }
  out->n = a->n;
  return RIPPLE_OK;
}
