/*
 * handover.c - what one decider knows, handed to the next (handover.h).
 */
#include "handover.h"
#include "core.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "ripplex/logonce.h"

int wh_peer_token(const char *key_pem, char out[WH_PEER_TOKEN_LEN + 1]) {
  static const char label[] = "ripple-webhook peer token v1";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!key_pem ||
      !HMAC(EVP_sha256(), key_pem, (int)strlen(key_pem), (const unsigned char *)label,
            sizeof label - 1, mac, &n) ||
      n * 2 != WH_PEER_TOKEN_LEN)
    return RIPPLE_ESYS;
  for (unsigned i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", mac[i]);
  OPENSSL_cleanse(mac, sizeof mac);
  return RIPPLE_OK;
}

int wh_peer_token_ok(const char *token, const char *got) {
  if (!token || !got || strlen(got) != WH_PEER_TOKEN_LEN || strlen(token) != WH_PEER_TOKEN_LEN)
    return 0;
  return CRYPTO_memcmp(token, got, WH_PEER_TOKEN_LEN) == 0;
}

/* The memory of the replica that held the Lease before, into this one's. */
static void take(wh_handover_t *h) {
  sbuf_t b;
  sbuf_init(&b);
  int rc = wh_fwd_get(h->fwd, h->prev, "/v1/peer/memo", WH_PEER_HEADER, h->token, &b);
  size_t n = 0;
  if (rc == RIPPLE_OK)
    rc = wh_memo_import(h->engine->memo, b.p ? b.p : "", b.len,
                        ripple_tracer_max_ancestors(wh_tracer(h->engine)), wh_now(h->engine), &n);
  if (rc == RIPPLE_OK)
    ripple_log(RIPPLE_LOG_INFO, "handover_taken", "from=%s entries=%zu bytes=%zu", h->prev, n,
               b.len);
  else
    ripple_log(RIPPLE_LOG_WARN, "handover_failed", "from=%s error=%s hint=%s", h->prev,
               ripple_errname(rc),
               "what it held is not known here: the writes it caused become roots marked "
               "causeUnknown");
  sbuf_free(&b);
}

void wh_handover_tick(wh_handover_t *h) {
  char holder[WH_LEASE_ID_MAX];
  uint64_t gen = 0;
  int deciding = wh_lease_state(h->lease, holder, sizeof holder, NULL, &gen);
  if (!deciding) {
    if (*holder && strcmp(holder, h->self) != 0) {
      snprintf(h->prev, sizeof h->prev, "%s", holder);
      h->prev_gen = gen;
    }
    return;
  }
  if (h->taken_gen == gen) return;
  h->taken_gen = gen;
  /* Only the holding just before this one (released, or expired, and then
   * this one's: two changes of holding at most): an older holder's memory
   * may miss what a later one decided. */
  if (*h->prev && h->token && gen - h->prev_gen <= 2) take(h);
}
