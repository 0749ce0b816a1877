/*
 * fuzz_otlp.c - libFuzzer target for what POST /v1/traces reads from any
 * client: an OTLP request in protobuf or JSON (otlp_receive), compressed or
 * not (gzip_decode), and what the exporter reads from any endpoint: an
 * ExportTraceServiceResponse (otlp_read_response).
 *
 * The first byte picks: bit 0 the encoding (JSON when set), bit 1 whether
 * every trace id is a known CPID, bit 2 whether the rest is inflated first.
 * Properties: nothing crashes or leaks; a request that converts is a JSON
 * array the server's own decoder accepts, with exactly as many spans as were
 * counted accepted, and accepted + rejected = spans seen.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/otlp_export.h"
#include "ingest/decode.h"
#include "ingest/gzip.h"
#include "ingest/otlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known_all(void *ud, const ripple_cpid_t *c) { return (void)c, *(int *)ud; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const dec_limits_t lim = {
      .max_records = 100000, .max_sources = 64, .max_attrs = 16, .max_string = 128};
  int flags = data[0], known = (flags & 2) != 0;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  char *plain = NULL;
  if (flags & 4) {
    if (gzip_decode(body, len, 1 << 16, &plain, &len) != RIPPLE_OK) return 0;
    body = plain;
  }
  otlp_recv_t r = {.lim = &lim, .known = known_all, .ud = &known};
  otlp_result_t res;
  sbuf_t out;
  sbuf_init(&out);
  int rc = otlp_receive(flags & 1 ? OTLP_JSON : OTLP_PROTOBUF, body, len, &r, &out, &res);
  if (rc == RIPPLE_OK) {
    if (res.accepted + res.rejected != res.spans) abort();
    dec_batch_t b;
    dec_error_t e;
    if (dec_decode(DEC_SPANS, out.p, out.len, &lim, &b, &e) != RIPPLE_OK) abort();
    if (b.n != res.accepted) abort();
    dec_batch_free(&b);
    sbuf_t ans;
    sbuf_init(&ans);
    otlp_response(flags & 1 ? OTLP_JSON : OTLP_PROTOBUF, &res, &ans);
    sbuf_free(&ans);
  }
  sbuf_free(&out);
  int64_t rejected;
  char msg[64];
  otlp_read_response(body, len, &rejected, msg, sizeof msg);
  free(plain);
  return 0;
}
