/*
 * fuzz_details.c - libFuzzer target for the trace server's POST /v1/details
 * decoder (details.h), which reads whatever a writer sends.
 *
 * Properties: decoding fails cleanly (an error naming a record or the request,
 * nothing left allocated) or succeeds with one fact per record, each with a
 * body that is a JSON object of the record's type, whose keys are the record's
 * own; a canonical body decoded again as a one-record array is accepted and
 * comes back byte for byte (what the server stores, it can read again). A
 * Secret's stored body holds no value under data or stringData.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/details.h"
#include "ripplex/sbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const dec_limits_t limits = {16, 16, 8, 256};

static void check_secret(const fact_t *f) {
  if (!f->kind || strcmp(f->kind, "Secret") != 0) return;
  json_t *b = json_loadb(f->body, f->body_len, 0, NULL);
  const json_t *snap = json_object_get(b, "snapshot");
  static const char *const keys[] = {"data", "stringData"};
  for (int k = 0; k < 2; k++) {
    const json_t *d = json_object_get(snap, keys[k]), *v;
    const char *key;
    if (d && !json_is_object(d) && !json_is_string(d)) abort();
    if (json_is_string(d) && strcmp(json_string_value(d), "(redacted)") != 0) abort();
    json_object_foreach((json_t *)d, key, v) {
      if (!json_is_string(v) || strcmp(json_string_value(v), "(redacted)") != 0) abort();
    }
  }
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(b, "diff"), i, e) {
    const char *p = json_string_value(json_object_get(e, "path"));
    int under = !strcmp(p, "/data") || !strncmp(p, "/data/", 6) || !strcmp(p, "/stringData") ||
                !strncmp(p, "/stringData/", 12);
    if (under && (json_object_get(e, "old") || json_object_get(e, "new"))) abort();
  }
  json_decref(b);
}

static void check_again(const fact_t *f) {
  sbuf_t one;
  sbuf_init(&one);
  sbuf_putc(&one, '[');
  sbuf_put(&one, f->body, f->body_len);
  sbuf_putc(&one, ']');
  det_batch_t b;
  dec_error_t err;
  dec_limits_t big = {16, 16, 8, 1u << 20};
  if (det_decode(one.p, one.len, &big, &b, &err) != RIPPLE_OK) abort();
  if (b.n != 1 || b.v[0].body_len != f->body_len || memcmp(b.v[0].body, f->body, f->body_len))
    abort();
  det_batch_free(&b);
  sbuf_free(&one);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  det_batch_t b;
  dec_error_t err;
  int rc = det_decode((const char *)data, size, &limits, &b, &err);
  if (rc != RIPPLE_OK) {
    if (rc != RIPPLE_EJSON && rc != RIPPLE_EINVAL && rc != RIPPLE_ERANGE && rc != RIPPLE_ENOMEM)
      abort();
    if (b.v || b.mem || b.n || !err.msg[0]) abort();
    return 0;
  }
  for (size_t i = 0; i < b.n; i++) {
    const fact_t *f = &b.v[i];
    if (f->type != FACT_CHANGE && f->type != FACT_EVENT) abort();
    if (!f->body || f->body_len != strlen(f->body) || f->body[0] != '{') abort();
    if (!f->kind || !*f->kind || !f->name || !*f->name) abort();
    check_secret(f);
    check_again(f);
  }
  det_batch_free(&b);
  return 0;
}
