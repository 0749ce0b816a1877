/*
 * wh_fixture.h - the webhook engine's unit-test fixture: an engine whose
 * related objects come from a hand-built world of JSON objects, served
 * through the engine's text lookup (wh.h) as the program's informers serve
 * them, AdmissionReview bodies built from their parts, and the answers
 * decoded.
 */
#ifndef RIPPLE_TESTS_WH_FIXTURE_H
#define RIPPLE_TESTS_WH_FIXTURE_H

#include "testutil.h"
#include "wh.h"

#define OBJS_MAX 32
#define WANTED_MAX 8
typedef struct world {
  char *text[OBJS_MAX]; /* each object's JSON text, as an informer holds it */
  size_t n;
  /* "apiVersion kind" of each kind the engine asked to keep (want), in order */
  char wanted[WANTED_MAX][160];
  size_t nwanted;
} world_t;

typedef struct fx {
  capture_t *cap;
  world_t world;
  wh_users_t users;
  wh_owner_kinds_t owners; /* --owner-kind: the lab operator's RippleApp */
  wh_t *w;
  json_t *answer;     /* the last 200 answer */
  wh_certainty_t how; /* how post() has the engine decide: WH_DECIDER unless a test says */
  char patch[2048];
} fx_t;

/* a.b of o as a string, "" when absent (b may be NULL). */
const char *jstr(const json_t *o, const char *a, const char *b);
/* Add an object (JSON text, checked) to the world; it is found from then on. */
void world_add(world_t *w, const char *json);
/* Object i changed: the lookup serves this text from now on. */
void world_set(world_t *w, size_t i, const char *json);
/* Whether the engine asked to keep "apiVersion kind". */
int world_wanted(const world_t *w, const char *api_version_kind);
/* cmocka setup and teardown of an fx_t. */
int setup(void **state);
/* The same with --traceparent (KEP-5915's annotation, traceparent.c). */
int setup_traceparent(void **state);
/* The same with --context-key-file holding FX_CTX_KEY (ctxmac.h). */
#define FX_CTX_KEY "0123456789abcdef0123456789abcdef-fixture"
int setup_keyed(void **state);
/* The MAC the webhook keyed with FX_CTX_KEY writes beside context val of an
 * object of kind in ns (ctxmac.h). */
void fx_mac_of(const char *kind, const char *ns, const char *val, char *out);
/* Add the ReplicaSet "rs" (uid rs-uid) in ns "d" with context S, signed as
 * the keyed webhook writes it. */
void world_add_signed_rs(fx_t *f);
int teardown(void **state);
/* An AdmissionReview from its parts; object/old are JSON text or "null". */
void review(char *buf, size_t cap, const char *op, const char *user, const char *kind,
            const char *resource, const char *sub, const char *ns, const char *name,
            const char *object, const char *old);
/* Post a body; 200 expected. f->patch is the decoded patch ("" if none). */
void post(fx_t *f, const char *body);
/* review() and post() in one, for a body the test does not change. */
void admit(fx_t *f, const char *op, const char *user, const char *kind, const char *resource,
           const char *sub, const char *ns, const char *name, const char *object, const char *old);
const char *warning(fx_t *f);
void fmt(const ripple_cpid_t *id, char *out);
/* A span's attribute, NULL when absent. */
const char *attr(const cap_span_t *s, const char *key);

#define X_CPID "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"
#define S_CPID "0c9d2b1a-1111-4222-8333-444455556666"
#define P_CPID "77aa2b1a-1111-4222-8333-444455556666"

#endif
