/*
 * wconfig.c - ripple-watch's --config file (YAML, libyaml's document API):
 *
 *   namespace: default          # optional, the default for every resource
 *   selector: tier=web          # optional
 *   resources:
 *     - pods                    # a bare name
 *     - resource: deployments.apps
 *       namespace: shop         # optional, per resource
 *       labelSelector: app=cart # optional, per resource
 *
 * Strings are copied and live as long as the process (the agent's options
 * point at them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ripple/ripple.h"
#include "wconfig.h"

static const char *scalar(yaml_document_t *d, yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of key in mapping m, or NULL. */
static yaml_node_t *get(yaml_document_t *d, yaml_node_t *m, const char *key) {
  if (!m || m->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const char *k = scalar(d, yaml_document_get_node(d, p->key));
    if (k && !strcmp(k, key)) return yaml_document_get_node(d, p->value);
  }
  return NULL;
}

static const char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int add_entry(yaml_document_t *d, yaml_node_t *n, agent_opts_t *o, char *err, size_t cap) {
  if (o->nres == AGENT_MAX_RES)
    return snprintf(err, cap, "more than %d resources", AGENT_MAX_RES), RIPPLE_ERANGE;
  agent_res_opts_t *r = &o->res[o->nres];
  const char *name = scalar(d, n);
  if (!name) name = scalar(d, get(d, n, "resource"));
  if (!name || !*name) {
    snprintf(err, cap, "resources[%d]: a name, or a mapping with \"resource\"", o->nres);
    return RIPPLE_EINVAL;
  }
  r->name = strdup(name);
  r->namespace_ = dup_or_null(scalar(d, get(d, n, "namespace")));
  r->selector = dup_or_null(scalar(d, get(d, n, "labelSelector")));
  o->nres++;
  return RIPPLE_OK;
}

static int from_doc(yaml_document_t *d, agent_opts_t *o, char *err, size_t cap) {
  yaml_node_t *root = yaml_document_get_root_node(d);
  if (!root || root->type != YAML_MAPPING_NODE)
    return snprintf(err, cap, "the top level must be a mapping"), RIPPLE_EINVAL;
  const char *ns = scalar(d, get(d, root, "namespace"));
  const char *sel = scalar(d, get(d, root, "selector"));
  if (ns && !o->namespace_) o->namespace_ = strdup(ns);
  if (sel && !o->selector) o->selector = strdup(sel);
  yaml_node_t *list = get(d, root, "resources");
  if (!list || list->type != YAML_SEQUENCE_NODE)
    return snprintf(err, cap, "\"resources\" must be a list"), RIPPLE_EINVAL;
  for (yaml_node_item_t *i = list->data.sequence.items.start; i < list->data.sequence.items.top;
       i++) {
    int rc = add_entry(d, yaml_document_get_node(d, *i), o, err, cap);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

int wconfig_load(const char *path, agent_opts_t *o, char *err, size_t cap) {
  char msg[256] = "";
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "%s: cannot open", path);
    return RIPPLE_ESYS;
  }
  yaml_parser_t p;
  yaml_document_t d;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  int rc = RIPPLE_OK;
  if (!yaml_parser_load(&p, &d)) {
    snprintf(err, cap, "%s: line %zu: %s", path, p.problem_mark.line + 1,
             p.problem ? p.problem : "not YAML");
    rc = RIPPLE_EINVAL;
  } else {
    rc = from_doc(&d, o, msg, sizeof msg);
    if (rc != RIPPLE_OK) snprintf(err, cap, "%s: %s", path, msg);
    yaml_document_delete(&d);
  }
  yaml_parser_delete(&p);
  fclose(f);
  return rc;
}
