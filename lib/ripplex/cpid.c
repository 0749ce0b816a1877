/*
 * cpid.c - the canonical text form of a CPID (a lowercase UUID), shared by
 * libripple's ripple_cpid_format() and every wire encoder.
 */
#include "ripplex/cpid.h"

void cpid_text(const ripple_cpid_t *id, char out[RIPPLE_CPID_STRLEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[id->b[i] >> 4];
    out[o++] = hex[id->b[i] & 15];
  }
  out[o] = '\0';
}
