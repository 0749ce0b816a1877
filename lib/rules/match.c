/*
 * match.c - the primitives relation rules are made of: owner references,
 * label selectors, API groups and dotted field paths of Kubernetes objects.
 *
 * Label selectors are matched here rather than with lib/kube/selector.c:
 * that one parses the query-string form ("app=web,tier!=db"), while objects
 * carry selectors as JSON (a Service's plain map, a workload's
 * matchLabels/matchExpressions), and turning JSON back into a string only to
 * parse it again would add a way to fail without adding meaning.
 */
#include <string.h>

#include "ripple/rules.h"
#include "rules_internal.h"

const json_t *rules_path(const json_t *obj, const char *path) {
  if (!obj || !path) return NULL;
  const json_t *cur = obj;
  const char *p = path;
  while (*p && cur) {
    const char *dot = strchr(p, '.');
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    cur = json_object_getn(cur, p, len);
    p += len;
    if (*p == '.') p++;
  }
  return cur;
}

const char *ripple_rules_field(const json_t *obj, const char *path) {
  return json_string_value(rules_path(obj, path));
}

void ripple_rules_group(const json_t *obj, char *buf, size_t cap) {
  if (!cap) return;
  buf[0] = '\0';
  const char *av = json_string_value(json_object_get(obj, "apiVersion"));
  if (!av) return;
  const char *slash = strchr(av, '/');
  if (!slash) return;
  size_t len = (size_t)(slash - av);
  if (len >= cap) len = cap - 1;
  memcpy(buf, av, len);
  buf[len] = '\0';
}

static const char *uid_of(const json_t *obj) { return ripple_rules_field(obj, "metadata.uid"); }

bool ripple_rules_owned_by(const json_t *to, const json_t *owner, bool controller_only) {
  const char *uid = uid_of(owner);
  if (!uid) return false;
  const json_t *refs = json_object_get(json_object_get(to, "metadata"), "ownerReferences");
  size_t i;
  const json_t *ref;
  json_array_foreach(refs, i, ref) {
    const char *ruid = json_string_value(json_object_get(ref, "uid"));
    if (!ruid || strcmp(ruid, uid) != 0) continue;
    if (!controller_only || json_is_true(json_object_get(ref, "controller"))) return true;
  }
  return false;
}

const char *ripple_rules_controller_uid(const json_t *obj) {
  const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
  size_t i;
  const json_t *ref;
  json_array_foreach(refs, i, ref) {
    if (json_is_true(json_object_get(ref, "controller")))
      return json_string_value(json_object_get(ref, "uid"));
  }
  return NULL;
}

/* Every key of want has the same string value in labels. */
static bool match_labels(const json_t *want, const json_t *labels) {
  const char *key;
  const json_t *val;
  json_object_foreach((json_t *)want, key, val) {
    const char *have = json_string_value(json_object_get(labels, key));
    if (!have || !json_is_string(val) || strcmp(have, json_string_value(val)) != 0) return false;
  }
  return true;
}

static bool in_values(const json_t *values, const char *have) {
  size_t i;
  const json_t *v;
  json_array_foreach(values, i, v) {
    if (have && json_is_string(v) && strcmp(json_string_value(v), have) == 0) return true;
  }
  return false;
}

/* One matchExpressions requirement; an unknown operator selects nothing, as
 * the API server would refuse such a selector. */
static bool match_expression(const json_t *req, const json_t *labels) {
  const char *key = json_string_value(json_object_get(req, "key"));
  const char *op = json_string_value(json_object_get(req, "operator"));
  if (!key || !op) return false;
  const char *have = json_string_value(json_object_get(labels, key));
  const json_t *values = json_object_get(req, "values");
  if (!strcmp(op, "In")) return in_values(values, have);
  if (!strcmp(op, "NotIn")) return !in_values(values, have);
  if (!strcmp(op, "Exists")) return have != NULL;
  if (!strcmp(op, "DoesNotExist")) return have == NULL;
  return false;
}

bool ripple_rules_selects(const json_t *selector, const json_t *labels) {
  if (!json_is_object(selector) || json_object_size(selector) == 0) return false;
  const json_t *ml = json_object_get(selector, "matchLabels");
  const json_t *me = json_object_get(selector, "matchExpressions");
  bool structured = json_is_object(ml) || json_is_array(me);
  if (!structured) return match_labels(selector, labels);
  if (ml && !match_labels(ml, labels)) return false;
  size_t i;
  const json_t *req;
  json_array_foreach(me, i, req) {
    if (!match_expression(req, labels)) return false;
  }
  return true;
}
