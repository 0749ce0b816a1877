/*
 * stall_fixture.h - what test_stall.c builds its cases from: a lineage of
 * CPIDs (which descends from which), spans fed in admission order as a
 * replay does, synthetic cascades written the way the webhook records them
 * (a Deployment update, the ReplicaSet's, Pods created without names and
 * bound by the scheduler, Pods deleted), and what the detector answers.
 */
#ifndef RIPPLE_TESTS_STALL_FIXTURE_H
#define RIPPLE_TESTS_STALL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define MINUTE (60 * SEC)
#define T0 (1700000000LL * SEC)
#define T1 (T0 + 30 * MINUTE) /* fx_learned's cascades have all matured by then */
#define CHILD 1000000u        /* a cascade's controllers write under cpid k + CHILD */

extern const char *const RS;    /* the ReplicaSet of Deployment web */
extern const char *const RSOWN; /* its owner reference, "ReplicaSet/<name>" */

typedef struct rel {
  uint64_t anc[4096], desc[4096];
  size_t n;
  unsigned long calls;
} rel_t;

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

typedef struct fixture {
  rel_t r;
  script_t sc;
  stall_t *s;
} fixture_t;

/* anc -> desc in the lineage. */
void rel_add(rel_t *r, uint64_t anc, uint64_t desc);
/* The detector's stall_related_fn over a rel_t. */
int rel_related(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc);
/* A span of the script; its id. */
uint64_t sf_put(script_t *sc, uint64_t cpid, int64_t end, const char *svc, const char *name,
                const char *kind, const char *ns, const char *obj, const char *owner,
                const char *op);
/* Spans by end (then id): admission order, for qsort. */
int sf_by_end(const void *a, const void *b);
/* One span into the detector. */
void sf_add_span(stall_t *s, const tspan_t *t);
/* Feeds what was put since the last flush, as a replay does: in admission
 * order, each span after stall_tick(its end). */
void sf_flush(stall_t *s, script_t *sc);
/* A person's update of Deployment web and the deployment controller's update
 * of its ReplicaSet (lineage k -> k + CHILD); the latter's span id. */
uint64_t c_deploy(script_t *sc, rel_t *r, uint64_t k, int64_t t, const char *ns);
/* The name of Pod j of cascade k. */
void c_pod_name(char *buf, size_t cap, uint64_t k, int j);
/* n Pods created without names, the first `bound` bound 200 ms later; the
 * last create's span id. */
uint64_t c_up(script_t *sc, uint64_t k, int64_t t, const char *ns, int n, int bound);
/* Pod j of cascade k bound at t. */
void c_bind_late(script_t *sc, uint64_t k, int64_t t, const char *ns, int j);
/* n Pods of an older rollout deleted. */
void c_down(script_t *sc, uint64_t k, int64_t t, const char *ns, int n);
/* n cascades, one every 20 s from t0: even ones up by 3 Pods, odd ones down by 2. */
void c_learn_chain(script_t *sc, rel_t *r, uint64_t k0, int n, int64_t t0, const char *ns);
/* A stall_each callback appending to a got_t. */
int sf_collect(void *ud, const stall_info_t *st);
/* The current stalls, in a buffer reused by the next call. */
const got_t *sf_stalls(stall_t *s);
/* The detector's counters. */
stall_stats_t sf_stats(stall_t *s);
/* A stall_model callback filling a model_t. */
void sf_model_row(void *ud, const char *service, const char *name, const char *es, const char *en,
                  double share, uint32_t samples, int64_t p99);
/* The row of (svc, name), NULL if none. */
const mrow_t *sf_model_find(const model_t *m, const char *svc, const char *name);
/* A detector over a fresh lineage and script; fx_free ends it. */
fixture_t *fx_new(const stall_opts_t *o);
void fx_free(fixture_t *f);
/* fx_new with the chain learned from 20 cascades in "demo", matured by T1. */
fixture_t *fx_learned(const stall_opts_t *o);

#endif
