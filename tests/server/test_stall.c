/*
 * test_stall.c - the stalled-cascade detector (server/stall.h): learning a
 * Deployment -> ReplicaSet -> Pods -> binding chain from synthetic cascades
 * written the way the webhook records them, then the stalls that come out of
 * it (a ReplicaSet update nothing followed, a Pod never bound), when they are
 * flagged and how they end (resolved, superseded, expired), what does not
 * make one (too few samples, a low share, unrelated changes in a busy
 * cluster), its bounds, spans that arrive late, and a replay agreeing with a
 * live run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall.h"
#include "testutil.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define MINUTE (60 * SEC)
#define T0 (1700000000LL * SEC)
#define CHILD 1000000u /* a cascade's controllers write under cpid k + CHILD */

static const char *const RS = "web-7d9f8b6c5";
static const char *const RSOWN = "ReplicaSet/web-7d9f8b6c5";

/* ---- lineage: (anc, desc) pairs, and equality ------------------------------ */

typedef struct rel {
  uint64_t anc[4096], desc[4096];
  size_t n;
  unsigned long calls;
} rel_t;

static void rel_add(rel_t *r, uint64_t anc, uint64_t desc) {
  assert_true(r->n < 4096);
  r->anc[r->n] = anc;
  r->desc[r->n++] = desc;
}

static int related_cb(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  rel_t *r = ud;
  r->calls++;
  if (ripple_cpid_equal(anc, desc)) return 1;
  for (size_t i = 0; i < r->n; i++) {
    ripple_cpid_t a = test_cpid(r->anc[i]), d = test_cpid(r->desc[i]);
    if (ripple_cpid_equal(anc, &a) && ripple_cpid_equal(desc, &d)) return 1;
  }
  return 0;
}

/* ---- spans, fed in admission order ----------------------------------------- */

typedef struct tspan {
  uint64_t cpid, id;
  int64_t end;
  char svc[32], name[32], kind[16], ns[16], obj[48], owner[40], op[8];
} tspan_t;

typedef struct script {
  tspan_t v[16384];
  size_t n, fed;
  uint64_t ids;
} script_t;

static uint64_t put(script_t *sc, uint64_t cpid, int64_t end, const char *svc, const char *name,
                    const char *kind, const char *ns, const char *obj, const char *owner,
                    const char *op) {
  assert_true(sc->n < sizeof sc->v / sizeof sc->v[0]);
  tspan_t *t = &sc->v[sc->n++];
  t->cpid = cpid;
  t->id = ++sc->ids;
  t->end = end;
  snprintf(t->svc, sizeof t->svc, "%s", svc);
  snprintf(t->name, sizeof t->name, "%s", name);
  snprintf(t->kind, sizeof t->kind, "%s", kind);
  snprintf(t->ns, sizeof t->ns, "%s", ns);
  snprintf(t->obj, sizeof t->obj, "%s", obj);
  snprintf(t->owner, sizeof t->owner, "%s", owner);
  snprintf(t->op, sizeof t->op, "%s", op);
  return t->id;
}

static void add_span(stall_t *s, const tspan_t *t) {
  stall_span_t sp = {
      test_cpid(t->cpid), t->id, t->end - 5 * MS, t->end, t->svc, t->name, t->kind, t->ns, t->obj,
      t->owner,           t->op};
  stall_add(s, &sp);
}

static int by_end(const void *a, const void *b) {
  const tspan_t *x = a, *y = b;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Feeds what was put since the last flush, as a replay does: in admission
 * order, each span after stall_tick(its end). */
static void flush(stall_t *s, script_t *sc) {
  qsort(sc->v + sc->fed, sc->n - sc->fed, sizeof sc->v[0], by_end);
  for (; sc->fed < sc->n; sc->fed++) {
    stall_tick(s, sc->v[sc->fed].end);
    add_span(s, &sc->v[sc->fed]);
  }
}

/* ---- cascades as the webhook records them ---------------------------------- */

/* A person's `kubectl` update of Deployment web, and the deployment
 * controller's update of its ReplicaSet under a CPID merged from it
 * (lineage k -> k + CHILD). Returns the ReplicaSet update's span id. */
static uint64_t c_deploy(script_t *sc, rel_t *r, uint64_t k, int64_t t, const char *ns) {
  rel_add(r, k, k + CHILD);
  put(sc, k, t, "kubectl", "update deployments", "Deployment", ns, "web", "", "UPDATE");
  return put(sc, k + CHILD, t + 20 * MS, "deployment-controller", "update replicasets",
             "ReplicaSet", ns, RS, "Deployment/web", "UPDATE");
}

static void pod_name(char *buf, size_t cap, uint64_t k, int j) {
  snprintf(buf, cap, "%s-%" PRIu64 "-%d", RS, k, j);
}

/* n Pods created by the ReplicaSet controller (generateName: no name); the
 * first `bound` of them bound by the scheduler 200 ms later. Returns the span
 * id of the last create. */
static uint64_t c_up(script_t *sc, uint64_t k, int64_t t, const char *ns, int n, int bound) {
  uint64_t last = 0;
  char pod[48];
  for (int j = 0; j < n; j++) {
    last = put(sc, k + CHILD, t + 50 * MS + j * 5 * MS, "replicaset-controller", "create pods",
               "Pod", ns, "", RSOWN, "CREATE");
    if (j >= bound) continue;
    pod_name(pod, sizeof pod, k, j);
    put(sc, k + CHILD, t + 250 * MS + j * 10 * MS, "default-scheduler", "create pods/binding",
        "Pod", ns, pod, RSOWN, "CREATE");
  }
  return last;
}

static void bind_late(script_t *sc, uint64_t k, int64_t t, const char *ns, int j) {
  char pod[48];
  pod_name(pod, sizeof pod, k, j);
  put(sc, k + CHILD, t, "default-scheduler", "create pods/binding", "Pod", ns, pod, RSOWN,
      "CREATE");
}

/* n Pods of an older rollout deleted by the ReplicaSet controller. */
static void c_down(script_t *sc, uint64_t k, int64_t t, const char *ns, int n) {
  char pod[48];
  for (int j = 0; j < n; j++) {
    snprintf(pod, sizeof pod, "%s-old-%" PRIu64 "-%d", RS, k, j);
    put(sc, k + CHILD, t + 50 * MS + j * 5 * MS, "replicaset-controller", "delete pods", "Pod", ns,
        pod, RSOWN, "DELETE");
  }
}

/* n cascades, one every 20 s from t0 in ns, keys k0..: even ones scale up by
 * 3 Pods (all bound), odd ones down by 2. */
static void learn_chain(script_t *sc, rel_t *r, uint64_t k0, int n, int64_t t0, const char *ns) {
  for (int i = 0; i < n; i++) {
    int64_t t = t0 + i * 20 * SEC;
    c_deploy(sc, r, k0 + (uint64_t)i, t, ns);
    if (i % 2 == 0)
      c_up(sc, k0 + (uint64_t)i, t, ns, 3, 3);
    else
      c_down(sc, k0 + (uint64_t)i, t, ns, 2);
  }
}

/* ---- what the detector says ------------------------------------------------ */

typedef struct gst {
  ripple_cpid_t cpid;
  uint64_t span_id;
  char service[32], name[32], kind[16], ns[16], obj[48], owner[40], es[32], en[32];
  int64_t admitted, flagged, p99;
  uint32_t samples;
  double share;
} gst_t;

typedef struct got {
  gst_t v[512];
  size_t n;
} got_t;

static int collect(void *ud, const stall_info_t *st) {
  got_t *g = ud;
  assert_true(g->n < 512);
  gst_t *x = &g->v[g->n++];
  memset(x, 0, sizeof *x);
  x->cpid = st->cpid;
  x->span_id = st->span_id;
  snprintf(x->service, sizeof x->service, "%s", st->service);
  snprintf(x->name, sizeof x->name, "%s", st->name);
  snprintf(x->kind, sizeof x->kind, "%s", st->kind);
  snprintf(x->ns, sizeof x->ns, "%s", st->ns);
  snprintf(x->obj, sizeof x->obj, "%s", st->obj);
  snprintf(x->owner, sizeof x->owner, "%s", st->owner);
  snprintf(x->es, sizeof x->es, "%s", st->expect_service);
  snprintf(x->en, sizeof x->en, "%s", st->expect_name);
  x->admitted = st->admitted_ns;
  x->flagged = st->flagged_ns;
  x->p99 = st->p99_ns;
  x->samples = st->samples;
  x->share = st->share;
  return 0;
}

/* The current stalls, in a buffer reused by the next call. */
static const got_t *stalls(stall_t *s) {
  static got_t g;
  g.n = 0;
  size_t n = stall_each(s, collect, &g);
  assert_int_equal(n, g.n);
  return &g;
}

static stall_stats_t stats(stall_t *s) {
  stall_stats_t st;
  stall_stats(s, &st);
  return st;
}

typedef struct mrow {
  char svc[32], name[32], es[32], en[32];
  double share;
  uint32_t samples;
  int64_t p99;
} mrow_t;

typedef struct model {
  mrow_t v[64];
  size_t n;
} model_t;

static void model_row(void *ud, const char *service, const char *name, const char *es,
                      const char *en, double share, uint32_t samples, int64_t p99) {
  model_t *m = ud;
  assert_true(m->n < 64);
  mrow_t *x = &m->v[m->n++];
  snprintf(x->svc, sizeof x->svc, "%s", service);
  snprintf(x->name, sizeof x->name, "%s", name);
  snprintf(x->es, sizeof x->es, "%s", es);
  snprintf(x->en, sizeof x->en, "%s", en);
  x->share = share;
  x->samples = samples;
  x->p99 = p99;
}

static const mrow_t *model_find(const model_t *m, const char *svc, const char *name) {
  for (size_t i = 0; i < m->n; i++)
    if (!strcmp(m->v[i].svc, svc) && !strcmp(m->v[i].name, name)) return &m->v[i];
  return NULL;
}

typedef struct fixture {
  rel_t r;
  script_t sc;
  stall_t *s;
} fixture_t;

static fixture_t *fx_new(const stall_opts_t *o) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  assert_int_equal(stall_new(o, related_cb, &f->r, &f->s), RIPPLE_OK);
  return f;
}

static void fx_free(fixture_t *f) {
  stall_free(f->s);
  free(f);
}

/* The chain learned from 20 cascades in "demo", all matured by T1. */
#define T1 (T0 + 30 * MINUTE)
static fixture_t *fx_learned(const stall_opts_t *o) {
  fixture_t *f = fx_new(o);
  learn_chain(&f->sc, &f->r, 100, 20, T0, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  assert_int_equal(stats(f->s).active, 0);
  assert_int_equal(stats(f->s).flagged, 0);
  return f;
}

/* ---- 1: a ReplicaSet update nothing followed -------------------------------- */

static void rs_update_not_followed(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.matured, 20 * 2 + 10 * 6 + 10 * 2);
  assert_int_equal(st.window, 0);
  assert_int_equal(st.kinds, 5);

  uint64_t rs = c_deploy(&f->sc, &f->r, 900, T1, "demo");
  flush(f->s, &f->sc);
  int64_t admitted = T1 + 20 * MS;
  stall_tick(f->s, admitted + 5 * SEC - 1);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_tick(f->s, admitted + 5 * SEC);
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 1);
  const gst_t *x = &g->v[0];
  ripple_cpid_t want = test_cpid(900 + CHILD);
  assert_true(ripple_cpid_equal(&x->cpid, &want));
  assert_int_equal(x->span_id, rs);
  assert_string_equal(x->service, "deployment-controller");
  assert_string_equal(x->name, "update replicasets");
  assert_string_equal(x->kind, "ReplicaSet");
  assert_string_equal(x->ns, "demo");
  assert_string_equal(x->obj, RS);
  assert_string_equal(x->owner, "Deployment/web");
  assert_string_equal(x->es, ""); /* half were followed by creates, half by deletes */
  assert_string_equal(x->en, "");
  assert_int_equal(x->admitted, admitted);
  assert_int_equal(x->flagged, admitted + 5 * SEC); /* 3 x p99 is below min_wait */
  assert_int_equal(x->samples, 20);
  assert_true(x->share > 0.999 && x->share <= 1.0);
  /* The first follower came 30 ms later: p99 is that bucket's upper edge. */
  assert_true(x->p99 >= 30 * MS && x->p99 <= 33 * MS);
  st = stats(f->s);
  assert_int_equal(st.flagged, 1);
  assert_int_equal(st.active, 1);
  /* Nothing else stalls later on (the Deployment update was followed). */
  stall_tick(f->s, T1 + 20 * MINUTE);
  assert_int_equal(stalls(f->s)->n, 1);
  assert_int_equal(stats(f->s).flagged, 1);
  fx_free(f);
}

/* ---- 2: a Pod created without a name, never bound --------------------------- */

static uint64_t unbound_pod(fixture_t *f, uint64_t k, int64_t t) {
  c_deploy(&f->sc, &f->r, k, t, "demo");
  uint64_t last = c_up(&f->sc, k, t, "demo", 3, 2);
  flush(f->s, &f->sc);
  return last;
}

static void pod_never_bound(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  uint64_t last = unbound_pod(f, 901, T1);
  int64_t created = T1 + 60 * MS; /* the third create */
  stall_tick(f->s, created + 5 * SEC - 1);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_tick(f->s, created + 5 * SEC);
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 1);
  const gst_t *x = &g->v[0];
  /* Bindings are matched to the oldest unbound create: the last one stalls. */
  assert_int_equal(x->span_id, last);
  assert_string_equal(x->service, "replicaset-controller");
  assert_string_equal(x->name, "create pods");
  assert_string_equal(x->kind, "Pod");
  assert_string_equal(x->obj, "");
  assert_string_equal(x->owner, RSOWN);
  assert_string_equal(x->es, "default-scheduler");
  assert_string_equal(x->en, "create pods/binding");
  assert_int_equal(x->admitted, created);
  assert_int_equal(x->samples, 30);
  assert_true(x->share > 0.999);
  assert_true(x->p99 >= 210 * MS && x->p99 <= 232 * MS);
  fx_free(f);
}

/* ---- 3: not before max(min_wait, multiple * p99) ----------------------------- */

static void waits_for_the_longer(void **state) {
  (void)state;
  /* multiple * p99 is the longer: 20 x ~229 ms. */
  stall_opts_t o = {.multiple = 20, .min_wait_ns = 1};
  fixture_t *f = fx_learned(&o);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  const mrow_t *bind = model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(bind);
  int64_t wait = (int64_t)(20.0 * (double)bind->p99);
  assert_true(wait > 4 * SEC);
  unbound_pod(f, 902, T1);
  int64_t created = T1 + 60 * MS;
  stall_tick(f->s, created + wait - 1);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_tick(f->s, created + wait);
  assert_int_equal(stalls(f->s)->n, 1);
  assert_int_equal(stalls(f->s)->v[0].flagged, created + wait);
  fx_free(f);

  /* min_wait is the longer. */
  stall_opts_t o2 = {.multiple = 3, .min_wait_ns = 7 * SEC};
  f = fx_learned(&o2);
  unbound_pod(f, 902, T1);
  stall_tick(f->s, created + 7 * SEC - 1);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_tick(f->s, created + 7 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  fx_free(f);
}

/* ---- 4: too few samples, too low a share ------------------------------------ */

static void too_few_or_too_rare(void **state) {
  (void)state;
  /* 3 scale-ups: 9 creates followed by their binding, 3 ReplicaSet updates. */
  fixture_t *f = fx_new(NULL);
  for (int i = 0; i < 3; i++) {
    c_deploy(&f->sc, &f->r, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo");
    c_up(&f->sc, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo", 3, 3);
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  assert_int_equal(m.n, 0);
  unbound_pod(f, 903, T1);
  c_deploy(&f->sc, &f->r, 904, T1 + MINUTE, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 2 * MINUTE); /* long past the wait, before they mature */
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).flagged, 0);
  fx_free(f);

  /* 10 scale-ups, 4 of them leaving a Pod unbound (26/30 < 0.9): the binding
   * is not expected, though a ReplicaSet update's next hop is. */
  f = fx_new(NULL);
  for (int i = 0; i < 10; i++) {
    c_deploy(&f->sc, &f->r, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo");
    c_up(&f->sc, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo", 3, i < 4 ? 2 : 3);
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  memset(&m, 0, sizeof m);
  stall_model(f->s, model_row, &m);
  assert_null(model_find(&m, "replicaset-controller", "create pods"));
  assert_non_null(model_find(&m, "deployment-controller", "update replicasets"));
  unbound_pod(f, 905, T1);
  stall_tick(f->s, T1 + 30 * MINUTE);
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).flagged, 0);
  fx_free(f);

  /* The same with min_samples above what there is. */
  stall_opts_t o = {.min_samples = 31};
  f = fx_learned(&o);
  unbound_pod(f, 906, T1);
  stall_tick(f->s, T1 + 2 * MINUTE);
  assert_int_equal(stats(f->s).flagged, 0);
  /* Once its 31st binding is learned (the first create of that cascade
   * matured), the Pod left unbound is a stall: it still is unbound. */
  stall_tick(f->s, T1 + 10 * MINUTE + 50 * MS);
  assert_int_equal(stats(f->s).flagged, 1);
  assert_int_equal(stalls(f->s)->v[0].flagged, T1 + 60 * MS + 5 * SEC);
  assert_int_equal(stalls(f->s)->v[0].samples, 31);
  fx_free(f);
}

/* ---- 5: the follower comes late --------------------------------------------- */

static void resolved_late(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  unbound_pod(f, 907, T1);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  bind_late(&f->sc, 907, T1 + 20 * SEC, "demo", 2);
  flush(f->s, &f->sc);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.flagged, 1);
  assert_int_equal(st.resolved, 1);
  assert_int_equal(st.active, 0);

  /* A ReplicaSet update's late Pod create ends its "any next hop" stall. */
  c_deploy(&f->sc, &f->r, 908, T1 + MINUTE, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE + 30 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  assert_string_equal(stalls(f->s)->v[0].en, "");
  c_up(&f->sc, 908, T1 + MINUTE + 40 * SEC, "demo", 1, 1);
  flush(f->s, &f->sc);
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).resolved, 2);

  /* A follower seen before the tick that notices the deadline: flagged and
   * resolved at once, as a replay would count it. */
  unbound_pod(f, 909, T1 + 2 * MINUTE);
  bind_late(&f->sc, 909, T1 + 2 * MINUTE + 6 * SEC, "demo", 2);
  for (; f->sc.fed < f->sc.n; f->sc.fed++) add_span(f->s, &f->sc.v[f->sc.fed]);
  stall_tick(f->s, T1 + 2 * MINUTE + 7 * SEC);
  st = stats(f->s);
  assert_int_equal(st.flagged, 3);
  assert_int_equal(st.resolved, 3);
  assert_int_equal(st.active, 0);
  fx_free(f);
}

/* ---- 6: superseded ---------------------------------------------------------- */

static void superseded(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  /* Deleted by the garbage collector (another change). */
  c_deploy(&f->sc, &f->r, 910, T1, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  put(&f->sc, 5000, T1 + 20 * SEC, "generic-garbage-collector", "delete replicasets", "ReplicaSet",
      "demo", RS, "Deployment/web", "DELETE");
  flush(f->s, &f->sc);
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).superseded, 1);

  /* Written again by an unrelated change, after it stalled. */
  c_deploy(&f->sc, &f->r, 911, T1 + MINUTE, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE + 10 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  c_deploy(&f->sc, &f->r, 912, T1 + MINUTE + 20 * SEC, "demo");
  c_up(&f->sc, 912, T1 + MINUTE + 20 * SEC, "demo", 1, 1);
  flush(f->s, &f->sc);
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).superseded, 2);

  /* ... and before it could stall: never flagged. */
  c_deploy(&f->sc, &f->r, 913, T1 + 2 * MINUTE, "demo");
  c_deploy(&f->sc, &f->r, 914, T1 + 2 * MINUTE + 2 * SEC, "demo");
  c_up(&f->sc, 914, T1 + 2 * MINUTE + 2 * SEC, "demo", 1, 1);
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 3 * MINUTE);
  assert_int_equal(stalls(f->s)->n, 0);
  assert_int_equal(stats(f->s).flagged, 2);

  /* A write of the same object by the same change is a follower, not a rewrite. */
  c_deploy(&f->sc, &f->r, 915, T1 + 4 * MINUTE, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 4 * MINUTE + 10 * SEC);
  assert_int_equal(stalls(f->s)->n, 1);
  put(&f->sc, 915 + CHILD, T1 + 4 * MINUTE + 20 * SEC, "replicaset-controller",
      "update replicasets/status", "ReplicaSet", "demo", RS, "Deployment/web", "UPDATE");
  flush(f->s, &f->sc);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.resolved, 1);
  assert_int_equal(st.superseded, 2);
  fx_free(f);
}

/* ---- 7: a busy cluster ------------------------------------------------------ */

static void busy_cluster(void **state) {
  (void)state;
  fixture_t *f = fx_new(NULL);
  char ns[16];
  /* 2 x 50 cascades, one per namespace, all objects named alike, their spans
   * interleaved within the same second; every third one scales down. */
  for (int wave = 0; wave < 2; wave++)
    for (int i = 0; i < 50; i++) {
      uint64_t k = 100 + (uint64_t)(wave * 50 + i);
      int64_t t = T0 + wave * 20 * SEC + i * 3 * MS;
      snprintf(ns, sizeof ns, "ns-%d", i);
      c_deploy(&f->sc, &f->r, k, t, ns);
      if (i % 3 == 2)
        c_down(&f->sc, k, t, ns, 2);
      else
        c_up(&f->sc, k, t, ns, 3, 3);
    }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  assert_int_equal(m.n, 3);
  const mrow_t *bind = model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(bind);
  assert_int_equal(bind->samples, 2 * 34 * 3);
  assert_true(bind->share > 0.999);
  assert_true(bind->p99 >= 210 * MS && bind->p99 <= 232 * MS); /* no stranger's binding */
  const mrow_t *rs = model_find(&m, "deployment-controller", "update replicasets");
  assert_non_null(rs);
  assert_int_equal(rs->samples, 100);
  assert_true(rs->p99 <= 33 * MS);

  /* A third wave where ns-17's ReplicaSet update is never followed (while an
   * unrelated change creates and binds Pods of the same ReplicaSet there), and
   * ns-34 leaves a Pod unbound (while an unrelated binding of a Pod of the
   * same owner comes). */
  uint64_t stalled_rs = 0, stalled_pod = 0;
  int64_t t3 = T1;
  for (int i = 0; i < 50; i++) {
    uint64_t k = 300 + (uint64_t)i;
    int64_t t = t3 + i * 3 * MS;
    snprintf(ns, sizeof ns, "ns-%d", i);
    uint64_t rsid = c_deploy(&f->sc, &f->r, k, t, ns);
    if (i == 17) {
      stalled_rs = rsid;
      c_up(&f->sc, 7000, t + 100 * MS, ns, 2, 2);
    } else if (i == 34) {
      stalled_pod = c_up(&f->sc, k, t, ns, 3, 2);
      bind_late(&f->sc, 7001, t + 2 * SEC, ns, 0);
    } else if (i % 3 == 2) {
      c_down(&f->sc, k, t, ns, 2);
    } else {
      c_up(&f->sc, k, t, ns, 3, 3);
    }
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, t3 + 2 * MINUTE);
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 2);
  int seen_rs = 0, seen_pod = 0;
  for (size_t i = 0; i < g->n; i++) {
    if (g->v[i].span_id == stalled_rs) {
      seen_rs = 1;
      assert_string_equal(g->v[i].ns, "ns-17");
      assert_string_equal(g->v[i].en, "");
    }
    if (g->v[i].span_id == stalled_pod) {
      seen_pod = 1;
      assert_string_equal(g->v[i].ns, "ns-34");
      assert_string_equal(g->v[i].en, "create pods/binding");
    }
  }
  assert_true(seen_rs && seen_pod);
  assert_int_equal(stats(f->s).flagged, 2);
  fx_free(f);
}

/* ---- 8: bounds -------------------------------------------------------------- */

static void ttl_expiry(void **state) {
  (void)state;
  stall_opts_t o = {.ttl_ns = 10 * MINUTE};
  fixture_t *f = fx_learned(&o);
  unbound_pod(f, 920, T1);
  stall_tick(f->s, T1 + 10 * SEC);
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 1);
  int64_t flagged = g->v[0].flagged;
  stall_tick(f->s, flagged + 10 * MINUTE - 1);
  assert_int_equal(stalls(f->s)->n, 1);
  stall_tick(f->s, flagged + 10 * MINUTE);
  assert_int_equal(stalls(f->s)->n, 0);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.expired, 1);
  assert_int_equal(st.active, 0);
  /* A binding after that changes nothing. */
  bind_late(&f->sc, 920, flagged + 11 * MINUTE, "demo", 2);
  flush(f->s, &f->sc);
  assert_int_equal(stats(f->s).resolved, 0);
  fx_free(f);
}

static void window_bound(void **state) {
  (void)state;
  stall_opts_t o = {.max_window = 100};
  fixture_t *f = fx_new(&o);
  char name[32];
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "cm-%d", i);
    put(&f->sc, 100 + (uint64_t)i, T0 + i * MS, "kubectl", "update configmaps", "ConfigMap", "demo",
        name, "", "UPDATE");
  }
  flush(f->s, &f->sc);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.window, 100);
  assert_int_equal(st.evicted, 200);
  stall_tick(f->s, T1);
  st = stats(f->s);
  assert_int_equal(st.window, 0);
  assert_int_equal(st.matured, 100); /* the evicted ones are not learned from */

  /* One object written 100 times keeps its newest 64. */
  for (int i = 0; i < 100; i++)
    put(&f->sc, 1000 + (uint64_t)i, T1 + i * MS, "kubectl", "update configmaps", "ConfigMap",
        "demo", "hot", "", "UPDATE");
  flush(f->s, &f->sc);
  st = stats(f->s);
  assert_int_equal(st.window, 64);
  assert_int_equal(st.evicted, 200 + 36);
  fx_free(f);
}

static void stalls_bound(void **state) {
  (void)state;
  stall_opts_t o = {.max_stalls = 3};
  fixture_t *f = fx_new(&o);
  char ns[16];
  for (int i = 0; i < 5; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i);
    learn_chain(&f->sc, &f->r, 100 + (uint64_t)i * 100, 20, T0, ns);
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  uint64_t ids[5];
  for (int i = 0; i < 5; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i);
    ids[i] = c_deploy(&f->sc, &f->r, 900 + (uint64_t)i, T1 + i * SEC, ns);
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE);
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(g->v[i].span_id, ids[i + 2]); /* oldest first */
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.flagged, 5);
  assert_int_equal(st.expired, 2);
  assert_int_equal(st.active, 3);
  assert_int_equal(stall_each(f->s, NULL, NULL), 0); /* no callback */
  fx_free(f);
}

static int stop_first(void *ud, const stall_info_t *st) {
  (void)st;
  (*(int *)ud)++;
  return 1;
}

static void kinds_bound(void **state) {
  (void)state;
  stall_opts_t o = {.max_kinds = 4};
  fixture_t *f = fx_new(&o);
  char name[32];
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof name, "update thing%d", i);
    put(&f->sc, 100 + (uint64_t)i, T0 + i * MS, "kubectl", name, "ConfigMap", "demo", name, "",
        "UPDATE");
  }
  flush(f->s, &f->sc);
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.kinds, 4);
  assert_int_equal(st.window, 4);
  fx_free(f);

  /* stall_each's stop. */
  stall_opts_t o2 = {.max_stalls = 3};
  f = fx_learned(&o2);
  unbound_pod(f, 930, T1);
  c_deploy(&f->sc, &f->r, 931, T1 + SEC, "other");
  c_deploy(&f->sc, &f->r, 932, T1 + SEC, "demo");
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE);
  assert_int_equal(stalls(f->s)->n, 3);
  int calls = 0;
  assert_int_equal(stall_each(f->s, stop_first, &calls), 1);
  assert_int_equal(calls, 1);
  fx_free(f);
}

static void bad_options(void **state) {
  (void)state;
  rel_t *r = calloc(1, sizeof *r);
  stall_t *s = NULL;
  stall_opts_t o = {.min_share = 1.5};
  assert_int_equal(stall_new(&o, related_cb, r, &s), RIPPLE_EINVAL);
  o = (stall_opts_t){.multiple = -1};
  assert_int_equal(stall_new(&o, related_cb, r, &s), RIPPLE_EINVAL);
  o = (stall_opts_t){.horizon_ns = -1};
  assert_int_equal(stall_new(&o, related_cb, r, &s), RIPPLE_EINVAL);
  assert_int_equal(stall_new(NULL, NULL, r, &s), RIPPLE_EINVAL);
  assert_null(s);
  assert_int_equal(stall_new(NULL, related_cb, r, &s), RIPPLE_OK);
  stall_span_t empty = {0};
  stall_add(s, &empty); /* no strings at all */
  stall_tick(s, 1);
  assert_int_equal(stats(s).window, 0);
  stall_free(s);
  free(r);
}

/* ---- spans that arrive late ------------------------------------------------- */

static void late_spans(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  /* The ReplicaSet update arrives after the Pod creates it caused, and a
   * create after the binding of its Pod. */
  script_t *sc = &f->sc;
  size_t from = sc->n;
  c_deploy(sc, &f->r, 940, T1, "demo");
  c_up(sc, 940, T1, "demo", 3, 3);
  qsort(sc->v + from, sc->n - from, sizeof sc->v[0], by_end);
  /* admission order: dep, rs, c0, c1, c2, b0, b1, b2 */
  const int order[] = {0, 2, 3, 5, 6, 7, 1, 4};
  for (size_t i = 0; i < 8; i++) add_span(f->s, &sc->v[from + (size_t)order[i]]);
  sc->fed = sc->n;
  stall_tick(f->s, T1 + 10 * MINUTE);
  assert_int_equal(stats(f->s).flagged, 0);
  /* And they were learned as followed. */
  stall_tick(f->s, T1 + 11 * MINUTE);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  const mrow_t *rs = model_find(&m, "deployment-controller", "update replicasets");
  const mrow_t *c = model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(rs);
  assert_non_null(c);
  assert_int_equal(rs->samples, 21);
  assert_true(rs->share > 0.999);
  assert_int_equal(c->samples, 33);
  assert_true(c->share > 0.999);
  fx_free(f);
}

/* ---- what was due before a write matured -------------------------------------- */

static void judged_by_the_model_of_its_time(void **state) {
  (void)state;
  fixture_t *f = fx_new(NULL);
  /* 12 creates, each bound: a create expects its binding. */
  for (int i = 0; i < 4; i++) {
    c_deploy(&f->sc, &f->r, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo");
    c_up(&f->sc, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo", 3, 3);
  }
  flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  /* 3 creates never bound: stalls; once they mature (T1 + 10 min), 12 of 15
   * were bound and a create expects nothing any more. */
  c_deploy(&f->sc, &f->r, 950, T1, "demo");
  c_up(&f->sc, 950, T1, "demo", 3, 0);
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(stats(f->s).flagged, 3);
  /* A create left unbound 10 s before that: its wait runs out while the
   * binding is still expected, though one tick notices both. */
  int64_t t = T1 + 10 * MINUTE - 10 * SEC;
  c_deploy(&f->sc, &f->r, 951, t, "demo");
  uint64_t u = c_up(&f->sc, 951, t, "demo", 3, 2);
  flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 11 * MINUTE);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  assert_null(model_find(&m, "replicaset-controller", "create pods"));
  const got_t *g = stalls(f->s);
  assert_int_equal(g->n, 4);
  assert_int_equal(g->v[3].span_id, u);
  assert_int_equal(g->v[3].flagged, t + 60 * MS + 5 * SEC);
  fx_free(f);
}

/* A span seen live moves the clock to its end, as a replay's tick would; one
 * from a clock far ahead does not. */
static void clock_follows_spans(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  unbound_pod(f, 960, T1);
  int64_t dl = T1 + 60 * MS + 5 * SEC;
  stall_tick(f->s, dl - SEC);
  put(&f->sc, 5001, dl + 2 * SEC, "kubectl", "update configmaps", "ConfigMap", "demo", "cm", "",
      "UPDATE");
  add_span(f->s, &f->sc.v[f->sc.n - 1]);
  assert_int_equal(stats(f->s).flagged, 1);
  put(&f->sc, 5002, dl + 60 * MINUTE, "kubectl", "update configmaps", "ConfigMap", "demo", "cm", "",
      "UPDATE");
  add_span(f->s, &f->sc.v[f->sc.n - 1]);
  f->sc.fed = f->sc.n;
  stall_stats_t st = stats(f->s);
  assert_int_equal(st.matured, 20 * 2 + 10 * 6 + 10 * 2); /* none of T1's yet */
  assert_int_equal(st.active, 1);
  fx_free(f);
}

/* ---- 9: replay agrees with a live run --------------------------------------- */

static uint64_t xs(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545F4914F6CDD1DULL;
}

static void workload(script_t *sc, rel_t *r, uint64_t seed) {
  uint64_t x = seed;
  char ns[16];
  uint64_t other = 50000;
  for (int i = 0; i < 200; i++) {
    uint64_t k = 100 + (uint64_t)i;
    int64_t t = T0 + i * 15 * SEC + (int64_t)(xs(&x) % 5000) * MS;
    snprintf(ns, sizeof ns, "ns-%d", i % 5);
    unsigned p = i < 30 ? 100 : (unsigned)(xs(&x) % 100);
    c_deploy(sc, r, k, t, ns);
    if (p < 4) continue; /* the ReplicaSet update is never followed */
    if (p < 8) {         /* a Pod is never bound */
      c_up(sc, k, t, ns, 3, 2);
    } else if (p < 11) { /* ... until 10 s later */
      c_up(sc, k, t, ns, 3, 2);
      bind_late(sc, k, t + 10 * SEC, ns, 2);
    } else if (p < 17) { /* another change takes over, after or before the wait */
      int64_t at = t + (p < 14 ? 8 : 2) * SEC;
      c_deploy(sc, r, other, at, ns);
      c_up(sc, other++, at, ns, 1, 1);
    } else if (xs(&x) % 3 == 0) {
      c_down(sc, k, t, ns, 2);
    } else {
      c_up(sc, k, t, ns, 3, 3);
    }
  }
  qsort(sc->v, sc->n, sizeof sc->v[0], by_end);
}

static int gst_equal(const gst_t *a, const gst_t *b) {
  return ripple_cpid_equal(&a->cpid, &b->cpid) && a->span_id == b->span_id &&
         !strcmp(a->service, b->service) && !strcmp(a->name, b->name) &&
         !strcmp(a->kind, b->kind) && !strcmp(a->ns, b->ns) && !strcmp(a->obj, b->obj) &&
         !strcmp(a->owner, b->owner) && !strcmp(a->es, b->es) && !strcmp(a->en, b->en) &&
         a->admitted == b->admitted && a->flagged == b->flagged && a->p99 == b->p99 &&
         a->samples == b->samples && a->share == b->share;
}

static int stats_equal(const stall_stats_t *a, const stall_stats_t *b) {
  return a->flagged == b->flagged && a->resolved == b->resolved && a->superseded == b->superseded &&
         a->expired == b->expired && a->evicted == b->evicted && a->matured == b->matured &&
         a->active == b->active && a->window == b->window && a->kinds == b->kinds;
}

static void same_state(stall_t *a, stall_t *b, uint64_t seed) {
  got_t *ga = malloc(sizeof *ga), *gb = malloc(sizeof *gb);
  assert_non_null(ga);
  assert_non_null(gb);
  ga->n = gb->n = 0;
  stall_each(a, collect, ga);
  stall_each(b, collect, gb);
  if (ga->n != gb->n)
    fail_msg("seed %" PRIu64 ": %zu stalls live, %zu replayed", seed, ga->n, gb->n);
  for (size_t i = 0; i < ga->n; i++)
    if (!gst_equal(&ga->v[i], &gb->v[i]))
      fail_msg("seed %" PRIu64 ": stall %zu differs: span %" PRIu64 "/%" PRIu64 ", flagged %" PRId64
               "/%" PRId64 ", p99 %" PRId64 "/%" PRId64
               ", samples %u/%u, share %g/%g, expect %s/%s",
               seed, i, ga->v[i].span_id, gb->v[i].span_id, ga->v[i].flagged, gb->v[i].flagged,
               ga->v[i].p99, gb->v[i].p99, ga->v[i].samples, gb->v[i].samples, ga->v[i].share,
               gb->v[i].share, ga->v[i].en, gb->v[i].en);
  stall_stats_t x = stats(a), y = stats(b);
  if (!stats_equal(&x, &y))
    fail_msg("seed %" PRIu64 ": stats differ: flagged %" PRIu64 "/%" PRIu64 " resolved %" PRIu64
             "/%" PRIu64 " superseded %" PRIu64 "/%" PRIu64 " expired %" PRIu64 "/%" PRIu64
             " matured %" PRIu64 "/%" PRIu64,
             seed, x.flagged, y.flagged, x.resolved, y.resolved, x.superseded, y.superseded,
             x.expired, y.expired, x.matured, y.matured);
  free(ga);
  free(gb);
}

static void replay_matches_live(void **state) {
  (void)state;
  const uint64_t seed = 0x5eed2024;
  stall_opts_t o = {.ttl_ns = 10 * MINUTE};
  fixture_t *live = fx_new(&o), *replay = fx_new(&o);
  workload(&live->sc, &live->r, seed);
  workload(&replay->sc, &replay->r, seed);
  /* Live: spans as they are admitted, the clock ticking every second. */
  int64_t grid = T0;
  for (size_t i = 0; i < live->sc.n; i++) {
    for (; grid <= live->sc.v[i].end; grid += SEC) stall_tick(live->s, grid);
    add_span(live->s, &live->sc.v[i]);
  }
  live->sc.fed = live->sc.n;
  flush(replay->s, &replay->sc);
  int64_t last = live->sc.v[live->sc.n - 1].end;
  stall_tick(live->s, last + 6 * SEC);
  stall_tick(replay->s, last + 6 * SEC);
  same_state(live->s, replay->s, seed);
  stall_stats_t st = stats(live->s);
  if (!st.flagged || !st.resolved || !st.superseded || !st.expired || !st.active)
    fail_msg("seed %" PRIu64 ": the workload did not exercise every end: flagged %" PRIu64
             " resolved %" PRIu64 " superseded %" PRIu64 " expired %" PRIu64 " active %zu",
             seed, st.flagged, st.resolved, st.superseded, st.expired, st.active);
  stall_tick(live->s, last + 2 * 60 * MINUTE);
  stall_tick(replay->s, last + 2 * 60 * MINUTE);
  same_state(live->s, replay->s, seed);
  assert_int_equal(stats(live->s).active, 0);
  assert_int_equal(stats(live->s).window, 0);
  fx_free(live);
  fx_free(replay);
}

/* ---- 10: the model ---------------------------------------------------------- */

static void model_lists_expectations(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  model_t m = {0};
  stall_model(f->s, model_row, &m);
  assert_int_equal(m.n, 3);
  const mrow_t *d = model_find(&m, "kubectl", "update deployments");
  assert_non_null(d);
  assert_string_equal(d->es, "deployment-controller");
  assert_string_equal(d->en, "update replicasets");
  assert_int_equal(d->samples, 20);
  assert_true(d->share > 0.999);
  assert_true(d->p99 >= 20 * MS && d->p99 <= 22 * MS);
  const mrow_t *rs = model_find(&m, "deployment-controller", "update replicasets");
  assert_non_null(rs);
  assert_string_equal(rs->es, "");
  assert_string_equal(rs->en, "");
  assert_int_equal(rs->samples, 20);
  const mrow_t *c = model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(c);
  assert_string_equal(c->es, "default-scheduler");
  assert_string_equal(c->en, "create pods/binding");
  assert_int_equal(c->samples, 30);
  assert_true(c->share > 0.999);
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rs_update_not_followed),
      cmocka_unit_test(pod_never_bound),
      cmocka_unit_test(waits_for_the_longer),
      cmocka_unit_test(too_few_or_too_rare),
      cmocka_unit_test(resolved_late),
      cmocka_unit_test(superseded),
      cmocka_unit_test(busy_cluster),
      cmocka_unit_test(ttl_expiry),
      cmocka_unit_test(window_bound),
      cmocka_unit_test(stalls_bound),
      cmocka_unit_test(kinds_bound),
      cmocka_unit_test(bad_options),
      cmocka_unit_test(late_spans),
      cmocka_unit_test(judged_by_the_model_of_its_time),
      cmocka_unit_test(clock_follows_spans),
      cmocka_unit_test(replay_matches_live),
      cmocka_unit_test(model_lists_expectations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
