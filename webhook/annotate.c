/*
 * annotate.c - contexts on objects that are already parsed (the review's
 * trees and the informers' objects).
 *
 * libripple's object functions take JSON text. The webhook holds trees, and
 * serialising a whole Pod to hand it back would cost more than the rest of
 * the decision, so the patch is asked of a stand-in document with only what
 * ripple_object_patch_ctx looks at: whether metadata and annotations exist
 * and the current value under the kind's key. The patch is then exactly the
 * one the whole object would get.
 */
#include <stdio.h>
#include <string.h>

#include "annotate.h"
#include "ripplex/sbuf.h"

static const json_t *annotation(const json_t *obj, const char *kind, const json_t **meta,
                                const json_t **ann, char *key) {
  *meta = *ann = NULL;
  if (ripple_annotation_key(kind, key, RIPPLE_ANNOTATION_KEYMAX) != RIPPLE_OK) return NULL;
  *meta = json_object_get(obj, "metadata");
  *ann = json_object_get(*meta, "annotations");
  return json_object_get(*ann, key);
}

int wh_obj_ctx(const json_t *obj, const char *kind, uint32_t max_anc, ripple_ctx_t *out) {
  if (!obj || !kind || !out) return RIPPLE_EINVAL;
  const json_t *meta, *ann;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  const json_t *v = annotation(obj, kind, &meta, &ann, key);
  if (!v) return RIPPLE_ENOENT;
  if (!json_is_string(v)) return RIPPLE_EBADCTX;
  return ripple_ctx_decode(json_string_value(v), json_string_length(v), max_anc, out);
}

int wh_obj_patch(const json_t *obj, const char *kind, const ripple_ctx_t *ctx, char **patch,
                 size_t *len, int *changed) {
  if (!obj || !kind || !ctx || !patch) return RIPPLE_EINVAL;
  const json_t *meta, *ann;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  const json_t *v = annotation(obj, kind, &meta, &ann, key);
  sbuf_t b;
  sbuf_init(&b);
  if (!json_is_object(meta)) {
    sbuf_puts(&b, "{}");
  } else if (!json_is_object(ann)) {
    sbuf_puts(&b, "{\"metadata\":{}}");
  } else {
    sbuf_puts(&b, "{\"metadata\":{\"annotations\":{");
    if (json_is_string(v)) {
      sbuf_json_str(&b, key);
      sbuf_putc(&b, ':');
      /* Only equality with our value matters: a longer value is never equal. */
      if (json_string_length(v) <= RIPPLE_CTX_STRMAX)
        sbuf_json_strn(&b, json_string_value(v), json_string_length(v));
      else
        sbuf_puts(&b, "\"\"");
    }
    sbuf_puts(&b, "}}}");
  }
  int rc =
      b.oom ? RIPPLE_ENOMEM : ripple_object_patch_ctx(b.p, b.len, kind, ctx, patch, len, changed);
  sbuf_free(&b);
  return rc;
}

int wh_obj_patch_remove(const char *kind, char **patch, size_t *len) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  sbuf_t b;
  sbuf_init(&b);
  sbuf_puts(&b, "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/");
  for (const char *s = key; *s; s++) /* JSON Pointer: '/' is "~1"; keys have no '~' */
    if (*s == '/')
      sbuf_puts(&b, "~1");
    else
      sbuf_putc(&b, *s);
  sbuf_puts(&b, "\"}]");
  return sbuf_take(&b, patch, len);
}

wh_ctx_refusal_t wh_obj_ctx_check(const wh_ctxmac_t *m, const json_t *obj, const char *kind,
                                  const char *ns) {
  if (!m || !m->len) return WH_CTX_OK;
  const json_t *meta, *ann;
  char key[RIPPLE_ANNOTATION_KEYMAX], mkey[WH_CTXMAC_KEYNAME_MAX];
  const json_t *v = annotation(obj, kind, &meta, &ann, key);
  if (!json_is_string(v)) return WH_CTX_OK; /* absent, or malformed: counted elsewhere */
  if (wh_ctxmac_keyname(kind, mkey, sizeof mkey) != RIPPLE_OK) return WH_CTX_UNSIGNED;
  const json_t *mac = json_object_get(ann, mkey);
  if (!mac) return WH_CTX_UNSIGNED;
  if (!json_is_string(mac)) return WH_CTX_BAD_MAC;
  return wh_ctxmac_check(m, kind, ns, json_string_value(v), json_string_length(v),
                         json_string_value(mac), json_string_length(mac));
}

static void put_pointer(sbuf_t *b, const char *key) {
  for (const char *s = key; *s; s++) /* JSON Pointer: '/' is "~1"; keys have no '~' */
    if (*s == '/')
      sbuf_puts(b, "~1");
    else
      sbuf_putc(b, *s);
}

/* The end of the annotations map the patch's first op adds whole (the
 * object had none: ripple_object_patch_ctx's "add" of /metadata/annotations
 * or of /metadata), or NULL. The map's values are contexts, MACs, stamps and
 * traceparents, none with a '}': its first "}}" closes it. */
static const char *added_map_end(const char *p, size_t len) {
  static const char *const heads[] = {
      "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{",
      "[{\"op\":\"add\",\"path\":\"/metadata\",\"value\":{\"annotations\":{"};
  for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
    size_t n = strlen(heads[i]);
    if (len <= n || memcmp(p, heads[i], n) != 0) continue;
    for (const char *e = p + n; e + 1 < p + len; e++)
      if (e[0] == '}' && e[1] == '}') return e;
  }
  return NULL;
}

int wh_patch_put_annotation(char **patch, size_t *len, const char *key, const char *value) {
  if (!patch || !len || !key || !value) return RIPPLE_EINVAL;
  if (*patch && (*len < 2 || (*patch)[0] != '[' || (*patch)[*len - 1] != ']'))
    return RIPPLE_EINVAL; /* not a JSON Patch */
  sbuf_t b;
  sbuf_init(&b);
  const char *end = *patch ? added_map_end(*patch, *len) : NULL;
  if (end) { /* one more member of the map added whole: no op of its own */
    sbuf_put(&b, *patch, (size_t)(end - *patch));
    if (end[-1] != '{') sbuf_putc(&b, ',');
    sbuf_json_str(&b, key);
    sbuf_putc(&b, ':');
    sbuf_json_str(&b, value);
    sbuf_put(&b, end, *len - (size_t)(end - *patch));
  } else {
    if (*patch && *len > 2) {
      sbuf_put(&b, *patch, *len - 1);
      sbuf_putc(&b, ',');
    } else {
      sbuf_putc(&b, '[');
    }
    sbuf_puts(&b, "{\"op\":\"add\",\"path\":\"/metadata/annotations/");
    put_pointer(&b, key);
    sbuf_puts(&b, "\",\"value\":");
    sbuf_json_str(&b, value);
    sbuf_puts(&b, "}]");
  }
  char *np;
  size_t nl;
  int rc = sbuf_take(&b, &np, &nl);
  if (rc != RIPPLE_OK) return rc;
  ripple_free(*patch);
  *patch = np;
  *len = nl;
  return RIPPLE_OK;
}

int wh_obj_patch_mac(const json_t *obj, const char *kind, const char *mac, char **patch,
                     size_t *len) {
  if (!kind || !patch || !len) return RIPPLE_EINVAL;
  char mkey[WH_CTXMAC_KEYNAME_MAX];
  int rc = wh_ctxmac_keyname(kind, mkey, sizeof mkey);
  if (rc != RIPPLE_OK) return rc == RIPPLE_ERANGE ? RIPPLE_OK : rc; /* a kind left unsigned */
  const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
  const json_t *cur = json_object_get(ann, mkey);
  if (!mac && !cur) return RIPPLE_OK;
  if (mac && json_is_string(cur) && !strcmp(json_string_value(cur), mac)) return RIPPLE_OK;
  if (mac) return wh_patch_put_annotation(patch, len, mkey, mac);
  if (*patch && (*len < 2 || (*patch)[0] != '[' || (*patch)[*len - 1] != ']'))
    return RIPPLE_EINVAL; /* not a JSON Patch */
  sbuf_t b;
  sbuf_init(&b);
  if (*patch && *len > 2) {
    sbuf_put(&b, *patch, *len - 1);
    sbuf_putc(&b, ',');
  } else {
    sbuf_putc(&b, '[');
  }
  sbuf_puts(&b, "{\"op\":\"remove\",\"path\":\"/metadata/annotations/");
  put_pointer(&b, mkey);
  sbuf_puts(&b, "\"}]");
  char *np;
  size_t nl;
  if ((rc = sbuf_take(&b, &np, &nl)) != RIPPLE_OK) return rc;
  ripple_free(*patch);
  *patch = np;
  *len = nl;
  return RIPPLE_OK;
}
