/*
 * fuzz_object.c - libFuzzer target for the object helpers, which read JSON
 * from the API server, admission requests and manifests.
 *
 * Properties: whatever the document, reading, writing and patching either fail
 * cleanly or succeed; a context written with set_ctx reads back equal; a patch
 * is valid JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *json = (const char *)data;
  const char *kind = size && (data[0] & 1) ? "Pod" : NULL;
  ripple_ctx_t got, want;
  (void)ripple_object_get_ctx(json, size, kind, RIPPLE_ANC_DEFAULT, &got);
  memset(&want, 0, sizeof want);
  want.cpid.b[0] = 0x42;
  want.cpid.b[15] = (uint8_t)size;
  want.anc[0].b[3] = 0x17;
  want.nanc = 1;
  char *out = NULL;
  size_t len = 0;
  if (ripple_object_set_ctx(json, size, kind, &want, &out, &len) == RIPPLE_OK) {
    if (ripple_object_get_ctx(out, len, kind, RIPPLE_ANC_DEFAULT, &got) != RIPPLE_OK) abort();
    if (!ripple_ctx_equal(&got, &want)) abort();
    ripple_free(out);
  }
  int changed;
  if (ripple_object_patch_ctx(json, size, kind, &want, &out, &len, &changed) == RIPPLE_OK) {
    if (len < 2 || out[0] != '[' || out[len - 1] != ']') abort();
    ripple_free(out);
  }
  return 0;
}
