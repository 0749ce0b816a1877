/*
 * rules.c - the rule set: built-in relations between Kubernetes kinds, rules
 * added by callers, and the questions asked of them (is A upstream of B;
 * which candidates is this object related to).
 */
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "rules_internal.h"

int ripple_rules_new(ripple_rules_t **out) {
  if (!out) return RIPPLE_EINVAL;
  ripple_rules_t *r = calloc(1, sizeof *r);
  if (!r) return RIPPLE_ENOMEM;
  int rc = rules_add_builtin(r);
  if (rc != RIPPLE_OK) {
    ripple_rules_free(r);
    return rc;
  }
  *out = r;
  return RIPPLE_OK;
}

static void rule_clear(rule_t *u) {
  free(u->from_group);
  free(u->from_kind);
  free(u->to_group);
  free(u->to_kind);
  free(u->arg);
}

void ripple_rules_free(ripple_rules_t *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) rule_clear(&r->rules[i]);
  free(r->rules);
  free(r);
}

size_t ripple_rules_count(const ripple_rules_t *r) { return r ? r->n : 0; }

static int dup_opt(const char *s, char **out) {
  *out = NULL;
  if (!s || !strcmp(s, "*")) return RIPPLE_OK;
  *out = strdup(s);
  return *out ? RIPPLE_OK : RIPPLE_ENOMEM;
}

int ripple_rules_add(ripple_rules_t *r, const char *from_group, const char *from_kind,
                     const char *to_group, const char *to_kind, ripple_rule_by_t by,
                     const char *arg) {
  if (!r || by < RIPPLE_BY_OWNER || by > RIPPLE_BY_FIELD) return RIPPLE_EINVAL;
  if ((by == RIPPLE_BY_FIELD || by == RIPPLE_BY_NAME_LABEL) && (!arg || !*arg))
    return RIPPLE_EINVAL;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    rule_t *grown = realloc(r->rules, cap * sizeof *grown);
    if (!grown) return RIPPLE_ENOMEM;
    r->rules = grown;
    r->cap = cap;
  }
  rule_t u = {.by = by};
  int rc = dup_opt(from_group, &u.from_group);
  if (rc == RIPPLE_OK) rc = dup_opt(from_kind, &u.from_kind);
  if (rc == RIPPLE_OK) rc = dup_opt(to_group, &u.to_group);
  if (rc == RIPPLE_OK) rc = dup_opt(to_kind, &u.to_kind);
  if (rc == RIPPLE_OK && arg) {
    u.arg = strdup(arg);
    if (!u.arg) rc = RIPPLE_ENOMEM;
  }
  if (rc != RIPPLE_OK) {
    rule_clear(&u);
    return rc;
  }
  r->rules[r->n++] = u;
  return RIPPLE_OK;
}

/* The built-in rules (docs/analyze.md lists them). Owner references hold
 * between any kinds; name prefixes only where a controller names what it
 * creates that way, since a prefix alone is weak evidence. */
int rules_add_builtin(ripple_rules_t *r) {
  static const struct {
    const char *fg, *fk, *tg, *tk;
    ripple_rule_by_t by;
    const char *arg;
  } b[] = {
      {NULL, NULL, NULL, NULL, RIPPLE_BY_OWNER, NULL},
      {"apps", "Deployment", "apps", "ReplicaSet", RIPPLE_BY_NAME_PREFIX, NULL},
      {"apps", "ReplicaSet", "", "Pod", RIPPLE_BY_NAME_PREFIX, NULL},
      {"apps", "StatefulSet", "", "Pod", RIPPLE_BY_NAME_PREFIX, NULL},
      {"apps", "DaemonSet", "", "Pod", RIPPLE_BY_NAME_PREFIX, NULL},
      {"batch", "Job", "", "Pod", RIPPLE_BY_NAME_PREFIX, NULL},
      {"", "Service", "", "Pod", RIPPLE_BY_LABEL, "spec.selector"},
      {"", "Service", "", "Endpoints", RIPPLE_BY_SAME_NAME, NULL},
      {"", "Service", "discovery.k8s.io", "EndpointSlice", RIPPLE_BY_NAME_LABEL,
       "kubernetes.io/service-name"},
      {"", "Pod", "", "Node", RIPPLE_BY_FIELD, "spec.nodeName"},
  };
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
    int rc = ripple_rules_add(r, b[i].fg, b[i].fk, b[i].tg, b[i].tk, b[i].by, b[i].arg);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

static bool kind_matches(const char *group, const char *kind, const json_t *obj) {
  if (kind) {
    const char *k = json_string_value(json_object_get(obj, "kind"));
    if (!k || strcmp(k, kind) != 0) return false;
  }
  if (group) {
    char g[256];
    ripple_rules_group(obj, g, sizeof g);
    if (strcmp(g, group) != 0) return false;
  }
  return true;
}

/* Same namespace, or one of the two is cluster-scoped. */
static bool scope_matches(const json_t *a, const json_t *b) {
  const char *na = ripple_rules_field(a, "metadata.namespace");
  const char *nb = ripple_rules_field(b, "metadata.namespace");
  if (!na || !*na || !nb || !*nb) return true;
  return strcmp(na, nb) == 0;
}

static bool name_prefixed(const char *parent, const char *child) {
  size_t len = strlen(parent);
  return len && strncmp(child, parent, len) == 0 && child[len] == '-' && child[len + 1];
}

static bool by_holds(const rule_t *u, const json_t *from, const json_t *to) {
  const char *fname = ripple_rules_field(from, "metadata.name");
  const char *tname = ripple_rules_field(to, "metadata.name");
  switch (u->by) {
    case RIPPLE_BY_OWNER: return ripple_rules_owned_by(to, from, false);
    case RIPPLE_BY_CONTROLLER: return ripple_rules_owned_by(to, from, true);
    case RIPPLE_BY_NAME_PREFIX: return fname && tname && name_prefixed(fname, tname);
    case RIPPLE_BY_LABEL: {
      const json_t *labels = json_object_get(json_object_get(to, "metadata"), "labels");
      return ripple_rules_selects(rules_path(from, u->arg ? u->arg : "spec.selector"), labels);
    }
    case RIPPLE_BY_SAME_NAME: return fname && tname && strcmp(fname, tname) == 0;
    case RIPPLE_BY_NAME_LABEL: {
      const json_t *labels = json_object_get(json_object_get(to, "metadata"), "labels");
      const char *v = json_string_value(json_object_get(labels, u->arg));
      return fname && v && strcmp(fname, v) == 0;
    }
    case RIPPLE_BY_FIELD: {
      const char *v = ripple_rules_field(from, u->arg);
      return v && tname && strcmp(v, tname) == 0;
    }
  }
  return false;
}

static bool rule_holds(const rule_t *u, const json_t *from, const json_t *to) {
  if (from == to) return false;
  if (!kind_matches(u->from_group, u->from_kind, from)) return false;
  if (!kind_matches(u->to_group, u->to_kind, to)) return false;
  return scope_matches(from, to) && by_holds(u, from, to);
}

bool ripple_rules_relates(const ripple_rules_t *r, const json_t *from, const json_t *to,
                          size_t *rule) {
  if (!r || !from || !to) return false;
  for (size_t i = 0; i < r->n; i++) {
    if (rule_holds(&r->rules[i], from, to)) {
      if (rule) *rule = i;
      return true;
    }
  }
  return false;
}

int ripple_rules_related(const ripple_rules_t *r, const json_t *obj, const json_t *const *cands,
                         size_t n, ripple_relation_t **out, size_t *nout) {
  if (!r || !obj || (n && !cands) || !out || !nout) return RIPPLE_EINVAL;
  ripple_relation_t *rel = NULL;
  size_t len = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    for (int up = 0; up < 2; up++) {
      size_t rule;
      const json_t *from = up ? cands[i] : obj, *to = up ? obj : cands[i];
      if (!ripple_rules_relates(r, from, to, &rule)) continue;
      if (len == cap) {
        cap = cap ? cap * 2 : 8;
        ripple_relation_t *grown = realloc(rel, cap * sizeof *grown);
        if (!grown) {
          free(rel);
          return RIPPLE_ENOMEM;
        }
        rel = grown;
      }
      rel[len++] = (ripple_relation_t){i, rule, r->rules[rule].by, up != 0};
    }
  }
  *out = rel;
  *nout = len;
  return RIPPLE_OK;
}

const char *ripple_rules_by_name(ripple_rule_by_t by) {
  switch (by) {
    case RIPPLE_BY_OWNER: return "owner";
    case RIPPLE_BY_CONTROLLER: return "controller";
    case RIPPLE_BY_NAME_PREFIX: return "name-prefix";
    case RIPPLE_BY_LABEL: return "label";
    case RIPPLE_BY_SAME_NAME: return "same-name";
    case RIPPLE_BY_NAME_LABEL: return "name-label";
    case RIPPLE_BY_FIELD: return "field";
  }
  return "?";
}

void rules_truncate(ripple_rules_t *r, size_t n) {
  while (r->n > n) rule_clear(&r->rules[--r->n]);
}
