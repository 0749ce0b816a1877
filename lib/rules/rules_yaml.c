/*
 * rules_yaml.c - relation rules for custom resources from a YAML file:
 *
 *   - from: {group: example.com, kind: Widget}
 *     to: {kind: ConfigMap}
 *     by: {field: spec.configRef.name}   # or owner, controller, name-prefix,
 *                                        # label, {label: spec.sel}, same-name,
 *                                        # {name-label: some/label}
 *
 * A document is loaded whole or not at all, so a typo never leaves half a
 * rule set behind; err says which rule was wrong and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "rules_internal.h"

typedef struct ydoc {
  yaml_document_t doc;
  char *err;
  size_t errlen;
} ydoc_t;

static int yfail(ydoc_t *d, size_t idx, const char *what) {
  if (d->err && d->errlen) snprintf(d->err, d->errlen, "rule %zu: %s", idx + 1, what);
  return RIPPLE_EINVAL;
}

static const char *yscalar(ydoc_t *d, yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value node of key in a mapping node, or NULL. */
static yaml_node_t *yget(ydoc_t *d, yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const char *k = yscalar(d, yaml_document_get_node(&d->doc, p->key));
    if (k && !strcmp(k, key)) return yaml_document_get_node(&d->doc, p->value);
  }
  return NULL;
}

static int by_parse(const char *s, ripple_rule_by_t *out) {
  for (int b = RIPPLE_BY_OWNER; b <= RIPPLE_BY_FIELD; b++) {
    if (!strcmp(s, ripple_rules_by_name((ripple_rule_by_t)b))) {
      *out = (ripple_rule_by_t)b;
      return RIPPLE_OK;
    }
  }
  return RIPPLE_EINVAL;
}

/* by: a scalar ("owner") or a one-key mapping ({field: spec.x}). */
static int yby(ydoc_t *d, yaml_node_t *n, ripple_rule_by_t *by, const char **arg) {
  *arg = NULL;
  const char *s = yscalar(d, n);
  if (s) return by_parse(s, by);
  if (!n || n->type != YAML_MAPPING_NODE) return RIPPLE_EINVAL;
  if (n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1) return RIPPLE_EINVAL;
  yaml_node_pair_t *p = n->data.mapping.pairs.start;
  s = yscalar(d, yaml_document_get_node(&d->doc, p->key));
  *arg = yscalar(d, yaml_document_get_node(&d->doc, p->value));
  if (!s || !*arg || by_parse(s, by) != RIPPLE_OK) return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

static int yrule(ripple_rules_t *r, ydoc_t *d, yaml_node_t *n, size_t idx) {
  if (!n || n->type != YAML_MAPPING_NODE) return yfail(d, idx, "not a mapping");
  yaml_node_t *from = yget(d, n, "from"), *to = yget(d, n, "to");
  if (!from || from->type != YAML_MAPPING_NODE) return yfail(d, idx, "needs from: {group, kind}");
  if (!to || to->type != YAML_MAPPING_NODE) return yfail(d, idx, "needs to: {group, kind}");
  ripple_rule_by_t by;
  const char *arg;
  if (yby(d, yget(d, n, "by"), &by, &arg) != RIPPLE_OK)
    return yfail(d, idx,
                 "by must be owner, controller, name-prefix, label, same-name, "
                 "{label: PATH}, {name-label: LABEL} or {field: PATH}");
  if ((by == RIPPLE_BY_FIELD || by == RIPPLE_BY_NAME_LABEL) && !arg)
    return yfail(d, idx, "field and name-label need an argument ({field: spec.x})");
  int rc =
      ripple_rules_add(r, yscalar(d, yget(d, from, "group")), yscalar(d, yget(d, from, "kind")),
                       yscalar(d, yget(d, to, "group")), yscalar(d, yget(d, to, "kind")), by, arg);
  return rc == RIPPLE_OK ? rc : yfail(d, idx, ripple_strerror(rc));
}

static int yrules(ripple_rules_t *r, ydoc_t *d) {
  yaml_node_t *root = yaml_document_get_root_node(&d->doc);
  if (!root) return RIPPLE_OK; /* an empty file adds no rules */
  if (root->type != YAML_SEQUENCE_NODE) {
    if (d->err && d->errlen) snprintf(d->err, d->errlen, "rules: expected a list of rules");
    return RIPPLE_EINVAL;
  }
  size_t idx = 0;
  for (yaml_node_item_t *it = root->data.sequence.items.start; it < root->data.sequence.items.top;
       it++, idx++) {
    int rc = yrule(r, d, yaml_document_get_node(&d->doc, *it), idx);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

int ripple_rules_load_yaml(ripple_rules_t *r, const char *text, size_t len, char *err,
                           size_t errlen) {
  if (!r || (!text && len)) return RIPPLE_EINVAL;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return RIPPLE_ENOMEM;
  yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
  ydoc_t d = {.err = err, .errlen = errlen};
  if (!yaml_parser_load(&parser, &d.doc)) {
    if (err && errlen)
      snprintf(err, errlen, "rules: YAML error at line %zu: %s", parser.problem_mark.line + 1,
               parser.problem ? parser.problem : "?");
    yaml_parser_delete(&parser);
    return RIPPLE_EINVAL;
  }
  size_t before = r->n;
  int rc = yrules(r, &d);
  if (rc != RIPPLE_OK) rules_truncate(r, before);
  yaml_document_delete(&d.doc);
  yaml_parser_delete(&parser);
  return rc;
}

int ripple_rules_load_file(ripple_rules_t *r, const char *path, char *err, size_t errlen) {
  if (!r || !path) return RIPPLE_EINVAL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (err && errlen) snprintf(err, errlen, "%s: cannot open", path);
    return RIPPLE_ESYS;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int rc = RIPPLE_OK;
  for (;;) {
    if (len + 4096 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *grown = realloc(buf, cap);
      if (!grown) {
        rc = RIPPLE_ENOMEM;
        break;
      }
      buf = grown;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (rc == RIPPLE_OK && ferror(f)) rc = RIPPLE_ESYS;
  fclose(f);
  if (rc == RIPPLE_OK) rc = ripple_rules_load_yaml(r, buf, len, err, errlen);
  free(buf);
  return rc;
}
