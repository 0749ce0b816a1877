/*
 * change.c - the writes of `kubectl ripple apply|scale|patch|delete`, each
 * carrying a fresh root CPID.
 *
 * The context goes into the written object's own annotation
 * (cpid.ripple.dev/<kind>) in the same write as the change, because that is
 * what ripple-webhook keeps as a person's CPID: a CPID set in the very write
 * (webhook/decide.c, decide_root). The webhook also sends the root mergelog
 * for it, so this program sends none.
 *
 *   apply   server-side apply, fieldManager kubectl-ripple, the annotation in
 *           the applied configuration; one CPID for the whole file: one change.
 *   scale   a merge patch of spec.replicas together with the annotation on the
 *           object itself. The scale subresource drops annotations, and a
 *           person's scale write gets a fresh CPID from the webhook, so it is
 *           not used.
 *   patch   the user's patch plus the annotation (for a JSON Patch, one more
 *           operation that adds it).
 *   delete  a DELETE carries no object: the annotation is patched first (a
 *           root write with our CPID), then the object is deleted; the
 *           webhook takes the root it saw moments before as the delete's,
 *           so the delete and its cascade carry ours.
 *
 * `last` names an object's latest change: the newest root mergelog the trace
 * server indexes under the object's uid, else the CPID of its annotation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "ripplex/yjson.h"

static int fail(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t cap, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return rc;
}

static int kube_fail(char *err, size_t cap, int rc, const char *what,
                     const ripple_kube_status_t *st) {
  if (st->message[0]) return fail(err, cap, rc, "%s: %s", what, st->message);
  return fail(err, cap, rc, "%s: %s", what, ripple_kube_strerror(rc));
}

int kr_root_ctx(ripple_ctx_t *ctx, char *value, size_t cap) {
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  int rc = ripple_cpid_generate(&c.cpid);
  if (rc == RIPPLE_OK) rc = ripple_ctx_encode(&c, value, cap, NULL);
  if (rc == RIPPLE_OK) *ctx = c;
  return rc;
}

/* "deployment.apps/web", as kubectl names what it wrote. */
static void label(const ripple_kube_resource_t *r, const char *name, char *out, size_t cap) {
  char kind[128];
  size_t i = 0;
  for (; i < sizeof kind - 1 && r->kind[i]; i++)
    kind[i] = (char)(r->kind[i] >= 'A' && r->kind[i] <= 'Z' ? r->kind[i] + 32 : r->kind[i]);
  kind[i] = '\0';
  /* A label cut short is still a label; only an encoding error empties it. */
  if (snprintf(out, cap, "%s%s%s/%s", kind, *r->group ? "." : "", r->group, name) < 0)
    out[0] = '\0';
}

static const char *ns_for(const kr_kube_t *k, const ripple_kube_resource_t *r) {
  return r->namespaced ? k->namespace_ : NULL;
}

static void print_cpid(FILE *out, const ripple_ctx_t *ctx) {
  char id[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&ctx->cpid, id);
  fprintf(out, "cpid: %s\n", id);
  fflush(out);
}

static int resolve(kr_kube_t *k, const char *name, const ripple_kube_resource_t **r, char *err,
                   size_t cap) {
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  int rc = ripple_kube_resolve(k->kc, name, r, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND || rc == RIPPLE_ENOENT)
    return fail(err, cap, rc, "the server does not have a resource type \"%s\"", name);
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, "discovery", &st);
  return RIPPLE_OK;
}

int kr_patch_add_annotation(json_t *patch, const char *key, const char *value) {
  if (!json_is_object(patch)) return RIPPLE_EINVAL;
  json_t *meta = json_object_get(patch, "metadata");
  if (!json_is_object(meta)) {
    meta = json_object();
    if (json_object_set_new(patch, "metadata", meta) != 0) return RIPPLE_ENOMEM;
  }
  json_t *ann = json_object_get(meta, "annotations");
  if (!json_is_object(ann)) {
    ann = json_object();
    if (json_object_set_new(meta, "annotations", ann) != 0) return RIPPLE_ENOMEM;
  }
  return json_object_set_new(ann, key, json_string(value)) == 0 ? RIPPLE_OK : RIPPLE_ENOMEM;
}

/* "/" is "~1" in a JSON Pointer, "~" is "~0" (RFC 6901). */
static void pointer_escape(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (; *s && n + 3 < cap; s++) {
    if (*s == '~' || *s == '/') {
      out[n++] = '~';
      out[n++] = *s == '~' ? '0' : '1';
    } else {
      out[n++] = *s;
    }
  }
  out[n] = '\0';
}

json_t *kr_jsonpatch_annotation(const json_t *annotations, const char *key, const char *value) {
  json_t *op;
  if (json_is_object(annotations)) {
    char path[256] = "/metadata/annotations/";
    pointer_escape(key, path + strlen(path), sizeof path - strlen(path));
    op = json_pack("{s:s, s:s, s:s}", "op", "add", "path", path, "value", value);
  } else {
    op = json_pack("{s:s, s:s, s:{s:s}}", "op", "add", "path", "/metadata/annotations", "value",
                   key, value);
  }
  return op;
}

/* ---- apply -------------------------------------------------------------------- */

static int apply_one(kr_kube_t *k, const kr_args_t *a, json_t *obj, const char *value, FILE *out,
                     char *err, size_t cap) {
  const char *api = json_string_value(json_object_get(obj, "apiVersion"));
  const char *kind = json_string_value(json_object_get(obj, "kind"));
  json_t *meta = json_object_get(obj, "metadata");
  const char *name = json_string_value(json_object_get(meta, "name"));
  const char *slash = strchr(api, '/');
  char group[128] = "";
  if (slash) snprintf(group, sizeof group, "%.*s", (int)(slash - api), api);
  const ripple_kube_resource_t *r;
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  int rc = ripple_kube_resolve_kind(k->kc, group, kind, &r, &st);
  if (rc != RIPPLE_OK)
    return fail(err, cap, rc, "no resource for %s %s on the server (%s)", api, kind,
                st.message[0] ? st.message : ripple_kube_strerror(rc));
  const char *ns = NULL;
  if (r->namespaced) {
    const char *own = json_string_value(json_object_get(meta, "namespace"));
    if (own && *own && a->namespace_ && strcmp(own, a->namespace_) != 0)
      return fail(err, cap, RIPPLE_EINVAL,
                  "the namespace from the provided object \"%s\" does not match the namespace "
                  "\"%s\"; you must pass '--namespace=%s' to perform this operation",
                  own, a->namespace_, own);
    ns = own && *own ? own : k->namespace_;
    json_object_set_new(meta, "namespace", json_string(ns));
  }
  char key[RIPPLE_ANNOTATION_KEYMAX];
  if ((rc = ripple_annotation_key(r->kind, key, sizeof key)) != RIPPLE_OK ||
      (rc = kr_patch_add_annotation(obj, key, value)) != RIPPLE_OK)
    return fail(err, cap, rc, "%s %s: cannot annotate: %s", kind, name, ripple_strerror(rc));
  char *body = json_dumps(obj, JSON_COMPACT);
  if (!body) return fail(err, cap, RIPPLE_ENOMEM, "out of memory");
  ripple_kube_write_opts_t wo = {.field_manager = KR_FIELD_MANAGER, .force = a->force_conflicts};
  rc = ripple_kube_patch(k->kc, r, ns, name, RIPPLE_KUBE_PATCH_APPLY, body, strlen(body), &wo, NULL,
                         &st);
  free(body);
  char what[300];
  label(r, name, what, sizeof what);
  if (rc == RIPPLE_KUBE_ECONFLICT && !a->force_conflicts) {
    kube_fail(err, cap, rc, what, &st);
    size_t len = strlen(err);
    snprintf(err + len, cap - len, " (--force-conflicts takes the fields over)");
    return rc;
  }
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, what, &st);
  fprintf(out, "%s serverside-applied\n", what);
  return RIPPLE_OK;
}

int kr_apply(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap) {
  json_t *objs;
  int rc = kr_manifest_load(a->file, &objs, err, cap);
  if (rc != RIPPLE_OK) return rc;
  ripple_ctx_t ctx;
  char value[RIPPLE_CTX_STRMAX + 1];
  if ((rc = kr_root_ctx(&ctx, value, sizeof value)) != RIPPLE_OK) {
    json_decref(objs);
    return fail(err, cap, rc, "cannot make a CPID: %s", ripple_strerror(rc));
  }
  size_t i, done = 0;
  json_t *obj;
  json_array_foreach(objs, i, obj) {
    if ((rc = apply_one(k, a, obj, value, out, err, cap)) != RIPPLE_OK) break;
    done++;
  }
  json_decref(objs);
  if (done) print_cpid(out, &ctx); /* what was written is traced, even after a failure */
  return rc;
}

/* ---- scale, patch, delete ------------------------------------------------------- */

/* Patch the object named on the command line; prints "<what> <verb>". */
static int patch_named(kr_kube_t *k, const ripple_kube_resource_t *r, const char *name,
                       ripple_kube_patch_t type, const json_t *patch, const char *verb, FILE *out,
                       char *err, size_t cap) {
  char *body = json_dumps(patch, JSON_COMPACT);
  if (!body) return fail(err, cap, RIPPLE_ENOMEM, "out of memory");
  ripple_kube_write_opts_t wo = {.field_manager = KR_FIELD_MANAGER};
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  int rc =
      ripple_kube_patch(k->kc, r, ns_for(k, r), name, type, body, strlen(body), &wo, NULL, &st);
  free(body);
  char what[300];
  label(r, name, what, sizeof what);
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, what, &st);
  if (verb) fprintf(out, "%s %s\n", what, verb);
  return RIPPLE_OK;
}

/* Resolve the object's resource, make the root context and its annotation. */
static int prepare(kr_kube_t *k, const kr_args_t *a, const ripple_kube_resource_t **r,
                   ripple_ctx_t *ctx, char *key, char *value, char *err, size_t cap) {
  int rc = resolve(k, a->resource, r, err, cap);
  if (rc != RIPPLE_OK) return rc;
  if ((rc = ripple_annotation_key((*r)->kind, key, RIPPLE_ANNOTATION_KEYMAX)) != RIPPLE_OK)
    return fail(err, cap, rc, "kind %s cannot carry a context", (*r)->kind);
  if ((rc = kr_root_ctx(ctx, value, RIPPLE_CTX_STRMAX + 1)) != RIPPLE_OK)
    return fail(err, cap, rc, "cannot make a CPID: %s", ripple_strerror(rc));
  return RIPPLE_OK;
}

int kr_scale(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap) {
  const ripple_kube_resource_t *r;
  ripple_ctx_t ctx;
  char key[RIPPLE_ANNOTATION_KEYMAX], value[RIPPLE_CTX_STRMAX + 1];
  int rc = prepare(k, a, &r, &ctx, key, value, err, cap);
  if (rc != RIPPLE_OK) return rc;
  json_t *patch = json_pack("{s:{s:{s:s}}, s:{s:I}}", "metadata", "annotations", key, value, "spec",
                            "replicas", (json_int_t)a->replicas);
  if (!patch) return fail(err, cap, RIPPLE_ENOMEM, "out of memory");
  rc = patch_named(k, r, a->name, RIPPLE_KUBE_PATCH_MERGE, patch, "scaled", out, err, cap);
  json_decref(patch);
  if (rc == RIPPLE_OK) print_cpid(out, &ctx);
  return rc;
}

/* The user's JSON Patch plus an operation that adds the annotation: whether
 * metadata.annotations exists decides which (a GET just before). */
static int json_patch(kr_kube_t *k, const kr_args_t *a, const ripple_kube_resource_t *r,
                      json_t *ops, const char *key, const char *value, char *err, size_t cap) {
  if (!json_is_array(ops))
    return fail(err, cap, RIPPLE_EINVAL, "a --type json patch must be a JSON array");
  json_t *obj = NULL;
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  int rc = ripple_kube_get(k->kc, r, ns_for(k, r), a->name, &obj, &st);
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, a->name, &st);
  json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
  json_t *op = kr_jsonpatch_annotation(ann, key, value);
  json_decref(obj);
  if (!op || json_array_append_new(ops, op) != 0)
    return fail(err, cap, RIPPLE_ENOMEM, "out of memory");
  return RIPPLE_OK;
}

int kr_patch(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap) {
  const ripple_kube_resource_t *r;
  ripple_ctx_t ctx;
  char key[RIPPLE_ANNOTATION_KEYMAX], value[RIPPLE_CTX_STRMAX + 1];
  int rc = prepare(k, a, &r, &ctx, key, value, err, cap);
  if (rc != RIPPLE_OK) return rc;
  json_t *docs = NULL;
  char perr[256];
  if (yjson_parse(a->patch, strlen(a->patch), &docs, perr, sizeof perr) != RIPPLE_OK ||
      json_array_size(docs) != 1) {
    int parsed = docs != NULL;
    json_decref(docs);
    return fail(err, cap, RIPPLE_EINVAL, "-p is not one JSON or YAML document%s%s",
                parsed ? "" : ": ", parsed ? "" : perr);
  }
  json_t *patch = json_incref(json_array_get(docs, 0));
  json_decref(docs);
  if (a->patch_type == RIPPLE_KUBE_PATCH_JSON) {
    rc = json_patch(k, a, r, patch, key, value, err, cap);
  } else if ((rc = kr_patch_add_annotation(patch, key, value)) != RIPPLE_OK) {
    rc = fail(err, cap, rc, "a --type %s patch must be a JSON object",
              a->patch_type == RIPPLE_KUBE_PATCH_MERGE ? "merge" : "strategic");
  }
  if (rc == RIPPLE_OK)
    rc = patch_named(k, r, a->name, a->patch_type, patch, "patched", out, err, cap);
  json_decref(patch);
  if (rc == RIPPLE_OK) print_cpid(out, &ctx);
  return rc;
}

int kr_delete(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap) {
  const ripple_kube_resource_t *r;
  ripple_ctx_t ctx;
  char key[RIPPLE_ANNOTATION_KEYMAX], value[RIPPLE_CTX_STRMAX + 1];
  int rc = prepare(k, a, &r, &ctx, key, value, err, cap);
  if (rc != RIPPLE_OK) return rc;
  json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value);
  if (!patch) return fail(err, cap, RIPPLE_ENOMEM, "out of memory");
  rc = patch_named(k, r, a->name, RIPPLE_KUBE_PATCH_MERGE, patch, NULL, out, err, cap);
  json_decref(patch);
  if (rc != RIPPLE_OK) return rc;
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  rc = ripple_kube_delete(k->kc, r, ns_for(k, r), a->name, NULL, &st);
  char what[300];
  label(r, a->name, what, sizeof what);
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, what, &st);
  /* kubectl's wording: deployment.apps "web" deleted */
  fprintf(out, "%.*s \"%s\" deleted\n", (int)(strchr(what, '/') - what), what, a->name);
  print_cpid(out, &ctx);
  return RIPPLE_OK;
}

/* ---- last ---------------------------------------------------------------------- */

/* The newest root of a roots answer: RIPPLE_OK, RIPPLE_ENOENT for none. */
static int newest_root(const json_t *roots, char *cpid, char *err, size_t cap) {
  const json_t *arr = json_object_get(roots, "roots");
  if (!json_is_array(arr))
    return fail(err, cap, RIPPLE_EJSON, "the trace server's roots answer has no \"roots\" array");
  if (json_array_size(arr) == 0) return RIPPLE_ENOENT;
  const char *id = json_string_value(json_object_get(json_array_get(arr, 0), "cpid"));
  ripple_cpid_t c;
  if (!id || ripple_cpid_parse(id, strlen(id), &c) != RIPPLE_OK)
    return fail(err, cap, RIPPLE_EJSON, "the trace server's newest root has no valid \"cpid\"");
  ripple_cpid_format(&c, cpid);
  return RIPPLE_OK;
}

/* A person's change is a root the trace server indexes by the object's uid.
 * The annotation is not always the latest one: ripple-webhook holds a
 * Deployment's context after its creation instead of writing it
 * (docs/webhook.md), so a Deployment's annotation names its creation. */
int kr_last_pick(const json_t *obj, const char *kind, const char *what, const json_t *roots,
                 char *cpid, char *err, size_t cap) {
  int rc = roots ? newest_root(roots, cpid, err, cap) : RIPPLE_ENOENT;
  if (rc != RIPPLE_ENOENT) return rc;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  ripple_ctx_t ctx;
  const char *v = NULL;
  if ((rc = ripple_annotation_key(kind, key, sizeof key)) == RIPPLE_OK) {
    v = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
    rc = v ? ripple_ctx_decode(v, strlen(v), RIPPLE_ANC_MAX, &ctx) : RIPPLE_ENOENT;
  }
  if (rc == RIPPLE_ENOENT)
    return fail(err, cap, rc,
                "%s has no %s annotation: no traced change yet (is ripple-webhook "
                "registered for its namespace?)",
                what, key);
  if (rc != RIPPLE_OK)
    return fail(err, cap, rc, "%s: its %s annotation is malformed (%s)", what, key,
                ripple_strerror(rc));
  ripple_cpid_format(&ctx.cpid, cpid);
  return RIPPLE_OK;
}

int kr_get_object(kr_kube_t *k, const kr_args_t *a, json_t **obj, const ripple_kube_resource_t **r,
                  char *what, size_t wcap, char *err, size_t cap) {
  int rc = resolve(k, a->resource, r, err, cap);
  if (rc != RIPPLE_OK) return rc;
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  label(*r, a->name, what, wcap);
  const char *ns = ns_for(k, *r);
  rc = ripple_kube_get(k->kc, *r, ns, a->name, obj, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND)
    return fail(err, cap, rc, "%s not found%s%s", what, ns ? " in namespace " : "", ns ? ns : "");
  if (rc != RIPPLE_OK) return kube_fail(err, cap, rc, what, &st);
  return RIPPLE_OK;
}

int kr_last_cpid(kr_kube_t *k, const kr_args_t *a, char *cpid, char *err, size_t cap) {
  const ripple_kube_resource_t *r;
  json_t *obj = NULL, *roots = NULL;
  char what[300];
  int rc = kr_get_object(k, a, &obj, &r, what, sizeof what, err, cap);
  if (rc != RIPPLE_OK) return rc;
  const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
  if (uid) {
    rc = kr_tserver_roots(k->ts, uid, 1, &roots, err, cap);
    /* A trace server older than the endpoint (404), or a uid it does not
     * index: the annotation, as before. */
    if (rc == RIPPLE_ENOENT || rc == RIPPLE_EINVAL) rc = RIPPLE_OK;
  }
  if (rc == RIPPLE_OK) rc = kr_last_pick(obj, r->kind, what, roots, cpid, err, cap);
  json_decref(roots);
  json_decref(obj);
  return rc;
}
