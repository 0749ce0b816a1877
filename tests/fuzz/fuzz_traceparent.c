/*
 * fuzz_traceparent.c - libFuzzer target for the webhook's W3C traceparent
 * parser (webhook/traceparent.c, KEP-5915's annotation) and the engine
 * around it (--traceparent).
 *
 * Properties: a value is accepted exactly when it is the canonical version
 * 00 text of its own parts (so printing them gives the input back), with a
 * trace id and a span id that are not zero; the traceparent of any CPID
 * parses back to that CPID and its root span. A person's create that carries
 * the value as its annotation gets 200, and its root CPID is the value's
 * trace id exactly when the value is accepted, can be a CPID, and names no
 * change the webhook refuses to let this person join (counted as
 * cpid_in_use: one it admitted whose claim it no longer holds, ctxmac.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxmac.h"
#include "ripplex/sbuf.h"
#include "traceparent.h"
#include "wh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_parse(const char *s, size_t n) {
  wh_traceparent_t tp;
  if (wh_traceparent_parse(s, n, &tp) != RIPPLE_OK) return;
  if (ripple_cpid_is_nil(&tp.trace_id) || !tp.span_id) abort();
  char back[WH_TRACEPARENT_LEN + 1];
  size_t o = 0;
  o += (size_t)snprintf(back, sizeof back, "00-");
  for (size_t i = 0; i < 16; i++)
    o += (size_t)snprintf(back + o, sizeof back - o, "%02x", tp.trace_id.b[i]);
  snprintf(back + o, sizeof back - o, "-%016llx-%02x", (unsigned long long)tp.span_id, tp.flags);
  if (n != WH_TRACEPARENT_LEN || memcmp(back, s, n) != 0) abort();
}

static void check_format(const uint8_t *data, size_t size) {
  if (size < 16) return;
  ripple_cpid_t id;
  memcpy(id.b, data, 16);
  char out[WH_TRACEPARENT_LEN + 1];
  if (!wh_traceparent_of(&id, out)) {
    if (!ripple_cpid_is_nil(&id) && wh_traceparent_root_span(&id)) abort();
    return;
  }
  wh_traceparent_t tp;
  if (wh_traceparent_parse(out, strlen(out), &tp) != RIPPLE_OK) abort();
  if (!ripple_cpid_equal(&tp.trace_id, &id) || tp.span_id != wh_traceparent_root_span(&id) ||
      tp.flags != 1)
    abort();
}

/* The value as a person's annotation, through the whole engine. */
static void check_engine(const char *s, size_t n) {
  static wh_t *w;
  if (!w) {
    ripple_log_setup("fuzz", RIPPLE_LOG_ERROR, NULL, NULL);
    wh_opts_t o = {.traceparent = 1};
    if (wh_new(&o, &w) != RIPPLE_OK) abort();
  }
  json_t *doc = json_pack(
      "{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:{s:s,s:{s:s,s:{s:"
      "s%}},s:{}},s:n}}",
      "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", "u", "kind",
      "group", "", "version", "v1", "kind", "Pod", "resource", "group", "", "version", "v1",
      "resource", "pods", "namespace", "d", "name", "p", "operation", "CREATE", "userInfo",
      "username", "alice", "object", "kind", "Pod", "metadata", "name", "p", "annotations",
      WH_TRACEPARENT_KEY, s, n, "spec", "oldObject");
  /* Not UTF-8, or a NUL (which the review decoder refuses as a whole: a 400
   * that fuzz_admission covers): not a value for this target. */
  if (!doc || memchr(s, '\0', n)) {
    json_decref(doc);
    return;
  }
  char *body = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  if (!body) abort();
  sbuf_t out;
  sbuf_init(&out);
  uint64_t in_use = atomic_load(&wh_metrics(w)->ctx_refused[WH_CTX_CPID_IN_USE]);
  int status = wh_handle(w, body, strlen(body), &out);
  int refused = atomic_load(&wh_metrics(w)->ctx_refused[WH_CTX_CPID_IN_USE]) != in_use;
  free(body);
  if (out.oom) {
    sbuf_free(&out);
    return;
  }
  if (status != 200) abort();
  json_t *ans = json_loadb(out.p, out.len, 0, NULL);
  sbuf_free(&out);
  const json_t *warn =
      json_array_get(json_object_get(json_object_get(ans, "response"), "warnings"), 0);
  const char *wv = json_string_value(warn);
  if (!wv || strncmp(wv, "ripple: cpid ", 13) != 0) abort();
  ripple_cpid_t root;
  if (ripple_cpid_parse(wv + 13, strlen(wv + 13), &root) != RIPPLE_OK) abort();
  wh_traceparent_t tp;
  int usable =
      wh_traceparent_parse(s, n, &tp) == RIPPLE_OK && wh_traceparent_root_span(&tp.trace_id);
  if (usable && !refused && !ripple_cpid_equal(&root, &tp.trace_id)) abort();
  if (refused && (!usable || ripple_cpid_equal(&root, &tp.trace_id))) abort();
  json_decref(ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  check_parse(s, size);
  check_format(data, size);
  if (size <= 256) check_engine(s, size);
  return 0;
}
