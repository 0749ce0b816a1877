/*
 * objtext.c - related objects read from their JSON text, without a tree of
 * the whole object.
 *
 * The informers keep every object as its text; a jansson tree of a Pod costs
 * some 20 us to build, and an Endpoints write over fifty Pods needs fifty of
 * them. What the engine reads of a downstream object (a Pod under a Service,
 * a ReplicaSet's Pods) is its identity, labels, owners and one annotation, all
 * in metadata: a scan finds those members' spans, skipping everything else
 * without building it, and only they become a small stand-in tree for the
 * relation rules and the context. On the upstream side (an owner, a Service)
 * the rules may read any field (a selector, a custom rule's field), so those
 * objects, one or two per request, are parsed whole.
 *
 * The texts come from the informers, which have parsed and checked them, but
 * the scan still never reads past the end and refuses what it does not
 * understand (RIPPLE_EJSON). Members are found by their decoded names (an
 * escaped key is decoded by jansson); when a name occurs twice the first one
 * counts.
 */
#include <stdio.h>
#include <string.h>

#include "objtext.h"
#include "ripple/ripple.h"

/* The apiVersion of a kind the lookup serves, or NULL. */
static const char *api_version(const char *kind) {
  static const char *const t[][2] = {
      {"Pod", "v1"},
      {"Service", "v1"},
      {"Endpoints", "v1"},
      {"ReplicaSet", "apps/v1"},
      {"Deployment", "apps/v1"},
      {"StatefulSet", "apps/v1"},
      {"DaemonSet", "apps/v1"},
      {"Job", "batch/v1"},
      {"EndpointSlice", "discovery.k8s.io/v1"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(kind, t[i][0])) return t[i][1];
  return NULL;
}

void wh_ensure_kind(json_t *obj, const char *kind) {
  if (!json_is_object(obj)) return;
  if (!json_is_string(json_object_get(obj, "kind")))
    json_object_set_new(obj, "kind", json_string(kind));
  const char *api = api_version(kind);
  if (api && !json_is_string(json_object_get(obj, "apiVersion")))
    json_object_set_new(obj, "apiVersion", json_string(api));
}

/* ---- scanning ------------------------------------------------------------ */

static const char *ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* p at '"': past the closing quote, or NULL. *esc: a backslash was seen. */
static const char *skip_str(const char *p, const char *e, int *esc) {
  for (p++; p < e; p++) {
    if (*p == '"') return p + 1;
    if (*p == '\\') {
      if (++p == e) return NULL;
      *esc = 1;
    }
  }
  return NULL;
}

static int scalar_char(char c) {
  return c != ',' && c != ':' && c != '[' && c != ']' && c != '{' && c != '}' && c != '"' &&
         c != ' ' && c != '\t' && c != '\n' && c != '\r';
}

/* p at a value: past its end, or NULL. Containers by depth, not recursion. */
static const char *skip_value(const char *p, const char *e) {
  size_t depth = 0;
  do {
    p = ws(p, e);
    if (p == e) return NULL;
    int esc = 0;
    if (*p == '"') {
      if (!(p = skip_str(p, e, &esc))) return NULL;
    } else if (*p == '{' || *p == '[') {
      depth++, p++;
    } else if (*p == '}' || *p == ']') {
      if (!depth) return NULL;
      depth--, p++;
    } else if (*p == ',' || *p == ':') {
      if (!depth) return NULL;
      p++;
    } else {
      const char *s = p;
      while (p < e && scalar_char(*p)) p++;
      if (p == s) return NULL;
    }
  } while (depth);
  return p;
}

/* Whether the key text [ks, ke) (quotes included) names key. */
static int key_is(const char *ks, const char *ke, int esc, const char *key) {
  size_t n = strlen(key);
  if (!esc) return (size_t)(ke - ks) == n + 2 && !memcmp(ks + 1, key, n);
  json_t *s = json_loadb(ks, (size_t)(ke - ks), JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
  int eq = json_string_length(s) == n && !memcmp(json_string_value(s), key, n);
  json_decref(s);
  return eq;
}

int wh_text_fields(const char *p, size_t n, const char *const *keys, size_t nkeys, wh_span_t *out) {
  const char *e = p + n;
  for (size_t i = 0; i < nkeys; i++) out[i] = (wh_span_t){NULL, 0};
  p = ws(p, e);
  if (p == e || *p != '{') return RIPPLE_EJSON;
  p = ws(p + 1, e);
  if (p < e && *p == '}') return RIPPLE_OK;
  for (;;) {
    if (p == e || *p != '"') return RIPPLE_EJSON;
    const char *ks = p;
    int esc = 0;
    if (!(p = skip_str(p, e, &esc))) return RIPPLE_EJSON;
    const char *ke = p;
    p = ws(p, e);
    if (p == e || *p != ':') return RIPPLE_EJSON;
    const char *vs = ws(p + 1, e);
    if (!(p = skip_value(vs, e))) return RIPPLE_EJSON;
    size_t found = 0;
    for (size_t i = 0; i < nkeys; i++) {
      if (!out[i].p && key_is(ks, ke, esc, keys[i])) out[i] = (wh_span_t){vs, (size_t)(p - vs)};
      found += out[i].p != NULL;
    }
    /* The rest is not read: a Pod's spec and status are most of its text. */
    if (found == nkeys) return RIPPLE_OK;
    p = ws(p, e);
    if (p < e && *p == '}') return RIPPLE_OK;
    if (p == e || *p != ',') return RIPPLE_EJSON;
    p = ws(p + 1, e);
  }
}

/* ---- the stand-in -------------------------------------------------------- */

/* The value of a span as a tree; plain strings without jansson's parser. */
static json_t *span_value(wh_span_t s) {
  if (s.n >= 2 && s.p[0] == '"' && s.p[s.n - 1] == '"' && !memchr(s.p, '\\', s.n))
    return json_stringn(s.p + 1, s.n - 2);
  return json_loadb(s.p, s.n, JSON_DECODE_ANY, NULL);
}

static int is_object(wh_span_t s) { return s.p && s.n && s.p[0] == '{'; }

enum { M_NAME, M_NS, M_UID, M_RV, M_LABELS, M_OWNERS, M_ANN, M_N };

/* metadata's members that the stand-in keeps; ann: the context's key only. */
static int standin_meta(wh_span_t meta, const char *key, json_t *md) {
  static const char *const names[M_N] = {
      "name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences", "annotations"};
  wh_span_t f[M_N];
  int rc = wh_text_fields(meta.p, meta.n, names, M_N, f);
  if (rc != RIPPLE_OK) return rc;
  for (int i = 0; i < M_ANN; i++) {
    if (!f[i].p) continue;
    json_t *v = span_value(f[i]);
    if (!v || json_object_set_new(md, names[i], v)) return RIPPLE_EJSON;
  }
  if (!is_object(f[M_ANN])) return RIPPLE_OK;
  /* The context and its MAC (ctxmac.h): a context is trusted only with it. */
  char mkey[RIPPLE_ANNOTATION_KEYMAX + 8];
  snprintf(mkey, sizeof mkey, "%s.mac", key);
  const char *keys[2] = {key, mkey};
  wh_span_t a[2];
  if ((rc = wh_text_fields(f[M_ANN].p, f[M_ANN].n, keys, 2, a)) != RIPPLE_OK) return rc;
  json_t *ann = json_object();
  if (!ann || json_object_set_new(md, "annotations", ann)) return RIPPLE_ENOMEM;
  for (int i = 0; i < 2; i++) {
    json_t *v = a[i].p ? span_value(a[i]) : NULL;
    if (a[i].p && (!v || json_object_set_new(ann, keys[i], v))) return RIPPLE_EJSON;
  }
  return RIPPLE_OK;
}

/* A JSON string without escapes: its characters, else NULL. */
static const char *plain_str(wh_span_t s, size_t *n) {
  if (s.n < 2 || s.p[0] != '"' || memchr(s.p, '\\', s.n)) return NULL;
  *n = s.n - 2;
  return s.p + 1;
}

int wh_text_ident(const char *json, size_t len, const char *kind, wh_ident_t *out) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  static const char *const top[1] = {"metadata"};
  static const char *const names[4] = {"name", "namespace", "uid", "annotations"};
  const char *keys[1] = {key};
  wh_span_t meta, f[4], v = {NULL, 0};
  if ((rc = wh_text_fields(json, len, top, 1, &meta)) != RIPPLE_OK) return rc;
  if (!is_object(meta)) return RIPPLE_EJSON;
  if ((rc = wh_text_fields(meta.p, meta.n, names, 4, f)) != RIPPLE_OK) return rc;
  if (is_object(f[3]) && (rc = wh_text_fields(f[3].p, f[3].n, keys, 1, &v)) != RIPPLE_OK) return rc;
  size_t nn = 0, nsn = 0, un = 0;
  const char *name = f[0].p ? plain_str(f[0], &nn) : "";
  const char *ns = f[1].p ? plain_str(f[1], &nsn) : "";
  const char *uid = f[2].p ? plain_str(f[2], &un) : "";
  if (!name || !ns || !uid || nn >= sizeof out->name || nsn >= sizeof out->ns ||
      un >= sizeof out->uid)
    return RIPPLE_EJSON;
  if (v.p && !plain_str(v, &out->ctx_len)) return RIPPLE_EJSON;
  memcpy(out->name, name, nn);
  out->name[nn] = '\0';
  memcpy(out->ns, ns, nsn);
  out->ns[nsn] = '\0';
  memcpy(out->uid, uid, un);
  out->uid[un] = '\0';
  out->ctx = v.p ? v.p + 1 : NULL;
  if (!v.p) out->ctx_len = 0;
  return RIPPLE_OK;
}

int wh_text_standin(const char *json, size_t len, const char *kind, json_t **out) {
  if (!json || !kind || !out) return RIPPLE_EINVAL;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  int rc = ripple_annotation_key(kind, key, sizeof key);
  if (rc != RIPPLE_OK) return rc;
  static const char *const top[1] = {"metadata"};
  wh_span_t meta;
  if ((rc = wh_text_fields(json, len, top, 1, &meta)) != RIPPLE_OK) return rc;
  json_t *obj = json_object(), *md = json_object();
  if (!obj || !md || json_object_set_new(obj, "metadata", md)) {
    json_decref(obj);
    return RIPPLE_ENOMEM;
  }
  wh_ensure_kind(obj, kind);
  rc = is_object(meta) ? standin_meta(meta, key, md) : RIPPLE_OK;
  if (!is_object(meta)) json_object_del(obj, "metadata");
  if (rc != RIPPLE_OK) {
    json_decref(obj);
    return rc;
  }
  *out = obj;
  return RIPPLE_OK;
}

json_t *wh_text_tree(const char *json, size_t len, const char *kind) {
  json_t *obj = json ? json_loadb(json, len, 0, NULL) : NULL;
  if (!json_is_object(obj)) {
    json_decref(obj);
    return NULL;
  }
  wh_ensure_kind(obj, kind);
  return obj;
}
