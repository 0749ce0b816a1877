/*
 * manifest.c - the objects of a manifest file for `kubectl ripple apply`.
 *
 * YAML (multi-document) or JSON, read through the project's YAML->JSON
 * converter (run/yjson.c) so that scalars are typed as kubectl types them.
 * Empty documents are skipped and "kind: List" documents (what `kubectl get
 * -o yaml` prints) contribute their items, as kubectl apply does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "ripplex/yjson.h"

#define KR_MANIFEST_MAX (64u << 20)

static int read_all(FILE *f, char **out, size_t *len) {
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap);
  if (!buf) return RIPPLE_ENOMEM;
  for (;;) {
    if (n == cap) {
      if (cap >= KR_MANIFEST_MAX) {
        free(buf);
        return RIPPLE_ERANGE;
      }
      char *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        return RIPPLE_ENOMEM;
      }
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    return RIPPLE_ESYS;
  }
  *out = buf;
  *len = n;
  return RIPPLE_OK;
}

static int add_object(json_t *objs, json_t *doc, const char *path, size_t index, char *err,
                      size_t cap) {
  const char *kind = json_string_value(json_object_get(doc, "kind"));
  if (!json_is_object(doc) || !kind || !json_is_string(json_object_get(doc, "apiVersion"))) {
    snprintf(err, cap, "%s: document %zu is not a Kubernetes object (it needs apiVersion and kind)",
             path, index + 1);
    return RIPPLE_EJSON;
  }
  if (!strcmp(kind, "List") || (strlen(kind) > 4 && !strcmp(kind + strlen(kind) - 4, "List") &&
                                json_is_array(json_object_get(doc, "items")))) {
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(doc, "items"), i, item) {
      int rc = add_object(objs, item, path, index, err, cap);
      if (rc != RIPPLE_OK) return rc;
    }
    return RIPPLE_OK;
  }
  const char *name = json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
  if (!name || !*name) {
    snprintf(err, cap,
             "%s: document %zu (%s) has no metadata.name (generateName cannot be applied)", path,
             index + 1, kind);
    return RIPPLE_EJSON;
  }
  return json_array_append(objs, doc) == 0 ? RIPPLE_OK : RIPPLE_ENOMEM;
}

int kr_manifest_load(const char *path, json_t **out, char *err, size_t cap) {
  int is_stdin = !strcmp(path, "-");
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
    return RIPPLE_ESYS;
  }
  char *text = NULL;
  size_t len = 0;
  int rc = read_all(f, &text, &len);
  if (!is_stdin) fclose(f);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "cannot read %s: %s", path, ripple_strerror(rc));
    return rc;
  }
  json_t *docs = NULL;
  char yerr[256];
  rc = yjson_parse(text, len, &docs, yerr, sizeof yerr);
  free(text);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", path, yerr);
    return rc;
  }
  json_t *objs = json_array();
  size_t i;
  json_t *doc;
  json_array_foreach(docs, i, doc) {
    if (json_is_null(doc)) continue;
    if ((rc = add_object(objs, doc, path, i, err, cap)) != RIPPLE_OK) break;
  }
  json_decref(docs);
  if (rc == RIPPLE_OK && json_array_size(objs) == 0) {
    snprintf(err, cap, "%s holds no objects", path);
    rc = RIPPLE_EINVAL;
  }
  if (rc != RIPPLE_OK) {
    json_decref(objs);
    return rc;
  }
  *out = objs;
  return RIPPLE_OK;
}
