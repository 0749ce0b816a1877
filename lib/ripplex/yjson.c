/*
 * yjson.c - YAML documents as jansson values: manifests, scenarios, kubeconfigs,
 * rule files and the watch agent's configuration.
 *
 * Kubernetes manifests are YAML but the API speaks JSON, so every document is
 * turned into the JSON value kubectl would send. Plain scalars are typed the
 * way YAML 1.2's core schema (and kubectl's sigs.k8s.io/yaml) types them:
 * null/~/empty -> null, true/false -> booleans, integers and floats ->
 * numbers, anything else -> a string; quoted scalars are always strings.
 * Anchors and aliases are resolved by libyaml's document loader; merge keys
 * (<<) are not supported and stay an ordinary key.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ripple/ripple.h"
#include "ripplex/yjson.h"

/* Aliases can make a small file expand exponentially ("billion laughs"):
 * bound the nodes a document may expand to. */
#define YJSON_MAX_NODES 1000000
#define YJSON_MAX_DEPTH 64

typedef struct yconv {
  yaml_document_t *doc;
  size_t nodes;
  char *err;
  size_t cap;
} yconv_t;

static int match_any(const char *s, const char *const *set) {
  for (; *set; set++)
    if (!strcmp(s, *set)) return 1;
  return 0;
}

/* A plain scalar's JSON value by the core schema. */
static json_t *plain_scalar(const char *s, size_t len) {
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  if (strlen(s) != len) return json_stringn(s, len); /* a NUL inside: keep it text */
  if (match_any(s, nulls)) return json_null();
  if (match_any(s, trues)) return json_true();
  if (match_any(s, falses)) return json_false();
  const char *digits = s + (*s == '-' || *s == '+');
  if (*digits >= '0' && *digits <= '9') {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*end && errno == 0) return json_integer(v);
    if (strspn(digits, "0123456789.eE+-") == strlen(digits)) {
      errno = 0;
      double d = strtod(s, &end);
      if (!*end && errno == 0 && isfinite(d)) return json_real(d);
    }
  }
  return json_stringn(s, len);
}

static json_t *conv(yconv_t *c, yaml_node_t *n, int depth);

static json_t *conv_mapping(yconv_t *c, yaml_node_t *n, int depth) {
  json_t *o = json_object();
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; o && p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
    if (!k || k->type != YAML_SCALAR_NODE) {
      snprintf(c->err, c->cap, "line %zu: mapping keys must be plain text",
               k ? k->start_mark.line + 1 : 0);
      json_decref(o);
      return NULL;
    }
    json_t *v = conv(c, yaml_document_get_node(c->doc, p->value), depth + 1);
    if (!v || json_object_setn_new_nocheck(o, (const char *)k->data.scalar.value,
                                           k->data.scalar.length, v) != 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

static json_t *conv(yconv_t *c, yaml_node_t *n, int depth) {
  if (!n) return json_null();
  if (++c->nodes > YJSON_MAX_NODES || depth > YJSON_MAX_DEPTH) {
    snprintf(c->err, c->cap, "line %zu: document nests or expands too far (aliases?)",
             n->start_mark.line + 1);
    return NULL;
  }
  switch (n->type) {
    case YAML_SCALAR_NODE: {
      const char *s = (const char *)n->data.scalar.value;
      if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        return plain_scalar(s, n->data.scalar.length);
      return json_stringn(s, n->data.scalar.length);
    }
    case YAML_SEQUENCE_NODE: {
      json_t *a = json_array();
      for (yaml_node_item_t *i = n->data.sequence.items.start; a && i < n->data.sequence.items.top;
           i++) {
        json_t *v = conv(c, yaml_document_get_node(c->doc, *i), depth + 1);
        if (!v || json_array_append_new(a, v) != 0) {
          json_decref(a);
          return NULL;
        }
      }
      return a;
    }
    case YAML_MAPPING_NODE: return conv_mapping(c, n, depth);
    default: return json_null();
  }
}

int yjson_parse(const char *text, size_t len, json_t **out, char *err, size_t cap) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return RIPPLE_ENOMEM;
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  json_t *docs = json_array();
  int rc = docs ? RIPPLE_OK : RIPPLE_ENOMEM;
  while (rc == RIPPLE_OK) {
    yaml_document_t doc;
    if (!yaml_parser_load(&p, &doc)) {
      snprintf(err, cap, "line %zu: %s", p.problem_mark.line + 1,
               p.problem ? p.problem : "malformed YAML");
      rc = RIPPLE_EINVAL;
      break;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) { /* the end of the stream */
      yaml_document_delete(&doc);
      break;
    }
    yconv_t c = {.doc = &doc, .err = err, .cap = cap};
    json_t *v = conv(&c, root, 0);
    /* "---" with nothing after it is an empty document: kubectl skips those. */
    if (!v)
      rc = RIPPLE_EINVAL;
    else if (json_is_null(v))
      json_decref(v);
    else if (json_array_append_new(docs, v) != 0)
      rc = RIPPLE_ENOMEM;
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&p);
  if (rc != RIPPLE_OK) {
    json_decref(docs);
    return rc;
  }
  *out = docs;
  return RIPPLE_OK;
}

const char *yjson_text(const json_t *v, char buf[YJSON_TEXT_MAX]) {
  if (!v) return NULL;
  switch (json_typeof(v)) {
    case JSON_STRING: return json_string_value(v);
    case JSON_INTEGER:
      snprintf(buf, YJSON_TEXT_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
      return buf;
    case JSON_REAL:
      /* The shortest form that reads back as the same number: 1.5, not 1.5000000000000000. */
      for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, YJSON_TEXT_MAX, "%.*g", prec, json_real_value(v));
        if (strtod(buf, NULL) == json_real_value(v)) break;
      }
      return buf;
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "";
    default: return NULL;
  }
}
