/*
 * ripplex/cpid.h - CPIDs in hot paths: comparison, hashing, text form.
 *
 * The public ripple_cpid_equal()/ripple_cpid_format() are these, behind a
 * call; the merge path, the trace server's graph and the webhook's memory
 * compare and hash ids often enough that a call matters.
 */
#ifndef RIPPLEX_CPID_H
#define RIPPLEX_CPID_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ripple/ripple.h"

/* Two 64-bit loads beat memcmp. */
static inline int cpid_eq(const ripple_cpid_t *a, const ripple_cpid_t *b) {
  uint64_t a0, a1, b0, b1;
  memcpy(&a0, a->b, 8);
  memcpy(&a1, a->b + 8, 8);
  memcpy(&b0, b->b, 8);
  memcpy(&b1, b->b + 8, 8);
  return a0 == b0 && a1 == b1;
}

static inline int cpid_nil(const ripple_cpid_t *a) {
  static const ripple_cpid_t zero;
  return cpid_eq(a, &zero);
}

/* A hash of a CPID for hash tables that hold ids from outside: splitmix64's
 * finaliser over both halves and a per-process seed, so a hostile writer cannot
 * pick ids that all land in one bucket. */
static inline uint64_t cpid_hash(const ripple_cpid_t *id, uint64_t seed) {
  uint64_t a, b;
  memcpy(&a, id->b, 8);
  memcpy(&b, id->b + 8, 8);
  uint64_t x = a ^ (b << 29 | b >> 35) ^ seed;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* The span id of a CPID's root span when its trace is exported to
 * OpenTelemetry (docs/format.md, "As OpenTelemetry traces"): its last 8
 * bytes, or its first 8 when the last are all zero (never for a CPID ripple
 * made: a UUID's variant bits are in byte 8; possible for one taken from a
 * client's W3C trace id). Never all zero, for a CPID that is not nil. */
static inline void cpid_root_span(const ripple_cpid_t *id, uint8_t out[8]) {
  static const uint8_t zero[8];
  memcpy(out, id->b + (memcmp(id->b + 8, zero, 8) ? 8 : 0), 8);
}

/* The canonical text form (RIPPLE_CPID_STRLEN characters and a NUL): a
 * lowercase UUID. Inline: every context encoded and every wire record
 * writes several. */
static inline void cpid_text(const ripple_cpid_t *id, char out[RIPPLE_CPID_STRLEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[id->b[i] >> 4];
    out[o++] = hex[id->b[i] & 15];
  }
  out[o] = '\0';
}

#endif
