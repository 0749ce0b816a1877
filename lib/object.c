/*
 * object.c - reading and writing a trace context on a Kubernetes object.
 *
 * Objects arrive as JSON text from the API server, from admission requests and
 * from manifests. jansson parses them; we touch only
 * metadata.annotations["cpid.ripple.dev/<kind>"]. Writers return either the
 * whole object re-serialised (keys keep their order) or, for admission
 * webhooks, a JSON Patch that changes nothing else by construction.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>

#include "internal.h"

int ripple_annotation_key(const char *kind, char *out, size_t cap) {
  if (!kind || !out) return RIPPLE_EINVAL;
  size_t n = strlen(kind), plen = sizeof RIPPLE_ANNOTATION_PREFIX - 1;
  /* The key's name part must be a valid annotation name: at most 63
   * characters. Kinds are identifiers, so we also insist on that. */
  if (n == 0 || n > 63 || !isalpha((unsigned char)kind[0])) return RIPPLE_EINVAL;
  if (cap < plen + n + 1) return RIPPLE_ERANGE;
  memcpy(out, RIPPLE_ANNOTATION_PREFIX, plen);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)kind[i];
    if (!isalnum(c)) return RIPPLE_EINVAL;
    out[plen + i] = (char)tolower(c);
  }
  out[plen + n] = '\0';
  return RIPPLE_OK;
}

/* Parse the document and resolve the annotation key. */
static int load(const char *json, size_t len, const char *kind, json_t **root, char *key) {
  if (!json) return RIPPLE_EINVAL;
  json_error_t err;
  *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
  if (!*root) return RIPPLE_EJSON;
  if (!json_is_object(*root)) goto bad;
  if (!kind) kind = json_string_value(json_object_get(*root, "kind"));
  if (!kind) goto bad;
  if (ripple_annotation_key(kind, key, RIPPLE_ANNOTATION_KEYMAX) != RIPPLE_OK) goto bad;
  return RIPPLE_OK;
bad:
  json_decref(*root);
  *root = NULL;
  return RIPPLE_EJSON;
}

/* metadata.annotations, or NULL when absent. RIPPLE_EJSON if either exists
 * with the wrong type (null annotations count as absent, as in the API). */
static int annotations(json_t *root, json_t **meta, json_t **ann) {
  *meta = json_object_get(root, "metadata");
  *ann = NULL;
  if (!*meta) return RIPPLE_OK;
  if (!json_is_object(*meta)) return RIPPLE_EJSON;
  *ann = json_object_get(*meta, "annotations");
  if (json_is_null(*ann)) *ann = NULL;
  if (*ann && !json_is_object(*ann)) return RIPPLE_EJSON;
  return RIPPLE_OK;
}

int ripple_object_get_ctx(const char *json, size_t len, const char *kind, uint32_t max_anc,
                          ripple_ctx_t *out) {
  if (!out) return RIPPLE_EINVAL;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  json_t *root, *meta, *ann;
  int rc = load(json, len, kind, &root, key);
  if (rc != RIPPLE_OK) return rc;
  rc = annotations(root, &meta, &ann);
  if (rc == RIPPLE_OK) {
    json_t *v = ann ? json_object_get(ann, key) : NULL;
    if (!v)
      rc = RIPPLE_ENOENT;
    else if (!json_is_string(v))
      rc = RIPPLE_EBADCTX;
    else
      rc = ripple_ctx_decode(json_string_value(v), json_string_length(v), max_anc, out);
  }
  json_decref(root);
  return rc;
}

int ripple_object_set_ctx(const char *json, size_t len, const char *kind, const ripple_ctx_t *ctx,
                          char **out, size_t *out_len) {
  if (!ctx || !out) return RIPPLE_EINVAL;
  char key[RIPPLE_ANNOTATION_KEYMAX], val[RIPPLE_CTX_STRMAX + 1];
  int rc = ripple_ctx_encode(ctx, val, sizeof val, NULL);
  if (rc != RIPPLE_OK) return rc;
  json_t *root, *meta, *ann;
  if ((rc = load(json, len, kind, &root, key)) != RIPPLE_OK) return rc;
  if ((rc = annotations(root, &meta, &ann)) != RIPPLE_OK) goto done;
  rc = RIPPLE_ENOMEM;
  if (!meta && json_object_set_new(root, "metadata", meta = json_object())) goto done;
  if (!ann && json_object_set_new(meta, "annotations", ann = json_object())) goto done;
  if (json_object_set_new(ann, key, json_string(val))) goto done;
  /* Compact, no ASCII escaping, keys in their original order (jansson keeps
   * insertion order), reals with 17 significant digits so values round-trip. */
  char *s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
  if (!s) goto done;
  size_t n = strlen(s);
  *out = malloc(n + 1); /* returned memory must be ripple_free()-able */
  if (*out) {
    memcpy(*out, s, n + 1);
    if (out_len) *out_len = n;
    rc = RIPPLE_OK;
  }
  free(s);
done:
  json_decref(root);
  return rc;
}

/* A JSON Pointer token (RFC 6901): '~' -> "~0", '/' -> "~1". */
static void put_pointer_token(sbuf_t *b, const char *s) {
  for (; *s; s++) {
    if (*s == '~')
      sbuf_put(b, "~0", 2);
    else if (*s == '/')
      sbuf_put(b, "~1", 2);
    else
      sbuf_putc(b, *s);
  }
}

int ripple_object_patch_ctx(const char *json, size_t len, const char *kind, const ripple_ctx_t *ctx,
                            char **out, size_t *out_len, int *changed) {
  if (!ctx || !out) return RIPPLE_EINVAL;
  char key[RIPPLE_ANNOTATION_KEYMAX], val[RIPPLE_CTX_STRMAX + 1];
  int rc = ripple_ctx_encode(ctx, val, sizeof val, NULL);
  if (rc != RIPPLE_OK) return rc;
  json_t *root, *meta, *ann;
  if ((rc = load(json, len, kind, &root, key)) != RIPPLE_OK) return rc;
  if ((rc = annotations(root, &meta, &ann)) != RIPPLE_OK) {
    json_decref(root);
    return rc;
  }
  json_t *cur = ann ? json_object_get(ann, key) : NULL;
  int same = json_is_string(cur) && strcmp(json_string_value(cur), val) == 0;
  sbuf_t b;
  sbuf_init(&b);
  if (same) {
    sbuf_puts(&b, "[]");
  } else if (!meta) {
    sbuf_puts(&b, "[{\"op\":\"add\",\"path\":\"/metadata\",\"value\":{\"annotations\":{");
    sbuf_json_str(&b, key);
    sbuf_putc(&b, ':');
    sbuf_json_str(&b, val);
    sbuf_puts(&b, "}}}]");
  } else if (!ann) {
    /* "add" replaces a null annotations member, as RFC 6902 allows. */
    sbuf_puts(&b, "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{");
    sbuf_json_str(&b, key);
    sbuf_putc(&b, ':');
    sbuf_json_str(&b, val);
    sbuf_puts(&b, "}}]");
  } else {
    sbuf_puts(&b, "[{\"op\":\"add\",\"path\":\"/metadata/annotations/");
    put_pointer_token(&b, key);
    sbuf_puts(&b, "\",\"value\":");
    sbuf_json_str(&b, val);
    sbuf_puts(&b, "}]");
  }
  json_decref(root);
  if (changed) *changed = !same;
  return sbuf_take(&b, out, out_len);
}
