/*
 * discovery.c - which resources the API server serves (groups, versions,
 * resources, their kinds, short names and subresources, custom resources
 * included) and the names kubectl accepts for them: "po", "pod", "pods",
 * "Pod", "deployments.apps", "deployments.v1.apps".
 *
 * Classic discovery: /api, /apis, then /apis/<group>/<version> for every
 * version of every group, so that a fully qualified name can ask for a
 * version that is not the preferred one. The snapshot is cached in the
 * client; a name it does not know refreshes it once, because a CRD may have
 * been created since.
 *
 * Callers keep the ripple_kube_resource_t pointers we return for the
 * client's lifetime, so a refresh never frees an entry: entries that are
 * still served are carried over into the new snapshot, and entries no longer
 * served (a deleted CRD) are retired but kept. Memory grows only with real
 * churn of resource types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kube_rw.h"
#include "ripplex/clock.h"

typedef struct disc_ent {
  ripple_kube_resource_t pub; /* points at the strings below */
  char *group, *version, *resource, *kind, *singular;
  char **shorts; /* NULL-terminated */
  char **subs;   /* subresource names, NULL-terminated */
  int preferred; /* the first version, in the group's order, that serves it */
} disc_ent_t;

typedef struct ent_vec {
  disc_ent_t **v;
  size_t n, cap;
} ent_vec_t;

struct kube_discovery {
  ent_vec_t cur;      /* core first, then groups as /apis orders them; preferred version first */
  ent_vec_t retired;  /* no longer served, but handed out */
  int64_t fetched_ns; /* CLOCK_MONOTONIC when the fetch began */
};

/* ---- entries ----------------------------------------------------------------- */

static void strv_free(char **v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

static void ent_free(disc_ent_t *e) {
  if (!e) return;
  free(e->group), free(e->version), free(e->resource), free(e->kind), free(e->singular);
  strv_free(e->shorts);
  strv_free(e->subs);
  free(e);
}

static int vec_reserve(ent_vec_t *v, size_t want) {
  if (want <= v->cap) return RIPPLE_OK;
  size_t cap = v->cap ? v->cap : 64;
  while (cap < want) cap *= 2;
  disc_ent_t **p = realloc(v->v, cap * sizeof(disc_ent_t *));
  if (!p) return RIPPLE_ENOMEM;
  v->v = p, v->cap = cap;
  return RIPPLE_OK;
}

static int vec_push(ent_vec_t *v, disc_ent_t *e) {
  if (vec_reserve(v, v->n + 1) != RIPPLE_OK) return RIPPLE_ENOMEM;
  v->v[v->n++] = e;
  return RIPPLE_OK;
}

void kube_discovery_free(kube_discovery_t *d) {
  if (!d) return;
  for (size_t i = 0; i < d->cur.n; i++) ent_free(d->cur.v[i]);
  for (size_t i = 0; i < d->retired.n; i++) ent_free(d->retired.v[i]);
  free(d->cur.v);
  free(d->retired.v);
  free(d);
}

static char *dup_str(const json_t *j) {
  const char *s = json_string_value(j);
  return strdup(s ? s : "");
}

/* A NULL-terminated copy of a JSON array of strings (absent: empty). */
static char **strv_from(const json_t *a) {
  size_t n = json_array_size(a);
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_array_get(a, i));
    if (s && !(v[k++] = strdup(s))) {
      strv_free(v);
      return NULL;
    }
  }
  return v;
}

static int strv_add(char ***pv, const char *s) {
  size_t n = 0;
  while (*pv && (*pv)[n]) n++;
  char **v = realloc(*pv, (n + 2) * sizeof *v);
  if (!v) return RIPPLE_ENOMEM;
  *pv = v;
  if (!(v[n] = strdup(s))) return RIPPLE_ENOMEM;
  v[n + 1] = NULL;
  return RIPPLE_OK;
}

/* One APIResource of an APIResourceList. */
static disc_ent_t *ent_new(const char *group, const char *version, const json_t *res) {
  disc_ent_t *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->group = strdup(group);
  e->version = strdup(version);
  e->resource = dup_str(json_object_get(res, "name"));
  e->kind = dup_str(json_object_get(res, "kind"));
  e->singular = dup_str(json_object_get(res, "singularName"));
  e->shorts = strv_from(json_object_get(res, "shortNames"));
  e->subs = calloc(1, sizeof *e->subs);
  if (!e->group || !e->version || !e->resource || !e->kind || !e->singular || !e->shorts ||
      !e->subs) {
    ent_free(e);
    return NULL;
  }
  /* Older servers leave singularName empty for built-in types; kubectl then
   * uses the lowercased kind. */
  if (!*e->singular) {
    free(e->singular);
    e->singular = strdup(e->kind);
    if (!e->singular) return ent_free(e), NULL;
    for (char *p = e->singular; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  }
  e->pub = (ripple_kube_resource_t){e->group, e->version, e->resource, e->kind,
                                    json_is_true(json_object_get(res, "namespaced"))};
  return e;
}

/* ---- fetching ------------------------------------------------------------------ */

/* Add the resources of one APIResourceList; subresources ("deployments/scale")
 * are attached to their resource rather than listed. */
static int add_list(kube_discovery_t *d, const char *group, const char *version,
                    const json_t *list) {
  const json_t *res = json_object_get(list, "resources");
  size_t first = d->cur.n, i;
  const json_t *r;
  json_array_foreach(res, i, r) {
    const char *name = json_string_value(json_object_get(r, "name"));
    if (!name || !*name || strchr(name, '/')) continue;
    disc_ent_t *e = ent_new(group, version, r);
    if (!e || vec_push(&d->cur, e) != RIPPLE_OK) return ent_free(e), RIPPLE_ENOMEM;
  }
  json_array_foreach(res, i, r) {
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *slash = name ? strchr(name, '/') : NULL;
    if (!slash || !slash[1]) continue;
    for (size_t k = first; k < d->cur.n; k++) {
      disc_ent_t *e = d->cur.v[k];
      if (strlen(e->resource) != (size_t)(slash - name) ||
          strncmp(e->resource, name, (size_t)(slash - name)) != 0)
        continue;
      if (strv_add(&e->subs, slash + 1) != RIPPLE_OK) return RIPPLE_ENOMEM;
      break;
    }
  }
  return RIPPLE_OK;
}

/* Fetch one group version. Errors that say the server is unreachable fail
 * the whole discovery; one group version refused (an aggregated API whose
 * backend is down answers 503) is left out, as kubectl leaves it out. */
static int fetch_gv(kube_fetch_fn get, void *ud, kube_discovery_t *d, const char *group,
                    const char *version, ripple_kube_status_t *st) {
  char path[512];
  if (*group)
    snprintf(path, sizeof path, "/apis/%s/%s", group, version);
  else
    snprintf(path, sizeof path, "/api/%s", version);
  json_t *list = NULL;
  ripple_kube_status_t gst; /* the caller's st may be NULL; we log from this one */
  memset(&gst, 0, sizeof gst);
  int rc = get(ud, path, &list, &gst);
  if (rc == RIPPLE_KUBE_ECONNECT || rc == RIPPLE_KUBE_ECRED || rc == RIPPLE_ENOMEM) {
    if (st) *st = gst;
    return rc;
  }
  if (rc != RIPPLE_OK) {
    char msg[600];
    ripple_log_quote(gst.message, msg, sizeof msg);
    ripple_log(RIPPLE_LOG_WARN, "kube_discovery_skipped", "path=%s http=%ld message=%s", path,
               gst.http, msg);
    return RIPPLE_OK;
  }
  rc = add_list(d, group, version, list);
  json_decref(list);
  return rc;
}

static int fetch_core(kube_fetch_fn get, void *ud, kube_discovery_t *d, ripple_kube_status_t *st) {
  json_t *api = NULL;
  int rc = get(ud, "/api", &api, st);
  if (rc != RIPPLE_OK) return rc;
  const json_t *versions = json_object_get(api, "versions"), *v;
  size_t i;
  json_array_foreach(versions, i, v) {
    const char *ver = json_string_value(v);
    if (ver && (rc = fetch_gv(get, ud, d, "", ver, st)) != RIPPLE_OK) break;
  }
  json_decref(api);
  return rc;
}

/* One APIGroup: its preferred version first, then the others in the order
 * the server gives (its priority order). */
static int fetch_group(kube_fetch_fn get, void *ud, kube_discovery_t *d, const json_t *g,
                       ripple_kube_status_t *st) {
  const char *group = json_string_value(json_object_get(g, "name"));
  const char *pref =
      json_string_value(json_object_get(json_object_get(g, "preferredVersion"), "version"));
  if (!group || !*group) return RIPPLE_OK;
  int rc = RIPPLE_OK;
  if (pref) rc = fetch_gv(get, ud, d, group, pref, st);
  const json_t *versions = json_object_get(g, "versions"), *v;
  size_t i;
  json_array_foreach(versions, i, v) {
    const char *ver = json_string_value(json_object_get(v, "version"));
    if (rc != RIPPLE_OK) break;
    if (ver && (!pref || strcmp(ver, pref) != 0)) rc = fetch_gv(get, ud, d, group, ver, st);
  }
  return rc;
}

/* The preferred entry of each (group, resource) is the first one: entries
 * are in version priority order within their group. */
static void mark_preferred(kube_discovery_t *d) {
  for (size_t i = 0; i < d->cur.n; i++) {
    disc_ent_t *e = d->cur.v[i];
    e->preferred = 1;
    for (size_t k = 0; k < i && e->preferred; k++) {
      const disc_ent_t *p = d->cur.v[k];
      if (strcmp(p->group, e->group) == 0 && strcmp(p->resource, e->resource) == 0)
        e->preferred = 0;
    }
  }
}

int kube_discovery_fetch(kube_fetch_fn get, void *ud, kube_discovery_t **out,
                         ripple_kube_status_t *st) {
  kube_discovery_t *d = calloc(1, sizeof *d);
  if (!d) return RIPPLE_ENOMEM;
  d->fetched_ns = mono_ns();
  int rc = fetch_core(get, ud, d, st);
  json_t *apis = NULL;
  if (rc == RIPPLE_OK) rc = get(ud, "/apis", &apis, st);
  const json_t *groups = json_object_get(apis, "groups"), *g;
  size_t i;
  json_array_foreach(groups, i, g) {
    if (rc != RIPPLE_OK) break;
    rc = fetch_group(get, ud, d, g, st);
  }
  json_decref(apis);
  if (rc != RIPPLE_OK) {
    kube_discovery_free(d);
    return rc;
  }
  mark_preferred(d);
  *out = d;
  return RIPPLE_OK;
}

/* ---- refresh ----------------------------------------------------------------------- */

static int same_ent(const disc_ent_t *a, const disc_ent_t *b) {
  return a->pub.namespaced == b->pub.namespaced && strcmp(a->group, b->group) == 0 &&
         strcmp(a->version, b->version) == 0 && strcmp(a->resource, b->resource) == 0 &&
         strcmp(a->kind, b->kind) == 0;
}

/* Take e's entry out of v if it has an identical one (NULL leaves a hole). */
static disc_ent_t *take_same(ent_vec_t *v, const disc_ent_t *e) {
  for (size_t i = 0; i < v->n; i++) {
    disc_ent_t *o = v->v[i];
    if (o && same_ent(o, e)) {
      v->v[i] = NULL;
      return o;
    }
  }
  return NULL;
}

/* The old entry o takes over what may change without changing identity. */
static void adopt(disc_ent_t *o, disc_ent_t *e) {
  char *singular = o->singular, **shorts = o->shorts, **subs = o->subs;
  o->singular = e->singular, o->shorts = e->shorts, o->subs = e->subs;
  o->preferred = e->preferred;
  e->singular = singular, e->shorts = shorts, e->subs = subs;
  ent_free(e);
}

int kube_discovery_merge(kube_discovery_t *d, kube_discovery_t *fresh) {
  /* Reserve first: past this point nothing can fail, so d is never left
   * half-merged. */
  if (vec_reserve(&d->retired, d->retired.n + d->cur.n) != RIPPLE_OK) {
    kube_discovery_free(fresh);
    return RIPPLE_ENOMEM;
  }
  for (size_t i = 0; i < fresh->cur.n; i++) {
    disc_ent_t *e = fresh->cur.v[i], *o = take_same(&d->cur, e);
    if (!o) o = take_same(&d->retired, e);
    if (o) {
      adopt(o, e);
      fresh->cur.v[i] = o;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < d->retired.n; i++)
    if (d->retired.v[i]) d->retired.v[k++] = d->retired.v[i];
  d->retired.n = k;
  for (size_t i = 0; i < d->cur.n; i++)
    if (d->cur.v[i]) d->retired.v[d->retired.n++] = d->cur.v[i];
  free(d->cur.v);
  d->cur = fresh->cur;
  d->fetched_ns = fresh->fetched_ns;
  fresh->cur = (ent_vec_t){0};
  kube_discovery_free(fresh);
  return RIPPLE_OK;
}

/* ---- lookups ------------------------------------------------------------------------ */

/* How a name may match, strongest first: "deployments", "deployment",
 * "deploy", "Deployment". */
enum { BY_PLURAL, BY_SINGULAR, BY_SHORT, BY_KIND, BY_TIERS };

static int ent_named(const disc_ent_t *e, const char *res, int tier) {
  switch (tier) {
    case BY_PLURAL: return strcasecmp(e->resource, res) == 0;
    case BY_SINGULAR: return strcasecmp(e->singular, res) == 0;
    case BY_SHORT:
      for (char **s = e->shorts; *s; s++)
        if (strcasecmp(*s, res) == 0) return 1;
      return 0;
    default: return strcasecmp(e->kind, res) == 0;
  }
}

/* group NULL: any; version NULL: each resource's preferred version. Among
 * several groups serving the name, the first in the server's order wins
 * ("events": the core group's), as kubectl's priority mapper decides. */
static const disc_ent_t *search(const kube_discovery_t *d, const char *res, const char *group,
                                const char *version) {
  for (int tier = 0; tier < BY_TIERS; tier++) {
    for (size_t i = 0; i < d->cur.n; i++) {
      const disc_ent_t *e = d->cur.v[i];
      if (version ? strcmp(e->version, version) != 0 : !e->preferred) continue;
      if (group && strcasecmp(e->group, group) != 0) continue;
      if (ent_named(e, res, tier)) return e;
    }
  }
  return NULL;
}

/* As kubectl parses a resource argument: "res.version.group" is tried as a
 * fully qualified name first, then "res.group" with the group being
 * everything after the first dot ("widgets.example.com"). */
const ripple_kube_resource_t *kube_discovery_find(const kube_discovery_t *d, const char *name) {
  char res[256], ver[64];
  const char *dot = strchr(name, '.');
  size_t rlen = dot ? (size_t)(dot - name) : strlen(name);
  if (!d || rlen == 0 || rlen >= sizeof res) return NULL;
  memcpy(res, name, rlen);
  res[rlen] = '\0';
  const disc_ent_t *e = NULL;
  const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
  if (dot2 && dot2 > dot + 1 && (size_t)(dot2 - dot - 1) < sizeof ver) {
    memcpy(ver, dot + 1, (size_t)(dot2 - dot - 1));
    ver[dot2 - dot - 1] = '\0';
    e = search(d, res, dot2 + 1, ver);
  }
  if (!e) e = search(d, res, dot ? dot + 1 : NULL, NULL);
  return e ? &e->pub : NULL;
}

const ripple_kube_resource_t *kube_discovery_find_kind(const kube_discovery_t *d, const char *group,
                                                       const char *kind) {
  for (size_t i = 0; d && i < d->cur.n; i++) {
    const disc_ent_t *e = d->cur.v[i];
    if (e->preferred && strcmp(e->group, group ? group : "") == 0 && strcmp(e->kind, kind) == 0)
      return &e->pub;
  }
  return NULL;
}

int kube_discovery_subs(const kube_discovery_t *d, const ripple_kube_resource_t *r, char *buf,
                        size_t cap) {
  for (size_t i = 0; d && i < d->cur.n; i++) {
    const disc_ent_t *e = d->cur.v[i];
    if (strcmp(e->group, r->group ? r->group : "") != 0 || strcmp(e->version, r->version) != 0 ||
        strcmp(e->resource, r->resource) != 0)
      continue;
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (char **s = e->subs; *s && cap; s++) {
      int n = snprintf(buf + len, cap - len, "%s%s", len ? "," : "", *s);
      if (n < 0 || (size_t)n >= cap - len) break;
      len += (size_t)n;
    }
    return 1;
  }
  return 0;
}

/* ---- the client's cache ----------------------------------------------------------- */

/* Under disc_lock. */
static int refresh(ripple_kube_client_t *c, ripple_kube_status_t *st) {
  kube_discovery_t *fresh = NULL;
  int rc = kube_discovery_fetch(kube_fetch_client, c, &fresh, st);
  if (rc != RIPPLE_OK) return rc;
  if (!c->disc) {
    c->disc = fresh;
    c->disc_free = kube_discovery_free;
    return RIPPLE_OK;
  }
  return kube_discovery_merge(c->disc, fresh);
}

/* Refresh unless a fetch began after `since`: then another thread has just
 * refreshed for us, and a second fetch would learn nothing new. */
static int refresh_since(ripple_kube_client_t *c, int64_t since, ripple_kube_status_t *st) {
  if (c->disc && c->disc->fetched_ns >= since) return RIPPLE_OK;
  return refresh(c, st);
}

typedef struct disc_key {
  const char *name;         /* ripple_kube_resolve */
  const char *group, *kind; /* or ripple_kube_resolve_kind */
} disc_key_t;

static const ripple_kube_resource_t *key_find(const kube_discovery_t *d, const disc_key_t *k) {
  return k->name ? kube_discovery_find(d, k->name) : kube_discovery_find_kind(d, k->group, k->kind);
}

static int lookup(ripple_kube_client_t *c, const disc_key_t *k, const ripple_kube_resource_t **out,
                  ripple_kube_status_t *st) {
  int64_t began = mono_ns();
  pthread_mutex_lock(&c->disc_lock);
  int rc = c->disc ? RIPPLE_OK : refresh(c, st);
  const ripple_kube_resource_t *r = rc == RIPPLE_OK ? key_find(c->disc, k) : NULL;
  if (rc == RIPPLE_OK && !r) {
    rc = refresh_since(c, began, st);
    if (rc == RIPPLE_OK) r = key_find(c->disc, k);
  }
  pthread_mutex_unlock(&c->disc_lock);
  if (rc != RIPPLE_OK) return rc;
  if (!r) {
    if (st) memset(st, 0, sizeof *st);
    if (k->name)
      return kube_fail(st, RIPPLE_KUBE_ENOTFOUND, "the server doesn't have a resource type \"%s\"",
                       k->name);
    return kube_fail(st, RIPPLE_KUBE_ENOTFOUND,
                     "the server doesn't have a resource of kind %s in group \"%s\"", k->kind,
                     k->group ? k->group : "");
  }
  *out = r;
  return RIPPLE_OK;
}

int ripple_kube_resolve(ripple_kube_client_t *c, const char *name,
                        const ripple_kube_resource_t **out, ripple_kube_status_t *st) {
  if (!c || !name || !*name || !out) return RIPPLE_EINVAL;
  disc_key_t k = {name, NULL, NULL};
  return lookup(c, &k, out, st);
}

int ripple_kube_resolve_kind(ripple_kube_client_t *c, const char *group, const char *kind,
                             const ripple_kube_resource_t **out, ripple_kube_status_t *st) {
  if (!c || !kind || !*kind || !out) return RIPPLE_EINVAL;
  disc_key_t k = {NULL, group ? group : "", kind};
  return lookup(c, &k, out, st);
}

/* Always a fresh fetch (the caller asks what the server serves now); the
 * callbacks run without the lock, so fn may resolve names. */
int ripple_kube_resources(ripple_kube_client_t *c,
                          void (*fn)(void *ud, const ripple_kube_resource_t *r), void *ud,
                          ripple_kube_status_t *st) {
  if (!c || !fn) return RIPPLE_EINVAL;
  int64_t began = mono_ns();
  pthread_mutex_lock(&c->disc_lock);
  int rc = refresh_since(c, began, st);
  const ripple_kube_resource_t **v = NULL;
  size_t n = 0;
  if (rc == RIPPLE_OK && !(v = malloc((c->disc->cur.n + 1) * sizeof(void *)))) rc = RIPPLE_ENOMEM;
  for (size_t i = 0; rc == RIPPLE_OK && i < c->disc->cur.n; i++)
    if (c->disc->cur.v[i]->preferred) v[n++] = &c->disc->cur.v[i]->pub;
  pthread_mutex_unlock(&c->disc_lock);
  for (size_t i = 0; i < n; i++) fn(ud, v[i]);
  free(v);
  return rc;
}

int kube_discovery_subresources(ripple_kube_client_t *c, const ripple_kube_resource_t *r, char *buf,
                                size_t cap) {
  pthread_mutex_lock(&c->disc_lock);
  int known = c->disc ? kube_discovery_subs(c->disc, r, buf, cap) : 0;
  pthread_mutex_unlock(&c->disc_lock);
  return known;
}
