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
 * rule set behind; err says which rule was wrong and why. The file is read
 * by yjson, ripple's one YAML reader (it bounds aliases and nesting), and
 * walked as JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "ripplex/yjson.h"
#include "rules_internal.h"

/* Room for a number or boolean written back as text. */

typedef struct yerr {
  char *err;
  size_t errlen;
} yerr_t;

static int yfail(const yerr_t *e, size_t idx, const char *what) {
  if (e->err && e->errlen) snprintf(e->err, e->errlen, "rule %zu: %s", idx + 1, what);
  return RIPPLE_EINVAL;
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

/* by: a scalar ("owner") or a one-key mapping ({field: spec.x}); *arg may
 * point into argbuf. */
static int yby(json_t *n, ripple_rule_by_t *by, const char **arg, char argbuf[YJSON_TEXT_MAX]) {
  *arg = NULL;
  char buf[YJSON_TEXT_MAX];
  const char *s = yjson_text(n, buf);
  if (s) return by_parse(s, by);
  if (json_object_size(n) != 1) return RIPPLE_EINVAL;
  void *it = json_object_iter(n);
  *arg = yjson_text(json_object_iter_value(it), argbuf);
  if (!*arg || by_parse(json_object_iter_key(it), by) != RIPPLE_OK) return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

static int yrule(ripple_rules_t *r, const yerr_t *e, json_t *n, size_t idx) {
  if (!json_is_object(n)) return yfail(e, idx, "not a mapping");
  json_t *from = json_object_get(n, "from"), *to = json_object_get(n, "to");
  if (!json_is_object(from)) return yfail(e, idx, "needs from: {group, kind}");
  if (!json_is_object(to)) return yfail(e, idx, "needs to: {group, kind}");
  ripple_rule_by_t by;
  const char *arg;
  char argbuf[YJSON_TEXT_MAX], fg[YJSON_TEXT_MAX], fk[YJSON_TEXT_MAX], tg[YJSON_TEXT_MAX],
      tk[YJSON_TEXT_MAX];
  if (yby(json_object_get(n, "by"), &by, &arg, argbuf) != RIPPLE_OK)
    return yfail(e, idx,
                 "by must be owner, controller, name-prefix, label, same-name, "
                 "{label: PATH}, {name-label: LABEL} or {field: PATH}");
  if ((by == RIPPLE_BY_FIELD || by == RIPPLE_BY_NAME_LABEL) && !arg)
    return yfail(e, idx, "field and name-label need an argument ({field: spec.x})");
  int rc = ripple_rules_add(r, yjson_text(json_object_get(from, "group"), fg),
                            yjson_text(json_object_get(from, "kind"), fk),
                            yjson_text(json_object_get(to, "group"), tg),
                            yjson_text(json_object_get(to, "kind"), tk), by, arg);
  return rc == RIPPLE_OK ? rc : yfail(e, idx, ripple_strerror(rc));
}

/* The first document, as libyaml's loader read only that one. */
static int yrules(ripple_rules_t *r, const yerr_t *e, json_t *docs) {
  json_t *root = json_array_get(docs, 0);
  if (!root) return RIPPLE_OK; /* an empty file adds no rules */
  if (!json_is_array(root)) {
    if (e->err && e->errlen) snprintf(e->err, e->errlen, "rules: expected a list of rules");
    return RIPPLE_EINVAL;
  }
  size_t idx;
  json_t *rule;
  json_array_foreach(root, idx, rule) {
    int rc = yrule(r, e, rule, idx);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

int ripple_rules_load_yaml(ripple_rules_t *r, const char *text, size_t len, char *err,
                           size_t errlen) {
  if (!r || (!text && len)) return RIPPLE_EINVAL;
  yerr_t e = {err, errlen};
  char msg[256] = "";
  json_t *docs;
  int rc = yjson_parse(text ? text : "", len, &docs, msg, sizeof msg);
  if (rc == RIPPLE_ENOMEM) return rc;
  if (rc != RIPPLE_OK) {
    if (err && errlen) snprintf(err, errlen, "rules: YAML error at %s", msg);
    return RIPPLE_EINVAL;
  }
  size_t before = r->n;
  rc = yrules(r, &e, docs);
  if (rc != RIPPLE_OK) rules_truncate(r, before);
  json_decref(docs);
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
