/*
 * wh_fixture.c - see wh_fixture.h.
 */
#include "wh_fixture.h"
#include "ripplex/sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a lookup over a fixed set of objects -------------------------------- */

const char *jstr(const json_t *o, const char *a, const char *b) {
  const json_t *v = json_object_get(o, a);
  if (b) v = json_object_get(v, b);
  return json_is_string(v) ? json_string_value(v) : "";
}

static json_t *w_get(void *ud, const char *kind, const char *ns, const char *name) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++)
    if (!strcmp(jstr(w->objs[i], "kind", NULL), kind) &&
        !strcmp(jstr(w->objs[i], "metadata", "namespace"), ns) &&
        !strcmp(jstr(w->objs[i], "metadata", "name"), name))
      return json_deep_copy(w->objs[i]);
  return NULL;
}

static void w_by_owner(void *ud, const char *kind, const char *uid, wh_each_fn fn, void *fud) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++) {
    if (strcmp(jstr(w->objs[i], "kind", NULL), kind) != 0) continue;
    const json_t *refs =
        json_object_get(json_object_get(w->objs[i], "metadata"), "ownerReferences");
    size_t k;
    const json_t *ref;
    json_array_foreach(refs, k, ref) {
      if (!strcmp(jstr(ref, "uid", NULL), uid)) {
        json_t *copy = json_deep_copy(w->objs[i]);
        fn(fud, copy);
        json_decref(copy);
      }
    }
  }
}

/* Only "k=v" selectors, as the engine makes them for one-label Services. */
static void w_select(void *ud, const char *kind, const char *ns, const char *sel, wh_each_fn fn,
                     void *fud) {
  world_t *w = ud;
  char k[64], v[64];
  assert_int_equal(sscanf(sel, "%63[^=]=%63s", k, v), 2);
  for (size_t i = 0; i < w->n; i++) {
    const json_t *labels = json_object_get(json_object_get(w->objs[i], "metadata"), "labels");
    if (strcmp(jstr(w->objs[i], "kind", NULL), kind) != 0 ||
        strcmp(jstr(w->objs[i], "metadata", "namespace"), ns) != 0 ||
        strcmp(jstr(labels, k, NULL), v) != 0)
      continue;
    json_t *copy = json_deep_copy(w->objs[i]);
    fn(fud, copy);
    json_decref(copy);
  }
}

void world_add(world_t *w, const char *json) {
  json_error_t je;
  json_t *o = json_loads(json, 0, &je);
  if (!o) fail_msg("bad test object: %s: %s", je.text, json);
  assert_true(w->n < OBJS_MAX);
  w->text[w->n] = strdup(json);
  w->objs[w->n++] = o;
}

/* The same world as text, as the informers serve it (the program's lookup):
 * each text is handed over from a copy freed right after the call, so a
 * callback that kept it would be caught by ASan. */
static void w_text(const world_t *w, size_t i, wh_text_fn fn, void *fud) {
  char *copy = strdup(w->text[i]);
  fn(fud, copy, strlen(copy));
  free(copy);
}

static void w_get_text(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                       void *fud) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++)
    if (!strcmp(jstr(w->objs[i], "kind", NULL), kind) &&
        !strcmp(jstr(w->objs[i], "metadata", "namespace"), ns) &&
        !strcmp(jstr(w->objs[i], "metadata", "name"), name))
      w_text(w, i, fn, fud);
}

static void w_by_owner_text(void *ud, const char *kind, const char *uid, wh_text_fn fn, void *fud) {
  world_t *w = ud;
  for (size_t i = 0; i < w->n; i++) {
    if (strcmp(jstr(w->objs[i], "kind", NULL), kind) != 0) continue;
    const json_t *refs =
        json_object_get(json_object_get(w->objs[i], "metadata"), "ownerReferences");
    size_t k;
    const json_t *ref;
    json_array_foreach(refs, k, ref) {
      if (!strcmp(jstr(ref, "uid", NULL), uid)) w_text(w, i, fn, fud);
    }
  }
}

static void w_select_text(void *ud, const char *kind, const char *ns, const char *sel,
                          wh_text_fn fn, void *fud) {
  world_t *w = ud;
  char k[64], v[64];
  assert_int_equal(sscanf(sel, "%63[^=]=%63s", k, v), 2);
  for (size_t i = 0; i < w->n; i++) {
    const json_t *labels = json_object_get(json_object_get(w->objs[i], "metadata"), "labels");
    if (!strcmp(jstr(w->objs[i], "kind", NULL), kind) &&
        !strcmp(jstr(w->objs[i], "metadata", "namespace"), ns) && !strcmp(jstr(labels, k, NULL), v))
      w_text(w, i, fn, fud);
  }
}

/* ---- fixture -------------------------------------------------------------- */

/* trees: serve related objects through the tree lookup (older callers),
 * else as text (the program's way). */
static int setup_lookup(void **state, int trees) {
  fx_t *f = calloc(1, sizeof *f);
  f->cap = capture_new(42);
  ripple_tracer_opts_t to = capture_opts(f->cap, "x", 10);
  wh_opts_t o = {.max_ancestors = 10, .nexclude_ns = 1, .sink = to.sink};
  o.exclude_ns[0] = "ripple-system";
  if (trees)
    o.lookup = (wh_lookup_t){w_get, w_by_owner, w_select, &f->world};
  else
    o.text_lookup = (wh_text_lookup_t){w_get_text, NULL, w_by_owner_text, w_select_text, &f->world};
  o.users = &f->users;
  o.clock_ns = to.clock_ns, o.random = to.random, o.hook_ud = to.hook_ud;
  assert_int_equal(wh_new(&o, &f->w), RIPPLE_OK);
  *state = f;
  return 0;
}

int setup(void **state) { return setup_lookup(state, 0); }
int setup_trees(void **state) { return setup_lookup(state, 1); }

int teardown(void **state) {
  fx_t *f = *state;
  wh_free(f->w);
  for (size_t i = 0; i < f->world.n; i++) json_decref(f->world.objs[i]), free(f->world.text[i]);
  json_decref(f->answer);
  free(f->cap);
  free(f);
  return 0;
}

static int b64val(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void b64decode(const char *s, char *out, size_t cap) {
  size_t n = 0;
  unsigned acc = 0;
  int bits = 0;
  for (; *s && *s != '='; s++) {
    int v = b64val(*s);
    assert_true(v >= 0);
    acc = acc << 6 | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      assert_true(n + 1 < cap);
      out[n++] = (char)((acc >> bits) & 0xff);
    }
  }
  out[n] = '\0';
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

/* Post a body; 200 expected. f->patch is the decoded patch ("" if none). */
void post(fx_t *f, const char *body) {
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(wh_handle(f->w, body, strlen(body), &out), 200);
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
    b64decode(p, f->patch, sizeof f->patch);
  }
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
