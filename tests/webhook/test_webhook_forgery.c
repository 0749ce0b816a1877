/*
 * test_webhook_forgery.c - contexts the webhook did not issue never join or
 * fake someone else's trace (webhook/ctxmac.h, decide.c, sources.c): a
 * person's CPID only while it is new, a controller's own context only from
 * a --trusted-writer, a stored context only with its MAC. The engine in
 * process, no cluster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxmac.h"
#include "ripplex/sbuf.h"
#include "wh_fixture.h"

#define RS_SA "system:serviceaccount:kube-system:replicaset-controller"
#define EVIL_SA "system:serviceaccount:tenant:app"
#define OP_SA "system:serviceaccount:ops:operator"
#define Y_CPID "5e5e5e5e-1111-4222-8333-444455556666"
#define REFUSED(f, why) atomic_load(&wh_metrics((f)->w)->ctx_refused[why])

/* A Pod "name" in ns "d"; ann: its annotations' members as JSON text ("" none). */
static void pod(char *buf, size_t cap, const char *name, const char *uid, const char *ann) {
  snprintf(buf, cap,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
           "\"d\"%s%s%s,\"annotations\":{%s}},\"spec\":{\"x\":1}}",
           name, *uid ? ",\"uid\":\"" : "", uid, *uid ? "\"" : "", ann);
}

static const char *span_cpid(fx_t *f, size_t i, char *id) {
  assert_true(i < f->cap->nsp);
  fmt(&f->cap->sp[i].cpid, id);
  return id;
}

/* ---- people's CPIDs ---------------------------------------------------------- */

/* A person's write that sets a CPID the webhook issued to another object's
 * change gets a fresh root; the same CPID again on the same object (a
 * conflict's retry) keeps it, and so does the same person's next object
 * (kubectl ripple apply: one change over a file). */
static void test_person_cpid_in_use(void **state) {
  fx_t *f = *state;
  char obj[1024], id[40];
  pod(obj, sizeof obj, "a", "", "\"cpid.ripple.dev/pod\":\"1;" X_CPID "\"");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "a", obj, "null");
  assert_string_equal(span_cpid(f, 0, id), X_CPID); /* new: hers */
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 0);
  /* The conflict's retry: admitted again. */
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "a", obj, "null");
  assert_string_equal(span_cpid(f, 1, id), X_CPID);
  assert_int_equal(f->cap->nml, 1); /* one root mergelog */
  /* Her next object of the same change. */
  pod(obj, sizeof obj, "b", "", "\"cpid.ripple.dev/pod\":\"1;" X_CPID "\"");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "b", obj, "null");
  assert_string_equal(span_cpid(f, 2, id), X_CPID);
  /* Mallory names Alice's CPID on an object of his: a root of his own. */
  pod(obj, sizeof obj, "m", "", "\"cpid.ripple.dev/pod\":\"1;" X_CPID "\"");
  admit(f, "CREATE", "mallory", "Pod", "pods", "", "d", "m", obj, "null");
  assert_string_not_equal(span_cpid(f, 3, id), X_CPID);
  assert_non_null(strstr(warning(f), id)); /* a person's root, told to him */
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 1);
  assert_null(strstr(f->patch, X_CPID)); /* the object gets the fresh one */
  assert_non_null(strstr(f->patch, id));
  /* A CPID a controller's merge made (no one's root): nobody's to set. */
  world_add_signed_rs(f); /* as the webhook wrote it (with a key) */
  char created[1024];
  snprintf(created, sizeof created,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"rs-\","
           "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
           "\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":true}]}}");
  admit(f, "CREATE", RS_SA, "Pod", "pods", "", "d", "", created, "null");
  assert_string_equal(span_cpid(f, 4, id), S_CPID); /* reused: now admitted here */
  pod(obj, sizeof obj, "c", "", "\"cpid.ripple.dev/pod\":\"1;" S_CPID "\"");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "c", obj, "null");
  assert_string_not_equal(span_cpid(f, 5, id), S_CPID);
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 2);
}

/* An update's retry on a conflict, and kubectl ripple delete's patch before
 * its DELETE: the CPID given to this very object moments ago. */
static void test_person_retry_same_object(void **state) {
  fx_t *f = *state;
  char old[1024], now[1024], id[40];
  pod(old, sizeof old, "p", "p-uid", "\"cpid.ripple.dev/pod\":\"1;" S_CPID "\"");
  pod(now, sizeof now, "p", "p-uid", "\"cpid.ripple.dev/pod\":\"1;" Y_CPID "\"");
  for (int i = 0; i < 3; i++) {
    admit(f, "UPDATE", "kubernetes-admin", "Pod", "pods", "", "d", "p", now, old);
    assert_string_equal(span_cpid(f, (size_t)i, id), Y_CPID);
    assert_string_equal(warning(f), "ripple: cpid " Y_CPID);
  }
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 0);
  /* Another person, same object, same CPID: not his. Forgotten claims and
   * memories aside, the recent memory of the object still lets it through
   * for 5 s (a retry's window); later it is refused. */
  f->cap->now += 10 * 1000000000LL;
  admit(f, "UPDATE", "bob", "Pod", "pods", "", "d", "p", now, old);
  assert_string_not_equal(span_cpid(f, 3, id), Y_CPID);
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 1);
}

/* ---- controllers' own contexts ------------------------------------------------ */

/* A ServiceAccount that writes a context with forged ancestors on its own
 * object: ignored (decided as for any controller) and counted; the context
 * it set is replaced. A --trusted-writer's is merged. */
static void test_untrusted_writer(void **state) {
  fx_t *f = *state;
  char obj[1024], id[40];
  /* Ancestors naming someone else's change, on a Pod nothing is related to. */
  pod(obj, sizeof obj, "w", "", "\"cpid.ripple.dev/pod\":\"1;" Y_CPID ";" X_CPID "\"");
  admit(f, "CREATE", EVIL_SA, "Pod", "pods", "", "d", "w", obj, "null");
  assert_int_equal(REFUSED(f, WH_CTX_UNTRUSTED_WRITER), 1);
  span_cpid(f, 0, id);
  assert_string_not_equal(id, Y_CPID);
  assert_non_null(attr(&f->cap->sp[0], "spontaneous"));
  assert_null(strstr(f->patch, X_CPID));
  assert_null(strstr(f->patch, Y_CPID));
  for (size_t i = 0; i < f->cap->nml; i++) { /* no lineage claims X */
    char s[40];
    for (size_t k = 0; k < f->cap->ml[i].nsources; k++) {
      fmt(&f->cap->ml[i].sources[k], s);
      assert_string_not_equal(s, X_CPID);
      assert_string_not_equal(s, Y_CPID);
    }
  }
  /* The same write from an instrumented operator named --trusted-writer. */
  assert_int_equal(wh_users_add_trusted(&f->users, "system:serviceaccount:ops:*"), RIPPLE_OK);
  size_t nml = f->cap->nml;
  pod(obj, sizeof obj, "t", "", "\"cpid.ripple.dev/pod\":\"1;" Y_CPID ";" X_CPID "\"");
  admit(f, "CREATE", OP_SA, "Pod", "pods", "", "d", "t", obj, "null");
  assert_int_equal(REFUSED(f, WH_CTX_UNTRUSTED_WRITER), 1);
  assert_string_equal(span_cpid(f, 1, id), Y_CPID); /* its own context, taken as it is */
  assert_int_equal(f->cap->nml, nml);
  assert_null(strstr(f->patch, "~1pod\"")); /* the context stays; with a key, its MAC is added */
  /* An untrusted status write of a Deployment (frozen: no context changes)
   * that changed the context: put back. */
  const char *dep_old =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"uid\":\"dep\",\"generation\":1,\"annotations\":{"
      "\"cpid.ripple.dev/deployment\":\"1;" S_CPID "\"}},\"spec\":{\"replicas\":1}}";
  const char *dep_new =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"uid\":\"dep\",\"generation\":1,\"annotations\":{"
      "\"cpid.ripple.dev/deployment\":\"1;" Y_CPID ";" X_CPID "\"}},\"spec\":{\"replicas\":1}}";
  admit(f, "UPDATE", EVIL_SA, "Deployment", "deployments", "status", "d", "web", dep_new, dep_old);
  assert_int_equal(REFUSED(f, WH_CTX_UNTRUSTED_WRITER), 2);
  assert_non_null(strstr(f->patch, S_CPID));
  assert_null(strstr(f->patch, X_CPID));
}

/* ---- MACs --------------------------------------------------------------------- */

/* Every context the webhook writes gets its MAC in the same patch. */
static void test_patch_carries_mac(void **state) {
  fx_t *f = *state;
  char obj[1024], id[40], val[64], mac[WH_CTXMAC_LEN + 1], want[128];
  pod(obj, sizeof obj, "a", "", "");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "a", obj, "null");
  snprintf(val, sizeof val, "1;%s", span_cpid(f, 0, id));
  fx_mac_of("Pod", "d", val, mac);
  snprintf(want, sizeof want, "\"path\":\"/metadata/annotations/cpid.ripple.dev~1pod.mac\"");
  if (!strstr(f->patch, want)) fail_msg("no %s in %s", want, f->patch);
  if (!strstr(f->patch, mac)) fail_msg("no MAC %s in %s", mac, f->patch);
  /* Not another namespace's, nor another kind's. */
  char other[WH_CTXMAC_LEN + 1];
  fx_mac_of("Pod", "e", val, other);
  assert_string_not_equal(other, mac);
  fx_mac_of("Service", "d", val, other);
  assert_string_not_equal(other, mac);
  /* A MAC a client set beside no context of its own is overwritten. */
  pod(obj, sizeof obj, "b", "", "\"cpid.ripple.dev/pod.mac\":\"AAAAAAAAAAAAAAAAAAAAAA\"");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "b", obj, "null");
  snprintf(val, sizeof val, "1;%s", span_cpid(f, 1, id));
  fx_mac_of("Pod", "d", val, mac);
  if (!strstr(f->patch, mac)) fail_msg("no MAC %s in %s", mac, f->patch);
  assert_null(strstr(f->patch, "AAAAAAAAAAAAAAAAAAAAAA"));
}

/* The write's own stored context: trusted with its MAC, not without one, nor
 * with a MAC of another namespace or kind. */
static void test_stored_ctx_needs_mac(void **state) {
  fx_t *f = *state;
  static const char val[] = "1;" S_CPID;
  char good[WH_CTXMAC_LEN + 1], ns_e[WH_CTXMAC_LEN + 1], svc[WH_CTXMAC_LEN + 1];
  fx_mac_of("Pod", "d", val, good);
  fx_mac_of("Pod", "e", val, ns_e);
  fx_mac_of("Service", "d", val, svc);
  struct {
    const char *mac; /* NULL: none */
    int trusted;
    wh_ctx_refusal_t why;
  } cases[] = {{good, 1, WH_CTX_OK},
               {NULL, 0, WH_CTX_UNSIGNED},
               {ns_e, 0, WH_CTX_BAD_MAC},
               {svc, 0, WH_CTX_BAD_MAC},
               {"not-a-mac", 0, WH_CTX_BAD_MAC}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char ann[256], obj[1024], name[16], id[40];
    snprintf(name, sizeof name, "p%zu", i);
    int n = snprintf(ann, sizeof ann, "\"cpid.ripple.dev/pod\":\"%s\"", val);
    if (cases[i].mac)
      snprintf(ann + n, sizeof ann - (size_t)n, ",\"cpid.ripple.dev/pod.mac\":\"%s\"",
               cases[i].mac);
    pod(obj, sizeof obj, name, "uid", ann);
    uint64_t before = cases[i].why ? REFUSED(f, cases[i].why) : 0;
    /* The kubelet's status write: it keeps the object's context, if any. */
    admit(f, "UPDATE", "system:node:n0", "Pod", "pods", "status", "d", name, obj, obj);
    span_cpid(f, i, id);
    if (cases[i].trusted) {
      assert_string_equal(id, S_CPID);
      assert_string_equal(f->patch, ""); /* context and MAC already there */
    } else {
      assert_string_not_equal(id, S_CPID);
      assert_int_equal(REFUSED(f, cases[i].why), before + 1);
      char v2[64], m2[WH_CTXMAC_LEN + 1];
      snprintf(v2, sizeof v2, "1;%s", id);
      fx_mac_of("Pod", "d", v2, m2);
      if (!strstr(f->patch, m2)) fail_msg("case %zu: no MAC %s in %s", i, m2, f->patch);
    }
  }
  /* The metrics say so. */
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(f->w), &g, &out);
  sbuf_putc(&out, '\0');
  const char *want[] = {"ripple_webhook_contexts_refused_total{reason=\"unsigned\"} 1\n",
                        "ripple_webhook_contexts_refused_total{reason=\"bad_mac\"} 3\n"};
  for (size_t i = 0; i < 2; i++)
    if (!strstr(out.p, want[i])) fail_msg("no '%s' in:\n%s", want[i], out.p);
  sbuf_free(&out);
}

/* A related object's context (an owner, read from the informers' text) is a
 * source only with its MAC. */
static void test_owner_ctx_needs_mac(void **state) {
  fx_t *f = *state;
  char mac[WH_CTXMAC_LEN + 1], rs[1024], id[40];
  static const char *const owners[2] = {"rs-a", "rs-b"};
  fx_mac_of("ReplicaSet", "d", "1;" S_CPID, mac);
  /* rs-a: signed; rs-b: the same context, no MAC (written past the webhook). */
  for (int i = 0; i < 2; i++) {
    snprintf(rs, sizeof rs,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"d\",\"uid\":\"%s-uid\",\"annotations\":{\"cpid.ripple.dev/"
             "replicaset\":\"1;" S_CPID "\"%s%s%s}}}",
             owners[i], owners[i], i ? "" : ",\"cpid.ripple.dev/replicaset.mac\":\"", i ? "" : mac,
             i ? "" : "\"");
    world_add(&f->world, rs);
  }
  for (int i = 0; i < 2; i++) {
    char obj[1024];
    snprintf(obj, sizeof obj,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"%s-\","
             "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
             "\"ReplicaSet\",\"name\":\"%s\",\"uid\":\"%s-uid\",\"controller\":true}]}}",
             owners[i], owners[i], owners[i]);
    admit(f, "CREATE", RS_SA, "Pod", "pods", "", "d", "", obj, "null");
  }
  assert_string_equal(span_cpid(f, 0, id), S_CPID);
  assert_null(attr(&f->cap->sp[0], "spontaneous"));
  assert_string_not_equal(span_cpid(f, 1, id), S_CPID);
  assert_non_null(attr(&f->cap->sp[1], "spontaneous"));
  assert_int_equal(REFUSED(f, WH_CTX_UNSIGNED), 1);
}

/* A person's context copied from an object, MAC and all: a fresh root, even
 * when this webhook has forgotten the CPID (a restart). A held Deployment's
 * annotation is put back with its own MAC. */
static void test_copied_context(void **state) {
  fx_t *f = *state;
  char mac[WH_CTXMAC_LEN + 1], ann[256], obj[1024], id[40];
  fx_mac_of("Pod", "d", "1;" Y_CPID, mac);
  snprintf(ann, sizeof ann,
           "\"cpid.ripple.dev/pod\":\"1;" Y_CPID "\",\"cpid.ripple.dev/pod.mac\":\"%s\"", mac);
  pod(obj, sizeof obj, "copy", "", ann);
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "copy", obj, "null");
  assert_string_not_equal(span_cpid(f, 0, id), Y_CPID);
  assert_int_equal(REFUSED(f, WH_CTX_CPID_IN_USE), 1);
  /* Deployment update by a person (kubectl ripple): the context is held,
   * the annotation and its MAC stay as stored. */
  char dmac[WH_CTXMAC_LEN + 1], old[1024], now[1024];
  fx_mac_of("Deployment", "d", "1;" S_CPID, dmac);
  snprintf(old, sizeof old,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"dep\",\"generation\":1,\"annotations\":{"
           "\"cpid.ripple.dev/deployment\":\"1;" S_CPID
           "\",\"cpid.ripple.dev/deployment.mac\":"
           "\"%s\"}},\"spec\":{\"replicas\":1}}",
           dmac);
  snprintf(now, sizeof now,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"dep\",\"generation\":1,\"annotations\":{"
           "\"cpid.ripple.dev/deployment\":\"1;" X_CPID
           "\",\"cpid.ripple.dev/deployment.mac\":"
           "\"%s\"}},\"spec\":{\"replicas\":2}}",
           dmac);
  admit(f, "UPDATE", "alice", "Deployment", "deployments", "", "d", "web", now, old);
  assert_string_equal(span_cpid(f, 1, id), X_CPID); /* hers: new, no MAC of its own */
  assert_non_null(strstr(f->patch, S_CPID));        /* the annotation put back */
  assert_null(strstr(f->patch, "deployment.mac"));  /* its MAC already the stored one */
}

/* Without a key: no MAC anywhere, stored contexts taken as they are. */
static void test_unkeyed(void **state) {
  fx_t *f = *state;
  char obj[1024], id[40];
  pod(obj, sizeof obj, "p", "uid", "\"cpid.ripple.dev/pod\":\"1;" S_CPID "\"");
  admit(f, "UPDATE", "system:node:n0", "Pod", "pods", "status", "d", "p", obj, obj);
  assert_string_equal(span_cpid(f, 0, id), S_CPID);
  pod(obj, sizeof obj, "q", "", "");
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "q", obj, "null");
  assert_null(strstr(f->patch, ".mac"));
  assert_int_equal(REFUSED(f, WH_CTX_UNSIGNED) + REFUSED(f, WH_CTX_BAD_MAC), 0);
}

static void test_mac_unit(void **state) {
  (void)state;
  wh_ctxmac_t m = {0};
  assert_int_equal(wh_ctxmac_set(&m, "short", 5), RIPPLE_EINVAL);
  char k31[40];
  memset(k31, 'k', 31);
  k31[31] = '\0';
  assert_int_equal(wh_ctxmac_set(&m, k31, 31), RIPPLE_EINVAL);
  /* white space around it does not count */
  char padded[64];
  snprintf(padded, sizeof padded, "  \n%s \n", k31);
  assert_int_equal(wh_ctxmac_set(&m, padded, strlen(padded)), RIPPLE_EINVAL);
  assert_int_equal(wh_ctxmac_set(&m, "  " FX_CTX_KEY "\n", strlen(FX_CTX_KEY) + 3), RIPPLE_OK);
  char a[WH_CTXMAC_LEN + 1], b[WH_CTXMAC_LEN + 1];
  assert_int_equal(wh_ctxmac_sign(&m, "Pod", "d", "1;x", 3, a), RIPPLE_OK);
  fx_mac_of("pod", "d", "1;x", b); /* the kind in lower case */
  assert_string_equal(a, b);
  assert_int_equal(strlen(a), WH_CTXMAC_LEN);
  /* The format of docs/format.md, computed apart (Python's hmac):
   * HMAC-SHA256(key, "ripple-ctx-v1\nreplicaset\nweb\n" + value)[:16],
   * base64url without padding. */
  assert_int_equal(wh_ctxmac_sign(&m, "ReplicaSet", "web", "1;" X_CPID, 38, b), RIPPLE_OK);
  assert_string_equal(b, "NZQwHb65ZkGlqfwAS7JigA");
  /* A key longer than SHA-256's block is hashed first (RFC 2104), and a
   * cluster-scoped object's namespace is "". */
  wh_ctxmac_t big = {0};
  char k100[101];
  memset(k100, 'k', 100);
  k100[100] = '\0';
  assert_int_equal(wh_ctxmac_set(&big, k100, 100), RIPPLE_OK);
  assert_int_equal(wh_ctxmac_sign(&big, "Pod", "", "1;x", 3, b), RIPPLE_OK);
  assert_string_equal(b, "QpH5N29XbUJ-pKe1KU6tyA");
  wh_ctxmac_clear(&big);
  assert_null(strpbrk(a, "+/="));
  assert_int_equal(wh_ctxmac_check(&m, "Pod", "d", "1;x", 3, a, WH_CTXMAC_LEN), WH_CTX_OK);
  assert_int_equal(wh_ctxmac_check(&m, "Pod", "d", "1;y", 3, a, WH_CTXMAC_LEN), WH_CTX_BAD_MAC);
  assert_int_equal(wh_ctxmac_check(&m, "Pod", "d", "1;x", 3, a, WH_CTXMAC_LEN - 1), WH_CTX_BAD_MAC);
  assert_int_equal(wh_ctxmac_check(&m, "Pod", "d", "1;x", 3, NULL, 0), WH_CTX_UNSIGNED);
  /* the parts cannot run into each other */
  assert_int_equal(wh_ctxmac_sign(&m, "Pod", "d\n1;x", "", 0, b), RIPPLE_EINVAL);
  char key[WH_CTXMAC_KEYNAME_MAX];
  assert_int_equal(wh_ctxmac_keyname("ReplicaSet", key, sizeof key), RIPPLE_OK);
  assert_string_equal(key, "cpid.ripple.dev/replicaset.mac");
  char long_kind[64];
  memset(long_kind, 'K', 60);
  long_kind[60] = '\0';
  assert_int_equal(wh_ctxmac_keyname(long_kind, key, sizeof key), RIPPLE_ERANGE);
  wh_ctxmac_clear(&m);
  assert_int_equal(m.len, 0);
  /* claims */
  wh_claims_t *c;
  assert_int_equal(wh_claims_new(16, 100, &c), RIPPLE_OK);
  ripple_cpid_t id;
  assert_int_equal(ripple_cpid_parse(X_CPID, 36, &id), RIPPLE_OK);
  wh_claims_put(c, &id, "alice", 10);
  assert_true(wh_claims_by(c, &id, "alice", 50));
  assert_false(wh_claims_by(c, &id, "bob", 50));
  wh_claims_put(c, &id, "bob", 60); /* the first claim stands */
  assert_false(wh_claims_by(c, &id, "bob", 60));
  assert_false(wh_claims_by(c, &id, "alice", 200)); /* past the TTL */
  wh_claims_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mac_unit),
      cmocka_unit_test_setup_teardown(test_person_cpid_in_use, setup, teardown),
      cmocka_unit_test_setup_teardown(test_person_cpid_in_use, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_person_retry_same_object, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_untrusted_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_untrusted_writer, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_patch_carries_mac, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_stored_ctx_needs_mac, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_owner_ctx_needs_mac, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_copied_context, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_unkeyed, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
