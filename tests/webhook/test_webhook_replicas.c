/*
 * test_webhook_replicas.c - decisions that must not depend on which replica
 * admits a write, nor on a restart (docs/webhook.md, "Several replicas").
 *
 * Two rules, each checked against the relation it would otherwise guess:
 *   - a Deployment whose spec changed since its creation (generation > 1)
 *     and whose latest change this engine does not hold has an annotation
 *     that names its creation only: its ReplicaSet's write gets a root of its
 *     own marked causeUnknown, never the creation's CPID;
 *   - WH_UNCERTAIN (a replica that cannot reach the decider): a controller's
 *     write that would take a context from a related object, a held context
 *     or a remembered deletion gets such a root too; writes that need
 *     nothing but the request (a person's root, a status write keeping the
 *     object's own context, a binding taking its Pod's) are decided as the
 *     decider decides them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_fixture.h"

#define DC "system:serviceaccount:kube-system:deployment-controller"
#define RSC "system:serviceaccount:kube-system:replicaset-controller"

/* A Deployment "web" created with context X_CPID, at a generation. */
static void add_deployment(fx_t *f, int generation) {
  char d[1024];
  snprintf(d, sizeof d,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"generation\":%d,\"annotations\":{"
           "\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
           generation);
  world_add(&f->world, d);
}

static const char *rs_text(void) {
  return "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
         "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
         "\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\",\"controller\":true}],"
         "\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;" S_CPID "\"}}}";
}

static const cap_span_t *last_span(fx_t *f) {
  assert_true(f->cap->nsp > 0);
  return &f->cap->sp[f->cap->nsp - 1];
}

static int span_is(const cap_span_t *s, const char *cpid) {
  char id[40];
  fmt(&s->cpid, id);
  return !strcmp(id, cpid);
}

static uint64_t metric(fx_t *f, const char *name) {
  sbuf_t b;
  sbuf_init(&b);
  wh_gauges_t g = {.decider = -1};
  wh_metrics_write(wh_metrics(f->w), &g, &b);
  const char *p = strstr(b.p, name);
  while (p && (p != b.p && p[-1] != '\n')) p = strstr(p + 1, name);
  unsigned long long v = p ? strtoull(p + strlen(name), NULL, 10) : 0;
  sbuf_free(&b);
  return v;
}

/* Generation 1: the annotation is the creation's context, and the creation
 * is the Deployment's latest change: the ReplicaSet inherits it. */
static void test_unchanged_deployment_inherits(void **state) {
  fx_t *f = *state;
  add_deployment(f, 1);
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs_text(), rs_text());
  const cap_span_t *s = last_span(f);
  assert_null(attr(s, "causeUnknown"));
  assert_false(span_is(s, S_CPID)); /* a merge of the RS's own and the Deployment's */
  ripple_cpid_t x;
  assert_int_equal(ripple_cpid_parse(X_CPID, strlen(X_CPID), &x), RIPPLE_OK);
  assert_true(f->cap->nml >= 1 && mergelog_has_source(&f->cap->ml[f->cap->nml - 1], &x));
}

/* Generation 3 and nothing held (a restart, a new decider): the latest
 * change is unknown here, so the creation's CPID must not be taken. */
static void test_changed_deployment_unknown(void **state) {
  fx_t *f = *state;
  add_deployment(f, 3);
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs_text(), rs_text());
  const cap_span_t *s = last_span(f);
  assert_string_equal(attr(s, "causeUnknown"), "true");
  assert_false(span_is(s, X_CPID));
  assert_false(span_is(s, S_CPID));
  /* The ReplicaSet carries the marked root, so its Pods descend from it. */
  char id[40];
  fmt(&s->cpid, id);
  assert_non_null(strstr(f->patch, id));
  /* A root mergelog of its own: no source. */
  assert_int_equal(f->cap->ml[f->cap->nml - 1].nsources, 0);
  assert_int_equal(metric(f, "ripple_webhook_cause_unknown_total"), 1);
  assert_null(warning(f)); /* not a person's change */
}

/* The change held (this engine admitted the scale, made from the version the
 * informer has at generation 2): the scale's root is the cause of the
 * ReplicaSet's write at generation 3, as always; at generation 4 (another
 * scale nobody here saw) it is not. */
#define DEP_AT(gen, rv)                                                                        \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","        \
  "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"resourceVersion\":\"" rv "\",\"generation\":" gen \
  ",\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}"
static void test_changed_deployment_held(void **state) {
  fx_t *f = *state;
  world_add(&f->world, DEP_AT("2", "10"));
  const char *was =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"uid\":\"dep-uid\",\"resourceVersion\":\"10\"},\"spec\":{\"replicas\":1}}";
  const char *now =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"uid\":\"dep-uid\",\"resourceVersion\":\"10\"},\"spec\":{\"replicas\":2}}";
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web", now, was);
  world_set(&f->world, 0, DEP_AT("3", "11"));
  ripple_cpid_t root = f->cap->sp[0].cpid;
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs_text(), rs_text());
  const cap_span_t *s = last_span(f);
  assert_null(attr(s, "causeUnknown"));
  assert_true(mergelog_has_source(&f->cap->ml[f->cap->nml - 1], &root) ||
              ripple_cpid_equal(&s->cpid, &root));
  assert_int_equal(metric(f, "ripple_webhook_cause_unknown_total"), 0);
  world_set(&f->world, 0, DEP_AT("4", "12"));
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs_text(), rs_text());
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
}

/* A scale made from a version the informer never shows (it lags past the
 * wait): what is held is about a generation not known, so it is taken as
 * behind: cause unknown, never the held root for a later spec. */
static void test_held_generation_unknown(void **state) {
  fx_t *f = *state;
  world_add(&f->world, DEP_AT("2", "10"));
  const char *scale =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":"
      "\"d\",\"uid\":\"dep-uid\",\"resourceVersion\":\"99\"},\"spec\":{"
      "\"replicas\":2}}";
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web", scale, scale);
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs_text(), rs_text());
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
}

/* A Pod created by its ReplicaSet, on a replica that cannot reach the
 * decider: the ReplicaSet's context here may be older than the decider's. */
static void test_uncertain_owner_not_taken(void **state) {
  fx_t *f = *state;
  world_add(&f->world, rs_text());
  f->how = WH_UNCERTAIN;
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-1-\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}",
        "null");
  const cap_span_t *s = last_span(f);
  assert_string_equal(attr(s, "causeUnknown"), "true");
  assert_null(attr(s, "spontaneous"));
  assert_false(span_is(s, S_CPID));
  assert_true(*f->patch); /* the Pod carries the marked root */
  /* The decider takes the owner's. */
  f->how = WH_DECIDER;
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-1-\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}",
        "null");
  assert_true(span_is(last_span(f), S_CPID));
  assert_null(attr(last_span(f), "causeUnknown"));
}

/* Nothing related known on an uncertain replica may be the informers' lag:
 * a create with no source is cause unknown, not spontaneous. */
static void test_uncertain_no_source(void **state) {
  fx_t *f = *state;
  f->how = WH_UNCERTAIN;
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"x-\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"ReplicaSet\",\"name\":\"gone\",\"uid\":\"gone-uid\",\"controller\":true}]}}",
        "null");
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
  assert_null(attr(last_span(f), "spontaneous"));
}

/* What needs nothing but the request is decided as always: a status write
 * keeps the Pod's own context; a person's write is a root with its warning. */
static void test_uncertain_request_only(void **state) {
  fx_t *f = *state;
  f->how = WH_UNCERTAIN;
  const char *pod =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
      "\"namespace\":\"d\",\"uid\":\"p-uid\",\"annotations\":{"
      "\"cpid.ripple.dev/pod\":\"1;" P_CPID "\"}}}";
  admit(f, "UPDATE", "kwok-controller", "Pod", "pods", "status", "d", "p", pod, pod);
  assert_true(span_is(last_span(f), P_CPID));
  assert_null(attr(last_span(f), "causeUnknown"));
  admit(f, "UPDATE", "kubernetes-admin", "Pod", "pods", "", "d", "p", pod, pod);
  assert_non_null(warning(f));
  assert_null(attr(last_span(f), "causeUnknown"));
  assert_int_equal(metric(f, "ripple_webhook_cause_unknown_total"), 0);
}

/* A controller's delete on an uncertain replica: the deletion that caused it
 * may be remembered by the decider only. The object's last CPID is kept as
 * an attribute, never as the cause. */
static void test_uncertain_delete(void **state) {
  fx_t *f = *state;
  const char *pod =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
      "\"namespace\":\"d\",\"uid\":\"p-uid\",\"annotations\":{"
      "\"cpid.ripple.dev/pod\":\"1;" P_CPID "\"}}}";
  f->how = WH_UNCERTAIN;
  admit(f, "DELETE", "system:serviceaccount:kube-system:generic-garbage-collector", "Pod", "pods",
        "", "d", "p", "null", pod);
  const cap_span_t *s = last_span(f);
  assert_string_equal(attr(s, "causeUnknown"), "true");
  assert_string_equal(attr(s, "lastCpid"), P_CPID);
  assert_false(span_is(s, P_CPID));
}

/* A Deployment updated by a controller on an uncertain replica: its held
 * context is the decider's to know; the annotation stays as it was. */
static void test_uncertain_held(void **state) {
  fx_t *f = *state;
  add_deployment(f, 1);
  f->how = WH_UNCERTAIN;
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
      "\"name\":\"web\",\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{"
      "\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}";
  admit(f, "UPDATE", "system:serviceaccount:ops:op", "Deployment", "deployments", "", "d", "web",
        dep, dep);
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
  assert_string_equal(f->patch, ""); /* the annotation is not changed */
}

/* ---- generation stamps (stamp.c) ---- */

static int has_stamp(fx_t *f, const char *kind, const char *gen) {
  char want[160], member[160]; /* an op of its own, or a member of a map added whole */
  snprintf(want, sizeof want, "cpid.ripple.dev~1%s.generation\",\"value\":\"%s\"", kind, gen);
  snprintf(member, sizeof member, "\"cpid.ripple.dev/%s.generation\":\"%s\"", kind, gen);
  return strstr(f->patch, want) != NULL || strstr(f->patch, member) != NULL;
}

/* What is created gets the generation it will have, 1, where a controller
 * acts on generations (workloads, custom resources); a Pod or a ConfigMap
 * does not. */
static void test_stamp_on_create(void **state) {
  fx_t *f = *state;
  admit(f, "CREATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
        "\"namespace\":\"d\"},\"spec\":{\"replicas\":1}}",
        "null");
  assert_true(has_stamp(f, "replicaset", "1"));
  admit(f, "CREATE", "kubernetes-admin", "ConfigMap", "configmaps", "", "d", "c",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        "\"namespace\":\"d\"}}",
        "null");
  assert_true(*f->patch);
  assert_null(strstr(f->patch, ".generation"));
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"p-\","
        "\"namespace\":\"d\"}}",
        "null");
  assert_null(strstr(f->patch, ".generation"));
  char body[8192];
  review(body, sizeof body, "CREATE", "kubernetes-admin", "RippleApp", "rippleapps", "", "d", "a",
         "{\"apiVersion\":\"lab.ripple.dev/v1\",\"kind\":\"RippleApp\",\"metadata\":{"
         "\"name\":\"a\",\"namespace\":\"d\"},\"spec\":{}}",
         "null");
  /* review() names the core group; a custom resource's is its own. */
  const char *core = "\"resource\":{\"group\":\"\"";
  char *g = strstr(body, core);
  assert_non_null(g);
  char fixed[8300];
  snprintf(fixed, sizeof fixed, "%.*s\"resource\":{\"group\":\"lab.ripple.dev\"%s", (int)(g - body),
           body, g + strlen(core));
  post(f, fixed);
  assert_true(has_stamp(f, "rippleapp", "1"));
}

/* An update that changes spec: the next generation; one that changes only
 * metadata, or a status write: the stamp stays (and is not written again). */
static void test_stamp_on_update(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
            "\"name\":\"web\",\"namespace\":\"d\",\"uid\":\"dep-uid\",\"generation\":1,"
            "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}");
#define RS_GEN(gen, replicas, label)                                                               \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","          \
  "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":" gen ",\"labels\":{\"l\":\"" label       \
  "\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\"," \
  "\"uid\":\"dep-uid\",\"controller\":true}],\"annotations\":{\"cpid.ripple.dev/replicaset\":"     \
  "\"1;" S_CPID                                                                                    \
  "\",\"cpid.ripple.dev/replicaset.generation\":\"3\"}},\"spec\":{\"replicas\":" replicas "}}"
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", RS_GEN("3", "2", "a"),
        RS_GEN("3", "1", "a"));
  assert_true(has_stamp(f, "replicaset", "4"));
  assert_null(attr(last_span(f), "causeUnknown"));
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", RS_GEN("3", "1", "b"),
        RS_GEN("3", "1", "a"));
  assert_null(strstr(f->patch, ".generation"));
  admit(f, "UPDATE", RSC, "ReplicaSet", "replicasets", "status", "d", "web-1",
        RS_GEN("3", "1", "a"), RS_GEN("3", "1", "a"));
  assert_null(strstr(f->patch, ".generation"));
  assert_null(attr(last_span(f), "causeUnknown"));
}

/* A ReplicaSet scaled while no replica answered: generation 2, its context
 * stamped 1. Its Pods' creates must not take that older context; once the
 * stamp is current, they do. */
static void test_stale_owner(void **state) {
  fx_t *f = *state;
#define RS_STAMP(gen, stamp)                                                              \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\"," \
  "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":" gen                            \
  ",\"annotations\":{"                                                                    \
  "\"cpid.ripple.dev/replicaset\":\"1;" S_CPID                                            \
  "\",\"cpid.ripple.dev/replicaset.generation\":\"" stamp "\"}}}"
  world_add(&f->world, RS_STAMP("2", "1"));
  const char *pod =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":"
      "\"web-1-\",\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":"
      "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\","
      "\"controller\":true}]}}";
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "", pod, "null");
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
  assert_false(span_is(last_span(f), S_CPID));
  world_set(&f->world, 0, RS_STAMP("2", "2"));
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "", pod, "null");
  assert_true(span_is(last_span(f), S_CPID));
  /* A graceful delete adds one to the generation: not a change of spec. */
  world_set(&f->world, 0,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
            "\"web-1\",\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":3,"
            "\"deletionTimestamp\":\"2026-11-27T00:00:00Z\",\"annotations\":{"
            "\"cpid.ripple.dev/replicaset\":\"1;" S_CPID
            "\",\"cpid.ripple.dev/replicaset."
            "generation\":\"2\"}}}");
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "", pod, "null");
  assert_true(span_is(last_span(f), S_CPID));
}

/* The write's own object is stale (its scale went unanswered): its status
 * write gets a marked root, and the stamp is brought up to date with it, so
 * that what follows descends from the marked root. */
static void test_stale_target(void **state) {
  fx_t *f = *state;
  admit(f, "UPDATE", RSC, "ReplicaSet", "replicasets", "status", "d", "web-1", RS_STAMP("2", "1"),
        RS_STAMP("2", "1"));
  const cap_span_t *s = last_span(f);
  assert_string_equal(attr(s, "causeUnknown"), "true");
  char id[40];
  fmt(&s->cpid, id);
  assert_non_null(strstr(f->patch, id));
  assert_true(has_stamp(f, "replicaset", "2"));
  /* Written before stamps: a StatefulSet at generation 5 is taken as it is
   * (nothing tells), a Deployment past its creation is not. */
  const char *sts =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{"
      "\"name\":\"db\",\"namespace\":\"d\",\"uid\":\"db-uid\",\"generation\":5,"
      "\"annotations\":{\"cpid.ripple.dev/statefulset\":\"1;" P_CPID "\"}}}";
  admit(f, "UPDATE", "system:serviceaccount:kube-system:statefulset-controller", "StatefulSet",
        "statefulsets", "status", "d", "db", sts, sts);
  assert_null(attr(last_span(f), "causeUnknown"));
  assert_true(span_is(last_span(f), P_CPID));
}

/* The first scale after a `helm upgrade` of the webhook (issue 29's bug):
 * the guard kept the webhook off while the ReplicaSet was scaled twice
 * (generation 12, its context stamped 10), then a person's scale is held
 * here. The Deployment controller's update of that stale ReplicaSet follows
 * from the held change, known current by its generation: it descends from
 * it (the ReplicaSet's older context merged as what it was before), not a
 * root marked causeUnknown; and the stamp becomes current. The same stale
 * ReplicaSet's update with no known owner change, and its status write,
 * stay marked. */
#define RS_STALE(replicas)                                                                         \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","          \
  "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":12,\"ownerReferences\":[{\"apiVersion\":" \
  "\"apps/"                                                                                        \
  "v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\",\"controller\":true}],"       \
  "\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;" S_CPID                                    \
  "\",\"cpid.ripple.dev/replicaset.generation\":\"10\"}},\"spec\":{\"replicas\":" replicas "}}"
static void test_stale_target_owner_held(void **state) {
  fx_t *f = *state;
  /* Without a known change of its owner (the Deployment's annotation names
   * its creation; generation 3): cause unknown, as before. */
  add_deployment(f, 3);
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", RS_STALE("3"),
        RS_STALE("2"));
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
  /* A person's scale, held here, about the Deployment's generation 4. */
  world_set(&f->world, 0, DEP_AT("3", "10"));
  const char *was =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"uid\":\"dep-uid\",\"resourceVersion\":\"10\"},\"spec\":{\"replicas\":2}}";
  const char *now =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"uid\":\"dep-uid\",\"resourceVersion\":\"10\"},\"spec\":{\"replicas\":3}}";
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web", now, was);
  ripple_cpid_t person = last_span(f)->cpid;
  world_set(&f->world, 0, DEP_AT("4", "11"));
  size_t nml = f->cap->nml;
  admit(f, "UPDATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", RS_STALE("3"),
        RS_STALE("2"));
  const cap_span_t *s = last_span(f);
  assert_null(attr(s, "causeUnknown"));
  assert_true(f->cap->nml == nml + 1);
  const cap_mergelog_t *ml = &f->cap->ml[f->cap->nml - 1];
  ripple_cpid_t older;
  assert_int_equal(ripple_cpid_parse(S_CPID, strlen(S_CPID), &older), RIPPLE_OK);
  assert_true(ripple_cpid_equal(&ml->cpid, &s->cpid));
  assert_true(mergelog_has_source(ml, &person));
  assert_true(mergelog_has_source(ml, &older));
  assert_true(has_stamp(f, "replicaset", "13"));
  /* Its status write reports on the scales nobody answered: still marked. */
  admit(f, "UPDATE", RSC, "ReplicaSet", "replicasets", "status", "d", "web-1", RS_STALE("2"),
        RS_STALE("2"));
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
}

/* The hole the hung-replica lab test found: this engine created the
 * ReplicaSet moments ago (its recent memory has the create's context), then
 * the ReplicaSet's scale went to a replica that never answered and was let
 * through unannotated (generation 2). The Pods that scale makes must not take
 * the create's context from memory. */
static void test_recent_memory_behind(void **state) {
  fx_t *f = *state;
  const char *rs1 =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
      "\"web-1\",\"namespace\":\"d\"},\"spec\":{\"replicas\":1}}";
  admit(f, "CREATE", DC, "ReplicaSet", "replicasets", "", "d", "web-1", rs1, "null");
  ripple_cpid_t created = last_span(f)->cpid;
  const char *pod =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":"
      "\"web-1-\",\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":"
      "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\","
      "\"controller\":true}]}}";
  /* The informer has it at generation 1: memory is its latest. */
  char rs[1024], id[40];
  fmt(&created, id);
  snprintf(rs, sizeof rs,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
           "\"web-1\",\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":%d,"
           "\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;%s\","
           "\"cpid.ripple.dev/replicaset.generation\":\"1\"}}}",
           1, id);
  world_add(&f->world, rs);
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "", pod, "null");
  assert_true(ripple_cpid_equal(&last_span(f)->cpid, &created));
  /* Then at generation 2, a scale nobody answered. */
  snprintf(rs, sizeof rs,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
           "\"web-1\",\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":%d,"
           "\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;%s\","
           "\"cpid.ripple.dev/replicaset.generation\":\"1\"}}}",
           2, id);
  world_set(&f->world, 0, rs);
  admit(f, "CREATE", RSC, "Pod", "pods", "", "d", "", pod, "null");
  assert_string_equal(attr(last_span(f), "causeUnknown"), "true");
  assert_false(ripple_cpid_equal(&last_span(f)->cpid, &created));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unchanged_deployment_inherits, setup, teardown),
      cmocka_unit_test_setup_teardown(test_changed_deployment_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(test_changed_deployment_held, setup, teardown),
      cmocka_unit_test_setup_teardown(test_held_generation_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uncertain_owner_not_taken, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uncertain_no_source, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uncertain_request_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uncertain_delete, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uncertain_held, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stamp_on_create, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stamp_on_update, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_owner, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_target, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_target_owner_held, setup, teardown),
      cmocka_unit_test_setup_teardown(test_recent_memory_behind, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
