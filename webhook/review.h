/*
 * review.h - AdmissionReview (admission.k8s.io/v1) in and out.
 *
 * The API server posts an AdmissionReview whose "request" names the write:
 * who (userInfo), what (kind, resource, subResource, namespace, name), how
 * (operation, dryRun) and the objects (object, oldObject). We parse it once
 * with jansson and keep borrowed pointers into that tree; anything that is
 * not the documented shape is refused with a message that says which field is
 * wrong. The answer always allows the write; it may carry a JSON Patch and
 * warnings.
 */
#ifndef RIPPLE_WEBHOOK_REVIEW_H
#define RIPPLE_WEBHOOK_REVIEW_H

#include <jansson.h>
#include <stddef.h>

#include "ripplex/sbuf.h"

typedef enum wh_op { WH_OP_CREATE, WH_OP_UPDATE, WH_OP_DELETE, WH_OP_CONNECT } wh_op_t;

/* A decoded request. Strings are borrowed from doc and never NULL ("" when
 * absent, except uid and operation, which are required). */
typedef struct wh_review {
  json_t *doc; /* the whole AdmissionReview; owned */
  const char *uid;
  wh_op_t op;
  const char *op_name; /* "CREATE" ... as sent */
  const char *kind;    /* request.kind.kind: "Pod", "Binding", "Scale" */
  const char *group;   /* request.resource.group: "" for the core group */
  const char *resource;
  const char *subresource;
  const char *ns, *name;
  const char *user;
  int dry_run;
  const json_t *object; /* NULL when absent or null (DELETE) */
  const json_t *old;    /* NULL when absent or null (CREATE) */
  /* The API server's own trace context of this call (its `traceparent`
   * header, http.c; not the body's): the ids of its "HTTP POST" span as
   * lower-case hex, "" when it sent none, an unsampled or a malformed one
   * (traceparent.h, wh_apiserver_tp_take). Recorded on
   * the write's span only: never a CPID, never a parent. */
  char apiserver_trace[33], apiserver_span[17];
} wh_review_t;

/* Parse a request body. RIPPLE_EJSON with a message for people in err when
 * it is not an AdmissionReview v1 request; *out is then untouched. */
int wh_review_decode(const char *body, size_t len, wh_review_t *out, char *err, size_t errcap);
void wh_review_free(wh_review_t *r);

/* Write the AdmissionReview answer: allowed, and the patch (a JSON Patch,
 * base64-encoded as the API requires) and one warning when given. uid is
 * copied as a JSON string. audit_span and audit_cpid (NULL or "": none) become
 * auditAnnotations "ripple-span" and "ripple-cpid", which kube-apiserver
 * records in the write's audit event as "<configuration name>/ripple-span":
 * how the trace server joins audit events to spans. */
void wh_review_respond(sbuf_t *out, const char *uid, const char *patch, size_t patch_len,
                       const char *warning, const char *audit_span, const char *audit_cpid);

#endif
