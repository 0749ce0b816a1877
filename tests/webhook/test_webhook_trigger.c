/*
 * test_webhook_trigger.c - which sources of a merge caused the write: the
 * trigger a mergelog names (ripple.h), so that a change's own cascade
 * (docs/api.md) holds what it caused and not what later changes did with the
 * context it left on an object.
 *
 * A Deployment scaled twice by a person: each time the Deployment controller
 * updates the ReplicaSet, merging the ReplicaSet's own context (the earlier
 * scale's merge) with the person's new root. The newer change, the person's,
 * is the trigger; the ReplicaSet's context is carried along. Without any
 * admission time known, nothing is named and every source counts.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "wh_fixture.h"

#define DC "system:serviceaccount:kube-system:deployment-controller"
#define SECOND 1000000000LL

static void add_deployment(fx_t *f, int gen, int rv) {
  char d[512];
  snprintf(d, sizeof d,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"resourceVersion\":\"%d\",\"generation\":%d,"
           "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
           rv, gen);
  if (f->world.n == 0)
    world_add(&f->world, d);
  else
    world_set(&f->world, 0, d);
}

/* The ReplicaSet with context cpid (text), at a number of replicas. */
static void rs_text(char *buf, size_t cap, const char *cpid, int replicas) {
  snprintf(buf, cap,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
           "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"ownerReferences\":[{\"apiVersion\":"
           "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","
           "\"controller\":true}],\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;%s\"}},"
           "\"spec\":{\"replicas\":%d}}",
           cpid, replicas);
}

/* A person's scale of the Deployment from replicas to replicas + 1, made
 * from resourceVersion rv (the informer's); its root. */
static ripple_cpid_t person_scales(fx_t *f, int replicas, int rv) {
  char was[256], now[256];
  snprintf(was, sizeof was,
           "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
           "\"dep-uid\",\"resourceVersion\":\"%d\"},\"spec\":{\"replicas\":%d}}",
           rv, replicas);
  snprintf(now, sizeof now,
           "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
           "\"dep-uid\",\"resourceVersion\":\"%d\"},\"spec\":{\"replicas\":%d}}",
           rv, replicas + 1);
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web", now, was);
  return f->cap->sp[f->cap->nsp - 1].cpid;
}

/* The Deployment controller's update of the ReplicaSet (context ctx) to
 * replicas: the mergelog it makes. */
static const cap_mergelog_t *rs_update(fx_t *f, const char *ctx, int replicas) {
  char was[768], now[768];
  rs_text(was, sizeof was, ctx, replicas - 1);
  rs_text(now, sizeof now, ctx, replicas);
  size_t nml = f->cap->nml;
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", now, was);
  assert_int_equal(f->cap->nml, nml + 1);
  return &f->cap->ml[f->cap->nml - 1];
}

static int names(const cap_mergelog_t *ml, const ripple_cpid_t *id) {
  for (size_t i = 0; i < ml->ntrigger; i++)
    if (ripple_cpid_equal(&ml->trigger[i], id)) return 1;
  return 0;
}

static void person_is_the_trigger(void **state) {
  fx_t *f = *state;
  add_deployment(f, 1, 10);
  f->cap->now += SECOND;
  ripple_cpid_t p1 = person_scales(f, 1, 10);
  add_deployment(f, 2, 11);
  f->cap->now += SECOND;
  /* The ReplicaSet's context S: no time known here (admitted before). */
  const cap_mergelog_t *m1 = rs_update(f, S_CPID, 2);
  ripple_cpid_t s, n1 = m1->cpid;
  assert_int_equal(ripple_cpid_parse(S_CPID, strlen(S_CPID), &s), RIPPLE_OK);
  assert_true(mergelog_has_source(m1, &p1) && mergelog_has_source(m1, &s));
  assert_int_equal(m1->ntrigger, 1);
  assert_true(names(m1, &p1));

  /* The second scale: the ReplicaSet now carries N1 (the first merge, admitted
   * a second before), and the person's P2 is newer. */
  f->cap->now += SECOND;
  ripple_cpid_t p2 = person_scales(f, 2, 11);
  add_deployment(f, 3, 12);
  f->cap->now += SECOND;
  char n1s[40];
  fmt(&n1, n1s);
  const cap_mergelog_t *m2 = rs_update(f, n1s, 3);
  assert_true(mergelog_has_source(m2, &p2) && mergelog_has_source(m2, &n1));
  assert_int_equal(m2->ntrigger, 1);
  assert_true(names(m2, &p2));
  assert_false(names(m2, &n1)); /* carried: the first scale does not own the second's */
}

/* No admission time known for any source (a restarted webhook): not named,
 * so every source counts, as for a writer that cannot tell. */
static void unknown_times_name_nothing(void **state) {
  fx_t *f = *state;
  add_deployment(f, 1, 10);
  const cap_mergelog_t *m = rs_update(f, S_CPID, 2);
  ripple_cpid_t x;
  assert_int_equal(ripple_cpid_parse(X_CPID, strlen(X_CPID), &x), RIPPLE_OK);
  assert_true(mergelog_has_source(m, &x));
  assert_int_equal(m->ntrigger, 0);
}

/* A ReplicaSet's status write after its update here: its own context is the
 * write's target and, remembered moments ago, one of its sources, and it is
 * the newest change; a Pod of it carries a root of its own (a write decided
 * as cause unknown while a new decider settled, as after a helm upgrade), so
 * the merge makes a new CPID. Its trigger is the ReplicaSet's context, named
 * once: twice, the trace server refused the whole batch. */
static void own_context_newest(void **state) {
  fx_t *f = *state;
  add_deployment(f, 1, 10);
  f->cap->now += SECOND;
  person_scales(f, 1, 10);
  add_deployment(f, 2, 11);
  f->cap->now += SECOND;
  ripple_cpid_t n1 = rs_update(f, S_CPID, 2)->cpid;
  char n1s[40], rs[768];
  fmt(&n1, n1s);
  rs_text(rs, sizeof rs, n1s, 2);
  world_add(&f->world, rs);
  world_add(
      &f->world,
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-a\","
      "\"namespace\":\"d\",\"uid\":\"pod-a\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
      "\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}],"
      "\"annotations\":{\"cpid.ripple.dev/pod\":\"1;11111111-2222-4333-8444-555555555555\"}}}");
  f->cap->now += SECOND;
  size_t nml = f->cap->nml;
  admit(f, "UPDATE", "system:serviceaccount:kube-system:replicaset-controller", "ReplicaSet",
        "replicasets", "status", "d", "web-1", rs, rs);
  assert_int_equal(f->cap->nml, nml + 1);
  const cap_mergelog_t *m = &f->cap->ml[nml];
  assert_true(mergelog_has_source(m, &n1));
  assert_int_equal(m->ntrigger, 1);
  assert_true(ripple_cpid_equal(&m->trigger[0], &n1));
}

/* The trigger list a mergelog carries names each of its sources at most once
 * and nothing else, whatever the decision handed the sink: the trace server
 * refuses a whole batch for one list that repeats a CPID or names a
 * non-source. The object's own context was also among its sources in the
 * first scale after a helm upgrade on the real node: three mergelogs refused. */
static void trigger_list_valid(void **state) {
  fx_t *f = *state;
  ripple_cpid_t a, b, c;
  assert_int_equal(ripple_cpid_parse(X_CPID, strlen(X_CPID), &a), RIPPLE_OK);
  assert_int_equal(ripple_cpid_parse(S_CPID, strlen(S_CPID), &b), RIPPLE_OK);
  assert_int_equal(ripple_cpid_parse(P_CPID, strlen(P_CPID), &c), RIPPLE_OK);
  ripple_cpid_t src[2] = {a, b}, named[4] = {b, b, c, b};
  ripple_mergelog_t ml = {.cpid = c, .sources = src, .nsources = 2};
  size_t nml = f->cap->nml;
  wh_sink_scope("deployment-controller", 0);
  wh_sink_trigger(named, 4);
  wh_sink_mergelog(f->w, &ml);
  wh_sink_scope(NULL, 0);
  assert_int_equal(f->cap->nml, nml + 1);
  const cap_mergelog_t *m = &f->cap->ml[nml];
  assert_int_equal(m->ntrigger, 1);
  assert_true(ripple_cpid_equal(&m->trigger[0], &b));
  /* A scope's trigger none of whose CPIDs is a source names nothing. */
  wh_sink_scope("deployment-controller", 0);
  wh_sink_trigger(&c, 1);
  wh_sink_mergelog(f->w, &ml);
  wh_sink_scope(NULL, 0);
  assert_int_equal(f->cap->ml[nml + 1].ntrigger, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(person_is_the_trigger, setup, teardown),
      cmocka_unit_test_setup_teardown(unknown_times_name_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(trigger_list_valid, setup, teardown),
      cmocka_unit_test_setup_teardown(own_context_newest, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
