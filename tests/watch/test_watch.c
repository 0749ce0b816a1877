/*
 * test_watch.c - the parts of ripple-watch that need no cluster: the
 * record format (docs/watch.md), the output with rotation by size and time
 * and zstd compression (decompressed and compared), torn last lines, and
 * checkpoints: saved, loaded, replayed from the output, and changes
 * delivered again recognised.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "testutil.h"
#include "wconfig.h"
#include "wrec.h"

static json_t *mkobj(const char *ns, const char *name, const char *uid, const char *rv) {
  return json_pack("{s:s, s:{s:s, s:s, s:s, s:s}}", "kind", "ConfigMap", "metadata", "namespace",
                   ns, "name", name, "uid", uid, "resourceVersion", rv);
}

static char *tmpdir(void) {
  char *d = strdup("/tmp/ripple-watch-test-XXXXXX");
  assert_non_null(mkdtemp(d));
  return d;
}

static void rmdir_all(const char *d) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
  assert_int_equal(system(cmd), 0); /* NOLINT(cert-env33-c) */
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
  b[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* An event as a watch delivers it: the text fields are what wrec_format reads. */
typedef struct tev {
  ripple_kube_event_t ev;
  char *obj_text, *old_text, key[300];
} tev_t;

static void tev_init(tev_t *e, ripple_kube_event_type_t type, json_t *obj, json_t *old,
                     int64_t time_ns, int relist) {
  memset(e, 0, sizeof *e);
  e->ev.type = type, e->ev.obj = obj, e->ev.old = old;
  e->ev.time_ns = time_ns, e->ev.relist = relist;
  e->obj_text = json_dumps(obj, JSON_COMPACT);
  e->ev.obj_text = e->obj_text, e->ev.obj_len = strlen(e->obj_text);
  if (old) {
    e->old_text = json_dumps(old, JSON_COMPACT);
    e->ev.old_text = e->old_text, e->ev.old_len = strlen(e->old_text);
  }
  json_t *md = json_object_get(obj, "metadata");
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  snprintf(e->key, sizeof e->key, "%s%s%s", ns && *ns ? ns : "", ns && *ns ? "/" : "",
           json_string_value(json_object_get(md, "name")));
  e->ev.key = e->key;
  e->ev.uid = json_string_value(json_object_get(md, "uid"));
  e->ev.rv = json_string_value(json_object_get(md, "resourceVersion"));
}

static void tev_free(tev_t *e) {
  free(e->obj_text);
  free(e->old_text);
}

/* ---- records ---------------------------------------------------------------------- */

/* A Secret's record (resource "secrets") carries its keys, never its values:
 * not data, not stringData, not kubectl's last-applied annotation, in the
 * object or the old one. Text that is not a Secret is written as "(redacted)". */
static void test_record_secret(void **state) {
  (void)state;
  json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}}, s:{s:s}, s:{s:s}}",
                          "apiVersion", "v1", "kind", "Secret", "metadata", "namespace", "ns1",
                          "name", "db", "uid", "u9", "resourceVersion", "5", "annotations",
                          "kubectl.kubernetes.io/last-applied-configuration",
                          "{\"data\":{\"password\":\"czNjcjN0\"}}", "data", "password", "czNjcjN0",
                          "stringData", "token", "plain-s3cr3t");
  json_t *old = json_deep_copy(obj);
  json_object_set_new(json_object_get(old, "data"), "password", json_string("b2xkLXMzY3IzdA=="));
  tev_t e;
  tev_init(&e, RIPPLE_KUBE_MODIFIED, obj, old, 1, 0);
  char *line;
  size_t len;
  assert_int_equal(wrec_format(&e.ev, "secrets", &line, &len), RIPPLE_OK);
  assert_null(strstr(line, "czNjcjN0"));
  assert_null(strstr(line, "plain-s3cr3t"));
  assert_null(strstr(line, "b2xkLXMzY3IzdA=="));
  json_t *r = json_loads(line, 0, NULL);
  assert_non_null(r);
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_object_get(r, "object"), "data"), "password")),
                      "(redacted)");
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_object_get(r, "old"), "stringData"), "token")),
                      "(redacted)");
  assert_string_equal(json_string_value(json_object_get(r, "uid")), "u9");
  json_decref(r);
  free(line);
  /* The same object under another resource's name is written as it is (only
   * core secrets are watched as "secrets"). */
  assert_int_equal(wrec_format(&e.ev, "configmaps", &line, &len), RIPPLE_OK);
  assert_non_null(strstr(line, "czNjcjN0"));
  free(line);
  tev_free(&e);
  /* Not JSON, or another kind under "secrets": nothing of it is written. */
  tev_init(&e, RIPPLE_KUBE_ADDED, obj, NULL, 1, 0);
  free(e.obj_text);
  e.obj_text = strdup("{\"kind\":\"Secret\",\"data\":{\"password\":\"czNjcjN0\"");
  e.ev.obj_text = e.obj_text, e.ev.obj_len = strlen(e.obj_text);
  assert_int_equal(wrec_format(&e.ev, "secrets", &line, &len), RIPPLE_OK);
  assert_null(strstr(line, "czNjcjN0"));
  assert_non_null(strstr(line, "\"object\":\"(redacted)\""));
  free(line);
  tev_free(&e);
  json_decref(obj);
  json_decref(old);
}

static void test_record_update(void **state) {
  (void)state;
  json_t *obj = mkobj("ns1", "cm", "u1", "12"), *old = mkobj("ns1", "cm", "u1", "11");
  tev_t e;
  tev_init(&e, RIPPLE_KUBE_MODIFIED, obj, old, 1763762790123456789LL, 0);
  char *line;
  size_t len;
  assert_int_equal(wrec_format(&e.ev, "configmaps", &line, &len), RIPPLE_OK);
  tev_free(&e);
  assert_int_equal(line[len - 1], '\n');
  assert_int_equal(strlen(line), len);
  const char *want =
      "{\"time\":\"2025-11-21T22:06:30.123456789Z\",\"time_ns\":1763762790123456789,"
      "\"op\":\"update\",\"resource\":\"configmaps\",\"namespace\":\"ns1\",\"name\":\"cm\","
      "\"uid\":\"u1\",\"rv\":\"12\",\"object\":";
  assert_memory_equal(line, want, strlen(want));
  json_t *r = json_loads(line, 0, NULL);
  assert_non_null(r);
  assert_true(json_equal(json_object_get(r, "object"), obj));
  assert_true(json_equal(json_object_get(r, "old"), old));
  assert_null(json_object_get(r, "relist"));
  json_decref(r);
  free(line);
  json_decref(obj);
  json_decref(old);
}

static void test_record_add_delete_relist(void **state) {
  (void)state;
  json_t *obj = mkobj("", "n", "u2", "7");
  /* An add carries no old state even if one is given; a relist is marked. */
  tev_t e;
  tev_init(&e, RIPPLE_KUBE_ADDED, obj, obj, 5, 1);
  char *line;
  size_t len;
  assert_int_equal(wrec_format(&e.ev, "widgets.example.com", &line, &len), RIPPLE_OK);
  json_t *r = json_loads(line, 0, NULL);
  assert_string_equal(json_string_value(json_object_get(r, "op")), "add");
  assert_string_equal(json_string_value(json_object_get(r, "resource")), "widgets.example.com");
  assert_true(json_is_true(json_object_get(r, "relist")));
  assert_null(json_object_get(r, "old"));
  json_decref(r);
  free(line);
  e.ev.type = RIPPLE_KUBE_DELETED;
  e.ev.relist = 0;
  assert_int_equal(wrec_format(&e.ev, "nodes", &line, &len), RIPPLE_OK);
  r = json_loads(line, 0, NULL);
  assert_string_equal(json_string_value(json_object_get(r, "op")), "delete");
  assert_string_equal(json_string_value(json_object_get(r, "namespace")), "");
  assert_string_equal(json_string_value(json_object_get(r, "name")), "n");
  assert_non_null(json_object_get(r, "old"));
  json_decref(r);
  free(line);
  tev_free(&e);
  assert_int_equal(wrec_format(NULL, "x", &line, &len), RIPPLE_EINVAL);
  /* A resource name that needs escaping stays valid JSON. */
  tev_init(&e, RIPPLE_KUBE_ADDED, obj, NULL, 5, 0);
  assert_int_equal(wrec_format(&e.ev, "we\"ird\n", &line, &len), RIPPLE_OK);
  r = json_loads(line, 0, NULL);
  assert_non_null(r);
  assert_string_equal(json_string_value(json_object_get(r, "resource")), "we\"ird\n");
  json_decref(r);
  free(line);
  tev_free(&e);
  json_decref(obj);
}

/* ---- output, rotation, zstd ------------------------------------------------------- */

static char *unzstd(const char *path, size_t *out_len) {
  size_t n;
  char *z = slurp(path, &n);
  unsigned long long size = ZSTD_getFrameContentSize(z, n);
  /* A streamed frame need not record its size: decompress in a stream. */
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  size_t cap =
      size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR ? size + 1 : 1 << 22;
  char *out = malloc(cap);
  ZSTD_inBuffer ib = {z, n, 0};
  ZSTD_outBuffer ob = {out, cap, 0};
  size_t rc;
  do {
    rc = ZSTD_decompressStream(dc, &ob, &ib);
    assert_false(ZSTD_isError(rc));
  } while (rc != 0 && ib.pos < ib.size);
  assert_int_equal(rc, 0);
  ZSTD_freeDCtx(dc);
  free(z);
  *out_len = ob.pos;
  return out;
}

/* Writes lines until the size rotation happens twice; everything written is
 * found, in order, in the two .zst files and the live file. */
static void test_rotate_size_zstd(void **state) {
  (void)state;
  char *d = tmpdir(), path[256], want[65536] = "";
  snprintf(path, sizeof path, "%s/out.jsonl", d);
  wout_t o;
  assert_int_equal(wout_open(&o, path, 4096, 0), RIPPLE_OK);
  int rotations = 0;
  char *zst[2] = {0};
  for (int i = 0; i < 300 && rotations < 2; i++) {
    char line[64];
    int n = snprintf(line, sizeof line, "{\"i\":%d,\"pad\":\"xxxxxxxxxxxxxxxx\"}\n", i);
    assert_int_equal(wout_write(&o, line, (size_t)n), RIPPLE_OK);
    size_t have = strlen(want);
    assert_true(have + (size_t)n < sizeof want);
    memcpy(want + have, line, (size_t)n + 1);
    if (wout_due(&o, 0)) {
      assert_int_equal(wout_rotate(&o, &zst[rotations]), RIPPLE_OK);
      assert_int_equal(o.size, 0);
      rotations++;
      usleep(2000); /* distinct timestamps in the names */
    }
  }
  assert_int_equal(rotations, 2);
  wout_close(&o);
  size_t a_len, b_len, c_len;
  char *a = unzstd(zst[0], &a_len), *b = unzstd(zst[1], &b_len), *c = slurp(path, &c_len);
  assert_true(a_len >= 4096 && b_len >= 4096);
  assert_int_equal(a_len + b_len + c_len, strlen(want));
  assert_memory_equal(a, want, a_len);
  assert_memory_equal(b, want + a_len, b_len);
  assert_memory_equal(c, want + a_len + b_len, c_len);
  /* The uncompressed copies are gone. */
  char old[300];
  snprintf(old, sizeof old, "%.*s", (int)(strlen(zst[0]) - 4), zst[0]);
  assert_int_not_equal(access(old, F_OK), 0);
  free(a), free(b), free(c), free(zst[0]), free(zst[1]);
  rmdir_all(d);
  free(d);
}

static void test_rotate_time(void **state) {
  (void)state;
  char *d = tmpdir(), path[256];
  snprintf(path, sizeof path, "%s/out.jsonl", d);
  wout_t o;
  assert_int_equal(wout_open(&o, path, 0, 1000000000LL), RIPPLE_OK);
  assert_false(wout_due(&o, o.opened_ns + 2000000000LL)); /* empty: nothing to rotate */
  assert_int_equal(wout_write(&o, "{}\n", 3), RIPPLE_OK);
  assert_false(wout_due(&o, o.opened_ns + 999999999LL));
  assert_true(wout_due(&o, o.opened_ns + 1000000000LL));
  char *zst;
  assert_int_equal(wout_rotate(&o, &zst), RIPPLE_OK);
  size_t n;
  char *s = unzstd(zst, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(s, "{}\n", 3);
  free(s), free(zst);
  wout_close(&o);
  rmdir_all(d);
  free(d);
}

/* A torn last line (a kill in the middle of a write) is cut off at open. */
static void test_torn_tail(void **state) {
  (void)state;
  char *d = tmpdir(), path[256];
  snprintf(path, sizeof path, "%s/out.jsonl", d);
  FILE *f = fopen(path, "w");
  fputs("{\"a\":1}\n{\"b\":2}\n{\"c\":", f);
  fclose(f);
  wout_t o;
  assert_int_equal(wout_open(&o, path, 0, 0), RIPPLE_OK);
  assert_int_equal(o.size, 16);
  wout_close(&o);
  size_t n;
  char *s = slurp(path, &n);
  assert_string_equal(s, "{\"a\":1}\n{\"b\":2}\n");
  free(s);
  rmdir_all(d);
  free(d);
}

/* ---- checkpoints ------------------------------------------------------------------ */

static void write_rec(wout_t *o, ripple_kube_event_type_t t, const char *res, const char *ns,
                      const char *name, const char *uid, const char *rv, int relist) {
  json_t *obj = mkobj(ns, name, uid, rv);
  tev_t e;
  tev_init(&e, t, obj, NULL, 1, relist);
  char *line;
  size_t len;
  assert_int_equal(wrec_format(&e.ev, res, &line, &len), RIPPLE_OK);
  tev_free(&e);
  assert_int_equal(wout_write(o, line, len), RIPPLE_OK);
  free(line);
  json_decref(obj);
}

static void test_state_apply(void **state) {
  (void)state;
  wstate_t s;
  wstate_init(&s);
  assert_int_equal(wstate_apply(&s, "add", "n", "a", "u1", "1"), 1);
  assert_int_equal(wstate_apply(&s, "add", "n", "a", "u1", "1"), 0); /* delivered again */
  assert_int_equal(wstate_apply(&s, "update", "n", "a", "u1", "2"), 1);
  assert_int_equal(wstate_apply(&s, "update", "n", "a", "u1", "2"), 0);
  assert_int_equal(wstate_apply(&s, "delete", "n", "a", "u0", "3"), 0); /* another object */
  assert_int_equal(wstate_apply(&s, "delete", "n", "a", "u1", "3"), 1);
  assert_int_equal(wstate_apply(&s, "delete", "n", "a", "u1", "3"), 0);
  assert_int_equal(wstate_apply(&s, "add", "", "cluster-wide", "u9", "4"), 1);
  json_t *known = wstate_known_objects(&s);
  assert_int_equal(json_array_size(known), 1);
  json_t *md = json_object_get(json_array_get(known, 0), "metadata");
  assert_string_equal(json_string_value(json_object_get(md, "name")), "cluster-wide");
  assert_null(json_object_get(md, "namespace"));
  assert_string_equal(json_string_value(json_object_get(md, "uid")), "u9");
  json_decref(known);
  wstate_clear(&s);
}

/* Save, load, then replay what the output got after the checkpoint. */
static void test_checkpoint_roundtrip_replay(void **state) {
  (void)state;
  char *d = tmpdir(), out[256], ck[256];
  snprintf(out, sizeof out, "%s/out.jsonl", d);
  snprintf(ck, sizeof ck, "%s/configmaps.ckpt", d);
  wout_t o;
  assert_int_equal(wout_open(&o, out, 0, 0), RIPPLE_OK);
  wstate_t s;
  wstate_init(&s);
  assert_int_equal(wstate_load(&s, ck), RIPPLE_ENOENT);
  write_rec(&o, RIPPLE_KUBE_ADDED, "configmaps", "n", "a", "ua", "10", 0);
  wstate_apply(&s, "add", "n", "a", "ua", "10");
  write_rec(&o, RIPPLE_KUBE_ADDED, "configmaps", "n", "b", "ub", "11", 0);
  wstate_apply(&s, "add", "n", "b", "ub", "11");
  s.rv = strdup("11");
  assert_int_equal(wout_sync(&o), RIPPLE_OK);
  s.out_ino = o.ino;
  s.out_off = o.size;
  assert_int_equal(wstate_save(&s, ck), RIPPLE_OK);
  /* After the checkpoint: changes of ours, of another resource, of another
   * namespace, and a relist record (not a resume point). */
  write_rec(&o, RIPPLE_KUBE_MODIFIED, "configmaps", "n", "a", "ua", "12", 0);
  write_rec(&o, RIPPLE_KUBE_ADDED, "secrets", "n", "s", "us", "13", 0);
  write_rec(&o, RIPPLE_KUBE_DELETED, "configmaps", "n", "b", "ub", "14", 0);
  write_rec(&o, RIPPLE_KUBE_ADDED, "configmaps", "other", "c", "uc", "15", 0);
  write_rec(&o, RIPPLE_KUBE_ADDED, "configmaps", "n", "d", "ud", "9", 1);
  wout_close(&o);
  /* A torn line at the end is ignored. */
  FILE *f = fopen(out, "a");
  fputs("{\"resource\":\"configmaps\",", f);
  fclose(f);
  wstate_clear(&s);

  wstate_t t;
  wstate_init(&t);
  assert_int_equal(wstate_load(&t, ck), RIPPLE_OK);
  assert_string_equal(t.rv, "11");
  assert_int_equal(json_object_size(t.known), 2);
  assert_int_equal(wstate_replay(&t, out, "configmaps", "n"), RIPPLE_OK);
  assert_string_equal(t.rv, "14");
  assert_int_equal(json_object_size(t.known), 2); /* a (rv 12) and d */
  assert_int_equal(wstate_apply(&t, "update", "n", "a", "ua", "12"), 0);
  assert_int_equal(wstate_apply(&t, "add", "n", "d", "ud", "9"), 0);
  assert_int_equal(wstate_apply(&t, "delete", "n", "b", "ub", "14"), 0);
  wstate_clear(&t);

  /* All namespaces: "other" counts too. */
  wstate_init(&t);
  assert_int_equal(wstate_load(&t, ck), RIPPLE_OK);
  assert_int_equal(wstate_replay(&t, out, "configmaps", NULL), RIPPLE_OK);
  assert_string_equal(t.rv, "15");
  assert_int_equal(json_object_size(t.known), 3);
  wstate_clear(&t);

  /* The output rotated after the checkpoint: nothing replays from a new file. */
  wstate_init(&t);
  assert_int_equal(wstate_load(&t, ck), RIPPLE_OK);
  t.out_ino += 1;
  assert_int_equal(wstate_replay(&t, out, "configmaps", NULL), RIPPLE_OK);
  assert_string_equal(t.rv, "11");
  wstate_clear(&t);

  /* A damaged checkpoint is refused, not taken as empty. */
  f = fopen(ck, "w");
  fputs("{\"known\":", f);
  fclose(f);
  wstate_init(&t);
  assert_int_equal(wstate_load(&t, ck), RIPPLE_EJSON);
  wstate_clear(&t);
  rmdir_all(d);
  free(d);
}

/* ---- --config ----------------------------------------------------------------------- */

static int load_config(const char *text, agent_opts_t *o, char *err, size_t cap) {
  char *d = tmpdir(), path[256];
  snprintf(path, sizeof path, "%s/w.yaml", d);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  int rc = wconfig_load(path, o, err, cap);
  rmdir_all(d);
  free(d);
  return rc;
}

static void test_config(void **state) {
  (void)state;
  static agent_opts_t o; /* the loader's strings live as long as the process */
  char err[512];
  assert_int_equal(load_config("namespace: shop\nselector: tier=web\nresources:\n  - pods\n"
                               "  - resource: deployments.apps\n    namespace: other\n"
                               "    labelSelector: app=cart\n",
                               &o, err, sizeof err),
                   RIPPLE_OK);
  assert_int_equal(o.nres, 2);
  assert_string_equal(o.namespace_, "shop");
  assert_string_equal(o.selector, "tier=web");
  assert_string_equal(o.res[0].name, "pods");
  assert_null(o.res[0].namespace_);
  assert_string_equal(o.res[1].name, "deployments.apps");
  assert_string_equal(o.res[1].namespace_, "other");
  assert_string_equal(o.res[1].selector, "app=cart");
  agent_opts_t bad;
  memset(&bad, 0, sizeof bad);
  assert_int_equal(load_config("resources: pods\n", &bad, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "must be a list"));
  assert_int_equal(load_config("resources:\n  - {namespace: x}\n", &bad, err, sizeof err),
                   RIPPLE_EINVAL);
  assert_non_null(strstr(err, "resources[0]"));
  assert_int_equal(load_config("resources: [a\n", &bad, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "line"));
}

/* yjson types plain scalars; every field is a string and takes their text,
 * a null ("namespace:") is "" (all namespaces), as the libyaml reader took it. */
static void test_config_scalars(void **state) {
  (void)state;
  static agent_opts_t o; /* the loader's strings live as long as the process */
  char err[512];
  assert_int_equal(load_config("namespace:\nselector: 2024\nresources:\n  - 42\n"
                               "  - {resource: pods, namespace: 7, labelSelector: true}\n"
                               "  - {resource: nodes, namespace: }\n",
                               &o, err, sizeof err),
                   RIPPLE_OK);
  assert_int_equal(o.nres, 3);
  assert_string_equal(o.namespace_, "");
  assert_string_equal(o.selector, "2024");
  assert_string_equal(o.res[0].name, "42");
  assert_string_equal(o.res[1].namespace_, "7");
  assert_string_equal(o.res[1].selector, "true");
  assert_string_equal(o.res[2].namespace_, "");
  assert_null(o.res[2].selector);
  agent_opts_t bad;
  memset(&bad, 0, sizeof bad);
  assert_int_equal(load_config("resources:\n  - \n", &bad, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "resources[0]"));
  assert_int_equal(load_config("", &bad, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "top level must be a mapping"));
  assert_int_equal(wconfig_load("/nonexistent/w.yaml", &bad, err, sizeof err), RIPPLE_ESYS);
  assert_non_null(strstr(err, "/nonexistent/w.yaml: cannot open"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_update),
      cmocka_unit_test(test_record_secret),
      cmocka_unit_test(test_record_add_delete_relist),
      cmocka_unit_test(test_rotate_size_zstd),
      cmocka_unit_test(test_rotate_time),
      cmocka_unit_test(test_torn_tail),
      cmocka_unit_test(test_state_apply),
      cmocka_unit_test(test_checkpoint_roundtrip_replay),
      cmocka_unit_test(test_config),
      cmocka_unit_test(test_config_scalars),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
