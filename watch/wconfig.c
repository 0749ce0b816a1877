/*
 * wconfig.c - ripple-watch's --config file (YAML, read by yjson and walked
 * as JSON):
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
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"
#include "ripplex/yjson.h"
#include "wconfig.h"

/* Room for a number or boolean written back as text. */

/* A copy of the text of key in mapping m; *out NULL when it has none. */
static int dup_text(const json_t *m, const char *key, const char **out) {
  char buf[YJSON_TEXT_MAX];
  const char *s = yjson_text(json_object_get(m, key), buf);
  *out = s ? strdup(s) : NULL;
  return s && !*out ? RIPPLE_ENOMEM : RIPPLE_OK;
}

static int add_entry(const json_t *n, agent_opts_t *o, char *err, size_t cap) {
  if (o->nres == AGENT_MAX_RES)
    return snprintf(err, cap, "more than %d resources", AGENT_MAX_RES), RIPPLE_ERANGE;
  agent_res_opts_t *r = &o->res[o->nres];
  char buf[YJSON_TEXT_MAX];
  const char *name = yjson_text(n, buf);
  if (!name) name = yjson_text(json_object_get(n, "resource"), buf);
  if (!name || !*name) {
    snprintf(err, cap, "resources[%d]: a name, or a mapping with \"resource\"", o->nres);
    return RIPPLE_EINVAL;
  }
  int rc = (r->name = strdup(name)) ? RIPPLE_OK : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) rc = dup_text(n, "namespace", &r->namespace_);
  if (rc == RIPPLE_OK) rc = dup_text(n, "labelSelector", &r->selector);
  if (rc != RIPPLE_OK) return snprintf(err, cap, "out of memory"), rc;
  o->nres++;
  return RIPPLE_OK;
}

static int from_doc(const json_t *root, agent_opts_t *o, char *err, size_t cap) {
  if (!json_is_object(root))
    return snprintf(err, cap, "the top level must be a mapping"), RIPPLE_EINVAL;
  int rc = RIPPLE_OK;
  if (!o->namespace_) rc = dup_text(root, "namespace", &o->namespace_);
  if (rc == RIPPLE_OK && !o->selector) rc = dup_text(root, "selector", &o->selector);
  if (rc != RIPPLE_OK) return snprintf(err, cap, "out of memory"), rc;
  json_t *list = json_object_get(root, "resources");
  if (!json_is_array(list))
    return snprintf(err, cap, "\"resources\" must be a list"), RIPPLE_EINVAL;
  size_t i;
  json_t *item;
  json_array_foreach(list, i, item) {
    rc = add_entry(item, o, err, cap);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

/* The whole of f, with its length (a NUL inside is the YAML reader's to
 * reject); 0 or an errno value. */
static int read_all(FILE *f, char **out, size_t *len) {
  sbuf_t b;
  sbuf_init(&b);
  char buf[8192];
  size_t n;
  errno = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sbuf_put(&b, buf, n);
  int e = ferror(f) ? (errno ? errno : EIO) : 0;
  if (!e && sbuf_take(&b, out, len) != RIPPLE_OK) e = ENOMEM;
  if (e) sbuf_free(&b);
  return e;
}

int wconfig_load(const char *path, agent_opts_t *o, char *err, size_t cap) {
  char msg[256] = "";
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "%s: cannot open: %s", path, strerror(errno));
    return RIPPLE_ESYS;
  }
  char *yaml;
  size_t len;
  int e = read_all(f, &yaml, &len);
  fclose(f);
  if (e) {
    snprintf(err, cap, "%s: cannot read: %s", path, strerror(e));
    return e == ENOMEM ? RIPPLE_ENOMEM : RIPPLE_ESYS;
  }
  json_t *docs;
  int rc = yjson_parse(yaml, len, &docs, msg, sizeof msg);
  free(yaml);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", path, rc == RIPPLE_ENOMEM ? "out of memory" : msg);
    return rc;
  }
  /* the first document, as libyaml's loader read only that one */
  rc = from_doc(json_array_get(docs, 0), o, msg, sizeof msg);
  if (rc != RIPPLE_OK) snprintf(err, cap, "%s: %s", path, msg);
  json_decref(docs);
  return rc;
}
