/*
 * rw.c - reads and writes of objects: get, list (paged, restarted when its
 * continue token expires), create, update, the four patch types including
 * server-side apply, delete, and writes to subresources (status, scale,
 * binding...). Every write names a field manager ("ripple" unless told), so
 * managedFields say who changed what.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_rw.h"
#include "ripplex/sbuf.h"

/* Paged attempts of a list whose continue token keeps expiring before the
 * last one, unpaged: a single answer has no token to expire (client-go falls
 * back to an unpaged list at once; trying pages again first keeps memory
 * bounded in the common case of one unlucky compaction). */
#define LIST_PAGED_TRIES 3
#define LIST_PAGE_DEFAULT 500

static const char *meta_str(const json_t *obj, const char *key) {
  return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* A namespaced resource needs a namespace for one object. */
static int need_ns(const ripple_kube_resource_t *r, const char *ns, ripple_kube_status_t *st) {
  if (!r->namespaced || (ns && *ns)) return RIPPLE_OK;
  if (st) memset(st, 0, sizeof *st);
  return kube_fail(st, RIPPLE_EINVAL,
                   "%s are namespaced: give a namespace (or set metadata.namespace)", r->resource);
}

static void query_add(sbuf_t *b, const char *key, const char *value) {
  if (!value || !*value) return;
  sbuf_putc(b, memchr(b->p ? b->p : "", '?', b->len) ? '&' : '?');
  sbuf_puts(b, key);
  sbuf_putc(b, '=');
  kube_escape(b, value);
}

/* ---- reads -------------------------------------------------------------------- */

int ripple_kube_get(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                    const char *name, json_t **out, ripple_kube_status_t *st) {
  if (!c || !r || !name || !*name || !out) return RIPPLE_EINVAL;
  int rc = need_ns(r, ns, st);
  if (rc != RIPPLE_OK) return rc;
  sbuf_t path;
  sbuf_init(&path);
  kube_path(&path, r, ns, name, NULL);
  rc = path.oom ? RIPPLE_ENOMEM : kube_fetch_client(c, path.p, out, st);
  sbuf_free(&path);
  return rc;
}

/* Items of a list carry no kind or apiVersion (the list has them); give them
 * back so that listed objects look like watched ones. */
static void deliver(const json_t *page, void (*fn)(void *ud, json_t *obj), void *ud) {
  const char *api = json_string_value(json_object_get(page, "apiVersion"));
  const char *lkind = json_string_value(json_object_get(page, "kind"));
  char kind[256] = "";
  size_t kl = lkind ? strlen(lkind) : 0;
  if (kl > 4 && kl < sizeof kind && strcmp(lkind + kl - 4, "List") == 0)
    snprintf(kind, sizeof kind, "%.*s", (int)(kl - 4), lkind);
  const json_t *items = json_object_get(page, "items");
  size_t i;
  json_t *obj;
  json_array_foreach(items, i, obj) {
    if (api && !json_object_get(obj, "apiVersion"))
      json_object_set_new(obj, "apiVersion", json_string(api));
    if (*kind && !json_object_get(obj, "kind")) json_object_set_new(obj, "kind", json_string(kind));
    fn(ud, obj);
  }
}

typedef struct pager {
  kube_fetch_fn get;
  void *get_ud;
  const char *base;
  void (*fn)(void *ud, json_t *obj);
  void *ud;
} pager_t;

/* One whole list, page by page (limit 0: unpaged). *expired says a continue
 * token was refused as too old, so the caller should start over. */
static int list_once(const pager_t *p, uint32_t limit, char **rv, int *expired,
                     ripple_kube_status_t *st) {
  char *cont = NULL;
  int rc;
  for (;;) {
    sbuf_t path;
    sbuf_init(&path);
    sbuf_puts(&path, p->base);
    if (limit) {
      char lim[16];
      snprintf(lim, sizeof lim, "%u", limit);
      query_add(&path, "limit", lim);
    }
    query_add(&path, "continue", cont);
    json_t *page = NULL;
    rc = path.oom ? RIPPLE_ENOMEM : p->get(p->get_ud, path.p, &page, st);
    sbuf_free(&path);
    if (rc == RIPPLE_KUBE_EGONE && cont) *expired = 1;
    if (rc != RIPPLE_OK) break;
    if (!json_is_array(json_object_get(page, "items"))) {
      json_decref(page);
      rc = kube_fail(st, RIPPLE_EJSON, "GET %s: the answer is not a list", p->base);
      break;
    }
    deliver(page, p->fn, p->ud);
    const char *next = meta_str(page, "continue");
    const char *v = meta_str(page, "resourceVersion");
    free(cont);
    cont = NULL;
    if (next && *next)
      rc = (cont = strdup(next)) ? RIPPLE_OK : RIPPLE_ENOMEM;
    else
      rc = (*rv = strdup(v ? v : "")) ? RIPPLE_OK : RIPPLE_ENOMEM;
    json_decref(page);
    if (rc != RIPPLE_OK || !cont) break;
  }
  free(cont);
  return rc;
}

int kube_list_pages(kube_fetch_fn get, void *get_ud, const char *base, uint32_t page_size,
                    void (*fn)(void *ud, json_t *obj), void *ud, char **rv,
                    ripple_kube_status_t *st) {
  pager_t p = {get, get_ud, base, fn, ud};
  char *got = NULL;
  int rc;
  for (int attempt = 0;; attempt++) {
    uint32_t limit = attempt < LIST_PAGED_TRIES ? (page_size ? page_size : LIST_PAGE_DEFAULT) : 0;
    int expired = 0;
    rc = list_once(&p, limit, &got, &expired, st);
    if (!expired) break;
    ripple_log(RIPPLE_LOG_INFO, "kube_list_restarted", "path=%s attempt=%d paged=%d", base,
               attempt + 1, attempt + 1 < LIST_PAGED_TRIES);
    fn(ud, NULL);
  }
  if (rc == RIPPLE_OK && rv)
    *rv = got;
  else
    free(got);
  return rc;
}

/* The namespace a field selector pins ("metadata.namespace=x" or "==x"
 * among its terms) into ns; 0 if none. A list of all namespaces with such a
 * selector is sent as a list of that namespace: kube-apiserver (seen on
 * v1.36) answers the all-namespaces form with a first continue token that
 * lacks the namespace, so the second page starts over and objects repeat. */
static int pinned_ns(const char *sel, char *ns, size_t cap) {
  static const char key[] = "metadata.namespace=";
  for (const char *p = sel; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n > sizeof key - 1 && strncmp(p, key, sizeof key - 1) == 0) {
      const char *v = p + sizeof key - 1 + (p[sizeof key - 1] == '=');
      size_t vlen = (size_t)(p + n - v);
      if (vlen && vlen < cap) {
        memcpy(ns, v, vlen);
        ns[vlen] = '\0';
        return 1;
      }
    }
    p += n + (p[n] == ',');
  }
  return 0;
}

int ripple_kube_list(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                     const ripple_kube_list_opts_t *o, void (*fn)(void *ud, json_t *obj), void *ud,
                     char **rv, ripple_kube_status_t *st) {
  if (!c || !r || !fn) return RIPPLE_EINVAL;
  ripple_kube_list_opts_t none = {0};
  if (!o) o = &none;
  char pinned[256];
  const char *ns = o->namespace_;
  if ((!ns || !*ns) && r->namespaced && pinned_ns(o->field_selector, pinned, sizeof pinned))
    ns = pinned;
  sbuf_t base;
  sbuf_init(&base);
  kube_path(&base, r, ns, NULL, NULL);
  query_add(&base, "labelSelector", o->label_selector);
  query_add(&base, "fieldSelector", o->field_selector);
  int rc = base.oom ? RIPPLE_ENOMEM
                    : kube_list_pages(kube_fetch_client, c, base.p, o->page_size, fn, ud, rv, st);
  sbuf_free(&base);
  return rc;
}

/* ---- writes --------------------------------------------------------------------- */

typedef struct wreq {
  const char *method, *content_type;
  const char *ns, *name, *sub; /* name NULL: the collection */
  const char *body;
  size_t len;
  int apply;
} wreq_t;

/* "status" in "scale,status". */
static int in_list(const char *list, const char *s) {
  size_t n = strlen(s);
  for (const char *p = list; *p;) {
    size_t k = strcspn(p, ",");
    if (k == n && strncmp(p, s, n) == 0) return 1;
    p += k + (p[k] == ',');
  }
  return 0;
}

/* A 404 for a subresource the resource does not have reads like the object
 * is missing; say what is really wrong. */
static void explain_sub(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *sub,
                        ripple_kube_status_t *st) {
  char subs[256];
  if (!st || !kube_discovery_subresources(c, r, subs, sizeof subs) || in_list(subs, sub)) return;
  snprintf(st->message, sizeof st->message, "%s has no subresource \"%s\" (it has: %s)",
           r->resource, sub, *subs ? subs : "none");
}

/* The server's messages mostly name the object, but not all: a failed JSON
 * patch test is "the server rejected our request due to an error in our
 * request". Say which request it was when the message does not. */
static void name_request(const ripple_kube_resource_t *r, const wreq_t *w,
                         ripple_kube_status_t *st) {
  char quoted[300];
  if (!st || !w->name) return;
  snprintf(quoted, sizeof quoted, "\"%s\"", w->name); /* as the server quotes names */
  if (strstr(st->message, quoted)) return;
  size_t len = strlen(st->message);
  snprintf(st->message + len, sizeof st->message - len, " (%s %s \"%s\"%s%s)", w->method,
           r->resource, w->name, w->sub ? "/" : "", w->sub ? w->sub : "");
}

static int write_call(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const wreq_t *w,
                      const ripple_kube_write_opts_t *o, json_t **out, ripple_kube_status_t *st) {
  ripple_kube_write_opts_t none = {0};
  if (!o) o = &none;
  sbuf_t path;
  sbuf_init(&path);
  kube_path(&path, r, w->ns, w->name, w->sub);
  if (strcmp(w->method, "DELETE") == 0) {
    query_add(&path, "propagationPolicy", "Background");
  } else {
    query_add(&path, "fieldManager",
              o->field_manager && *o->field_manager ? o->field_manager : "ripple");
    if (w->apply && o->force) query_add(&path, "force", "true");
  }
  if (o->dry_run) query_add(&path, "dryRun", "All");
  kube_req_t rq = {w->method, path.p, w->content_type, w->body, w->len, 0, NULL};
  json_t *ans = NULL;
  int rc = path.oom ? RIPPLE_ENOMEM : kube_call(c, &rq, out ? &ans : NULL, st);
  sbuf_free(&path);
  if (rc == RIPPLE_KUBE_ENOTFOUND && w->sub && *w->sub) explain_sub(c, r, w->sub, st);
  if (rc != RIPPLE_OK) name_request(r, w, st);
  if (rc == RIPPLE_OK && out) *out = ans;
  return rc;
}

/* Create and update: the object's JSON, its namespace and name. */
static int write_obj(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                     const json_t *obj, const ripple_kube_write_opts_t *o, const char *method,
                     json_t **out, ripple_kube_status_t *st) {
  if (!c || !r || !json_is_object(obj)) return RIPPLE_EINVAL;
  const char *sub = o && o->subresource && *o->subresource ? o->subresource : NULL;
  const char *name = meta_str(obj, "name");
  int put = strcmp(method, "PUT") == 0;
  if (!ns || !*ns) ns = meta_str(obj, "namespace");
  int rc = need_ns(r, ns, st);
  if (rc != RIPPLE_OK) return rc;
  if ((put || sub) && (!name || !*name)) {
    if (st) memset(st, 0, sizeof *st);
    return kube_fail(st, RIPPLE_EINVAL, "%s %s: the object has no metadata.name", method,
                     r->resource);
  }
  char *body = json_dumps(obj, JSON_COMPACT);
  if (!body) return RIPPLE_ENOMEM;
  /* POST without a subresource goes to the collection (generateName works);
   * with one, to the object's subresource (pods/NAME/binding). */
  wreq_t w = {method, "application/json", ns, put || sub ? name : NULL, sub, body, strlen(body), 0};
  rc = write_call(c, r, &w, o, out, st);
  free(body);
  return rc;
}

int ripple_kube_create(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const json_t *obj, const ripple_kube_write_opts_t *o, json_t **out,
                       ripple_kube_status_t *st) {
  return write_obj(c, r, ns, obj, o, "POST", out, st);
}

int ripple_kube_update(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const json_t *obj, const ripple_kube_write_opts_t *o, json_t **out,
                       ripple_kube_status_t *st) {
  return write_obj(c, r, ns, obj, o, "PUT", out, st);
}

int ripple_kube_patch(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                      const char *name, ripple_kube_patch_t type, const char *patch, size_t len,
                      const ripple_kube_write_opts_t *o, json_t **out, ripple_kube_status_t *st) {
  static const char *const types[] = {
      [RIPPLE_KUBE_PATCH_JSON] = "application/json-patch+json",
      [RIPPLE_KUBE_PATCH_MERGE] = "application/merge-patch+json",
      [RIPPLE_KUBE_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
      /* YAML is a superset of JSON: the apply body may be the JSON object. */
      [RIPPLE_KUBE_PATCH_APPLY] = "application/apply-patch+yaml",
  };
  if (!c || !r || !name || !*name || !patch || (unsigned)type > RIPPLE_KUBE_PATCH_APPLY)
    return RIPPLE_EINVAL;
  int rc = need_ns(r, ns, st);
  if (rc != RIPPLE_OK) return rc;
  const char *sub = o && o->subresource && *o->subresource ? o->subresource : NULL;
  wreq_t w = {"PATCH", types[type], ns, name, sub, patch, len, type == RIPPLE_KUBE_PATCH_APPLY};
  return write_call(c, r, &w, o, out, st);
}

int ripple_kube_delete(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const char *name, const ripple_kube_write_opts_t *o,
                       ripple_kube_status_t *st) {
  if (!c || !r || !name || !*name) return RIPPLE_EINVAL;
  int rc = need_ns(r, ns, st);
  if (rc != RIPPLE_OK) return rc;
  wreq_t w = {"DELETE", NULL, ns, name, NULL, NULL, 0, 0};
  return write_call(c, r, &w, o, NULL, st);
}
