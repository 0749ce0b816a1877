/*
 * handover.h - what one decider knows, handed to the next.
 *
 * The decider's memory (memo.h) holds what no object carries: the contexts of
 * scales and of a Deployment's updates (held), the deletions that cause
 * others, when each change was admitted. A new decider without them cuts
 * every cascade in flight at a rolling update (its generation stamps make
 * the writes that follow roots marked cause unknown, never wrong relations).
 * So a replica that becomes the decider asks the replica that held the Lease
 * just before it for its memory (GET /v1/peer/memo, authenticated with a
 * token both derive from the serving key the replicas share) and takes what
 * is newer than its own; a decider that stops answers that request for a
 * while after it released the Lease (main.c). Entries that are about an
 * older generation than their object has are never taken as current
 * (stamp.c), so a memory handed over late or from the wrong replica can only
 * cut a cascade, not misplace it.
 *
 * Memory: the options are borrowed and must outlive the handle. Threads:
 * wh_handover_tick is called from one thread (the webhook's ticker); the
 * token functions from any.
 */
#ifndef RIPPLE_WEBHOOK_HANDOVER_H
#define RIPPLE_WEBHOOK_HANDOVER_H

#include <stddef.h>
#include <stdint.h>

#include "forward.h"
#include "lease.h"
#include "wh.h"

#define WH_PEER_HEADER "X-Ripple-Peer"
#define WH_PEER_TOKEN_LEN 64 /* hex of HMAC-SHA256 */

/* The peer token of a serving key (PEM text): the same on every replica that
 * shares the key, and nothing a client without it can make. out gets
 * WH_PEER_TOKEN_LEN hex digits and a NUL. RIPPLE_OK or RIPPLE_ESYS. */
int wh_peer_token(const char *key_pem, char out[WH_PEER_TOKEN_LEN + 1]);
/* Whether a request's header value is the token (in constant time). */
int wh_peer_token_ok(const char *token, const char *got);

typedef struct wh_handover {
  wh_t *engine;
  wh_lease_t *lease;
  wh_fwd_t *fwd;
  const char *self;  /* this replica's identity in the Lease */
  const char *token; /* the peer token */
  /* What the ticker saw: the last other holder and the holding it was. */
  char prev[WH_LEASE_ID_MAX];
  uint64_t prev_gen, taken_gen;
} wh_handover_t;

/* Look at the Lease; on becoming the decider, take the previous holder's
 * memory (at most the forward's timeout). */
void wh_handover_tick(wh_handover_t *h);

#endif
