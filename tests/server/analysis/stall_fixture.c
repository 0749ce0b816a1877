/*
 * stall_fixture.c - the synthetic cascades and detector readers of
 * test_stall.c (stall_fixture.h).
 */
#include "stall_fixture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

const char *const RS = "web-7d9f8b6c5";
const char *const RSOWN = "ReplicaSet/web-7d9f8b6c5";

/* ---- lineage: (anc, desc) pairs, and equality ------------------------------ */

void rel_add(rel_t *r, uint64_t anc, uint64_t desc) {
  assert_true(r->n < 4096);
  r->anc[r->n] = anc;
  r->desc[r->n++] = desc;
}

int rel_related(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
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

uint64_t sf_put(script_t *sc, uint64_t cpid, int64_t end, const char *svc, const char *name,
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

void sf_add_span(stall_t *s, const tspan_t *t) {
  stall_span_t sp = {
      test_cpid(t->cpid), t->id, t->end - 5 * MS, t->end, t->svc, t->name, t->kind, t->ns, t->obj,
      t->owner,           t->op};
  stall_add(s, &sp);
}

int sf_by_end(const void *a, const void *b) {
  const tspan_t *x = a, *y = b;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Feeds what was put since the last sf_flush, as a replay does: in admission
 * order, each span after stall_tick(its end). */
void sf_flush(stall_t *s, script_t *sc) {
  qsort(sc->v + sc->fed, sc->n - sc->fed, sizeof sc->v[0], sf_by_end);
  for (; sc->fed < sc->n; sc->fed++) {
    stall_tick(s, sc->v[sc->fed].end);
    sf_add_span(s, &sc->v[sc->fed]);
  }
}

/* ---- cascades as the webhook records them ---------------------------------- */

/* A person's `kubectl` update of Deployment web, and the deployment
 * controller's update of its ReplicaSet under a CPID merged from it
 * (lineage k -> k + CHILD). Returns the ReplicaSet update's span id. */
uint64_t c_deploy(script_t *sc, rel_t *r, uint64_t k, int64_t t, const char *ns) {
  rel_add(r, k, k + CHILD);
  sf_put(sc, k, t, "kubectl", "update deployments", "Deployment", ns, "web", "", "UPDATE");
  return sf_put(sc, k + CHILD, t + 20 * MS, "deployment-controller", "update replicasets",
                "ReplicaSet", ns, RS, "Deployment/web", "UPDATE");
}

void c_pod_name(char *buf, size_t cap, uint64_t k, int j) {
  snprintf(buf, cap, "%s-%" PRIu64 "-%d", RS, k, j);
}

/* n Pods created by the ReplicaSet controller (generateName: no name); the
 * first `bound` of them bound by the scheduler 200 ms later. Returns the span
 * id of the last create. */
uint64_t c_up(script_t *sc, uint64_t k, int64_t t, const char *ns, int n, int bound) {
  uint64_t last = 0;
  char pod[48];
  for (int j = 0; j < n; j++) {
    last = sf_put(sc, k + CHILD, t + 50 * MS + j * 5 * MS, "replicaset-controller", "create pods",
                  "Pod", ns, "", RSOWN, "CREATE");
    if (j >= bound) continue;
    c_pod_name(pod, sizeof pod, k, j);
    sf_put(sc, k + CHILD, t + 250 * MS + j * 10 * MS, "default-scheduler", "create pods/binding",
           "Pod", ns, pod, RSOWN, "CREATE");
  }
  return last;
}

void c_bind_late(script_t *sc, uint64_t k, int64_t t, const char *ns, int j) {
  char pod[48];
  c_pod_name(pod, sizeof pod, k, j);
  sf_put(sc, k + CHILD, t, "default-scheduler", "create pods/binding", "Pod", ns, pod, RSOWN,
         "CREATE");
}

/* n Pods of an older rollout deleted by the ReplicaSet controller. */
void c_down(script_t *sc, uint64_t k, int64_t t, const char *ns, int n) {
  char pod[48];
  for (int j = 0; j < n; j++) {
    snprintf(pod, sizeof pod, "%s-old-%" PRIu64 "-%d", RS, k, j);
    sf_put(sc, k + CHILD, t + 50 * MS + j * 5 * MS, "replicaset-controller", "delete pods", "Pod",
           ns, pod, RSOWN, "DELETE");
  }
}

/* n cascades, one every 20 s from t0 in ns, keys k0..: even ones scale up by
 * 3 Pods (all bound), odd ones down by 2. */
void c_learn_chain(script_t *sc, rel_t *r, uint64_t k0, int n, int64_t t0, const char *ns) {
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

int sf_collect(void *ud, const stall_info_t *st) {
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

/* The current sf_stalls, in a buffer reused by the next call. */
const got_t *sf_stalls(stall_t *s) {
  static got_t g;
  g.n = 0;
  size_t n = stall_each(s, sf_collect, &g);
  assert_int_equal(n, g.n);
  return &g;
}

stall_stats_t sf_stats(stall_t *s) {
  stall_stats_t st;
  stall_stats(s, &st);
  return st;
}

void sf_model_row(void *ud, const char *service, const char *name, const char *es, const char *en,
                  double share, uint32_t samples, int64_t p99) {
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

const mrow_t *sf_model_find(const model_t *m, const char *svc, const char *name) {
  for (size_t i = 0; i < m->n; i++)
    if (!strcmp(m->v[i].svc, svc) && !strcmp(m->v[i].name, name)) return &m->v[i];
  return NULL;
}

fixture_t *fx_new(const stall_opts_t *o) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  assert_int_equal(stall_new(o, rel_related, &f->r, &f->s), RIPPLE_OK);
  return f;
}

void fx_free(fixture_t *f) {
  stall_free(f->s);
  free(f);
}

/* The chain learned from 20 cascades in "demo", all matured by T1. */
fixture_t *fx_learned(const stall_opts_t *o) {
  fixture_t *f = fx_new(o);
  c_learn_chain(&f->sc, &f->r, 100, 20, T0, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  assert_int_equal(sf_stats(f->s).active, 0);
  assert_int_equal(sf_stats(f->s).flagged, 0);
  return f;
}
