/*
 * fuzz_ctx.c - libFuzzer target for context decoding (annotation values,
 * headers, environment variables: all outside input).
 *
 * Properties beyond "does not crash": a decoded context re-encodes to a string
 * that decodes to the same context, never exceeds the documented maximum, and
 * a failed decode leaves the context absent.
 */
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t n = size ? data[0] % (RIPPLE_ANC_MAX + 2) : RIPPLE_ANC_DEFAULT;
  ripple_ctx_t c, d;
  int rc = ripple_ctx_decode((const char *)data, size, n, &c);
  if (rc != RIPPLE_OK) {
    if (ripple_ctx_is_set(&c)) abort();
    return 0;
  }
  if (c.nanc > n || c.nanc > RIPPLE_ANC_MAX) abort();
  char buf[RIPPLE_CTX_STRMAX + 1];
  size_t len;
  if (ripple_ctx_encode(&c, buf, sizeof buf, &len) != RIPPLE_OK) abort();
  if (ripple_ctx_decode(buf, len, RIPPLE_ANC_MAX, &d) != RIPPLE_OK) abort();
  if (!ripple_ctx_equal(&c, &d)) abort();
  ripple_cpid_t id;
  (void)ripple_cpid_parse((const char *)data, size, &id);
  return 0;
}
