/*
 * sim_mergelogs.c - a deterministic simulation of the paper's mergelog
 * experiment (seed 002, section 5.1.2, figure 11), driven through libripple.
 *
 * Scenario: 5 Deployments, each created with 3 replicas; then four times:
 * scale every Deployment to 1, then to 3. For each N in
 * {0,1,2,3,5,10,15,20,30} we count the mergelogs the components emit.
 *
 * The controllers are modelled as the paper instruments them:
 *   kubectl       an update merges the Deployment's context with a new root;
 *   deployment    writes the ReplicaSet because the Deployment changed, and
 *                 the Deployment's status because the ReplicaSet changed;
 *   replicaset    creates Pods (they inherit) or deletes the newest ones, then
 *                 writes its status because of its Pods: once for the new
 *                 replica count and once per Pod that becomes ready, as the
 *                 real controller does; the oldest Pod survives every
 *                 scale-down; the Deployment's status follows each of these;
 *   scheduler     binds a Pod because of that Pod alone: never a merge.
 * kubelet is not instrumented, as in the paper. The random source is seeded,
 * so every run prints the same numbers.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ripple/ripple.h"

#define DEPLOYMENTS 5
#define MAXPODS 8

typedef struct deployment {
  ripple_ctx_t d, rs;
  ripple_ctx_t pod[MAXPODS];
  int npods;
} deployment_t;

typedef struct world {
  uint64_t rng;
  uint64_t roots, merges;
  ripple_tracer_t *kubectl, *deploy, *rs;
} world_t;

static int rnd(void *ud, void *buf, size_t len) {
  world_t *w = ud;
  unsigned char *p = buf;
  for (size_t i = 0; i < len; i++) {
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    p[i] = (unsigned char)(w->rng >> 32);
  }
  return 0;
}

static void count(void *ud, const ripple_mergelog_t *ml) {
  world_t *w = ud;
  if (ml->nsources)
    w->merges++;
  else
    w->roots++;
}

static ripple_tracer_t *tracer(world_t *w, const char *component, uint32_t n) {
  ripple_tracer_opts_t o = {.component = component, .max_ancestors = n, .no_ancestors = n == 0};
  o.sink.mergelog = count;
  o.sink.ud = w;
  o.random = rnd;
  o.hook_ud = w;
  ripple_tracer_t *t = NULL;
  if (ripple_tracer_new(&o, &t) != RIPPLE_OK) return NULL;
  return t;
}

static void merge(ripple_tracer_t *t, ripple_ctx_t *target, const ripple_ctx_t *const *src,
                  size_t n) {
  ripple_ctx_t out;
  if (ripple_merge(t, target, src, n, NULL, &out, NULL) == RIPPLE_OK) *target = out;
}

static void rs_status(world_t *w, deployment_t *x) {
  const ripple_ctx_t *src[MAXPODS];
  for (int i = 0; i < x->npods; i++) src[i] = &x->pod[i];
  merge(w->rs, &x->rs, src, (size_t)x->npods);
}

/* The ReplicaSet controller writes status because of its Pods, and the
 * Deployment controller follows every ReplicaSet status change. */
static void status_writes(world_t *w, deployment_t *x) {
  rs_status(w, x);
  const ripple_ctx_t *src[1] = {&x->rs};
  merge(w->deploy, &x->d, src, 1);
}

/* Everything that follows a change of the Deployment's spec. Status writes
 * follow the real controllers: one when the new replica count is observed,
 * then one per Pod that becomes ready (readyReplicas/availableReplicas). */
static void cascade(world_t *w, deployment_t *x, int replicas) {
  const ripple_ctx_t *src[1] = {&x->d};
  merge(w->deploy, &x->rs, src, 1); /* ReplicaSet spec.replicas */
  int created = 0;
  while (x->npods > replicas) x->npods--; /* newest Pods go first */
  src[0] = &x->rs;
  while (x->npods < replicas) {
    memset(&x->pod[x->npods], 0, sizeof x->pod[0]);
    merge(w->rs, &x->pod[x->npods], src, 1);
    x->npods++;
    created++;
  }
  status_writes(w, x);                                   /* status.replicas */
  for (int i = 0; i < created; i++) status_writes(w, x); /* a Pod became ready */
}

static void update(world_t *w, deployment_t *x, int replicas) {
  ripple_ctx_t root;
  ripple_root(w->kubectl, NULL, &root);
  const ripple_ctx_t *src[1] = {&root};
  merge(w->kubectl, &x->d, src, 1);
  cascade(w, x, replicas);
}

static void run(uint32_t n, uint64_t *roots, uint64_t *merges) {
  world_t w = {.rng = 0x5eed5eed5eedULL};
  w.kubectl = tracer(&w, "kubectl", n);
  w.deploy = tracer(&w, "deployment-controller", n);
  w.rs = tracer(&w, "replicaset-controller", n);
  deployment_t dep[DEPLOYMENTS];
  memset(dep, 0, sizeof dep);
  for (int i = 0; i < DEPLOYMENTS; i++) {
    ripple_root(w.kubectl, NULL, &dep[i].d);
    cascade(&w, &dep[i], 3);
  }
  for (int round = 0; round < 4; round++)
    for (int step = 0; step < 2; step++)
      for (int i = 0; i < DEPLOYMENTS; i++) update(&w, &dep[i], step == 0 ? 1 : 3);
  *roots = w.roots;
  *merges = w.merges;
  ripple_tracer_free(w.kubectl);
  ripple_tracer_free(w.deploy);
  ripple_tracer_free(w.rs);
}

int main(void) {
  static const uint32_t ns[] = {0, 1, 2, 3, 5, 10, 15, 20, 30};
  static const char *paper[] = {"100%", "", "", "", "~25%", "~8%", "floor", "floor", "floor"};
  uint64_t base = 0;
  printf("mergelogs in the paper's scenario (5 Deployments; 4 x (replicas 1, then 3))\n");
  printf("  %3s  %8s  %8s  %10s  %10s  %s\n", "N", "merges", "+roots", "% of N=0", "w/ roots",
         "paper fig. 11");
  uint64_t base_total = 0;
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    uint64_t roots, merges;
    run(ns[i], &roots, &merges);
    if (i == 0) base = merges, base_total = merges + roots;
    uint64_t total = merges + roots;
    printf("  %3u  %8" PRIu64 "  %8" PRIu64 "  %9.1f%%  %9.1f%%  %s\n", ns[i], merges, total,
           100.0 * (double)merges / (double)base,
           100.0 * (double)(merges + roots) / (double)base_total, paper[i]);
  }
  return 0;
}
