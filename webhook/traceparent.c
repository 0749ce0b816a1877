/*
 * traceparent.c - KEP-5915's `tracing.k8s.io/traceparent` beside the CPID
 * (traceparent.h), with --traceparent only.
 *
 * Two rules (docs/format.md, "W3C trace context (KEP-5915)"):
 *
 * - Written: when the webhook patches a new context onto an object on a
 *   CREATE, or on an UPDATE of the main resource that changes `spec`, the
 *   same patch sets the traceparent of the object's new CPID. Never on a
 *   status write, never where the context is held rather than written (a
 *   Deployment's updates, decide.c).
 * - Kept: a traceparent the write itself sets (present on a create, changed
 *   on an update) stays exactly as sent, and so does one the object carries
 *   over that equals its controlling owner's. Controllers copy annotations:
 *   the Deployment controller copies every Deployment annotation but a fixed
 *   skip list onto its newest ReplicaSet and updates that ReplicaSet whenever
 *   a copied value differs (kube-controller-manager v1.36.3,
 *   pkg/controller/deployment/util/deployment_util.go,
 *   copyDeploymentAnnotationsToReplicaSet, called by getNewReplicaSet in
 *   sync.go on every sync). Overwriting its copy would cost one ReplicaSet
 *   write per scale (the controller puts its copy back; that write sets the
 *   value, so it is kept and nothing loops).
 *
 * And the client root: a person's write that sets a well-formed traceparent
 * on a main resource starts a root whose CPID is the client's trace id, and
 * the write's span hangs under the client's span (its parent_id), so the
 * client's trace and the cascade are one trace.
 */
#include <string.h>

#include "annotate.h"
#include "objtext.h"
#include "ripplex/cpid.h"
#include "ripplex/hex.h"
#include "ripplex/logonce.h"
#include "ripplex/sbuf.h"
#include "sources.h"
#include "traceparent.h"

/* ---- the value ------------------------------------------------------------ */

/* n hex digits of s into out[n / 2]; 0 when any is not lower-case hex (W3C
 * writes lower case, and so must a client). */
static int hexbytes(const char *s, size_t n, uint8_t *out) { return hex_decode(s, n / 2, out, 0); }

int wh_traceparent_parse(const char *s, size_t len, wh_traceparent_t *out) {
  if (!s || !out || len != WH_TRACEPARENT_LEN) return RIPPLE_EBADCTX;
  if (s[0] != '0' || s[1] != '0' || s[2] != '-' || s[35] != '-' || s[52] != '-')
    return RIPPLE_EBADCTX;
  wh_traceparent_t tp;
  memset(&tp, 0, sizeof tp);
  uint8_t span[8] = {0}, zero[8] = {0};
  if (!hexbytes(s + 3, 32, tp.trace_id.b) || !hexbytes(s + 36, 16, span) ||
      !hexbytes(s + 53, 2, &tp.flags))
    return RIPPLE_EBADCTX;
  if (cpid_nil(&tp.trace_id) || !memcmp(span, zero, 8)) return RIPPLE_EBADCTX;
  for (size_t i = 0; i < 8; i++) tp.span_id = tp.span_id << 8 | span[i];
  *out = tp;
  return RIPPLE_OK;
}

uint64_t wh_traceparent_root_span(const ripple_cpid_t *cpid) {
  static const uint8_t zero[8];
  uint8_t b[8];
  uint64_t id = 0;
  if (!memcmp(cpid->b + 8, zero, 8)) return 0; /* cpid_root_span would fall back: refused here */
  cpid_root_span(cpid, b);
  for (size_t i = 0; i < 8; i++) id = id << 8 | b[i];
  return id;
}

int wh_traceparent_of(const ripple_cpid_t *cpid, char out[WH_TRACEPARENT_LEN + 1]) {
  if (!cpid || cpid_nil(cpid) || !wh_traceparent_root_span(cpid)) return 0;
  uint8_t root[8];
  cpid_root_span(cpid, root);
  out[0] = '0', out[1] = '0', out[2] = '-';
  hex_encode(cpid->b, 16, out + 3);
  out[35] = '-';
  hex_encode(root, 8, out + 36);
  memcpy(out + 52, "-01", 4);
  return 1;
}

/* ---- kube-apiserver's header (wh.h) ------------------------------------------ */

/* A marker, not a value: the request had more than one traceparent header,
 * which W3C Trace Context leaves to the receiver; ripple takes none of them. */
const char WH_APISERVER_TP_MANY[] = "";

const char *wh_apiserver_tp(wh_t *w, const char *header) {
  if (!header) return NULL;
  wh_traceparent_t tp;
  if (header != WH_APISERVER_TP_MANY &&
      wh_traceparent_parse(header, strnlen(header, WH_TRACEPARENT_LEN + 1), &tp) == RIPPLE_OK) {
    atomic_fetch_add(&w->m.as_tp, 1);
    return header;
  }
  atomic_fetch_add(&w->m.as_tp_invalid, 1);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_apiserver_traceparent", "want=%s hint=%s",
                  "00-<32hex>-<16hex>-<2hex>,lower-case,one-header",
                  "ignored: the write's span names no API server span");
  return NULL;
}

/* The ids of a valid one into the review, as the lower-case hex it is, when
 * its flags say sampled: kube-apiserver exports only sampled spans (its
 * sampler is parent-based with a ratio), and a link to a span that was never
 * exported would lead nowhere. */
void wh_apiserver_tp_take(const char *tp, wh_review_t *r) {
  wh_traceparent_t parsed;
  r->apiserver_trace[0] = r->apiserver_span[0] = '\0';
  if (!tp || wh_traceparent_parse(tp, strnlen(tp, WH_TRACEPARENT_LEN + 1), &parsed) != RIPPLE_OK ||
      !(parsed.flags & 1))
    return;
  memcpy(r->apiserver_trace, tp + 3, 32);
  r->apiserver_trace[32] = '\0';
  memcpy(r->apiserver_span, tp + 36, 16);
  r->apiserver_span[16] = '\0';
}

/* ---- on objects ------------------------------------------------------------ */

static const json_t *tp_value(const json_t *obj) {
  const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
  return json_object_get(ann, WH_TRACEPARENT_KEY);
}

/* Whether the write itself sets a traceparent: present on a create, and on
 * an update different from the stored object's (one carried over belongs to
 * an earlier write). A removed one is not set. */
static int set_by_request(const wh_review_t *r) {
  const json_t *now = tp_value(r->object);
  if (!now) return 0;
  if (r->op != WH_OP_UPDATE || !r->old) return 1;
  const json_t *was = tp_value(r->old);
  return !was || !json_equal(now, was);
}

static int spec_changed(const wh_review_t *r) {
  const json_t *now = json_object_get(r->object, "spec");
  const json_t *was = r->old ? json_object_get(r->old, "spec") : NULL;
  if (!now || !was) return now != was;
  return !json_equal(now, was);
}

typedef struct owner_tp {
  const char *kind, *uid; /* the ownerReference's */
  const json_t *value;    /* the write's traceparent */
  int equal;
} owner_tp_t;

static void take_owner(void *ud, const char *json, size_t len) {
  owner_tp_t *o = ud;
  json_t *obj = wh_text_tree(json, len, o->kind);
  const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
  const json_t *v = tp_value(obj);
  /* An owner of that name but another uid is an object created since. */
  if (v && (!uid || !o->uid || !strcmp(uid, o->uid)) && json_equal(v, o->value)) o->equal = 1;
  json_decref(obj);
}

/* Whether the traceparent the write carries over is its controlling owner's
 * (as the informers have the owner): a controller's copy. */
static int owner_copy(const wh_t *w, const wh_review_t *r) {
  owner_tp_t o = {NULL, NULL, tp_value(r->object), 0};
  if (!json_is_string(o.value)) return 0;
  const json_t *refs = json_object_get(json_object_get(r->object, "metadata"), "ownerReferences");
  size_t i;
  const json_t *ref;
  json_array_foreach(refs, i, ref) {
    if (!json_is_true(json_object_get(ref, "controller"))) continue;
    const char *name = json_string_value(json_object_get(ref, "name"));
    o.kind = json_string_value(json_object_get(ref, "kind"));
    o.uid = json_string_value(json_object_get(ref, "uid"));
    if (!o.kind || !name) return 0;
    wh_lookup_get(w, o.kind, r->ns, name, take_owner, &o);
    return o.equal;
  }
  return 0;
}

/* d->patch that sets the traceparent too: a member of the annotations map
 * the patch adds whole, else one more "add" (the first operation has made
 * /metadata/annotations exist, and "add" replaces a member that is there). */
static int append_op(wh_decision_t *d, const char *tp) {
  if (d->patch_len < 3 || d->patch[0] != '[' || d->patch[d->patch_len - 1] != ']')
    return RIPPLE_OK; /* not the patch of a context: left alone */
  int rc = wh_patch_put_annotation(&d->patch, &d->patch_len, "tracing.k8s.io/traceparent", tp);
  if (rc == RIPPLE_OK) d->tp_written = 1;
  return rc;
}

/* ---- the engine's steps (wh.h) ------------------------------------------------ */

int wh_traceparent_client(const wh_t *w, const wh_review_t *r, wh_decision_t *d,
                          wh_traceparent_t *tp) {
  if (!w->o.traceparent || *r->subresource || !r->object || !set_by_request(r))
    return RIPPLE_ENOENT;
  const json_t *v = tp_value(r->object);
  /* A trace id whose last 8 bytes are zero would give its CPID's root span
   * the id 0: well-formed, but no CPID. */
  if (!json_is_string(v) ||
      wh_traceparent_parse(json_string_value(v), json_string_length(v), tp) != RIPPLE_OK ||
      !wh_traceparent_root_span(&tp->trace_id)) {
    d->tp_invalid = 1;
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_traceparent", "resource=%s want=%s", r->resource,
                    "00-<32hex>-<16hex>-<2hex>,lower-case");
    return RIPPLE_EBADCTX;
  }
  return RIPPLE_OK;
}

int wh_traceparent_patch(const wh_t *w, const wh_review_t *r, wh_decision_t *d) {
  if (!w->o.traceparent || !d->wrote_ctx || !d->patch || !r->object) return RIPPLE_OK;
  int binding = !strcmp(r->subresource, "binding");
  if (*r->subresource && !binding) return RIPPLE_OK; /* status: never */
  if (r->op == WH_OP_UPDATE && !binding && !spec_changed(r)) return RIPPLE_OK;
  if (r->op != WH_OP_CREATE && r->op != WH_OP_UPDATE) return RIPPLE_OK;
  if (set_by_request(r) || (r->op == WH_OP_UPDATE && owner_copy(w, r))) {
    d->tp_kept = 1;
    return RIPPLE_OK;
  }
  char tp[WH_TRACEPARENT_LEN + 1];
  if (!wh_traceparent_of(&d->ctx.cpid, tp)) return RIPPLE_OK;
  /* The same CPID under other ancestors: the traceparent is already so. */
  const json_t *cur = tp_value(r->object);
  if (json_is_string(cur) && !strcmp(json_string_value(cur), tp)) return RIPPLE_OK;
  return append_op(d, tp);
}
