/*
 * steps.c - the steps of a scenario (docs/run.md) and how each runs:
 *
 *   - apply: FILE | {file: FILE} | {manifest: YAML text or a mapping}
 *   - scale: {resource: deployments.apps, name: web, replicas: 20}
 *   - patch: {resource: R, name: N, type: merge|strategic|json, patch: ..., subresource: S}
 *   - delete: FILE | {resource: R, name: N, ignoreNotFound: true}
 *   - wait: {resource: R, name: N | selector: SEL, until: COND, timeout: 5m}   (wait.c)
 *   - sleep: 2s
 *
 * Every object step takes an optional namespace (default: the run's). Writes
 * go through server-side apply or plain patches as field manager "ripple-run",
 * so a scenario never needs kubectl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ripple/ripple.h"
#include "run.h"

static const char *const actions[] = {"apply", "scale", "patch", "delete", "wait", "sleep", NULL};

/* The one action key of a step, or NULL. */
static const char *step_action(const json_t *step, json_t **arg) {
  if (!json_is_object(step) || json_object_size(step) != 1) return NULL;
  for (const char *const *a = actions; *a; a++) {
    json_t *v = json_object_get(step, *a);
    if (v) {
      *arg = v;
      return *a;
    }
  }
  return NULL;
}

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* A whole number given as a number or as text ("${N}" quoted). */
static int whole(const json_t *v, long long *out) {
  if (json_is_integer(v)) return *out = json_integer_value(v), 0;
  const char *s = json_string_value(v);
  char *end;
  if (!s || !*s) return -1;
  *out = strtoll(s, &end, 10);
  return *end ? -1 : 0;
}

static int check_ref(const json_t *a, int need_name, char *err, size_t cap) {
  if (!json_is_object(a) || !str(a, "resource")) {
    snprintf(err, cap, "needs a mapping with 'resource' (as kubectl names it: deployments.apps)");
    return RIPPLE_EINVAL;
  }
  if (need_name && !str(a, "name")) {
    snprintf(err, cap, "needs 'name'");
    return RIPPLE_EINVAL;
  }
  json_t *ns = json_object_get(a, "namespace");
  if (ns && !json_is_string(ns)) {
    snprintf(err, cap, "'namespace' must be text");
    return RIPPLE_EINVAL;
  }
  return RIPPLE_OK;
}

static int check_wait(const json_t *a, char *err, size_t cap) {
  if (check_ref(a, 0, err, cap) != RIPPLE_OK) return RIPPLE_EINVAL;
  int64_t ns;
  const char *t = str(a, "timeout");
  if (!str(a, "until") ||
      (json_object_get(a, "timeout") && (!t || ripple_duration_parse(t, &ns) != 0))) {
    snprintf(err, cap, "wait needs 'until' (a condition) and an optional 'timeout' (e.g. 5m)");
    return RIPPLE_EINVAL;
  }
  if (str(a, "name") && str(a, "selector")) {
    snprintf(err, cap, "wait takes 'name' or 'selector', not both");
    return RIPPLE_EINVAL;
  }
  return RIPPLE_OK;
}

static int check_file_or(const json_t *a, const char *alt, char *err, size_t cap) {
  if (json_is_string(a) || (json_is_object(a) && (str(a, "file") || json_object_get(a, alt))))
    return RIPPLE_OK;
  snprintf(err, cap, "needs a file name, {file: NAME} or {%s: ...}", alt);
  return RIPPLE_EINVAL;
}

int step_check(const json_t *step, char *err, size_t cap) {
  json_t *a = NULL;
  const char *act = step_action(step, &a);
  long long n;
  int64_t ns;
  if (!act) {
    snprintf(err, cap, "a step is a mapping with one of apply, scale, patch, delete, wait, sleep");
    return RIPPLE_EINVAL;
  }
  if (!strcmp(act, "apply")) return check_file_or(a, "manifest", err, cap);
  if (!strcmp(act, "delete"))
    return json_is_object(a) && str(a, "resource") ? check_ref(a, 1, err, cap)
                                                   : check_file_or(a, "file", err, cap);
  if (!strcmp(act, "wait")) return check_wait(a, err, cap);
  if (!strcmp(act, "sleep")) {
    if (json_is_string(a) && ripple_duration_parse(json_string_value(a), &ns) == 0)
      return RIPPLE_OK;
    snprintf(err, cap, "sleep takes a duration such as 2s or 500ms");
    return RIPPLE_EINVAL;
  }
  if (check_ref(a, 1, err, cap) != RIPPLE_OK) return RIPPLE_EINVAL;
  if (!strcmp(act, "scale") && (whole(json_object_get(a, "replicas"), &n) != 0 || n < 0)) {
    snprintf(err, cap, "scale needs 'replicas', a whole number");
    return RIPPLE_EINVAL;
  }
  if (!strcmp(act, "patch")) {
    const char *type = str(a, "type");
    if (!json_object_get(a, "patch") ||
        (type && strcmp(type, "merge") != 0 && strcmp(type, "strategic") != 0 &&
         strcmp(type, "json") != 0)) {
      snprintf(err, cap, "patch needs 'patch' and an optional type merge|strategic|json");
      return RIPPLE_EINVAL;
    }
  }
  return RIPPLE_OK;
}

void step_describe(const json_t *step, char *out, size_t cap) {
  json_t *a = NULL;
  const char *act = step_action(step, &a);
  const char *file = json_is_string(a) ? json_string_value(a) : str(a, "file");
  long long n = 0;
  if (!act)
    snprintf(out, cap, "?");
  else if (file)
    snprintf(out, cap, "%s %s", act, file);
  else if (!strcmp(act, "sleep"))
    snprintf(out, cap, "sleep %s", json_string_value(a));
  else if (!strcmp(act, "apply"))
    snprintf(out, cap, "apply (inline manifest)");
  else if (!strcmp(act, "scale") && whole(json_object_get(a, "replicas"), &n) == 0)
    snprintf(out, cap, "scale %s/%s to %lld", str(a, "resource"), str(a, "name"), n);
  else if (!strcmp(act, "wait"))
    snprintf(out, cap, "wait %s%s%s until %s", str(a, "resource"), str(a, "name") ? "/" : " ",
             str(a, "name")       ? str(a, "name")
             : str(a, "selector") ? str(a, "selector")
                                  : "(all)",
             str(a, "until"));
  else
    snprintf(out, cap, "%s %s/%s", act, str(a, "resource"), str(a, "name"));
}

/* The namespace of a step's object: its own, else the run's (cluster-scoped: none). */
static const char *step_ns(runner_t *r, const json_t *a, const ripple_kube_resource_t *res) {
  if (!res->namespaced) return NULL;
  const char *ns = str(a, "namespace");
  return ns ? ns : r->namespace_;
}

static int fail(char *err, size_t cap, const char *what, int rc, const ripple_kube_status_t *st) {
  snprintf(err, cap, "%s: %s", what, st && st->message[0] ? st->message : ripple_kube_strerror(rc));
  return rc;
}

static int resolve(runner_t *r, const char *name, const ripple_kube_resource_t **res, char *err,
                   size_t cap) {
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_resolve(r->kc, name, res, &st);
  return rc == RIPPLE_OK ? rc : fail(err, cap, name, rc, &st);
}

/* The manifest's documents: from a file or inline (text or a mapping). */
static int manifest_docs(runner_t *r, const json_t *a, const char *inline_key, json_t **docs,
                         char *err, size_t cap) {
  const char *file = json_is_string(a) ? json_string_value(a) : str(a, "file");
  json_t *m = json_object_get(a, inline_key);
  if (!file && json_is_object(m)) {
    *docs = json_pack("[O]", m);
    return *docs ? RIPPLE_OK : RIPPLE_ENOMEM;
  }
  char *text = NULL, why[256];
  size_t len = 0;
  int rc = RIPPLE_OK;
  if (file) {
    rc = scn_read_file(r->scn, r->run, file, &text, &len, err, cap);
  } else if (json_is_string(m)) {
    text = strdup(json_string_value(m)), len = text ? strlen(text) : 0;
    rc = text ? RIPPLE_OK : RIPPLE_ENOMEM;
  }
  if (rc != RIPPLE_OK) return rc;
  rc = yjson_parse(text ? text : "", len, docs, why, sizeof why);
  if (rc != RIPPLE_OK) snprintf(err, cap, "%s: %s", file ? file : "manifest", why);
  free(text);
  return rc;
}

/* The resource of a manifest document, from its apiVersion and kind. */
static int doc_resource(runner_t *r, const json_t *doc, const ripple_kube_resource_t **res,
                        const char **name, char *err, size_t cap) {
  const char *av = str(doc, "apiVersion"), *kind = str(doc, "kind");
  *name = str(json_object_get(doc, "metadata"), "name");
  if (!av || !kind || !*name) {
    snprintf(err, cap, "a manifest document needs apiVersion, kind and metadata.name");
    return RIPPLE_EINVAL;
  }
  const char *slash = strchr(av, '/');
  char group[256];
  snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - av) : 0, av);
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_resolve_kind(r->kc, group, kind, res, &st);
  return rc == RIPPLE_OK ? rc : fail(err, cap, kind, rc, &st);
}

static int apply_or_delete(runner_t *r, const json_t *a, int del, char *err, size_t cap) {
  json_t *docs = NULL, *doc;
  int rc = manifest_docs(r, a, del ? "file" : "manifest", &docs, err, cap);
  size_t i;
  json_array_foreach(docs, i, doc) {
    const ripple_kube_resource_t *res;
    const char *name;
    if (rc != RIPPLE_OK || (rc = doc_resource(r, doc, &res, &name, err, cap)) != RIPPLE_OK) break;
    const char *ns = res->namespaced ? str(json_object_get(doc, "metadata"), "namespace") : NULL;
    if (res->namespaced && !ns) ns = r->namespace_;
    ripple_kube_status_t st = {0};
    ripple_kube_write_opts_t wo = {.field_manager = "ripple-run", .force = 1};
    if (del) {
      rc = ripple_kube_delete(r->kc, res, ns, name, NULL, &st);
      if (rc == RIPPLE_KUBE_ENOTFOUND) rc = RIPPLE_OK;
    } else {
      char *body = json_dumps(doc, JSON_COMPACT);
      rc = body ? ripple_kube_patch(r->kc, res, ns, name, RIPPLE_KUBE_PATCH_APPLY, body,
                                    strlen(body), &wo, NULL, &st)
                : RIPPLE_ENOMEM;
      free(body);
    }
    if (rc != RIPPLE_OK) fail(err, cap, name, rc, &st);
  }
  json_decref(docs);
  return rc;
}

static int run_patch(runner_t *r, const json_t *a, const ripple_kube_resource_t *res, char *err,
                     size_t cap) {
  const char *type = str(a, "type");
  ripple_kube_patch_t pt = !type || !strcmp(type, "merge") ? RIPPLE_KUBE_PATCH_MERGE
                           : !strcmp(type, "strategic")    ? RIPPLE_KUBE_PATCH_STRATEGIC
                                                           : RIPPLE_KUBE_PATCH_JSON;
  json_t *p = json_object_get(a, "patch");
  char *body = json_is_string(p) ? strdup(json_string_value(p)) : json_dumps(p, JSON_COMPACT);
  if (!body) return RIPPLE_ENOMEM;
  ripple_kube_write_opts_t wo = {.field_manager = "ripple-run",
                                 .subresource = str(a, "subresource")};
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_patch(r->kc, res, step_ns(r, a, res), str(a, "name"), pt, body, strlen(body),
                             &wo, NULL, &st);
  free(body);
  return rc == RIPPLE_OK ? rc : fail(err, cap, str(a, "name"), rc, &st);
}

static int run_object_step(runner_t *r, const char *act, const json_t *a, char *err, size_t cap) {
  const ripple_kube_resource_t *res;
  int rc = resolve(r, str(a, "resource"), &res, err, cap);
  if (rc != RIPPLE_OK) return rc;
  ripple_kube_status_t st = {0};
  const char *name = str(a, "name");
  if (!strcmp(act, "patch")) return run_patch(r, a, res, err, cap);
  if (!strcmp(act, "delete")) {
    rc = ripple_kube_delete(r->kc, res, step_ns(r, a, res), name, NULL, &st);
    if (rc == RIPPLE_KUBE_ENOTFOUND && json_is_true(json_object_get(a, "ignoreNotFound")))
      return RIPPLE_OK;
    return rc == RIPPLE_OK ? rc : fail(err, cap, name, rc, &st);
  }
  long long n = 0;
  whole(json_object_get(a, "replicas"), &n);
  char body[64];
  snprintf(body, sizeof body, "{\"spec\":{\"replicas\":%lld}}", n);
  ripple_kube_write_opts_t wo = {.field_manager = "ripple-run", .subresource = "scale"};
  rc = ripple_kube_patch(r->kc, res, step_ns(r, a, res), name, RIPPLE_KUBE_PATCH_MERGE, body,
                         strlen(body), &wo, NULL, &st);
  return rc == RIPPLE_OK ? rc : fail(err, cap, name, rc, &st);
}

static int run_sleep(runner_t *r, const char *dur) {
  int64_t ns = 0;
  ripple_duration_parse(dur, &ns);
  int64_t end = ripple_now_ns() + ns;
  while (!*r->stop && ripple_now_ns() < end) {
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return *r->stop ? RIPPLE_ESTATE : RIPPLE_OK;
}

int step_run(runner_t *r, const json_t *step, char *err, size_t cap) {
  json_t *a = NULL;
  const char *act = step_action(step, &a);
  if (!act) {
    snprintf(err, cap, "not a step");
    return RIPPLE_EINVAL;
  }
  if (!strcmp(act, "apply")) return apply_or_delete(r, a, 0, err, cap);
  if (!strcmp(act, "delete") && !(json_is_object(a) && str(a, "resource")))
    return apply_or_delete(r, a, 1, err, cap);
  if (!strcmp(act, "wait")) return wait_run(r, a, err, cap);
  if (!strcmp(act, "sleep")) return run_sleep(r, json_string_value(a));
  return run_object_step(r, act, a, err, cap);
}
