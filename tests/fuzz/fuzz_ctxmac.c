/*
 * fuzz_ctxmac.c - a MAC'd context read from arbitrary annotation values
 * (webhook/ctxmac.c, annotate.c, objtext.c). Objects come from the
 * informers and from any client's write, so any bytes go in, two ways:
 *
 *   - as an object's JSON text: the verdict on its Pod context (trusted,
 *     unsigned, bad MAC) read from the stand-in the webhook builds of the
 *     text must be the verdict read from the whole tree (for documents
 *     without duplicate keys, as the API server writes them);
 *   - split at its first two NUL bytes into a namespace, a context value
 *     and a MAC: the check never accepts a MAC other than the one signing
 *     gives, and always accepts that one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "ctxmac.h"
#include "objtext.h"
#include "ripple/ripple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char key[] = "fuzz-key-0123456789abcdef0123456789abcdef";

static void as_object(const wh_ctxmac_t *m, const char *text, size_t size) {
  json_t *tree = json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
  json_t *standin = NULL;
  int src = wh_text_standin(text, size, "Pod", &standin);
  if (json_is_object(tree) && src == RIPPLE_OK) {
    const char *ns =
        json_string_value(json_object_get(json_object_get(tree, "metadata"), "namespace"));
    if (!ns) ns = "";
    if (wh_obj_ctx_check(m, tree, "Pod", ns) != wh_obj_ctx_check(m, standin, "Pod", ns)) abort();
  } else if (src == RIPPLE_OK) {
    (void)wh_obj_ctx_check(m, standin, "Pod", "d");
  }
  json_decref(standin);
  json_decref(tree);
}

static void as_parts(const wh_ctxmac_t *m, const char *text, size_t size) {
  const char *ns = text, *e = text + size;
  const char *v = memchr(ns, '\0', size);
  if (!v) return;
  v++;
  const char *mac = memchr(v, '\0', (size_t)(e - v));
  if (!mac) return;
  size_t vn = (size_t)(mac - v);
  mac++;
  size_t mn = (size_t)(e - mac);
  char want[WH_CTXMAC_LEN + 1];
  if (wh_ctxmac_sign(m, "Pod", ns, v, vn, want) != RIPPLE_OK) {
    if (wh_ctxmac_check(m, "Pod", ns, v, vn, mac, mn) == WH_CTX_OK) abort();
    return;
  }
  wh_ctx_refusal_t got = wh_ctxmac_check(m, "Pod", ns, v, vn, mac, mn);
  int same = mn == WH_CTXMAC_LEN && !memcmp(mac, want, WH_CTXMAC_LEN);
  if ((got == WH_CTX_OK) != same) abort();
  if (wh_ctxmac_check(m, "Pod", ns, v, vn, want, WH_CTXMAC_LEN) != WH_CTX_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static wh_ctxmac_t m;
  if (!m.len && wh_ctxmac_set(&m, key, sizeof key - 1) != RIPPLE_OK) abort();
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  as_object(&m, text, size);
  as_parts(&m, text, size);
  free(text);
  return 0;
}
