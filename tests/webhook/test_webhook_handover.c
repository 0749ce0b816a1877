/*
 * test_webhook_handover.c - a decider's memory handed to the next one
 * (handover.h, memo.h's export and import), and the peer token that guards it.
 *
 * What must hold: what is exported is taken back exactly (context, the
 * generation a held context is about, the admission time); an import never
 * replaces what the importer knows more recently; entries past their time,
 * malformed ones and texts that are not an export are not taken; a
 * Namespace's deletion (keyed by its name, which memory does not keep) stays
 * behind rather than being keyed wrongly. The token is the same for one key
 * and nothing alike for another.
 */
#include <stdio.h>
#include <string.h>

#include "handover.h"
#include "memo.h"
#include "testutil.h"

#define NS 1000000000LL
#define NOW (1800000000LL * NS)

static wh_memo_t *memo(void) {
  wh_memo_opts_t o = {.causes = 64,
                      .recent = 64,
                      .held = 64,
                      .deleting = 64,
                      .recent_ttl_ns = 5 * NS,
                      .held_ttl_ns = 3600 * NS,
                      .deleting_ttl_ns = 600 * NS};
  wh_memo_t *m = NULL;
  assert_int_equal(wh_memo_new(&o, &m), RIPPLE_OK);
  return m;
}

static ripple_ctx_t ctx_of(const char *s) {
  ripple_ctx_t c;
  assert_int_equal(ripple_ctx_decode(s, strlen(s), RIPPLE_ANC_MAX, &c), RIPPLE_OK);
  return c;
}

#define C1 "1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60;0c9d2b1a-1111-4222-8333-444455556666"
#define C2 "1;77aa2b1a-1111-4222-8333-444455556666"
#define C3 "1;0c9d2b1a-1111-4222-8333-444455556666"

static void round_trip(void **state) {
  (void)state;
  wh_memo_t *a = memo(), *b = memo();
  ripple_ctx_t c1 = ctx_of(C1), c2 = ctx_of(C2), got;
  wh_memo_held_put(a, "dep-uid", &c1, 7, NOW - 10 * NS);
  wh_memo_deleting_put(a, "Deployment", "web", "gone-uid", &c2, NOW - 5 * NS);
  wh_memo_cause_put(a, &c1.cpid, NOW - 20 * NS);
  sbuf_t x;
  sbuf_init(&x);
  assert_int_equal(wh_memo_export(a, NOW, 600 * NS, &x), RIPPLE_OK);
  size_t n = 0;
  assert_int_equal(wh_memo_import(b, x.p, x.len, RIPPLE_ANC_MAX, NOW, &n), RIPPLE_OK);
  assert_int_equal(n, 3); /* held, one deletion, one cause */
  int64_t gen = 0;
  assert_int_equal(wh_memo_held_get(b, "dep-uid", NOW, &got, &gen), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&got, &c1));
  assert_int_equal(gen, 7);
  assert_int_equal(wh_memo_deleting_get(b, "Pod", "x", "gone-uid", NOW, &got), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&got, &c2));
  assert_int_equal(wh_memo_cause_get(b, &c1.cpid), NOW - 20 * NS);
  /* The held entry keeps its age: it ends when it would have ended. */
  assert_int_equal(wh_memo_held_get(b, "dep-uid", NOW + 3591 * NS, &got, NULL), RIPPLE_ENOENT);
  sbuf_free(&x);
  wh_memo_free(a);
  wh_memo_free(b);
}

/* A Namespace's deletion is remembered by the namespace's name, which memory
 * does not keep: it stays behind rather than being keyed wrongly. (In a memory
 * of its own: the tables are direct-mapped, and two entries of one table may
 * share a slot, one replacing the other.) */
static void namespace_stays(void **state) {
  (void)state;
  wh_memo_t *a = memo(), *b = memo();
  ripple_ctx_t c2 = ctx_of(C2), got;
  wh_memo_deleting_put(a, "Namespace", "ns1", "ns-uid", &c2, NOW - 5 * NS);
  assert_int_equal(wh_memo_deleting_get(a, "Namespace", "ns1", NULL, NOW, &got), RIPPLE_OK);
  sbuf_t x;
  sbuf_init(&x);
  assert_int_equal(wh_memo_export(a, NOW, 600 * NS, &x), RIPPLE_OK);
  size_t n = 99;
  assert_int_equal(wh_memo_import(b, x.p, x.len, RIPPLE_ANC_MAX, NOW, &n), RIPPLE_OK);
  assert_int_equal(n, 0);
  assert_int_equal(wh_memo_deleting_get(b, "Namespace", "ns1", NULL, NOW, &got), RIPPLE_ENOENT);
  sbuf_free(&x);
  wh_memo_free(a);
  wh_memo_free(b);
}

static void newer_kept(void **state) {
  (void)state;
  wh_memo_t *a = memo(), *b = memo();
  ripple_ctx_t c1 = ctx_of(C1), c3 = ctx_of(C3), got;
  wh_memo_held_put(a, "dep-uid", &c1, 2, NOW - 10 * NS);
  wh_memo_held_put(b, "dep-uid", &c3, 3, NOW - 1 * NS); /* the importer's own, newer */
  sbuf_t x;
  sbuf_init(&x);
  assert_int_equal(wh_memo_export(a, NOW, 600 * NS, &x), RIPPLE_OK);
  assert_int_equal(wh_memo_import(b, x.p, x.len, RIPPLE_ANC_MAX, NOW, NULL), RIPPLE_OK);
  int64_t gen = 0;
  assert_int_equal(wh_memo_held_get(b, "dep-uid", NOW, &got, &gen), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&got, &c3));
  assert_int_equal(gen, 3);
  sbuf_free(&x);
  wh_memo_free(a);
  wh_memo_free(b);
}

static void bad_imports(void **state) {
  (void)state;
  wh_memo_t *b = memo();
  ripple_ctx_t got;
  const char *not_exports[] = {"", "[]", "{\"v\":2,\"held\":[],\"deleting\":[],\"causes\":[]}",
                               "{\"v\":1,\"held\":{},\"deleting\":[],\"causes\":[]}",
                               "{\"v\":1,\"v\":1,\"held\":[],\"deleting\":[],\"causes\":[]}"};
  for (size_t i = 0; i < sizeof not_exports / sizeof not_exports[0]; i++)
    assert_int_equal(wh_memo_import(b, not_exports[i], strlen(not_exports[i]), 10, NOW, NULL),
                     RIPPLE_EJSON);
  char doc[2048];
  snprintf(doc, sizeof doc,
           "{\"v\":1,\"held\":[{\"u\":\"a\",\"c\":\"garbage\",\"g\":1,\"t\":%lld},"
           "{\"u\":\"b\",\"c\":\"" C2
           "\",\"g\":\"1\",\"t\":%lld},"
           "{\"u\":\"c\",\"c\":\"" C2
           "\",\"g\":1,\"t\":%lld},"
           "{\"u\":\"d\",\"c\":\"" C2
           "\",\"g\":-1,\"t\":%lld},"
           "{\"u\":\"\",\"c\":\"" C2
           "\",\"g\":1,\"t\":%lld},"
           "{\"u\":\"ok\",\"c\":\"" C2
           "\",\"g\":1,\"t\":%lld}],"
           "\"deleting\":[7],\"causes\":[[\"no-cpid\",1],[1,2],\"x\"]}",
           (long long)(NOW - NS), (long long)(NOW - NS), (long long)(NOW + 60 * NS),
           (long long)(NOW - NS), (long long)(NOW - NS), (long long)(NOW - NS));
  size_t n = 99;
  assert_int_equal(wh_memo_import(b, doc, strlen(doc), 10, NOW, &n), RIPPLE_OK);
  assert_int_equal(n, 1); /* only "ok": a bad context, a bad generation, one from the
                           * future, a negative generation, no uid are not taken */
  assert_int_equal(wh_memo_held_get(b, "ok", NOW, &got, NULL), RIPPLE_OK);
  assert_int_equal(wh_memo_held_get(b, "c", NOW, &got, NULL), RIPPLE_ENOENT);
  wh_memo_free(b);
}

static void peer_token(void **state) {
  (void)state;
  char a[WH_PEER_TOKEN_LEN + 1], b[WH_PEER_TOKEN_LEN + 1], c[WH_PEER_TOKEN_LEN + 1];
  assert_int_equal(wh_peer_token("-----BEGIN PRIVATE KEY-----\nAAAA\n", a), RIPPLE_OK);
  assert_int_equal(wh_peer_token("-----BEGIN PRIVATE KEY-----\nAAAA\n", b), RIPPLE_OK);
  assert_int_equal(wh_peer_token("-----BEGIN PRIVATE KEY-----\nAAAB\n", c), RIPPLE_OK);
  assert_int_equal(strlen(a), WH_PEER_TOKEN_LEN);
  assert_string_equal(a, b);
  assert_string_not_equal(a, c);
  assert_true(wh_peer_token_ok(a, b));
  assert_false(wh_peer_token_ok(a, c));
  assert_false(wh_peer_token_ok(a, NULL));
  assert_false(wh_peer_token_ok(a, ""));
  b[WH_PEER_TOKEN_LEN - 1] = '\0';
  assert_false(wh_peer_token_ok(a, b)); /* a prefix is not the token */
  assert_int_equal(wh_peer_token(NULL, a), RIPPLE_ESYS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip), cmocka_unit_test(namespace_stays),
      cmocka_unit_test(newer_kept), cmocka_unit_test(bad_imports),
      cmocka_unit_test(peer_token),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
