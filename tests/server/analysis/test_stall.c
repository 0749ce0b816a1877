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

#include "analysis/stall.h"
#include "stall_fixture.h"
#include "testutil.h"

/* ---- 1: a ReplicaSet update nothing followed -------------------------------- */

static void rs_update_not_followed(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  stall_stats_t st = sf_stats(f->s);
  assert_int_equal(st.matured, 20 * 2 + 10 * 6 + 10 * 2);
  assert_int_equal(st.window, 0);
  assert_int_equal(st.kinds, 5);

  uint64_t rs = c_deploy(&f->sc, &f->r, 900, T1, "demo");
  sf_flush(f->s, &f->sc);
  int64_t admitted = T1 + 20 * MS;
  stall_tick(f->s, admitted + 5 * SEC - 1);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_tick(f->s, admitted + 5 * SEC);
  const got_t *g = sf_stalls(f->s);
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
  st = sf_stats(f->s);
  assert_int_equal(st.flagged, 1);
  assert_int_equal(st.active, 1);
  /* Nothing else stalls later on (the Deployment update was followed). */
  stall_tick(f->s, T1 + 20 * MINUTE);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  assert_int_equal(sf_stats(f->s).flagged, 1);
  fx_free(f);
}

/* ---- 2: a Pod created without a name, never bound --------------------------- */

static uint64_t unbound_pod(fixture_t *f, uint64_t k, int64_t t) {
  c_deploy(&f->sc, &f->r, k, t, "demo");
  uint64_t last = c_up(&f->sc, k, t, "demo", 3, 2);
  sf_flush(f->s, &f->sc);
  return last;
}

static void pod_never_bound(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  uint64_t last = unbound_pod(f, 901, T1);
  int64_t created = T1 + 60 * MS; /* the third create */
  stall_tick(f->s, created + 5 * SEC - 1);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_tick(f->s, created + 5 * SEC);
  const got_t *g = sf_stalls(f->s);
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
  stall_model(f->s, sf_model_row, &m);
  const mrow_t *bind = sf_model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(bind);
  int64_t wait = (int64_t)(20.0 * (double)bind->p99);
  assert_true(wait > 4 * SEC);
  unbound_pod(f, 902, T1);
  int64_t created = T1 + 60 * MS;
  stall_tick(f->s, created + wait - 1);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_tick(f->s, created + wait);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  assert_int_equal(sf_stalls(f->s)->v[0].flagged, created + wait);
  fx_free(f);

  /* min_wait is the longer. */
  stall_opts_t o2 = {.multiple = 3, .min_wait_ns = 7 * SEC};
  f = fx_learned(&o2);
  unbound_pod(f, 902, T1);
  stall_tick(f->s, created + 7 * SEC - 1);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_tick(f->s, created + 7 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
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
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  model_t m = {0};
  stall_model(f->s, sf_model_row, &m);
  assert_int_equal(m.n, 0);
  unbound_pod(f, 903, T1);
  c_deploy(&f->sc, &f->r, 904, T1 + MINUTE, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 2 * MINUTE); /* long past the wait, before they mature */
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).flagged, 0);
  fx_free(f);

  /* 10 scale-ups, 4 of them leaving a Pod unbound (26/30 < 0.9): the binding
   * is not expected, though a ReplicaSet update's next hop is. */
  f = fx_new(NULL);
  for (int i = 0; i < 10; i++) {
    c_deploy(&f->sc, &f->r, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo");
    c_up(&f->sc, 100 + (uint64_t)i, T0 + i * 20 * SEC, "demo", 3, i < 4 ? 2 : 3);
  }
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  memset(&m, 0, sizeof m);
  stall_model(f->s, sf_model_row, &m);
  assert_null(sf_model_find(&m, "replicaset-controller", "create pods"));
  assert_non_null(sf_model_find(&m, "deployment-controller", "update replicasets"));
  unbound_pod(f, 905, T1);
  stall_tick(f->s, T1 + 30 * MINUTE);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).flagged, 0);
  fx_free(f);

  /* The same with min_samples above what there is. */
  stall_opts_t o = {.min_samples = 31};
  f = fx_learned(&o);
  unbound_pod(f, 906, T1);
  stall_tick(f->s, T1 + 2 * MINUTE);
  assert_int_equal(sf_stats(f->s).flagged, 0);
  /* Once its 31st binding is learned (the first create of that cascade
   * matured), the Pod left unbound is a stall: it still is unbound. */
  stall_tick(f->s, T1 + 10 * MINUTE + 50 * MS);
  assert_int_equal(sf_stats(f->s).flagged, 1);
  assert_int_equal(sf_stalls(f->s)->v[0].flagged, T1 + 60 * MS + 5 * SEC);
  assert_int_equal(sf_stalls(f->s)->v[0].samples, 31);
  fx_free(f);
}

/* ---- 5: the follower comes late --------------------------------------------- */

static void resolved_late(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  unbound_pod(f, 907, T1);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  c_bind_late(&f->sc, 907, T1 + 20 * SEC, "demo", 2);
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_stats_t st = sf_stats(f->s);
  assert_int_equal(st.flagged, 1);
  assert_int_equal(st.resolved, 1);
  assert_int_equal(st.active, 0);

  /* A ReplicaSet update's late Pod create ends its "any next hop" stall. */
  c_deploy(&f->sc, &f->r, 908, T1 + MINUTE, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE + 30 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  assert_string_equal(sf_stalls(f->s)->v[0].en, "");
  c_up(&f->sc, 908, T1 + MINUTE + 40 * SEC, "demo", 1, 1);
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).resolved, 2);

  /* A follower seen before the tick that notices the deadline: flagged and
   * resolved at once, as a replay would count it. */
  unbound_pod(f, 909, T1 + 2 * MINUTE);
  c_bind_late(&f->sc, 909, T1 + 2 * MINUTE + 6 * SEC, "demo", 2);
  for (; f->sc.fed < f->sc.n; f->sc.fed++) sf_add_span(f->s, &f->sc.v[f->sc.fed]);
  stall_tick(f->s, T1 + 2 * MINUTE + 7 * SEC);
  st = sf_stats(f->s);
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
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  sf_put(&f->sc, 5000, T1 + 20 * SEC, "generic-garbage-collector", "delete replicasets",
         "ReplicaSet", "demo", RS, "Deployment/web", "DELETE");
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).superseded, 1);

  /* Written again by an unrelated change, after it stalled. */
  c_deploy(&f->sc, &f->r, 911, T1 + MINUTE, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE + 10 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  c_deploy(&f->sc, &f->r, 912, T1 + MINUTE + 20 * SEC, "demo");
  c_up(&f->sc, 912, T1 + MINUTE + 20 * SEC, "demo", 1, 1);
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).superseded, 2);

  /* ... and before it could stall: never flagged. */
  c_deploy(&f->sc, &f->r, 913, T1 + 2 * MINUTE, "demo");
  c_deploy(&f->sc, &f->r, 914, T1 + 2 * MINUTE + 2 * SEC, "demo");
  c_up(&f->sc, 914, T1 + 2 * MINUTE + 2 * SEC, "demo", 1, 1);
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 3 * MINUTE);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  assert_int_equal(sf_stats(f->s).flagged, 2);

  /* A write of the same object by the same change is a follower, not a rewrite. */
  c_deploy(&f->sc, &f->r, 915, T1 + 4 * MINUTE, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 4 * MINUTE + 10 * SEC);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  sf_put(&f->sc, 915 + CHILD, T1 + 4 * MINUTE + 20 * SEC, "replicaset-controller",
         "update replicasets/status", "ReplicaSet", "demo", RS, "Deployment/web", "UPDATE");
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_stats_t st = sf_stats(f->s);
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
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  model_t m = {0};
  stall_model(f->s, sf_model_row, &m);
  assert_int_equal(m.n, 3);
  const mrow_t *bind = sf_model_find(&m, "replicaset-controller", "create pods");
  assert_non_null(bind);
  assert_int_equal(bind->samples, 2 * 34 * 3);
  assert_true(bind->share > 0.999);
  assert_true(bind->p99 >= 210 * MS && bind->p99 <= 232 * MS); /* no stranger's binding */
  const mrow_t *rs = sf_model_find(&m, "deployment-controller", "update replicasets");
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
      c_bind_late(&f->sc, 7001, t + 2 * SEC, ns, 0);
    } else if (i % 3 == 2) {
      c_down(&f->sc, k, t, ns, 2);
    } else {
      c_up(&f->sc, k, t, ns, 3, 3);
    }
  }
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, t3 + 2 * MINUTE);
  const got_t *g = sf_stalls(f->s);
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
  assert_int_equal(sf_stats(f->s).flagged, 2);
  fx_free(f);
}

/* ---- 8: bounds -------------------------------------------------------------- */

static void ttl_expiry(void **state) {
  (void)state;
  stall_opts_t o = {.ttl_ns = 10 * MINUTE};
  fixture_t *f = fx_learned(&o);
  unbound_pod(f, 920, T1);
  stall_tick(f->s, T1 + 10 * SEC);
  const got_t *g = sf_stalls(f->s);
  assert_int_equal(g->n, 1);
  int64_t flagged = g->v[0].flagged;
  stall_tick(f->s, flagged + 10 * MINUTE - 1);
  assert_int_equal(sf_stalls(f->s)->n, 1);
  stall_tick(f->s, flagged + 10 * MINUTE);
  assert_int_equal(sf_stalls(f->s)->n, 0);
  stall_stats_t st = sf_stats(f->s);
  assert_int_equal(st.expired, 1);
  assert_int_equal(st.active, 0);
  /* A binding after that changes nothing. */
  c_bind_late(&f->sc, 920, flagged + 11 * MINUTE, "demo", 2);
  sf_flush(f->s, &f->sc);
  assert_int_equal(sf_stats(f->s).resolved, 0);
  fx_free(f);
}

static void window_bound(void **state) {
  (void)state;
  stall_opts_t o = {.max_window = 100};
  fixture_t *f = fx_new(&o);
  char name[32];
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "cm-%d", i);
    sf_put(&f->sc, 100 + (uint64_t)i, T0 + i * MS, "kubectl", "update configmaps", "ConfigMap",
           "demo", name, "", "UPDATE");
  }
  sf_flush(f->s, &f->sc);
  stall_stats_t st = sf_stats(f->s);
  assert_int_equal(st.window, 100);
  assert_int_equal(st.evicted, 200);
  stall_tick(f->s, T1);
  st = sf_stats(f->s);
  assert_int_equal(st.window, 0);
  assert_int_equal(st.matured, 100); /* the evicted ones are not learned from */

  /* One object written 100 times keeps its newest 64. */
  for (int i = 0; i < 100; i++)
    sf_put(&f->sc, 1000 + (uint64_t)i, T1 + i * MS, "kubectl", "update configmaps", "ConfigMap",
           "demo", "hot", "", "UPDATE");
  sf_flush(f->s, &f->sc);
  st = sf_stats(f->s);
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
    c_learn_chain(&f->sc, &f->r, 100 + (uint64_t)i * 100, 20, T0, ns);
  }
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  uint64_t ids[5];
  for (int i = 0; i < 5; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i);
    ids[i] = c_deploy(&f->sc, &f->r, 900 + (uint64_t)i, T1 + i * SEC, ns);
  }
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE);
  const got_t *g = sf_stalls(f->s);
  assert_int_equal(g->n, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(g->v[i].span_id, ids[i + 2]); /* oldest first */
  stall_stats_t st = sf_stats(f->s);
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
    sf_put(&f->sc, 100 + (uint64_t)i, T0 + i * MS, "kubectl", name, "ConfigMap", "demo", name, "",
           "UPDATE");
  }
  sf_flush(f->s, &f->sc);
  stall_stats_t st = sf_stats(f->s);
  assert_int_equal(st.kinds, 4);
  assert_int_equal(st.window, 4);
  fx_free(f);

  /* stall_each's stop. */
  stall_opts_t o2 = {.max_stalls = 3};
  f = fx_learned(&o2);
  unbound_pod(f, 930, T1);
  c_deploy(&f->sc, &f->r, 931, T1 + SEC, "other");
  c_deploy(&f->sc, &f->r, 932, T1 + SEC, "demo");
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + MINUTE);
  assert_int_equal(sf_stalls(f->s)->n, 3);
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
  assert_int_equal(stall_new(&o, rel_related, r, &s), RIPPLE_EINVAL);
  o = (stall_opts_t){.multiple = -1};
  assert_int_equal(stall_new(&o, rel_related, r, &s), RIPPLE_EINVAL);
  o = (stall_opts_t){.horizon_ns = -1};
  assert_int_equal(stall_new(&o, rel_related, r, &s), RIPPLE_EINVAL);
  assert_int_equal(stall_new(NULL, NULL, r, &s), RIPPLE_EINVAL);
  assert_null(s);
  assert_int_equal(stall_new(NULL, rel_related, r, &s), RIPPLE_OK);
  stall_span_t empty = {0};
  stall_add(s, &empty); /* no strings at all */
  stall_tick(s, 1);
  assert_int_equal(sf_stats(s).window, 0);
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
  qsort(sc->v + from, sc->n - from, sizeof sc->v[0], sf_by_end);
  /* admission order: dep, rs, c0, c1, c2, b0, b1, b2 */
  const int order[] = {0, 2, 3, 5, 6, 7, 1, 4};
  for (size_t i = 0; i < 8; i++) sf_add_span(f->s, &sc->v[from + (size_t)order[i]]);
  sc->fed = sc->n;
  stall_tick(f->s, T1 + 10 * MINUTE);
  assert_int_equal(sf_stats(f->s).flagged, 0);
  /* And they were learned as followed. */
  stall_tick(f->s, T1 + 11 * MINUTE);
  model_t m = {0};
  stall_model(f->s, sf_model_row, &m);
  const mrow_t *rs = sf_model_find(&m, "deployment-controller", "update replicasets");
  const mrow_t *c = sf_model_find(&m, "replicaset-controller", "create pods");
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
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1);
  /* 3 creates never bound: stalls; once they mature (T1 + 10 min), 12 of 15
   * were bound and a create expects nothing any more. */
  c_deploy(&f->sc, &f->r, 950, T1, "demo");
  c_up(&f->sc, 950, T1, "demo", 3, 0);
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 10 * SEC);
  assert_int_equal(sf_stats(f->s).flagged, 3);
  /* A create left unbound 10 s before that: its wait runs out while the
   * binding is still expected, though one tick notices both. */
  int64_t t = T1 + 10 * MINUTE - 10 * SEC;
  c_deploy(&f->sc, &f->r, 951, t, "demo");
  uint64_t u = c_up(&f->sc, 951, t, "demo", 3, 2);
  sf_flush(f->s, &f->sc);
  stall_tick(f->s, T1 + 11 * MINUTE);
  model_t m = {0};
  stall_model(f->s, sf_model_row, &m);
  assert_null(sf_model_find(&m, "replicaset-controller", "create pods"));
  const got_t *g = sf_stalls(f->s);
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
  sf_put(&f->sc, 5001, dl + 2 * SEC, "kubectl", "update configmaps", "ConfigMap", "demo", "cm", "",
         "UPDATE");
  sf_add_span(f->s, &f->sc.v[f->sc.n - 1]);
  assert_int_equal(sf_stats(f->s).flagged, 1);
  sf_put(&f->sc, 5002, dl + 60 * MINUTE, "kubectl", "update configmaps", "ConfigMap", "demo", "cm",
         "", "UPDATE");
  sf_add_span(f->s, &f->sc.v[f->sc.n - 1]);
  f->sc.fed = f->sc.n;
  stall_stats_t st = sf_stats(f->s);
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
      c_bind_late(sc, k, t + 10 * SEC, ns, 2);
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
  qsort(sc->v, sc->n, sizeof sc->v[0], sf_by_end);
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
  stall_each(a, sf_collect, ga);
  stall_each(b, sf_collect, gb);
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
  stall_stats_t x = sf_stats(a), y = sf_stats(b);
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
    sf_add_span(live->s, &live->sc.v[i]);
  }
  live->sc.fed = live->sc.n;
  sf_flush(replay->s, &replay->sc);
  int64_t last = live->sc.v[live->sc.n - 1].end;
  stall_tick(live->s, last + 6 * SEC);
  stall_tick(replay->s, last + 6 * SEC);
  same_state(live->s, replay->s, seed);
  stall_stats_t st = sf_stats(live->s);
  if (!st.flagged || !st.resolved || !st.superseded || !st.expired || !st.active)
    fail_msg("seed %" PRIu64 ": the workload did not exercise every end: flagged %" PRIu64
             " resolved %" PRIu64 " superseded %" PRIu64 " expired %" PRIu64 " active %zu",
             seed, st.flagged, st.resolved, st.superseded, st.expired, st.active);
  stall_tick(live->s, last + 2 * 60 * MINUTE);
  stall_tick(replay->s, last + 2 * 60 * MINUTE);
  same_state(live->s, replay->s, seed);
  assert_int_equal(sf_stats(live->s).active, 0);
  assert_int_equal(sf_stats(live->s).window, 0);
  fx_free(live);
  fx_free(replay);
}

/* ---- 10: the model ---------------------------------------------------------- */

static void model_lists_expectations(void **state) {
  (void)state;
  fixture_t *f = fx_learned(NULL);
  model_t m = {0};
  stall_model(f->s, sf_model_row, &m);
  assert_int_equal(m.n, 3);
  const mrow_t *d = sf_model_find(&m, "kubectl", "update deployments");
  assert_non_null(d);
  assert_string_equal(d->es, "deployment-controller");
  assert_string_equal(d->en, "update replicasets");
  assert_int_equal(d->samples, 20);
  assert_true(d->share > 0.999);
  assert_true(d->p99 >= 20 * MS && d->p99 <= 22 * MS);
  const mrow_t *rs = sf_model_find(&m, "deployment-controller", "update replicasets");
  assert_non_null(rs);
  assert_string_equal(rs->es, "");
  assert_string_equal(rs->en, "");
  assert_int_equal(rs->samples, 20);
  const mrow_t *c = sf_model_find(&m, "replicaset-controller", "create pods");
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
