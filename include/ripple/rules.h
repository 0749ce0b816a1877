/*
 * ripple/rules.h - relations between Kubernetes objects, decided by rules.
 *
 * One module answers "which objects is this one related to" for every part of
 * ripple that needs it: `ripple analyze` (analyze/) and the admission webhook
 * (`ripple webhook`, webhook/). It is pure: it never talks to a cluster;
 * callers pass the objects (jansson json_t, as the API server returns them)
 * and the candidates to test.
 *
 * A rule says that an object of kind FROM is upstream of an object of kind TO
 * (a change of FROM propagates to TO) and how the two are recognised:
 *   owner        TO has an ownerReference to FROM (same uid)
 *   controller   the same, and that reference has controller=true
 *   name-prefix  TO's name starts with FROM's name + "-"
 *   label        FROM's selector (a field, spec.selector by default) selects
 *                TO's labels (plain map or matchLabels/matchExpressions)
 *   same-name    TO has FROM's name (a Service and its Endpoints)
 *   name-label   TO's label ARG has FROM's name (kubernetes.io/service-name)
 *   field        FROM's field ARG (dotted path) holds TO's name
 * Both objects must be in the same namespace unless one is cluster-scoped.
 * The built-in rules are listed in docs/analyze.md; more rules come from a
 * YAML file (same document).
 *
 * Memory: the caller owns the objects it passes; nothing is kept. Arrays the
 * module returns are freed with free().
 */
#ifndef RIPPLE_RULES_H
#define RIPPLE_RULES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ripple_rule_by {
  RIPPLE_BY_OWNER,
  RIPPLE_BY_CONTROLLER,
  RIPPLE_BY_NAME_PREFIX,
  RIPPLE_BY_LABEL,
  RIPPLE_BY_SAME_NAME,
  RIPPLE_BY_NAME_LABEL,
  RIPPLE_BY_FIELD,
} ripple_rule_by_t;

typedef struct ripple_rules ripple_rules_t;

/* One relation found: candidate index, which rule, and whether the candidate
 * is upstream (it is the rule's FROM, the object its TO) or downstream. */
typedef struct ripple_relation {
  size_t index;
  size_t rule;
  ripple_rule_by_t by;
  bool upstream;
} ripple_relation_t;

/* A rule set holding the built-in rules. */
int ripple_rules_new(ripple_rules_t **out);
void ripple_rules_free(ripple_rules_t *r);

/* Add the rules of a YAML document (a sequence of {from, to, by}). On error
 * err (if not NULL) says what is wrong and no rule of the document is kept. */
int ripple_rules_load_yaml(ripple_rules_t *r, const char *text, size_t len, char *err,
                           size_t errlen);
int ripple_rules_load_file(ripple_rules_t *r, const char *path, char *err, size_t errlen);

/* Add one rule. group NULL means any group, kind NULL or "*" any kind; the
 * core group is "". arg: the field or label for label/name-label/field. */
int ripple_rules_add(ripple_rules_t *r, const char *from_group, const char *from_kind,
                     const char *to_group, const char *to_kind, ripple_rule_by_t by,
                     const char *arg);
size_t ripple_rules_count(const ripple_rules_t *r);

/* Every relation between obj and cands[0..n): *out is a malloc'ed array of
 * *nout entries (NULL when none), in candidate order. */
int ripple_rules_related(const ripple_rules_t *r, const json_t *obj, const json_t *const *cands,
                         size_t n, ripple_relation_t **out, size_t *nout);

/* Whether from is upstream of to by any rule (the first rule that holds in
 * *rule when not NULL). */
bool ripple_rules_relates(const ripple_rules_t *r, const json_t *from, const json_t *to,
                          size_t *rule);

/* ---- the primitives the rules are made of, usable on their own ---- */

/* The uid of obj's controlling owner (controller=true), or NULL. Borrowed. */
const char *ripple_rules_controller_uid(const json_t *obj);
/* Whether to has an ownerReference with owner's uid (controller_only: and
 * controller=true). */
bool ripple_rules_owned_by(const json_t *to, const json_t *owner, bool controller_only);
/* Whether a selector selects labels (an object; NULL labels = none). A map
 * selector ({"app":"web"}) and a LabelSelector ({matchLabels, matchExpressions})
 * are both understood; an empty or NULL selector selects nothing, as a
 * Service without selector selects no Pods. */
bool ripple_rules_selects(const json_t *selector, const json_t *labels);
/* The API group of obj from its apiVersion ("apps/v1" -> "apps", "v1" -> "").
 * Writes at most cap bytes; "" when absent. */
void ripple_rules_group(const json_t *obj, char *buf, size_t cap);
/* A string at a dotted path ("spec.nodeName"), or NULL. Borrowed. */
const char *ripple_rules_field(const json_t *obj, const char *path);

const char *ripple_rules_by_name(ripple_rule_by_t by);

#ifdef __cplusplus
}
#endif
#endif
