/*
 * review.c - decoding AdmissionReview requests and encoding the answers
 * (see review.h). The API server is trusted to send well-formed reviews, but
 * the body is still outside input: every field is checked for its type before
 * it is used, and a bad body gets a message naming the field.
 */
#include "review.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"

#include <stdio.h>
#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
  const json_t *v = json_object_get(o, key);
  return json_is_string(v) ? json_string_value(v) : dflt;
}

static int bad(char *err, size_t cap, const char *msg) {
  snprintf(err, cap, "%s", msg);
  return RIPPLE_EJSON;
}

/* An optional object member: absent or null is NULL, an object is itself,
 * anything else is an error (-1). */
static int opt_object(const json_t *req, const char *key, const json_t **out) {
  const json_t *v = json_object_get(req, key);
  if (!v || json_is_null(v)) {
    *out = NULL;
    return RIPPLE_OK;
  }
  if (!json_is_object(v)) return RIPPLE_EJSON;
  *out = v;
  return RIPPLE_OK;
}

static int parse_op(const char *s, wh_op_t *op) {
  static const struct {
    const char *name;
    wh_op_t op;
  } ops[] = {{"CREATE", WH_OP_CREATE},
             {"UPDATE", WH_OP_UPDATE},
             {"DELETE", WH_OP_DELETE},
             {"CONNECT", WH_OP_CONNECT}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(s, ops[i].name)) return *op = ops[i].op, RIPPLE_OK;
  return RIPPLE_EINVAL;
}

/* The string members of "request"; returns a message or NULL. */
static const char *decode_names(const json_t *req, wh_review_t *r) {
  const json_t *kind = json_object_get(req, "kind");
  const json_t *res = json_object_get(req, "resource");
  const json_t *ui = json_object_get(req, "userInfo");
  if (!json_is_object(kind)) return "request.kind must be an object {group, version, kind}";
  if (!json_is_object(res) || !json_is_string(json_object_get(res, "resource")))
    return "request.resource must be an object with a string \"resource\"";
  if (ui && !json_is_object(ui)) return "request.userInfo must be an object";
  r->kind = str_or(kind, "kind", "");
  r->group = str_or(res, "group", "");
  r->resource = str_or(res, "resource", "");
  r->subresource = str_or(req, "subResource", "");
  r->ns = str_or(req, "namespace", "");
  r->name = str_or(req, "name", "");
  r->user = str_or(ui, "username", "");
  const json_t *dry = json_object_get(req, "dryRun");
  if (dry && !json_is_boolean(dry) && !json_is_null(dry)) return "request.dryRun must be a boolean";
  r->dry_run = json_is_true(dry);
  return NULL;
}

int wh_review_decode(const char *body, size_t len, wh_review_t *out, char *err, size_t errcap) {
  if (!body || !out) return RIPPLE_EINVAL;
  json_error_t je;
  json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
  if (!doc) {
    snprintf(err, errcap, "the body is not JSON: %s at line %d column %d", je.text, je.line,
             je.column);
    return RIPPLE_EJSON;
  }
  wh_review_t r;
  memset(&r, 0, sizeof r);
  r.doc = doc;
  const char *msg = NULL;
  const json_t *req = json_object_get(doc, "request");
  if (!json_is_object(doc))
    msg = "the body must be a JSON object (an AdmissionReview)";
  else if (strcmp(str_or(doc, "kind", ""), "AdmissionReview") != 0)
    msg = "kind must be \"AdmissionReview\"";
  else if (strcmp(str_or(doc, "apiVersion", ""), "admission.k8s.io/v1") != 0)
    msg =
        "apiVersion must be \"admission.k8s.io/v1\" (register the webhook with "
        "admissionReviewVersions: [\"v1\"])";
  else if (!json_is_object(req))
    msg = "request must be an object";
  else if (!(r.uid = str_or(req, "uid", NULL)) || !*r.uid)
    msg = "request.uid must be a non-empty string";
  else if (!(r.op_name = str_or(req, "operation", NULL)) || parse_op(r.op_name, &r.op))
    msg = "request.operation must be CREATE, UPDATE, DELETE or CONNECT";
  else if (opt_object(req, "object", &r.object) || opt_object(req, "oldObject", &r.old))
    msg = "request.object and request.oldObject must be objects or null";
  else
    msg = decode_names(req, &r);
  /* A collection delete (the namespace controller's) admits each object
   * with request.name empty: the object's own name is the one meant. */
  if (!msg && r.op == WH_OP_DELETE && !*r.name && r.old) {
    const json_t *n = json_object_get(json_object_get(r.old, "metadata"), "name");
    if (json_is_string(n)) r.name = json_string_value(n);
  }
  if (msg) {
    json_decref(doc);
    return bad(err, errcap, msg);
  }
  *out = r;
  return RIPPLE_OK;
}

void wh_review_free(wh_review_t *r) {
  if (!r) return;
  json_decref(r->doc);
  r->doc = NULL;
}

void wh_review_respond(sbuf_t *out, const char *uid, const char *patch, size_t patch_len,
                       const char *warning, const char *audit_span, const char *audit_cpid) {
  sbuf_puts(out,
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
            "\"response\":{\"uid\":");
  sbuf_json_str(out, uid ? uid : "");
  sbuf_puts(out, ",\"allowed\":true");
  if (patch && patch_len) {
    sbuf_puts(out, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
    b64_encode(out, patch, patch_len);
    sbuf_putc(out, '"');
  }
  if (warning && *warning) {
    sbuf_puts(out, ",\"warnings\":[");
    sbuf_json_str(out, warning);
    sbuf_putc(out, ']');
  }
  if (audit_span && *audit_span) {
    sbuf_puts(out, ",\"auditAnnotations\":{\"ripple-span\":");
    sbuf_json_str(out, audit_span);
    if (audit_cpid && *audit_cpid) {
      sbuf_puts(out, ",\"ripple-cpid\":");
      sbuf_json_str(out, audit_cpid);
    }
    sbuf_putc(out, '}');
  }
  sbuf_puts(out, "}}");
}
