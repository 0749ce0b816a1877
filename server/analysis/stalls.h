/*
 * stalls.h - the trace server's side of stalled-cascade detection (stall.h):
 * feeding the detector every committed span and, at start-up, every stored
 * one; advancing its clock from the writer's tick; and the API's and
 * /metrics' views of it (docs/api.md, "Stalled cascades").
 *
 * The detector lives under the core's lock (graph/core.h): the writer thread
 * changes it, queries read it. The server owns a stalls_t in its srv_t and
 * sets both fields at open; stall NULL: detection is off.
 */
#ifndef RIPPLE_SERVER_STALLS_H
#define RIPPLE_SERVER_STALLS_H

#include <stdint.h>

#include "analysis/stall.h"
#include "graph/core.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "store/store.h"

typedef struct stalls {
  stall_t *stall; /* NULL when off; guarded by core->lock (the writer feeds it) */
  core_t *core;
} stalls_t;

/* Feed committed spans to the detector; the caller holds the write lock. */
void stalls_feed(stalls_t *s, const dec_batch_t *b);
/* Feed one stored span at start-up (its body is parsed). */
void stalls_replay(stalls_t *s, const store_row_t *r);
/* Advance the detector's clock; takes the write lock. */
void stalls_tick(stalls_t *s, int64_t now);
/* GET /v1/stalls (cpid NULL) and GET /v1/cpids/{cpid}/stalls (the stalls of
 * CPIDs that descend from it): {"stalls": [...]} with each stall's Events.
 * Returns 200, 404 (unknown CPID) or 503. */
int stalls_answer(stalls_t *s, const ripple_cpid_t *cpid, sbuf_t *out);
/* GET /v1/stalls/expected: what the detector has learned. */
int stalls_model(stalls_t *s, sbuf_t *out);
/* The detector's families for /metrics. */
void stalls_metrics(stalls_t *s, sbuf_t *out);

#endif
