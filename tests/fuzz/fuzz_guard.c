/*
 * fuzz_guard.c - libFuzzer target for what ripple-guard reads from outside:
 * a webhook's answer to the probe (guard_answer_check) and, as JSON, a
 * MutatingWebhookConfiguration (guard_reg_parse, then the patch built from
 * it).
 *
 * Properties: no crash, no leak; an answer is accepted only if it is a JSON
 * object answering the probe's uid; a parsed registration has 1 to
 * GUARD_MAX_WEBHOOKS webhooks, each with a name and a URL, and its patch is
 * JSON with one entry per webhook.
 */
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[256];
  const char *body = (const char *)data;
  if (guard_answer_check(body, size, "ripple-guard-probe-1", why, sizeof why) == RIPPLE_OK) {
    json_t *j = json_loadb(body, size, 0, NULL);
    const json_t *uid = json_object_get(json_object_get(j, "response"), "uid");
    if (!json_is_object(j) || strcmp(json_string_value(uid), "ripple-guard-probe-1")) abort();
    json_decref(j);
  }
  json_t *cfg = json_loadb(body, size, 0, NULL);
  guard_reg_t r;
  if (cfg && guard_reg_parse(cfg, &r, why, sizeof why) == RIPPLE_OK) {
    if (r.n < 1 || r.n > GUARD_MAX_WEBHOOKS) abort();
    for (size_t i = 0; i < r.n; i++)
      if (!r.t[i].name || !r.t[i].url) abort();
    (void)guard_url_loopback(r.t[0].url);
    sbuf_t b;
    sbuf_init(&b);
    for (int off = 0; off < 2; off++) {
      b.len = 0;
      guard_reg_patch(&r, off, &b);
      json_t *p = json_loadb(b.p, b.len, 0, NULL);
      if (!b.oom && json_array_size(json_object_get(p, "webhooks")) != r.n) abort();
      json_decref(p);
    }
    sbuf_free(&b);
    guard_reg_free(&r);
  }
  json_decref(cfg);
  return 0;
}
