/*
 * fuzz_certs.c - libFuzzer target for what ripple-certs reads from outside: a
 * Secret as the API server returns it, fed as JSON to certs_tls_check (base64
 * of PEM certificates and a key, chain, key, names, validity) and to
 * certs_tls_not_after.
 *
 * Properties: no crash, no leak, no passphrase prompt; the answer is 0 or 1;
 * why is one non-empty word (no spaces: it goes into the log as is); a kept
 * Secret has all three keys as strings; the check is deterministic (the time
 * is fixed, 2027-01-01, so the corpus' valid Secret stays valid).
 */
#include <stdlib.h>
#include <string.h>

#include "certs.h"

#define NOW ((time_t)1798761600)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const dns[] = {"ripple-webhook.ripple-system.svc"};
  json_t *s = json_loadb((const char *)data, size, 0, NULL);
  if (!s) return 0;
  char why[64], again[64], na[40];
  int keep = certs_tls_check(s, dns, 1, NOW, 30 * 86400, why, sizeof why);
  if (keep != 0 && keep != 1) abort();
  if (!why[0] || strchr(why, ' ') || strchr(why, '"')) abort();
  if (certs_tls_check(s, dns, 1, NOW, 30 * 86400, again, sizeof again) != keep ||
      strcmp(why, again) != 0)
    abort();
  if (keep) {
    const json_t *d = json_object_get(s, "data");
    if (!json_is_string(json_object_get(d, CERTS_KEY_CA)) ||
        !json_is_string(json_object_get(d, CERTS_KEY_CRT)) ||
        !json_is_string(json_object_get(d, CERTS_KEY_KEY)) ||
        !certs_tls_not_after(s, na, sizeof na))
      abort();
  }
  (void)certs_tls_not_after(s, na, sizeof na);
  json_decref(s);
  return 0;
}
