/*
 * fuzz_admission.c - libFuzzer target for the webhook's request path: an
 * AdmissionReview body through decoding, the decision (with a few related
 * objects served as text by a fixed lookup, the way the informers serve them)
 * and the answer.
 *
 * Properties: every body gets 200 or 400; a 200 answer is a JSON
 * AdmissionReview that allows the write, and its patch (if any) is base64 of
 * a JSON array; a 400 answer is a JSON object with an "error" string.
 */
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "wh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const objects[] = {
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\","
    "\"uid\":\"pu\",\"labels\":{\"app\":\"w\"},\"annotations\":{\"cpid.ripple.dev/pod\":\"1;"
    "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60\"},\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
    "\"name\":\"rs\",\"uid\":\"ru\",\"controller\":true}]}}",
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
    "\"namespace\":\"d\",\"uid\":\"ru\",\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;"
    "0c9d2b1a-1111-4222-8333-444455556666\"}}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"w\",\"namespace\":\"d\","
    "\"uid\":\"su\",\"annotations\":{\"cpid.ripple.dev/service\":\"bad\"}},\"spec\":{"
    "\"selector\":{\"app\":\"w\"}}}",
};
enum { N = sizeof objects / sizeof objects[0] };
static const char *kinds[N], *names[N]; /* into objs */
static json_t *objs[N];

/* The engine's text lookup (wh.h), as the program's informers serve it: the
 * objects' text, for any namespace, owner or selector. */
static void f_get(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                  void *fud) {
  (void)ud, (void)ns;
  for (size_t i = 0; i < N; i++)
    if (!strcmp(kinds[i], kind) && !strcmp(names[i], name)) fn(fud, objects[i], strlen(objects[i]));
}

static void f_each(void *ud, const char *kind, const char *x, wh_text_fn fn, void *fud) {
  (void)ud, (void)x;
  for (size_t i = 0; i < N; i++)
    if (!strcmp(kinds[i], kind)) fn(fud, objects[i], strlen(objects[i]));
}

static void f_select(void *ud, const char *kind, const char *ns, const char *sel, wh_text_fn fn,
                     void *fud) {
  (void)ns, (void)sel;
  f_each(ud, kind, NULL, fn, fud);
}

static void f_want(void *ud, const char *api_version, const char *kind) {
  (void)ud, (void)api_version, (void)kind;
}

static void check_answer(const sbuf_t *out, int status) {
  json_t *j = json_loadb(out->p, out->len, 0, NULL);
  if (!j) abort();
  if (status == 400) {
    if (!json_is_string(json_object_get(j, "error"))) abort();
  } else {
    const json_t *r = json_object_get(j, "response");
    if (status != 200 || !json_is_true(json_object_get(r, "allowed"))) abort();
    const char *p = json_string_value(json_object_get(r, "patch"));
    if (p && strlen(p) % 4 != 0) abort();
  }
  json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static wh_t *w;
  if (!w) {
    for (size_t i = 0; i < N; i++) {
      if (!(objs[i] = json_loads(objects[i], 0, NULL))) abort();
      kinds[i] = json_string_value(json_object_get(objs[i], "kind"));
      names[i] = json_string_value(json_object_get(json_object_get(objs[i], "metadata"), "name"));
      if (!kinds[i] || !names[i]) abort();
    }
    ripple_log_setup("fuzz", RIPPLE_LOG_ERROR, NULL, NULL);
    wh_opts_t o = {.nexclude_ns = 1};
    o.exclude_ns[0] = "ripple-system";
    o.text_lookup = (wh_text_lookup_t){f_get, f_want, f_each, f_select, NULL};
    if (wh_new(&o, &w) != RIPPLE_OK) abort();
  }
  sbuf_t out;
  sbuf_init(&out);
  /* Both ways a replica decides (wh.h): as the decider, and as a replica
   * that cannot reach it; chosen by the input's length, so that the corpus
   * exercises both. */
  wh_certainty_t how = size % 2 ? WH_UNCERTAIN : WH_DECIDER;
  int status = wh_handle_as(w, how, (const char *)data, size, &out);
  if (!out.oom) check_answer(&out, status);
  sbuf_free(&out);
  return 0;
}
