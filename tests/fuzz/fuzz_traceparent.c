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
 *
 * And the same bytes as kube-apiserver's traceparent header of a /mutate call
 * (wh_apiserver_tp, a NUL-terminated header value): taken exactly when the
 * parser accepts all of it; a taken one with the sampled flag gives the
 * write's span its ids as attributes, any other none, and neither changes the span's CPID (never
 * the header's trace id) or parent (none).
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

/* The last span the header engine emitted. */
static struct {
  int n;
  ripple_cpid_t cpid;
  uint64_t parent;
  char trace[64], span[64];
} last;

static void on_span(void *ud, const ripple_span_rec_t *sp) {
  (void)ud;
  last.n++;
  last.cpid = sp->cpid;
  last.parent = sp->parent_id;
  last.trace[0] = last.span[0] = '\0';
  for (size_t i = 0; i < sp->nattrs; i++) {
    if (!strcmp(sp->attrs[i].key, "apiserverTraceId"))
      snprintf(last.trace, sizeof last.trace, "%s", sp->attrs[i].value);
    if (!strcmp(sp->attrs[i].key, "apiserverSpanId"))
      snprintf(last.span, sizeof last.span, "%s", sp->attrs[i].value);
  }
}

/* The value as kube-apiserver's traceparent header, through the engine. */
static void check_apiserver_header(const char *s, size_t n) {
  static wh_t *w;
  if (!w) {
    ripple_log_setup("fuzz", RIPPLE_LOG_ERROR, NULL, NULL);
    wh_opts_t o = {.sink = {.span = on_span}};
    if (wh_new(&o, &w) != RIPPLE_OK) abort();
  }
  if (memchr(s, '\0', n)) return; /* a header value is a C string */
  char hdr[257];
  memcpy(hdr, s, n);
  hdr[n] = '\0';
  wh_traceparent_t tp;
  int valid = wh_traceparent_parse(hdr, n, &tp) == RIPPLE_OK;
  const char *taken = wh_apiserver_tp(w, hdr);
  if (valid != (taken == hdr) || (taken && taken != hdr)) abort();
  static const char body[] =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
      "\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},"
      "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"configmaps\"},"
      "\"namespace\":\"d\",\"name\":\"c\",\"operation\":\"CREATE\",\"userInfo\":{"
      "\"username\":\"alice\"},\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
      "\"c\"}},\"oldObject\":null}}";
  sbuf_t out;
  sbuf_init(&out);
  int before = last.n;
  /* Given the raw value too: the engine must parse again, not trust it. */
  int status = wh_handle_call(w, WH_DECIDER, hdr, body, sizeof body - 1, &out);
  sbuf_free(&out);
  if (status != 200 || last.n != before + 1 || last.parent) abort();
  if (!valid || !(tp.flags & 1)) { /* refused, or not sampled: no span to link */
    if (last.trace[0] || last.span[0]) abort();
    return;
  }
  if (strlen(last.trace) != 32 || memcmp(last.trace, hdr + 3, 32) != 0 || strlen(last.span) != 16 ||
      memcmp(last.span, hdr + 36, 16) != 0)
    abort();
  if (ripple_cpid_equal(&last.cpid, &tp.trace_id)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  check_parse(s, size);
  check_format(data, size);
  if (size <= 256) check_engine(s, size);
  if (size <= 256) check_apiserver_header(s, size);
  return 0;
}
