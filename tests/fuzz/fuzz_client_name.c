/*
 * fuzz_client_name.c - libFuzzer target for how ripple-webhook maps a client
 * certificate to a name (lib/ripplex/tlsname.c, --client-name): the subject
 * DN in RFC 4514 form reduced to its one common name, and names matched.
 *
 * The first byte picks the case; the rest is the input.
 *   0: a DN. Properties: no crash; on RIPPLE_OK the CN is NUL-terminated
 *      within its buffer and holds no NUL; escaped again (every byte as \XX)
 *      it parses back to itself; on anything else the buffer is "".
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

static void dn_case(const char *p, size_t n) {
  char cn[TLSPEER_NAME_MAX + 1];
  int rc = tlspeer_dn_cn(p, n, cn, sizeof cn);
  size_t len = strnlen(cn, sizeof cn);
  if (len == sizeof cn) abort(); /* not terminated */
  if (rc != RIPPLE_OK) {
    if (len) abort(); /* nothing half-read left */
    return;
  }
  /* Round trip: "CN=" and every byte as \XX. */
  char again[3 + 3 * TLSPEER_NAME_MAX + 1], back[TLSPEER_NAME_MAX + 1];
  size_t k = (size_t)snprintf(again, sizeof again, "cn=");
  for (size_t i = 0; i < len; i++)
    k += (size_t)snprintf(again + k, sizeof again - k, "\\%02X", (unsigned char)cn[i]);
  if (tlspeer_dn_cn(again, k, back, sizeof back) != RIPPLE_OK || strcmp(back, cn) != 0) abort();
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
    dn_case(p, size - 1);
  return 0;
}
