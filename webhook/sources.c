/*
 * sources.c - which objects a controller's write came from, and their
 * contexts.
 *
 * A related object's context is, in this order: the one the webhook holds
 * for it (memo.h: a Deployment's, a scale's), the one it gave it moments ago
 * (the informers lag), its annotation.
 *
 * Candidates come from the lookup's indexes (owner uid, label selector, name);
 * each one is then confirmed by the relation rules shared with `ripple
 * analyze` (lib/rules), so the rules, not this file, say what is related:
 *   - the controlling owner, of any kind, custom resources included (main
 *     resource writes and creates only: a status write reports on the
 *     object's children, not on its owner's intent);
 *   - Endpoints and EndpointSlices: their Service and the Pods it selects;
 *   - status of ReplicaSets, Deployments, StatefulSets, DaemonSets and Jobs:
 *     their children (Pods, or the Deployment's ReplicaSets);
 *   - the webhook's own recent memory of the object (a scale it remembered),
 *     found only by the object's own name and uid (memo.h).
 * Contexts that repeat a CPID already gathered are skipped, so a Service over
 * fifty Pods of one change costs one source. Objects come as text: the many
 * downstream ones (Pods, children) are read as stand-ins of their metadata,
 * the one or two upstream ones whole (objtext.c).
 */
#include <stdio.h>
#include <string.h>

#include "annotate.h"
#include "objtext.h"
#include "owners.h"
#include "ripplex/cpid.h"
#include "ripplex/logonce.h"
#include "roots.h"
#include "sources.h"
#include "stamp.h"

static int gathered(const wh_sources_t *s, const ripple_cpid_t *id) {
  for (size_t i = 0; i < s->n; i++)
    if (cpid_eq(&s->ctx[i].cpid, id)) return 1;
  return 0;
}

static void add_ctx(wh_sources_t *s, const ripple_ctx_t *c) {
  if (gathered(s, &c->cpid)) return;
  if (s->n == WH_SOURCES_MAX) {
    s->skipped++;
    return;
  }
  s->ctx[s->n++] = *c;
}

static const char *meta_str(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(json_object_get(obj, "metadata"), key);
  return json_is_string(v) ? json_string_value(v) : "";
}

int wh_related_ctx(wh_t *w, const json_t *obj, const char *kind, int64_t now, ripple_ctx_t *out) {
  int64_t gen = 0;
  if (wh_memo_held_get(w->memo, meta_str(obj, "uid"), now, out, &gen) == RIPPLE_OK &&
      !wh_gen_behind(obj, gen))
    return RIPPLE_OK;
  if (wh_memo_recent_get_gen(w->memo, kind, meta_str(obj, "namespace"), meta_str(obj, "name"),
                             meta_str(obj, "uid"), now, out, &gen) == RIPPLE_OK &&
      !wh_gen_behind(obj, gen))
    return RIPPLE_OK;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  if (ripple_annotation_key(kind, key, sizeof key) != RIPPLE_OK) return RIPPLE_ENOENT;
  const json_t *v =
      json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
  if (!v) return RIPPLE_ENOENT;
  if (!json_is_string(v)) return ripple_tracer_extract_str(w->tracer, "", 0, out);
  /* Malformed values are counted by the tracer and reported as absent. */
  int rc = ripple_tracer_extract_str(w->tracer, json_string_value(v), json_string_length(v), out);
  if (rc != RIPPLE_OK) return rc;
  /* A context the webhook did not write (no valid MAC for this kind and
   * namespace) is no evidence of what the object descends from (ctxmac.h). */
  wh_ctx_refusal_t why = wh_obj_ctx_check(&w->mac, obj, kind, meta_str(obj, "namespace"));
  if (why == WH_CTX_OK) return RIPPLE_OK;
  wh_ctx_refused(w, why, kind, 0);
  memset(out, 0, sizeof *out);
  return RIPPLE_ENOENT;
}

typedef struct gather {
  wh_t *w;
  wh_sources_t *s;
  const json_t *fixed; /* the object every candidate is related to */
  int fixed_upstream;  /* 1: fixed is the rule's FROM, candidates its TO */
  const char *kind;    /* the candidates' kind */
  int64_t now;
} gather_t;

static int relates(gather_t *g, json_t *cand) {
  wh_ensure_kind(cand, g->kind);
  const json_t *from = g->fixed_upstream ? g->fixed : cand;
  const json_t *to = g->fixed_upstream ? cand : g->fixed;
  return ripple_rules_relates(g->w->rules, from, to, NULL);
}

static void on_candidate(gather_t *g, json_t *cand) {
  ripple_ctx_t c;
  if (relates(g, cand) && wh_related_ctx(g->w, cand, g->kind, g->now, &c) == RIPPLE_OK)
    add_ctx(g->s, &c);
}

/* Whether a downstream object can be passed over from its text alone: it
 * has no context, or one whose CPID is gathered already (fifty Pods of one
 * change). Such an object changes nothing whether it is related or not. A
 * malformed context is left to the full path, which counts it. */
static int nothing_new(gather_t *g, const char *json, size_t len) {
  wh_ident_t id;
  if (wh_text_ident(json, len, g->kind, &id) != RIPPLE_OK) return 0;
  ripple_ctx_t c;
  if (wh_memo_recent_get(g->w->memo, g->kind, id.ns, id.name, id.uid, g->now, &c) == RIPPLE_OK)
    return gathered(g->s, &c.cpid);
  if (!id.ctx || !id.ctx_len) return 1;
  if (ripple_ctx_decode(id.ctx, id.ctx_len, ripple_tracer_max_ancestors(g->w->tracer), &c) !=
      RIPPLE_OK)
    return 0;
  return gathered(g->s, &c.cpid);
}

/* A downstream candidate (a selected Pod, a child): the rules read only its
 * metadata, so a stand-in does (objtext.c), not a tree of the whole object;
 * and most need not even that. */
static void on_downstream_text(void *ud, const char *json, size_t len) {
  gather_t *g = ud;
  if (nothing_new(g, json, len)) return;
  json_t *cand;
  if (wh_text_standin(json, len, g->kind, &cand) != RIPPLE_OK) {
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "related_unreadable", "kind=%s", g->kind);
    return;
  }
  on_candidate(g, cand);
  json_decref(cand);
}

/* ---- reads of related objects (wh.h) ---- */

void wh_lookup_get(const wh_t *w, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                   void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  if (t->get && name && *name) t->get(t->ud, kind, ns, name, fn, fud);
}

void wh_lookup_by_owner(const wh_t *w, const char *kind, const char *uid, wh_text_fn fn,
                        void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  if (t->by_owner) t->by_owner(t->ud, kind, uid, fn, fud);
}

void wh_lookup_select(const wh_t *w, const char *kind, const char *ns, const char *selector,
                      wh_text_fn fn, void *fud) {
  const wh_text_lookup_t *t = &w->o.text_lookup;
  if (t->select) t->select(t->ud, kind, ns, selector, fn, fud);
}

/* An upstream object (owner, Service), whole: rules may read any field. */
typedef struct whole {
  const char *kind;
  json_t *obj;
} whole_t;

static void take_whole(void *ud, const char *json, size_t len) {
  whole_t *h = ud;
  json_decref(h->obj);
  h->obj = wh_text_tree(json, len, h->kind);
}

static json_t *get_whole(const wh_t *w, const char *kind, const char *ns, const char *name) {
  whole_t h = {kind, NULL};
  wh_lookup_get(w, kind, ns, name, take_whole, &h);
  return h.obj;
}

/* obj's controlling ownerReference: its apiVersion, kind, name and uid. */
typedef struct ownerref {
  const char *api_version, *kind, *name, *uid;
} ownerref_t;

static int controlling_owner(const json_t *obj, ownerref_t *o) {
  const char *uid = ripple_rules_controller_uid(obj);
  if (!uid) return 0;
  const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
  size_t i;
  const json_t *ref;
  json_array_foreach(refs, i, ref) {
    o->uid = json_string_value(json_object_get(ref, "uid"));
    o->kind = json_string_value(json_object_get(ref, "kind"));
    o->name = json_string_value(json_object_get(ref, "name"));
    o->api_version = json_string_value(json_object_get(ref, "apiVersion"));
    if (o->uid && o->kind && o->name && !strcmp(o->uid, uid)) return 1;
  }
  return 0;
}

/* The controlling owner's current context: memory first (no tree), then the
 * informers, which are asked to keep the owner's kind from now on. */
/* What a memory hit needs of the owner, read from the informer's text with
 * no tree (every Pod a ReplicaSet creates asks it): its uid, generation and
 * whether it is being deleted. ok stays 0 when anything is not plain (an
 * escaped uid, an odd generation): the whole object is read then. */
typedef struct mark {
  int ok, deleting;
  int64_t gen;
  char uid[64];
} mark_t;

static int plain_int(wh_span_t v, int64_t *out) {
  *out = 0;
  if (!v.p) return 1; /* no generation */
  if (!v.n || v.n > 18) return 0;
  for (size_t i = 0; i < v.n; i++) {
    if (v.p[i] < '0' || v.p[i] > '9') return 0;
    *out = *out * 10 + (v.p[i] - '0');
  }
  return 1;
}

static void take_mark(void *ud, const char *json, size_t len) {
  mark_t *m = ud;
  static const char *const top[] = {"metadata"};
  static const char *const keys[] = {"uid", "generation", "deletionTimestamp"};
  wh_span_t md, f[3];
  m->ok = 0;
  if (wh_text_fields(json, len, top, 1, &md) != RIPPLE_OK || !md.p ||
      wh_text_fields(md.p, md.n, keys, 3, f) != RIPPLE_OK || !f[0].p || f[0].n < 2 ||
      f[0].p[0] != '"' || f[0].n - 2 >= sizeof m->uid || memchr(f[0].p, '\\', f[0].n) ||
      !plain_int(f[1], &m->gen))
    return;
  memcpy(m->uid, f[0].p + 1, f[0].n - 2);
  m->uid[f[0].n - 2] = '\0';
  m->deleting = f[2].p && f[2].p[0] == '"';
  m->ok = 1;
}

/* A memory hit for the owner ou: 1 when decided from the owner's text alone
 * (its context added, or the write marked uncertain), 0 when the whole owner
 * must be read. */
static int owner_from_memory(gather_t *g, const ownerref_t *ou, const char *ns,
                             const ripple_ctx_t *c, int64_t gen) {
  mark_t m = {0};
  wh_lookup_get(g->w, ou->kind, ns, ou->name, take_mark, &m);
  if (!m.ok) return 0;
  /* Memory holds the owner's latest change unless its spec changed since;
   * an owner not in the informer (yet) has memory stand in. */
  if (!strcmp(m.uid, ou->uid) && wh_gen_past(m.gen, m.deleting, gen))
    g->s->uncertain = 1;
  else
    add_ctx(g->s, c);
  return 1;
}

/* Keep the owner's kind from now on, if it is a kind that owns (owners.h):
 * any workload can write any ownerReference, and each kind followed is a
 * cluster-wide informer. */
static void want_owner_kind(wh_t *w, const char *api_version, const char *kind) {
  const char *slash = strchr(api_version, '/');
  char group[WH_OWNER_GROUP_MAX + 1] = "";
  if (slash) {
    if ((size_t)(slash - api_version) >= sizeof group) return;
    memcpy(group, api_version, (size_t)(slash - api_version));
    group[slash - api_version] = '\0';
  }
  if (!wh_owner_kind_ok(w->o.owner_kinds, group, kind)) {
    atomic_fetch_add(&w->m.owner_kinds_refused, 1);
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "owner_kind_refused", "hint=%s",
                    "a controlling owner of a kind not followed (neither built in nor "
                    "--owner-kind): no informer started for it");
    return;
  }
  const wh_text_lookup_t *t = &w->o.text_lookup;
  t->want(t->ud, api_version, kind);
}

static void owner(gather_t *g, const json_t *obj, const char *ns) {
  ownerref_t o;
  if (!controlling_owner(obj, &o)) return;
  ripple_ctx_t c;
  int64_t gen = 0;
  /* Memory first (the informers lag by milliseconds): what a scale held, or
   * what this replica gave the owner moments ago. */
  int held =
      wh_memo_held_get(g->w->memo, o.uid, g->now, &c, &gen) == RIPPLE_OK ||
      wh_memo_recent_get_gen(g->w->memo, o.kind, ns, o.name, o.uid, g->now, &c, &gen) == RIPPLE_OK;
  if (g->w->o.text_lookup.want && o.api_version) want_owner_kind(g->w, o.api_version, o.kind);
  if (held && owner_from_memory(g, &o, ns, &c, gen)) return;
  json_t *own = get_whole(g->w, o.kind, ns, o.name);
  if (!own || strcmp(meta_str(own, "uid"), o.uid) != 0) {
    if (held) add_ctx(g->s, &c); /* not in the informer (yet): memory stands in */
    json_decref(own);
    return;
  }
  g->fixed = obj;
  g->fixed_upstream = 0;
  g->kind = o.kind;
  /* What memory holds is the owner's latest change unless its spec changed
   * since (a write no replica answered: failurePolicy Ignore let it through
   * with the older context; stamp.c). */
  if (held) {
    if (wh_gen_behind(own, gen))
      g->s->uncertain = 1;
    else
      add_ctx(g->s, &c);
    json_decref(own);
    return;
  }
  /* Nothing held for it, and its spec changed since its context was written
   * (a Deployment's is written at its creation only; a scale nobody here
   * holds; a write no replica answered): its latest change is not known
   * here, and the older context must not stand in for it (stamp.c). */
  if (wh_ctx_stale(own, o.kind))
    g->s->uncertain = 1;
  else
    on_candidate(g, own);
  json_decref(own);
}

int wh_owner_ctx(wh_t *w, const json_t *obj, const char *ns, int64_t now, char *uid, size_t cap,
                 ripple_ctx_t *out) {
  ownerref_t o;
  if (!controlling_owner(obj, &o)) return RIPPLE_ENOENT;
  snprintf(uid, cap, "%s", o.uid);
  static _Thread_local wh_sources_t s; /* 34 KiB: not on the connection's stack */
  s.n = s.skipped = 0;
  s.uncertain = 0;
  gather_t g = {.w = w, .s = &s, .now = now};
  owner(&g, obj, ns);
  if (!s.n) return RIPPLE_ENOENT;
  *out = s.ctx[0];
  return RIPPLE_OK;
}

/* "a=b,c=d" from a Service's spec.selector map; 0 when it selects nothing. */
static int selector_text(const json_t *svc, char *buf, size_t cap) {
  const json_t *sel = json_object_get(json_object_get(svc, "spec"), "selector");
  const char *k;
  const json_t *v;
  size_t len = 0;
  json_object_foreach((json_t *)sel, k, v) {
    if (!json_is_string(v)) return 0;
    int n = snprintf(buf + len, cap - len, "%s%s=%s", len ? "," : "", k, json_string_value(v));
    if (n < 0 || (size_t)n >= cap - len) return 0;
    len += (size_t)n;
  }
  return len > 0;
}

/* A Service (by name) and the Pods it selects, for its Endpoints or slices.
 * A Service the informer does not have yet, but this webhook admitted moments
 * ago, is read from memory (memo.h, services): the endpoints controllers
 * often write before the informer catches up, and the Service's change
 * would otherwise be missing from its Endpoints' trace. */
static void service_and_pods(gather_t *g, const json_t *obj, const char *ns, const char *svc_name) {
  json_t *svc = get_whole(g->w, "Service", ns, svc_name);
  if (!svc) svc = wh_memo_service_standin(g->w->memo, ns, svc_name, g->now);
  if (!svc) return;
  g->fixed = obj;
  g->fixed_upstream = 0;
  g->kind = "Service";
  if (relates(g, svc)) {
    on_candidate(g, svc);
    char sel[1024];
    if (selector_text(svc, sel, sizeof sel)) {
      g->fixed = svc;
      g->fixed_upstream = 1;
      g->kind = "Pod";
      wh_lookup_select(g->w, "Pod", ns, sel, on_downstream_text, g);
    }
  }
  json_decref(svc);
}

static const char *child_kind(const char *kind) {
  if (!strcmp(kind, "Deployment")) return "ReplicaSet";
  if (!strcmp(kind, "ReplicaSet") || !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet") ||
      !strcmp(kind, "Job"))
    return "Pod";
  return NULL;
}

void wh_sources_gather(wh_t *w, const wh_review_t *r, const json_t *obj, const char *kind,
                       int64_t now, wh_sources_t *s) {
  gather_t g = {.w = w, .s = s, .now = now};
  const char *ns = meta_str(obj, "namespace");
  if (!*ns) ns = r->ns;
  ripple_ctx_t c;
  int64_t gen;
  /* What this replica gave the object moments ago, unless a spec change no
   * replica answered came since (the stored object's generation is past). */
  if (wh_memo_recent_get_gen(w->memo, kind, ns, r->name, meta_str(obj, "uid"), now, &c, &gen) ==
          RIPPLE_OK &&
      !wh_gen_behind(r->old ? r->old : obj, gen))
    add_ctx(s, &c);
  int status = !strcmp(r->subresource, "status");
  if (!status) owner(&g, obj, ns);
  if (!strcmp(kind, "Endpoints")) {
    service_and_pods(&g, obj, ns, meta_str(obj, "name"));
  } else if (!strcmp(kind, "EndpointSlice")) {
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *svc = json_string_value(json_object_get(labels, "kubernetes.io/service-name"));
    if (svc) service_and_pods(&g, obj, ns, svc);
  }
  const char *child = status ? child_kind(kind) : NULL;
  const char *uid = meta_str(obj, "uid");
  if (child && *uid) {
    g.fixed = obj;
    g.fixed_upstream = 1;
    g.kind = child;
    wh_lookup_by_owner(w, child, uid, on_downstream_text, &g);
  }
}

/* wh_owner_of: the span's owner attribute (decide.c, pending.c). */
int wh_owner_of(const json_t *obj, char *out, size_t cap) {
  const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
  size_t i;
  const json_t *ref;
  json_array_foreach(refs, i, ref) {
    if (!json_is_true(json_object_get(ref, "controller"))) continue;
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    if (!kind || !name || !*kind || !*name || strlen(kind) + strlen(name) + 2 > cap) return 0;
    snprintf(out, cap, "%s/%s", kind, name);
    return 1;
  }
  return 0;
}
