/*
 * wh_fixture.c - see wh_fixture.h.
 */
#include "wh_fixture.h"
#include "ctxmac.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the engine's text lookup over a hand-built world ---------------------- */

const char *jstr(const json_t *o, const char *a, const char *b) {
  const json_t *v = json_object_get(o, a);
  if (b) v = json_object_get(v, b);
  return json_is_string(v) ? json_string_value(v) : "";
}

static json_t *parse(const char *json) {
  json_error_t je;
  json_t *o = json_loads(json, 0, &je);
  if (!json_is_object(o)) fail_msg("bad test object: %s: %s", je.text, json);
  return o;
}

void world_add(world_t *w, const char *json) {
  json_decref(parse(json));
  assert_true(w->n < OBJS_MAX);
  w->text[w->n++] = strdup(json);
}

void world_set(world_t *w, size_t i, const char *json) {
  assert_true(i < w->n);
  json_decref(parse(json));
  free(w->text[i]);
  w->text[i] = strdup(json);
}

int world_wanted(const world_t *w, const char *api_version_kind) {
  for (size_t i = 0; i < w->nwanted; i++)
    if (!strcmp(w->wanted[i], api_version_kind)) return 1;
  return 0;
}

/* What an informer's index would find: object i when it is of kind and in ns
 * (NULL: any namespace), parsed here for the test's matching only. */
static json_t *candidate(const world_t *w, size_t i, const char *kind, const char *ns) {
  json_t *o = parse(w->text[i]);
  if (strcmp(jstr(o, "kind", NULL), kind) != 0 ||
      (ns && strcmp(jstr(o, "metadata", "namespace"), ns) != 0)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Hand object i's text over as the informers do: borrowed for the call, from
 * a copy freed right after it, so a callback that kept it is caught by ASan. */
static void serve(const world_t *w, size_t i, wh_text_fn fn, void *fud) {
  char *copy = strdup(w->text[i]);
  fn(fud, copy, strlen(copy));
  free(copy);
}

static void w_get(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                  void *fud) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++) {
    json_t *o = candidate(w, i, kind, ns);
    int hit = o && !strcmp(jstr(o, "metadata", "name"), name);
    json_decref(o);
    if (hit) serve(w, i, fn, fud);
  }
}

static void w_want(void *ud, const char *api_version, const char *kind) {
  world_t *w = ud;
  char k[160];
  snprintf(k, sizeof k, "%s %s", api_version, kind);
  if (!world_wanted(w, k) && w->nwanted < WANTED_MAX)
    snprintf(w->wanted[w->nwanted++], sizeof w->wanted[0], "%s", k);
}

static void w_by_owner(void *ud, const char *kind, const char *uid, wh_text_fn fn, void *fud) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++) {
    json_t *o = candidate(w, i, kind, NULL);
    const json_t *refs = json_object_get(json_object_get(o, "metadata"), "ownerReferences");
    size_t k;
    const json_t *ref;
    int hit = 0;
    json_array_foreach(refs, k, ref) hit |= !strcmp(jstr(ref, "uid", NULL), uid);
    json_decref(o);
    if (hit) serve(w, i, fn, fud);
  }
}

/* Only "k=v" selectors, as the engine makes them for one-label Services. */
static void w_select(void *ud, const char *kind, const char *ns, const char *sel, wh_text_fn fn,
                     void *fud) {
  world_t *w = ud;
  char k[64], v[64];
  assert_int_equal(sscanf(sel, "%63[^=]=%63s", k, v), 2);
  for (size_t i = 0; i < w->n; i++) {
    json_t *o = candidate(w, i, kind, ns);
    const json_t *labels = json_object_get(json_object_get(o, "metadata"), "labels");
    int hit = o && !strcmp(jstr(labels, k, NULL), v);
    json_decref(o);
    if (hit) serve(w, i, fn, fud);
  }
}

/* ---- fixture -------------------------------------------------------------- */

static int setup_with(void **state, int traceparent, const char *key) {
  fx_t *f = calloc(1, sizeof *f);
  f->cap = capture_new(42);
  ripple_tracer_opts_t to = capture_opts(f->cap, "x", 10);
  wh_opts_t o = {.max_ancestors = 10, .nexclude_ns = 1, .sink = to.sink};
  o.traceparent = traceparent;
  o.exclude_ns[0] = "ripple-system";
  o.text_lookup = (wh_text_lookup_t){w_get, w_want, w_by_owner, w_select, &f->world};
  o.users = &f->users;
  assert_int_equal(wh_owner_kinds_add(&f->owners, "lab.ripple.dev/RippleApp"), RIPPLE_OK);
  o.owner_kinds = &f->owners;
  o.clock_ns = to.clock_ns, o.random = to.random, o.hook_ud = to.hook_ud;
  o.context_key = key;
  o.context_key_len = key ? strlen(key) : 0;
  assert_int_equal(wh_new(&o, &f->w), RIPPLE_OK);
  *state = f;
  return 0;
}

int setup(void **state) { return setup_with(state, 0, NULL); }
int setup_traceparent(void **state) { return setup_with(state, 1, NULL); }
int setup_keyed(void **state) { return setup_with(state, 0, FX_CTX_KEY); }

int teardown(void **state) {
  fx_t *f = *state;
  wh_free(f->w);
  for (size_t i = 0; i < f->world.n; i++) free(f->world.text[i]);
  json_decref(f->answer);
  free(f->cap);
  free(f);
  return 0;
}

/* An AdmissionReview from its parts; object/old are JSON text or "null". */
void review(char *buf, size_t cap, const char *op, const char *user, const char *kind,
            const char *resource, const char *sub, const char *ns, const char *name,
            const char *object, const char *old) {
  int n = snprintf(buf, cap,
                   "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                   "\"request\":{\"uid\":\"req-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
                   "\"kind\":\"%s\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
                   "\"resource\":\"%s\"},\"subResource\":\"%s\",\"namespace\":\"%s\","
                   "\"name\":\"%s\",\"operation\":\"%s\",\"userInfo\":{\"username\":\"%s\"},"
                   "\"object\":%s,\"oldObject\":%s,\"dryRun\":false}}",
                   kind, resource, sub, ns, name, op, user, object, old);
  assert_true(n > 0 && (size_t)n < cap);
}

/* The object under a JSON Pointer's parent, and the last token (unescaped:
 * "~1" is '/', "~0" '~') in tok. Only objects are walked: the webhook's
 * patches touch metadata and its annotations, nothing in arrays. */
static json_t *pointer_parent(json_t *doc, const char *path, char *tok, size_t cap) {
  assert_true(path[0] == '/');
  json_t *at = doc;
  const char *s = path + 1;
  for (;;) {
    size_t n = 0;
    for (; *s && *s != '/'; s++) {
      char c = *s;
      if (c == '~') {
        assert_true(s[1] == '0' || s[1] == '1');
        c = s[1] == '1' ? '/' : '~';
        s++;
      }
      assert_true(n + 1 < cap);
      tok[n++] = c;
    }
    tok[n] = '\0';
    if (!*s) return at;
    at = json_object_get(at, tok);
    assert_true(json_is_object(at)); /* a parent that does not exist: the op fails */
    s++;
  }
}

/* Every patch the webhook answers is minimal (issue 28): each operation
 * changes the object as the ones before it left it (an op that changes
 * nothing costs kube-apiserver a patch for nothing), no two touch the same
 * path, and an annotations map that exists is never replaced whole. */
static void check_minimal(const char *body, const char *patch) {
  if (!*patch) return;
  json_t *req = json_loads(body, 0, NULL);
  assert_non_null(req);
  json_t *obj = json_deep_copy(json_object_get(json_object_get(req, "request"), "object"));
  json_t *ops = json_loads(patch, 0, NULL);
  assert_true(json_is_object(obj));
  assert_true(json_is_array(ops) && json_array_size(ops) > 0);
  size_t i, j;
  json_t *op;
  json_array_foreach(ops, i, op) {
    const char *kind = jstr(op, "op", NULL), *path = jstr(op, "path", NULL);
    for (j = 0; j < i; j++)
      if (!strcmp(jstr(json_array_get(ops, j), "path", NULL), path))
        fail_msg("patch %s: two ops on %s", patch, path);
    char tok[256];
    json_t *parent = pointer_parent(obj, path, tok, sizeof tok);
    json_t *cur = json_object_get(parent, tok);
    if (!strcmp(kind, "remove")) {
      if (!cur) fail_msg("patch %s: removes %s, which is absent", patch, path);
      json_object_del(parent, tok);
      continue;
    }
    if (strcmp(kind, "add") != 0 && strcmp(kind, "replace") != 0)
      fail_msg("patch %s: op %s", patch, kind);
    json_t *v = json_object_get(op, "value");
    assert_non_null(v);
    if (cur && json_equal(cur, v)) fail_msg("patch %s: %s is already so", patch, path);
    if (json_is_object(cur) && !strcmp(path, "/metadata/annotations"))
      fail_msg("patch %s: replaces the annotations map whole", patch);
    json_object_set(parent, tok, v);
  }
  json_decref(ops);
  json_decref(obj);
  json_decref(req);
}

/* Post a body; 200 expected. f->patch is the decoded patch ("" if none). */
void post(fx_t *f, const char *body) {
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(wh_handle_as(f->w, f->how, body, strlen(body), &out), 200);
  json_decref(f->answer);
  f->answer = json_loadb(out.p, out.len, 0, NULL);
  assert_non_null(f->answer);
  sbuf_free(&out);
  const json_t *resp = json_object_get(f->answer, "response");
  assert_string_equal(jstr(resp, "uid", NULL), "req-1");
  assert_true(json_is_true(json_object_get(resp, "allowed")));
  f->patch[0] = '\0';
  const char *p = jstr(resp, "patch", NULL);
  if (*p) {
    assert_string_equal(jstr(resp, "patchType", NULL), "JSONPatch");
    char *raw = NULL;
    size_t n = 0;
    assert_int_equal(b64_decode(p, strlen(p), &raw, &n), RIPPLE_OK); /* strict, padded */
    assert_true(n < sizeof f->patch);
    memcpy(f->patch, raw, n + 1);
    free(raw);
  }
  check_minimal(body, f->patch);
}

void admit(fx_t *f, const char *op, const char *user, const char *kind, const char *resource,
           const char *sub, const char *ns, const char *name, const char *object, const char *old) {
  char body[8192];
  review(body, sizeof body, op, user, kind, resource, sub, ns, name, object, old);
  post(f, body);
}

const char *warning(fx_t *f) {
  const json_t *w = json_object_get(json_object_get(f->answer, "response"), "warnings");
  return json_is_array(w) ? json_string_value(json_array_get(w, 0)) : NULL;
}

void fmt(const ripple_cpid_t *id, char *out) { ripple_cpid_format(id, out); }

const char *attr(const cap_span_t *s, const char *key) {
  for (size_t i = 0; i < s->nattrs && i < CAP_ATTRS; i++)
    if (!strcmp(s->attr_key[i], key)) return s->attr_val[i];
  return NULL;
}

void fx_mac_of(const char *kind, const char *ns, const char *val, char *out) {
  wh_ctxmac_t m = {0};
  assert_int_equal(wh_ctxmac_set(&m, FX_CTX_KEY, strlen(FX_CTX_KEY)), RIPPLE_OK);
  assert_int_equal(wh_ctxmac_sign(&m, kind, ns, val, strlen(val), out), RIPPLE_OK);
  wh_ctxmac_clear(&m);
}

void world_add_signed_rs(fx_t *f) {
  char mac[WH_CTXMAC_LEN + 1], rs[1024];
  fx_mac_of("ReplicaSet", "d", "1;" S_CPID, mac);
  snprintf(rs, sizeof rs,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
           "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
           "replicaset\":\"1;" S_CPID "\",\"cpid.ripple.dev/replicaset.mac\":\"%s\"}}}",
           mac);
  world_add(&f->world, rs);
}
