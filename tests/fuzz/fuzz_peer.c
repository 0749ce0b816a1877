/*
 * fuzz_peer.c - libFuzzer target for what one webhook replica reads from
 * another or from the decider Lease: a memory handed over (memo.h's import,
 * handover.h) and a Lease object (lease.h's record parser).
 *
 * Properties: any input is taken or refused without a crash or a leak; what
 * an import took is exported again and, imported into the same memory, takes
 * nothing more (nothing it holds is newer than itself); a memory that took
 * an export gives an export that imports; a Lease record is bounded (its
 * strings NUL-terminated within their arrays) whatever the object says.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "memo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW (1800000000LL * 1000000000LL)

static void memo_case(const char *p, size_t n) {
  wh_memo_opts_t o = {.causes = 64,
                      .recent = 16,
                      .held = 64,
                      .deleting = 64,
                      .recent_ttl_ns = 5000000000LL,
                      .held_ttl_ns = 3600000000000LL,
                      .deleting_ttl_ns = 600000000000LL};
  wh_memo_t *m = NULL;
  if (wh_memo_new(&o, &m) != RIPPLE_OK) abort();
  size_t taken = 0;
  if (wh_memo_import(m, p, n, RIPPLE_ANC_MAX, NOW, &taken) == RIPPLE_OK && taken) {
    sbuf_t x;
    sbuf_init(&x);
    if (wh_memo_export(m, NOW, 600000000000LL, &x) != RIPPLE_OK) abort();
    size_t again = 99;
    if (wh_memo_import(m, x.p, x.len, RIPPLE_ANC_MAX, NOW, &again) != RIPPLE_OK) abort();
    /* Causes keep their earliest time and are counted when seen again. */
    json_t *doc = json_loadb(x.p, x.len, 0, NULL);
    size_t causes = json_array_size(json_object_get(doc, "causes"));
    json_decref(doc);
    if (again != causes) abort();
    sbuf_free(&x);
  }
  wh_memo_free(m);
}

static void lease_case(const char *p, size_t n) {
  json_t *obj = json_loadb(p, n, 0, NULL);
  wh_lease_rec_t r;
  memset(&r, 0x5a, sizeof r);
  if (wh_lease_rec_parse(obj, &r) >= 0) {
    if (!memchr(r.holder, 0, sizeof r.holder) || !memchr(r.rv, 0, sizeof r.rv) ||
        !memchr(r.acquire, 0, sizeof r.acquire) || !memchr(r.renew, 0, sizeof r.renew))
      abort();
    json_t *spec = wh_lease_spec(&r);
    json_decref(spec);
  }
  json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  const char *p = (const char *)data + 1;
  if (data[0] & 1)
    lease_case(p, size - 1);
  else
    memo_case(p, size - 1);
  return 0;
}
