/*
 * wh_fixture.h - the webhook engine's unit-test fixture: an engine whose
 * related objects come from a hand-built world of JSON objects (served as
 * text, as the informers serve them, or as trees), AdmissionReview bodies
 * built from their parts, and the answers decoded.
 */
#ifndef RIPPLE_TESTS_WH_FIXTURE_H
#define RIPPLE_TESTS_WH_FIXTURE_H

#include "testutil.h"
#include "wh.h"

#define OBJS_MAX 32
typedef struct world {
  json_t *objs[OBJS_MAX];
  char *text[OBJS_MAX]; /* each object's text as the test wrote it */
  size_t n;
} world_t;

typedef struct fx {
  capture_t *cap;
  world_t world;
  wh_users_t users;
  wh_t *w;
  json_t *answer; /* the last 200 answer */
  char patch[2048];
} fx_t;

/* a.b of o as a string, "" when absent (b may be NULL). */
const char *jstr(const json_t *o, const char *a, const char *b);
void world_add(world_t *w, const char *json);
/* cmocka setups: related objects as text (the program's way) or trees. */
int setup(void **state);
int setup_trees(void **state);
int teardown(void **state);
/* An AdmissionReview from its parts; object/old are JSON text or "null". */
void review(char *buf, size_t cap, const char *op, const char *user, const char *kind,
            const char *resource, const char *sub, const char *ns, const char *name,
            const char *object, const char *old);
/* Post a body; 200 expected. f->patch is the decoded patch ("" if none). */
void post(fx_t *f, const char *body);
const char *warning(fx_t *f);
void fmt(const ripple_cpid_t *id, char *out);
/* A span's attribute, NULL when absent. */
const char *attr(const cap_span_t *s, const char *key);

#define X_CPID "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"
#define S_CPID "0c9d2b1a-1111-4222-8333-444455556666"
#define P_CPID "77aa2b1a-1111-4222-8333-444455556666"

#endif
