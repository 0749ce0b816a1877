/*
 * stamp.c - which generation of an object its context is about.
 *
 * A context names the change an object's state belongs to, but only as of
 * the write that set it. A spec change the webhook did not decide (admitted
 * while no replica answered, so failurePolicy Ignore let it through
 * unannotated; a scale held in a memory since lost) leaves the older context
 * on the object, and a controller reacting to that change would take the
 * older one as its cause: a wrong relation. metadata.generation counts spec
 * changes, so the webhook writes beside the context the generation the
 * object has once the write is stored, under "<context key>.generation"
 * (docs/format.md). A context whose stamp is behind the object's generation
 * is stale: it must not stand for the object's latest change.
 *
 * Only what kube-apiserver does is assumed: generation 1 on create, +1 on an
 * update that changes anything but metadata and status (built-in kinds
 * compare spec; custom resources everything but metadata and status; the
 * difference never matters, since only spec and status exist), +1 when a
 * graceful delete sets deletionTimestamp, never on a subresource. A wrong
 * guess errs toward "stale" (a later webhook that changed spec too) or is
 * harmless (a stamp ahead of the generation counts as current).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stamp.h"

#include "annotate.h"

/* Kinds stamped when created (the rest only once a stamp is on them): those
 * whose generation a controller acts on. Pods are left out: their spec
 * barely changes after the binding, and their creates are the most
 * frequent writes of all. Custom resources are stamped (any group with a
 * dot that is not Kubernetes' own). */
static int stamped_kind(const char *group, const char *kind) {
  static const char *const apps[] = {
      "Deployment", "ReplicaSet", "StatefulSet",          "DaemonSet",
      "Job",        "CronJob",    "ReplicationController"};
  for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
    if (!strcmp(kind, apps[i])) return 1;
  size_t n = strlen(group);
  return strchr(group, '.') && !(n >= 7 && !strcmp(group + n - 7, ".k8s.io"));
}

int wh_stamp_key(const char *kind, char *out, size_t cap) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  int n = snprintf(out, cap, "%s.generation", key);
  return n < 0 || (size_t)n >= cap ? RIPPLE_ERANGE : RIPPLE_OK;
}

int64_t wh_generation(const json_t *obj) {
  const json_t *g = json_object_get(json_object_get(obj, "metadata"), "generation");
  return json_is_integer(g) && json_integer_value(g) > 0 ? (int64_t)json_integer_value(g) : 0;
}

int64_t wh_stamp(const json_t *obj, const char *kind) {
  char key[RIPPLE_ANNOTATION_KEYMAX + 16];
  if (!obj || wh_stamp_key(kind, key, sizeof key) != RIPPLE_OK) return 0;
  const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
  const char *v = json_string_value(json_object_get(ann, key));
  if (!v || !*v || strlen(v) > 18) return 0;
  char *end;
  long long n = strtoll(v, &end, 10);
  return *end || n <= 0 ? 0 : (int64_t)n;
}

static int counted_change(const json_t *now, const json_t *was);

int wh_gen_past(int64_t gen, int deleting, int64_t about) {
  if (gen <= 0) return 0; /* a kind without generations: nothing to tell */
  return gen > about + (deleting ? 1 : 0);
}

int wh_gen_behind(const json_t *obj, int64_t about) {
  const json_t *meta = json_object_get(obj, "metadata");
  return wh_gen_past(wh_generation(obj), json_is_string(json_object_get(meta, "deletionTimestamp")),
                     about);
}

int wh_ctx_stale(const json_t *obj, const char *kind) {
  int64_t stamp = wh_stamp(obj, kind);
  if (!stamp) /* written before stamps: a Deployment's names its creation only */
    return !strcmp(kind, "Deployment") && wh_generation(obj) > 1;
  return wh_gen_behind(obj, stamp);
}

int64_t wh_next_generation(const wh_review_t *r) {
  if (r->op == WH_OP_CREATE) return 1;
  int64_t gen = wh_generation(r->old);
  if (gen <= 0 || !r->object) return 0;
  return *r->subresource ? gen : gen + counted_change(r->object, r->old);
}

/* Whether an update changes anything kube-apiserver counts in generation. */
static int counted_change(const json_t *now, const json_t *was) {
  const char *k;
  const json_t *v;
  json_object_foreach((json_t *)now, k, v) {
    if (!strcmp(k, "metadata") || !strcmp(k, "status")) continue;
    const json_t *o = json_object_get(was, k);
    if (!o || !json_equal(v, o)) return 1;
  }
  json_object_foreach((json_t *)was, k, v) {
    if (strcmp(k, "metadata") != 0 && strcmp(k, "status") != 0 && !json_object_get(now, k))
      return 1;
  }
  return 0;
}

int64_t wh_stamp_want(const wh_review_t *r, const char *kind) {
  if (!r->object || r->op == WH_OP_DELETE) return 0;
  if (r->op == WH_OP_CREATE) return !*r->subresource && stamped_kind(r->group, kind) ? 1 : 0;
  int64_t gen = wh_generation(r->old);
  if (gen <= 0) return 0;
  if (!wh_stamp(r->old, kind) && !stamped_kind(r->group, kind)) return 0;
  if (*r->subresource) return gen; /* status: the generation stays */
  return gen + counted_change(r->object, r->old);
}

int wh_stamp_patch(const wh_review_t *r, wh_decision_t *d, int64_t want) {
  if (want <= 0 || !r->object || want == wh_stamp(r->object, d->kind)) return RIPPLE_OK;
  char key[RIPPLE_ANNOTATION_KEYMAX + 16];
  int rc = wh_stamp_key(d->kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  /* With no patch of the context, the object already has annotations (its
   * context is among them); a patch of it has made them exist. */
  int alone = !d->patch;
  if (alone &&
      !json_is_object(json_object_get(json_object_get(r->object, "metadata"), "annotations")))
    return RIPPLE_OK;
  if (!alone && (d->patch_len < 3 || d->patch[0] != '[' || d->patch[d->patch_len - 1] != ']'))
    return RIPPLE_OK; /* not the patch of a context: left alone */
  char val[24];
  snprintf(val, sizeof val, "%lld", (long long)want);
  return wh_patch_put_annotation(&d->patch, &d->patch_len, key, val);
}
