/*
 * why.c - `kubectl ripple why KIND/NAME`: the chain of writes from a
 * person's change to an object's latest write (docs/kubectl-ripple.md).
 *
 * The object's own CPID (its cpid.ripple.dev/<kind> annotation) names the
 * change its current state came from; the trace server's origins of that
 * CPID are the root changes it descends from (several when merges joined
 * them), and its newest root indexed by uid is the latest change a person
 * made to it (a Deployment's annotation keeps naming its creation: the
 * webhook holds a Deployment's context rather than writing it). Each of those
 * roots is traced and the one whose trace holds the object's latest write
 * wins (a tie: the later root, as the webhook dates a merge from its latest
 * source). In that trace the chain is walked from the object's latest write
 * up the tree (each span's cause, or the first write of the same object under
 * that cause, so a Pod's status write comes after its binding) to the root,
 * and what each write changed comes from the trace server's details.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

/* Roots traced for one object, at most: a CPID merged from many changes
 * names them all as origins, and each costs a trace. */
#define WHY_ROOTS_MAX 8

static int same_name(const kr_span_t *s, const kr_why_target_t *o) {
  return *s->oname && !strcmp(s->oname, o->name) && !strcmp(s->kind, o->kind) &&
         !strcmp(s->ns, o->ns);
}

long kr_why_latest(const kr_trace_t *t, const kr_why_target_t *o) {
  for (size_t i = t->n; i-- > 0;) {
    const kr_span_t *s = &t->spans[i];
    /* Only writes (the webhook's spans name the object's kind); a watch's
     * record of a change it saw (ripple-watch's spans) is not a hop. */
    if (!*s->kind) continue;
    /* A create has no uid yet at admission: its name is all there is. */
    int match = *s->uid && *o->uid ? !strcmp(s->uid, o->uid) : same_name(s, o);
    if (match) return (long)i;
  }
  return -1;
}

int kr_why_chain(const kr_trace_t *t, const kr_why_target_t *o, kr_why_t *out) {
  long w = kr_why_latest(t, o);
  if (w < 0) return RIPPLE_ENOENT;
  size_t n = 0;
  /* A span is shown under one that precedes it, so this ends; the bound
   * only guards against a tree that is not one. */
  for (long i = w; i >= 0 && n <= t->n; i = t->spans[i].parent) n++;
  long *hops = calloc(n, sizeof *hops);
  if (!hops) return RIPPLE_ENOMEM;
  size_t k = n;
  for (long i = w; i >= 0 && k > 0; i = t->spans[i].parent) hops[--k] = i;
  *out = (kr_why_t){t, *o, hops, n};
  return RIPPLE_OK;
}

void kr_why_free(kr_why_t *w) {
  if (!w) return;
  free(w->hops);
  memset(w, 0, sizeof *w);
}

static size_t add_root(char (*out)[RIPPLE_CPID_STRLEN + 1], size_t n, size_t max, const char *id) {
  ripple_cpid_t c;
  char canon[RIPPLE_CPID_STRLEN + 1];
  if (n >= max || !id || ripple_cpid_parse(id, strlen(id), &c) != RIPPLE_OK) return n;
  ripple_cpid_format(&c, canon);
  for (size_t k = 0; k < n; k++)
    if (!strcmp(out[k], canon)) return n;
  memcpy(out[n], canon, sizeof canon);
  return n + 1;
}

size_t kr_why_roots(const json_t *origins, const json_t *roots, char (*out)[RIPPLE_CPID_STRLEN + 1],
                    size_t max) {
  size_t n = 0, i;
  const json_t *v;
  json_array_foreach(json_object_get(origins, "origins"), i, v) {
    n = add_root(out, n, max, json_string_value(v));
  }
  const json_t *newest = json_array_get(json_object_get(roots, "roots"), 0);
  return add_root(out, n, max, json_string_value(json_object_get(newest, "cpid")));
}

/* ---- reading the object and the trace server --------------------------------------- */

typedef struct why_run {
  const kr_args_t *a;
  kr_ts_t *ts;
  const json_t *obj;
  const char *what;
  kr_why_target_t o;
  char own[RIPPLE_CPID_STRLEN + 1];
  char key[RIPPLE_ANNOTATION_KEYMAX];
  char roots[WHY_ROOTS_MAX][RIPPLE_CPID_STRLEN + 1];
  size_t nroots;
  int own_unknown; /* the server answered 404 for the object's own CPID */
  kr_trace_t t;    /* the chosen root's trace */
  int have;
  json_t *fields; /* kr_why_fields: owners, who set them, fights */
} why_run_t;

static const char *meta_str(const json_t *obj, const char *key) {
  const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
  return s ? s : "";
}

/* The object as read, and its own CPID from its annotation (none: o.cpid NULL). */
static int load_target(why_run_t *w, const char *kind, char *err, size_t cap) {
  w->o = (kr_why_target_t){kind, meta_str(w->obj, "namespace"), meta_str(w->obj, "name"),
                           meta_str(w->obj, "uid"), NULL};
  int rc;
  if (ripple_annotation_key(kind, w->key, sizeof w->key) != RIPPLE_OK) return RIPPLE_OK;
  const char *v = json_string_value(
      json_object_get(json_object_get(json_object_get(w->obj, "metadata"), "annotations"), w->key));
  ripple_ctx_t ctx;
  if (!v) return RIPPLE_OK;
  if ((rc = ripple_ctx_decode(v, strlen(v), RIPPLE_ANC_MAX, &ctx)) != RIPPLE_OK) {
    snprintf(err, cap, "%s: its %s annotation is malformed (%s)", w->what, w->key,
             ripple_strerror(rc));
    return rc;
  }
  ripple_cpid_format(&ctx.cpid, w->own);
  w->o.cpid = w->own;
  return RIPPLE_OK;
}

static int no_roots(const why_run_t *w, char *err, size_t cap) {
  if (w->own_unknown)
    snprintf(err, cap,
             "the trace server %s does not know cpid %s (the %s annotation of %s): the "
             "change was not sent to this server, not yet (the webhook ships within a second), "
             "or retention removed it",
             kr_ts_where(w->ts), w->own, w->key, w->what);
  else if (w->o.cpid)
    snprintf(err, cap, "the trace server %s names no root change of cpid %s (of %s)",
             kr_ts_where(w->ts), w->own, w->what);
  else
    snprintf(err, cap,
             "%s has no ripple context: no %s annotation, and the trace server knows no change "
             "of it. Changes are traced when made with kubectl ripple (apply, scale, patch, "
             "delete), and controllers' writes when ripple-webhook is registered for the "
             "object's namespace (docs/webhook.md)",
             w->what, w->key[0] ? w->key : "cpid.ripple.dev/<kind>");
  return RIPPLE_ENOENT;
}

/* The roots to trace: the origins of the object's CPID, its newest root. */
static int find_roots(why_run_t *w, char *err, size_t cap) {
  json_t *origins = NULL, *roots = NULL;
  int rc = RIPPLE_OK;
  if (w->o.cpid) {
    rc = kr_tserver_cpid_get(w->ts, w->own, "origins", &origins, err, cap);
    if (rc == RIPPLE_ENOENT) w->own_unknown = 1, rc = RIPPLE_OK;
  }
  if (rc == RIPPLE_OK && *w->o.uid) {
    rc = kr_tserver_roots(w->ts, w->o.uid, 1, &roots, err, cap);
    /* A server older than the index (404), or a uid it does not index. */
    if (rc == RIPPLE_ENOENT || rc == RIPPLE_EINVAL) rc = RIPPLE_OK;
  }
  if (rc == RIPPLE_OK) w->nroots = kr_why_roots(origins, roots, w->roots, WHY_ROOTS_MAX);
  json_decref(origins);
  json_decref(roots);
  if (rc == RIPPLE_OK && !w->nroots) rc = no_roots(w, err, cap);
  return rc;
}

/* Is trace b's latest write of the object a better answer than a's? */
static int better(const kr_trace_t *a, long la, const kr_trace_t *b, long lb) {
  if (lb < 0) return 0;
  if (la < 0) return 1;
  if (b->spans[lb].end_ns != a->spans[la].end_ns) return b->spans[lb].end_ns > a->spans[la].end_ns;
  return b->t0_ns > a->t0_ns;
}

/* Trace every root; keep the trace with the object's latest write. */
static int pick_trace(why_run_t *w, char *err, size_t cap) {
  long best = -1;
  for (size_t r = 0; r < w->nroots; r++) {
    kr_answers_t ans;
    kr_trace_t t;
    /* Everything reachable: the object's latest write may ride on an
     * earlier change's context. */
    int rc = kr_tserver_fetch(w->ts, w->roots[r], 1, &ans, err, cap);
    if (rc == RIPPLE_ENOENT) continue; /* gone since the origins answer (retention) */
    if (rc == RIPPLE_OK) {
      rc = kr_trace_build(&ans, &t, err, cap);
      kr_answers_free(&ans);
    }
    if (rc != RIPPLE_OK) return rc;
    long latest = kr_why_latest(&t, &w->o);
    if (!w->have || better(&w->t, best, &t, latest)) {
      if (w->have) kr_trace_free(&w->t);
      w->t = t;
      w->have = 1;
      best = latest;
    } else {
      kr_trace_free(&t);
    }
  }
  if (w->have && best >= 0) return RIPPLE_OK;
  snprintf(err, cap,
           "the trace of %s's change (cpid %s) has no write of it yet (the webhook ships spans "
           "within a second; try again)",
           w->what, w->have ? w->t.cpid : w->roots[0]);
  return RIPPLE_ENOENT;
}

/* The chosen trace's details; a server older than them answers 404. */
static int add_details(why_run_t *w, char *err, size_t cap) {
  json_t *d = NULL;
  int rc = kr_tserver_cpid_get(w->ts, w->t.cpid, "details", &d, err, cap);
  if (rc == RIPPLE_ENOENT) return RIPPLE_OK;
  if (rc == RIPPLE_OK) rc = kr_details_join(&w->t, d, err, cap);
  json_decref(d);
  return rc;
}

/* Who owns each field now (managedFields), who set it and the object's
 * fights (the trace server's /v1/fights). */
static int add_fields(why_run_t *w, char *err, size_t cap) {
  json_t *srv = NULL;
  int rc = kr_why_fights_get(w->ts, w->o.uid, &srv, err, cap);
  if (rc == RIPPLE_OK && !(w->fields = kr_why_fields(w->obj, srv))) {
    snprintf(err, cap, "out of memory reading the fields");
    rc = RIPPLE_ENOMEM;
  }
  json_decref(srv);
  return rc;
}

static int print(const why_run_t *w, FILE *out) {
  kr_why_t c;
  if (kr_why_chain(&w->t, &w->o, &c) != RIPPLE_OK) return -1;
  char *url = kr_ts_dashboard_url(w->ts, w->t.cpid);
  int rc = url ? 0 : -1;
  if (url && w->a->json) {
    json_t *j = kr_why_json(&c);
    rc = j && !json_object_set_new(j, "dashboard", json_string(url)) &&
                 !json_object_set(j, "fields", json_object_get(w->fields, "fields")) &&
                 !json_object_set(j, "fights", json_object_get(w->fields, "fights"))
             ? json_dumpf(j, out, JSON_INDENT(2))
             : -1;
    json_decref(j);
    fputc('\n', out);
  } else if (url) {
    kr_render_why(out, &c, kr_want_colour(fileno(out)));
    kr_render_why_fields(out, w->fields, kr_want_colour(fileno(out)));
    kr_ts_put_dashboard(out, w->ts, url, w->t.cpid, 1);
  }
  free(url);
  kr_why_free(&c);
  return rc;
}

int kr_why_object(const kr_args_t *a, kr_ts_t *ts, const json_t *obj, const char *kind,
                  const char *what, FILE *out, char *err, size_t cap) {
  why_run_t w;
  memset(&w, 0, sizeof w);
  w.a = a;
  w.ts = ts;
  w.obj = obj;
  w.what = what;
  int rc = load_target(&w, kind, err, cap);
  if (rc == RIPPLE_OK) rc = find_roots(&w, err, cap);
  if (rc == RIPPLE_OK) rc = pick_trace(&w, err, cap);
  if (rc == RIPPLE_OK) rc = add_details(&w, err, cap);
  if (rc == RIPPLE_OK) rc = add_fields(&w, err, cap);
  if (rc == RIPPLE_OK && print(&w, out) != 0) {
    snprintf(err, cap, "out of memory writing the chain");
    rc = RIPPLE_ENOMEM;
  }
  if (w.have) kr_trace_free(&w.t);
  json_decref(w.fields);
  return rc;
}

int kr_why(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap) {
  const ripple_kube_resource_t *r;
  json_t *obj = NULL;
  char what[300];
  int rc = kr_get_object(k, a, &obj, &r, what, sizeof what, err, cap);
  if (rc == RIPPLE_OK) rc = kr_why_object(a, k->ts, obj, r->kind, what, out, err, cap);
  json_decref(obj);
  return rc;
}
