/*
 * rules_internal.h - the rule set's layout, shared by the parts of
 * lib/rules (rules.c, match.c, rules_yaml.c).
 */
#ifndef RIPPLE_RULES_INTERNAL_H
#define RIPPLE_RULES_INTERNAL_H

#include "ripple/rules.h"

/* NULL group or kind: any. */
typedef struct rule {
  char *from_group, *from_kind, *to_group, *to_kind;
  ripple_rule_by_t by;
  char *arg;
} rule_t;

struct ripple_rules {
  rule_t *rules;
  size_t n, cap;
};

int rules_add_builtin(ripple_rules_t *r);
/* The value at a dotted path ("spec.selector"), or NULL. Borrowed. */
const json_t *rules_path(const json_t *obj, const char *path);
/* Drop rules from index n on (undo a partly loaded file). */
void rules_truncate(ripple_rules_t *r, size_t n);

#endif
