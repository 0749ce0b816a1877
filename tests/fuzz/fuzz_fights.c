/*
 * fuzz_fights.c - libFuzzer target for the field-fight detector's feed
 * (server/analysis/fights_feed.h): what a writer sends as spans
 * (POST /v1/spans, first byte even) or details (POST /v1/details, odd),
 * decoded as the server does and fed to one detector that lives across
 * inputs.
 *
 * Properties: the attributes read out of a span's canonical body in one pass
 * are jansson's reading of that body wherever the pass keeps a value (and it
 * keeps every value shorter than FIGHTS_ATTR_MAX without a control character
 * or U+FFFD); the detector's answers stay valid JSON, within their limit.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/details.h"
#include "analysis/fights_feed.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const dec_limits_t limits = {16, 16, 8, 512};

static int plain(const char *v) {
  for (const unsigned char *s = (const unsigned char *)v; *s; s++)
    if (*s < 0x20 || (s[0] == 0xef && s[1] == 0xbf && s[2] == 0xbd)) return 0;
  return 1;
}

static void check_attr(const json_t *attrs, const char *key, const char *got) {
  const char *want = json_string_value(json_object_get(attrs, key));
  if (*got && (!want || strcmp(want, got) != 0)) abort();
  if (want && strlen(want) < FIGHTS_ATTR_MAX && plain(want) && strcmp(want, got) != 0) abort();
}

static void check_spans(const dec_batch_t *b) {
  for (size_t i = 0; i < b->n; i++) {
    const char *body = b->body.p + b->rec[i].body_off;
    size_t len = b->rec[i].body_len;
    fights_attrs_t a;
    fights_span_attrs(body, len, &a);
    json_t *o = json_loadb(body, len, 0, NULL);
    if (!o) abort(); /* the server's own encoding */
    const json_t *at = json_object_get(o, "attributes");
    check_attr(at, "uid", a.uid);
    check_attr(at, "resourceVersion", a.rv);
    check_attr(at, "user", a.user);
    check_attr(at, "subresource", a.sub);
    json_decref(o);
  }
}

static void check_answer(fights_t *f) {
  sbuf_t out;
  sbuf_init(&out);
  if (fights_answer(f, INT64_MIN, NULL, 3, &out) != RIPPLE_OK) abort();
  json_t *j = json_loadb(out.p, out.len, 0, NULL);
  if (!j || json_array_size(json_object_get(j, "fights")) > 3) abort();
  json_decref(j);
  sbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fights_t *f;
  if (!f) {
    fights_opts_t o = {.max_fields = 16, .max_fights = 4};
    if (fights_new(&o, &f) != RIPPLE_OK) abort();
  }
  if (size < 1) return 0;
  const char *json = (const char *)data + 1;
  dec_error_t err;
  if (data[0] % 2 == 0) {
    dec_batch_t b;
    if (dec_decode(DEC_SPANS, json, size - 1, &limits, &b, &err) != RIPPLE_OK) return 0;
    check_spans(&b);
    fights_feed_spans(f, &b);
    dec_batch_free(&b);
  } else {
    det_batch_t b;
    if (det_decode(json, size - 1, &limits, &b, &err) != RIPPLE_OK) return 0;
    fights_feed_facts(f, &b);
    det_batch_free(&b);
  }
  check_answer(f);
  return 0;
}
