/*
 * fuzz_otlp.c - libFuzzer target for what POST /v1/traces reads from any
 * client: an OTLP request in protobuf or JSON (otlp_receive), compressed or
 * not (gzip_decode), and what the exporter reads from any endpoint: an
 * ExportTraceServiceResponse (otlp_read_response).
 *
 * The first byte picks: bit 0 the encoding (JSON when set), bit 1 whether
 * every trace id is a known CPID, bit 2 whether the rest is inflated first,
 * bit 3 tight limits (3 records, 3 attributes, 16-byte strings; with bit 4,
 * 12-byte strings, shorter than a span id's text), so that the server's
 * limits are met as often as not.
 * Properties: nothing crashes or leaks; a request that converts is a JSON
 * array the server's own decoder accepts, with exactly as many spans as were
 * counted accepted (when the limits allow them), and accepted + rejected =
 * spans seen; and the server's path, otlp_receive_batch (OTLP straight into
 * records), decides exactly as the route it replaced, otlp_receive and then
 * dec_decode: the same refusal (code, record, field, message) or the same
 * records (CPID, times, span id, canonical body, the indexes' strings).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/otlp_export.h"
#include "ingest/decode.h"
#include "ingest/gzip.h"
#include "ingest/otlp.h"
#include "ripplex/cpid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known_all(void *ud, const ripple_cpid_t *c) { return (void)c, *(int *)ud; }

static int str_eq(const dec_batch_t *a, dec_str_t x, const dec_batch_t *b, dec_str_t y) {
  return x.len == y.len && !memcmp(dec_str(a, x), dec_str(b, y), x.len);
}

/* The records of two batches are the same. */
static void same_batch(const dec_batch_t *a, const dec_batch_t *b) {
  if (a->n != b->n || a->dups != b->dups || a->kind != b->kind) abort();
  for (size_t i = 0; i < a->n; i++) {
    const dec_rec_t *x = &a->rec[i], *y = &b->rec[i];
    if (!cpid_eq(&x->cpid, &y->cpid) || x->time != y->time || x->end != y->end ||
        x->span_id != y->span_id || x->nsrc || y->nsrc || x->uid_len || y->uid_len ||
        x->body_len != y->body_len ||
        memcmp(a->body.p + x->body_off, b->body.p + y->body_off, x->body_len) ||
        !str_eq(a, x->kind, b, y->kind) || !str_eq(a, x->ns, b, y->ns) ||
        !str_eq(a, x->name, b, y->name) || !str_eq(a, x->component, b, y->component) ||
        !str_eq(a, x->service, b, y->service) || !str_eq(a, x->span_name, b, y->span_name) ||
        !str_eq(a, x->owner, b, y->owner) || !str_eq(a, x->operation, b, y->operation))
      abort();
  }
}

/* The old route: OTLP -> a JSON array of ripple spans -> dec_decode. */
static int old_route(otlp_encoding_t enc, const char *body, size_t len, const otlp_recv_t *r,
                     sbuf_t *out, otlp_result_t *res, dec_batch_t *b, dec_error_t *e) {
  memset(e, 0, sizeof *e);
  memset(b, 0, sizeof *b);
  int rc = otlp_receive(enc, body, len, r, out, res);
  if (rc != RIPPLE_OK) return rc;
  if (res->accepted + res->rejected != res->spans) abort();
  return dec_decode(DEC_SPANS, out->p, out->len, r->lim, b, e);
}

/* The new route against the old one. */
static void compare(otlp_encoding_t enc, const char *body, size_t len, const otlp_recv_t *r) {
  sbuf_t out;
  sbuf_init(&out);
  otlp_result_t ores, nres;
  dec_batch_t ob, nb;
  dec_error_t oe, ne;
  int orc = old_route(enc, body, len, r, &out, &ores, &ob, &oe);
  int nrc = otlp_receive_batch(enc, body, len, r, &nb, &nres, &ne);
  if (orc == RIPPLE_ENOMEM || nrc == RIPPLE_ENOMEM) {
    /* the protobuf budget: the arena counts no less than the heap did */
    if (nrc != RIPPLE_ENOMEM) abort();
  } else if (orc != nrc) {
    abort();
  } else if (orc == RIPPLE_EJSON && oe.msg[0] == '\0') { /* refused by otlp_receive */
    if (strcmp(ores.msg, nres.msg) || strcmp(ores.msg, ne.msg)) abort();
  } else if (orc != RIPPLE_OK) { /* refused by the checks */
    if (oe.index != ne.index || strcmp(oe.field, ne.field) || strcmp(oe.msg, ne.msg)) abort();
  } else {
    if (ores.spans != nres.spans || ores.accepted != nres.accepted ||
        ores.rejected != nres.rejected || strcmp(ores.msg, nres.msg))
      abort();
    same_batch(&ob, &nb);
  }
  if (orc == RIPPLE_OK) dec_batch_free(&ob);
  if (nrc == RIPPLE_OK) dec_batch_free(&nb);
  sbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const dec_limits_t wide = {
      .max_records = 100000, .max_sources = 64, .max_attrs = 16, .max_string = 128};
  static const dec_limits_t tight = {
      .max_records = 3, .max_sources = 4, .max_attrs = 3, .max_string = 16};
  int flags = data[0], known = (flags & 2) != 0;
  static const dec_limits_t tiny = {
      .max_records = 3, .max_sources = 4, .max_attrs = 3, .max_string = 12};
  const dec_limits_t *lim = flags & 8 ? (flags & 16 ? &tiny : &tight) : &wide;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  char *plain = NULL;
  if (flags & 4) {
    if (gzip_decode(body, len, 1 << 16, &plain, &len) != RIPPLE_OK) return 0;
    body = plain;
  }
  otlp_recv_t r = {.lim = lim, .known = known_all, .ud = &known};
  otlp_result_t res;
  sbuf_t out;
  sbuf_init(&out);
  int rc = otlp_receive(flags & 1 ? OTLP_JSON : OTLP_PROTOBUF, body, len, &r, &out, &res);
  if (rc == RIPPLE_OK) {
    if (res.accepted + res.rejected != res.spans) abort();
    dec_batch_t b;
    dec_error_t e;
    int drc = dec_decode(DEC_SPANS, out.p, out.len, lim, &b, &e);
    if (drc != RIPPLE_OK &&
        !(drc == RIPPLE_ERANGE && (res.accepted > lim->max_records || lim->max_string < 16)))
      abort();
    if (drc == RIPPLE_OK && b.n != res.accepted) abort();
    if (drc == RIPPLE_OK) dec_batch_free(&b);
    sbuf_t ans;
    sbuf_init(&ans);
    otlp_response(flags & 1 ? OTLP_JSON : OTLP_PROTOBUF, &res, &ans);
    sbuf_free(&ans);
  }
  sbuf_free(&out);
  compare(flags & 1 ? OTLP_JSON : OTLP_PROTOBUF, body, len, &r);
  int64_t rejected;
  char msg[64];
  otlp_read_response(body, len, &rejected, msg, sizeof msg);
  free(plain);
  return 0;
}
