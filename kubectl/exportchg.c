/*
 * exportchg.c - the change of an exported cascade (export.c), rebuilt from
 * its root write: the span says which object and what kind of write (its
 * name, "update deployments"), the details the watch agent recorded say what
 * the write changed (docs/api.md, "Details").
 *
 *   a change of spec.replicas only  a scale to ${to}; before it, a scale back
 *                                   to ${from} and waits until the replicas
 *                                   are there (kinds with readyReplicas)
 *   another update                  a JSON Patch of the changed paths; before
 *                                   it, the patch that undoes it
 *   a create with its snapshot      an apply of the object (status and the
 *                                   server's metadata left out); before it,
 *                                   a delete of whatever is left of it
 *   a delete                        the delete; the object must be made first
 *   anything not known              a merge patch of ${patch}, to be filled in
 *
 * Values go into the scenario as JSON (valid YAML), with "$" doubled so that
 * ripple run's substitution leaves them as they were.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xtest.h"

typedef struct sb {
  char *p;
  size_t n, cap;
  int oom;
} sb_t;

static void sbf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sbf(sb_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0 || b->oom) return;
  if (b->n + (size_t)need + 1 > b->cap) {
    size_t cap = (b->n + (size_t)need + 1) * 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p, b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)need;
}

static char *sb_take(sb_t *b) {
  if (b->oom) {
    free(b->p);
    return NULL;
  }
  return b->p ? b->p : strdup("");
}

char *kr_yaml_value(const json_t *v) {
  char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!d) return NULL;
  size_t n = 0;
  for (const char *p = d; *p; p++) n += *p == '$' ? 2 : 1;
  char *o = malloc(n + 1);
  if (o) {
    char *q = o;
    for (const char *p = d; *p; p++) {
      if (*p == '$') *q++ = '$';
      *q++ = *p;
    }
    *q = '\0';
  }
  free(d);
  return o;
}

static void put_val(sb_t *b, const json_t *v) {
  char *y = kr_yaml_value(v);
  if (!y) {
    b->oom = 1;
    return;
  }
  sbf(b, "%s", y);
  free(y);
}

static void put_str(sb_t *b, const char *s) {
  json_t *j = json_string(s);
  if (!j) {
    sbf(b, "\"\"");
    return;
  }
  put_val(b, j);
  json_decref(j);
}

/* Paths a write changes that are not what the person changed. */
static int incidental(const char *path) {
  static const char *const skip[] = {"/metadata/generation", "/metadata/resourceVersion",
                                     "/metadata/managedFields", "/status", NULL};
  for (const char *const *s = skip; *s; s++) {
    size_t n = strlen(*s);
    if (!strncmp(path, *s, n) && (path[n] == '\0' || path[n] == '/')) return 1;
  }
  return 0;
}

/* The diff's entries that are the person's change; NULL when there is no
 * usable diff (none, cut short, or a value redacted). */
static json_t *own_diff(const json_t *change) {
  const json_t *diff = json_object_get(change, "diff");
  if (!json_is_array(diff) || json_is_true(json_object_get(change, "truncated"))) return NULL;
  json_t *out = json_array();
  size_t i;
  const json_t *e;
  json_array_foreach(diff, i, e) {
    const char *path = json_string_value(json_object_get(e, "path"));
    if (!path || json_is_true(json_object_get(e, "redacted"))) {
      json_decref(out);
      return NULL;
    }
    if (!incidental(path)) json_array_append(out, (json_t *)e);
  }
  if (json_array_size(out) == 0) {
    json_decref(out);
    return NULL;
  }
  return out;
}

static void ref(sb_t *b, const char *resource, const char *name) {
  sbf(b, "resource: ");
  put_str(b, resource);
  sbf(b, ", name: ");
  put_str(b, name);
}

static int has_ready(const char *kind) {
  return !strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") || !strcmp(kind, "StatefulSet");
}

static void as_scale(kr_xchange_t *c, sb_t *pa, sb_t *re, sb_t *ch, const kr_span_t *s,
                     const char *res, const json_t *e) {
  sbf(pa, "  from: %lld\n  to: %lld\n", (long long)json_integer_value(json_object_get(e, "old")),
      (long long)json_integer_value(json_object_get(e, "new")));
  sbf(re, "  - scale: {");
  ref(re, res, s->oname);
  sbf(re, ", replicas: ${from}}\n");
  for (int k = 0; has_ready(s->kind) && k < 2; k++) {
    sbf(re, "  - wait: {");
    ref(re, res, s->oname);
    sbf(re, ", until: \"status.%s == ${from}\", timeout: 5m}\n", k ? "readyReplicas" : "replicas");
  }
  sbf(ch, "    scale: {");
  ref(ch, res, s->oname);
  sbf(ch, ", replicas: ${to}}");
  snprintf(c->name, sizeof c->name, "scale-%.100s", s->oname);
}

/* The JSON Patch that makes the diff's change (forward) or undoes it. */
static json_t *diff_patch(const json_t *diff, int forward) {
  json_t *ops = json_array();
  size_t i;
  const json_t *e;
  json_array_foreach(diff, i, e) {
    const json_t *to = json_object_get(e, forward ? "new" : "old");
    const json_t *from = json_object_get(e, forward ? "old" : "new");
    const char *op = !to ? "remove" : from ? "replace" : "add";
    json_t *o = json_pack("{s:s,s:O}", "op", op, "path", json_object_get(e, "path"));
    if (o && to) json_object_set(o, "value", (json_t *)to);
    json_array_append_new(ops, o);
  }
  return ops;
}

static void as_patch(kr_xchange_t *c, sb_t *re, sb_t *ch, const kr_span_t *s, const char *res,
                     const json_t *diff) {
  json_t *undo = diff_patch(diff, 0), *redo = diff_patch(diff, 1);
  sbf(re, "  - patch: {");
  ref(re, res, s->oname);
  sbf(re, ", type: json, patch: ");
  put_val(re, undo);
  sbf(re, "}\n  - sleep: 2s   # the undo's own cascade settles\n");
  sbf(ch, "    patch: {");
  ref(ch, res, s->oname);
  sbf(ch, ", type: json, patch: ");
  put_val(ch, redo);
  sbf(ch, "}");
  json_decref(undo);
  json_decref(redo);
  snprintf(c->name, sizeof c->name, "patch-%.100s", s->oname);
}

/* The snapshot as a manifest: what the server sets left out. */
static json_t *manifest_of(const json_t *snap) {
  json_t *m = json_deep_copy(snap);
  json_t *meta = json_object_get(m, "metadata");
  if (!json_is_object(meta)) {
    json_decref(m);
    return NULL;
  }
  json_object_del(m, "status");
  static const char *const drop[] = {
      "namespace",         "uid",           "resourceVersion", "generation", "selfLink",
      "creationTimestamp", "managedFields", "ownerReferences", NULL};
  for (const char *const *d = drop; *d; d++) json_object_del(meta, *d);
  json_t *ann = json_object_get(meta, "annotations");
  json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
  return m;
}

static void as_create(kr_xchange_t *c, sb_t *re, sb_t *ch, const kr_span_t *s, const char *res,
                      const json_t *snap) {
  json_t *m = manifest_of(snap);
  sbf(re, "  - delete: {");
  ref(re, res, s->oname);
  sbf(re, ", ignoreNotFound: true}\n  - wait: {");
  ref(re, res, s->oname);
  sbf(re, ", until: deleted, timeout: 5m}\n");
  sbf(ch, "    apply: {manifest: ");
  put_val(ch, m);
  sbf(ch, "}");
  json_decref(m);
  snprintf(c->name, sizeof c->name, "create-%.100s", s->oname);
}

static void as_unknown(kr_xchange_t *c, sb_t *ch, const kr_span_t *s, const char *res,
                       const char *why) {
  sbf(ch, "    patch: {");
  ref(ch, res, s->oname);
  sbf(ch, ", type: merge, patch: ${patch}}");
  snprintf(c->fill, sizeof c->fill,
           "the change itself: %s. Set the patch (ripple run --set patch='{...}') or replace "
           "expect.change with the step that makes it, and steps with what undoes it.",
           why);
  snprintf(c->name, sizeof c->name, "change-%.100s", *s->oname ? s->oname : "object");
}

/* What the write changed, from its span and its details. */
static void reconstruct(kr_xchange_t *c, sb_t *pa, sb_t *re, sb_t *ch, const kr_span_t *s,
                        const char *res) {
  const char *op = json_string_value(json_object_get(s->change, "op"));
  json_t *diff = own_diff(s->change);
  const json_t *snap = json_object_get(s->change, "snapshot");
  const json_t *e0 = json_array_get(diff, 0);
  const char *p0 = json_string_value(json_object_get(e0, "path"));
  if (!strcmp(s->operation, "DELETE")) {
    sbf(ch, "    delete: {");
    ref(ch, res, s->oname);
    sbf(ch, "}");
    snprintf(c->name, sizeof c->name, "delete-%.100s", s->oname);
    snprintf(c->fill, sizeof c->fill,
             "the object must exist before the change: add an apply step of its manifest "
             "under steps.");
  } else if (op && !strcmp(op, "update") && diff && json_array_size(diff) == 1 &&
             !strcmp(p0, "/spec/replicas") && json_is_integer(json_object_get(e0, "old")) &&
             json_is_integer(json_object_get(e0, "new"))) {
    as_scale(c, pa, re, ch, s, res, e0);
  } else if (op && !strcmp(op, "update") && diff) {
    as_patch(c, re, ch, s, res, diff);
  } else if (op && !strcmp(op, "create") && json_is_object(snap) &&
             !json_is_true(json_object_get(s->change, "truncated")) &&
             strcmp(s->kind, "Secret") != 0) {
    as_create(c, re, ch, s, res, snap);
  } else {
    as_unknown(c, ch, s, res,
               !s->change ? "no details recorded it (ripple watch --trace-server was not running)"
                          : "its details do not say all of it (cut short or redacted)");
  }
  json_decref(diff);
}

int kr_export_change(const kr_trace_t *t, long r, kr_xchange_t *out) {
  const kr_span_t *s = &t->spans[r];
  memset(out, 0, sizeof *out);
  /* The span's name is "<verb> <resource>[/<subresource>]" (docs/webhook.md). */
  const char *sp = strchr(s->name, ' ');
  char res[256];
  snprintf(res, sizeof res, "%s", sp ? sp + 1 : s->name);
  res[strcspn(res, "/")] = '\0';
  sb_t pa = {0}, re = {0}, ch = {0};
  reconstruct(out, &pa, &re, &ch, s, res);
  for (char *p = out->name; *p; p++) /* a name ripple run takes: no "$", no quotes */
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) *p = '-';
  out->params = sb_take(&pa);
  out->reset = sb_take(&re);
  out->change = sb_take(&ch);
  if (!out->params || !out->reset || !out->change) {
    kr_xchange_free(out);
    return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

void kr_xchange_free(kr_xchange_t *c) {
  free(c->params);
  free(c->reset);
  free(c->change);
  memset(c, 0, sizeof *c);
}
