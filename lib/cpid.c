/*
 * cpid.c - Change Propagation IDs: random UUIDs and their text form.
 *
 * CPIDs are generated independently by many components, so they must never
 * collide: they are version-4 UUIDs from the kernel's CSPRNG, through
 * ripplex's per-thread random buffer (ripplex/rnd.h).
 */
#include "internal.h"

void cpid_from_random(ripple_cpid_t *id) {
  id->b[6] = (uint8_t)((id->b[6] & 0x0f) | 0x40); /* version 4 */
  id->b[8] = (uint8_t)((id->b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

int ripple_cpid_generate(ripple_cpid_t *out) {
  if (!out) return RIPPLE_EINVAL;
  int rc = rnd_bytes(out->b, sizeof out->b);
  if (rc != RIPPLE_OK) return rc;
  cpid_from_random(out);
  return RIPPLE_OK;
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int ripple_cpid_parse(const char *s, size_t len, ripple_cpid_t *out) {
  if (!s || !out) return RIPPLE_EINVAL;
  if (len != RIPPLE_CPID_STRLEN) return RIPPLE_EBADCTX;
  ripple_cpid_t id;
  size_t j = 0;
  for (size_t i = 0; i < RIPPLE_CPID_STRLEN;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return RIPPLE_EBADCTX;
      i++;
      continue;
    }
    int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
    if (hi < 0 || lo < 0) return RIPPLE_EBADCTX;
    id.b[j++] = (uint8_t)(hi << 4 | lo);
    i += 2;
  }
  if (cpid_nil(&id)) return RIPPLE_EBADCTX;
  *out = id;
  return RIPPLE_OK;
}

void ripple_cpid_format(const ripple_cpid_t *id, char *out) { cpid_text(id, out); }

int ripple_cpid_equal(const ripple_cpid_t *a, const ripple_cpid_t *b) { return cpid_eq(a, b); }

int ripple_cpid_is_nil(const ripple_cpid_t *id) { return cpid_nil(id); }
