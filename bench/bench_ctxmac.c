/*
 * bench_ctxmac.c - what the contexts' MACs (webhook/ctxmac.h) cost the
 * webhook per request, in process:
 *   sign one context (HMAC-SHA256, truncated, base64url)
 *   check one stored context on a parsed object (read + sign + compare)
 *   a whole request (wh_handle) with and without --context-key-file: a
 *     person's Pod create (one MAC signed) and a kubelet's Pod status write
 *     (the stored context checked, its MAC signed again)
 * Each figure is the median of 7 rounds of a tight loop (CLOCK_MONOTONIC).
 * Run from an optimised build; reported in docs/benchmarks.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "annotate.h"
#include "benchutil.h"
#include "ctxmac.h"
#include "ripplex/sbuf.h"
#include "wh.h"

#define KEY "bench-key-0123456789abcdef0123456789abcdef"
#define VAL "1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60;0c9d2b1a-1111-4222-8333-444455556666"

static wh_ctxmac_t key;
static volatile int sink;

static void sign(void *ud, long n) {
  (void)ud;
  char mac[WH_CTXMAC_LEN + 1];
  for (long i = 0; i < n; i++) {
    wh_ctxmac_sign(&key, "ReplicaSet", "default", VAL, sizeof VAL - 1, mac);
    sink += mac[0];
  }
}

static void check(void *ud, long n) {
  const json_t *obj = ud;
  for (long i = 0; i < n; i++) sink += (int)wh_obj_ctx_check(&key, obj, "Pod", "default");
}

typedef struct req {
  wh_t *w;
  const char *body;
} req_t;

static void handle(void *ud, long n) {
  req_t *q = ud;
  sbuf_t out;
  sbuf_init(&out);
  for (long i = 0; i < n; i++) {
    out.len = 0;
    sink += wh_handle(q->w, q->body, strlen(q->body), &out);
  }
  sbuf_free(&out);
}

static char *review(const char *op, const char *user, const char *sub, const char *obj,
                    const char *old) {
  static const char fmt[] =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
      "\"uid\":\"r\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
      "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
      "\"subResource\":\"%s\",\"namespace\":\"default\",\"name\":\"p\",\"operation\":\"%s\","
      "\"userInfo\":{\"username\":\"%s\"},\"object\":%s,\"oldObject\":%s,\"dryRun\":true}}";
  size_t cap = strlen(fmt) + strlen(op) + strlen(user) + strlen(sub) + strlen(obj) + strlen(old);
  char *b = malloc(cap);
  if (b) snprintf(b, cap, fmt, sub, op, user, obj, old);
  return b;
}

/* A Pod with its context (and, with a key, the context's MAC). */
static char *pod(int signed_ctx) {
  char mac[WH_CTXMAC_LEN + 1] = "";
  wh_ctxmac_sign(&key, "Pod", "default", VAL, sizeof VAL - 1, mac);
  char *b = malloc(1024);
  if (b)
    snprintf(b, 1024,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
             "\"default\",\"uid\":\"u\",\"annotations\":{\"cpid.ripple.dev/pod\":\"" VAL
             "\"%s%s%s}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]},"
             "\"status\":{\"phase\":\"Running\"}}",
             signed_ctx ? ",\"cpid.ripple.dev/pod.mac\":\"" : "", signed_ctx ? mac : "",
             signed_ctx ? "\"" : "");
  return b;
}

static void requests(int keyed) {
  wh_opts_t o = {.max_ancestors = 10};
  if (keyed) {
    o.context_key = KEY;
    o.context_key_len = strlen(KEY);
  }
  wh_t *w;
  if (wh_new(&o, &w) != RIPPLE_OK) exit(1);
  static const char fresh[] =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
      "\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}";
  char *stored = pod(keyed);
  char *create = review("CREATE", "alice", "", fresh, "null");
  char *status = review("UPDATE", "system:node:n0", "status", stored, stored);
  req_t a = {w, create}, b = {w, status};
  printf("  %-52s %9.1f ns/op\n",
         keyed ? "request: person's Pod create, keyed" : "request: person's Pod create, no key",
         bench_measure(handle, &a, 20000));
  printf("  %-52s %9.1f ns/op\n",
         keyed ? "request: kubelet's Pod status, keyed" : "request: kubelet's Pod status, no key",
         bench_measure(handle, &b, 20000));
  free(stored);
  free(create);
  free(status);
  wh_free(w);
}

int main(void) {
  ripple_log_setup("bench", RIPPLE_LOG_ERROR, NULL, NULL);
  if (wh_ctxmac_set(&key, KEY, strlen(KEY)) != RIPPLE_OK) return 1;
  printf("contexts' MACs (webhook/ctxmac.c)\n");
  printf("  %-52s %9.1f ns/op\n", "sign one context (N=1 ancestor)",
         bench_measure(sign, NULL, 200000));
  char *text = pod(1);
  json_t *obj = json_loads(text, 0, NULL);
  printf("  %-52s %9.1f ns/op\n", "check one stored context (tree)",
         bench_measure(check, obj, 200000));
  json_decref(obj);
  free(text);
  requests(0);
  requests(1);
  return 0;
}
