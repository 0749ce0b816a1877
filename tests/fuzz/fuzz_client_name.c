/*
 * fuzz_client_name.c - libFuzzer target for how ripple-webhook maps a client
 * certificate to a name (lib/ripplex/tlspeer.c and tlsname.c, --client-name):
 * a certificate's subject CN and DNS names read with GnuTLS, and names
 * matched.
 *
 * The first byte picks the case; the rest is the input.
 *   0: a certificate in DER. Properties: no crash; the CN read for the log is
 *      NUL-terminated within its buffer; a match names one of the names
 *      given.
 *   1: names, one a line, the last the candidate. Properties: a match is a
 *      name of the same length equal but for ASCII case; every valid name
 *      matches itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ripple/ripple.h"
#include "ripplex/tlspeer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cert_case(const char *p, size_t n) {
  static const char *const names[] = {"kube-apiserver", "webhook.example"};
  char cn[TLSPEER_NAME_MAX + 1];
  memset(cn, 'x', sizeof cn);
  int named = tlspeer_cert_named(p, n, names, 2, cn, sizeof cn);
  if (strnlen(cn, sizeof cn) == sizeof cn) abort(); /* not terminated */
  if (named != 0 && named != 1) abort();
}

static void match_case(const char *p, size_t n) {
  char *copy = malloc(n + 1);
  if (!copy) return;
  memcpy(copy, p, n);
  copy[n] = '\0';
  const char *names[8];
  size_t nn = 0;
  char *cand = copy, *nl;
  while ((nl = memchr(cand, '\n', (size_t)(copy + n - cand))) && nn < 8) {
    *nl = '\0';
    names[nn++] = cand;
    cand = nl + 1;
  }
  size_t clen = (size_t)(copy + n - cand);
  if (tlspeer_name_match(names, nn, cand, clen)) {
    int found = 0;
    for (size_t i = 0; i < nn; i++)
      found |= strlen(names[i]) == clen && !memchr(cand, '\0', clen) &&
               !strncasecmp(names[i], cand, clen);
    if (!found) abort();
  }
  for (size_t i = 0; i < nn; i++)
    if (tlspeer_name_valid(names[i]) &&
        !tlspeer_name_match(&names[i], 1, names[i], strlen(names[i])))
      abort();
  free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  const char *p = (const char *)data + 1;
  if (data[0] & 1)
    match_case(p, size - 1);
  else
    cert_case(p, size - 1);
  return 0;
}
