/*
 * stalls.h - the trace server's side of stalled-cascade detection (stall.h):
 * feeding the detector every committed span and, at start-up, every stored
 * one; advancing its clock from the writer's tick; and the API's and
 * /metrics' views of it (docs/api.md, "Stalled cascades").
 *
 * The detector runs beside ingest, never inside it: the store's writer
 * thread only copies each committed span into a bounded queue
 * (stall_queue.h), after the graph's write lock is released; a thread of
 * the detector's own feeds them and advances its clock. The detector is
 * guarded by `mu`; its thread and the answers take `mu` before the core's
 * lock (the related() callback takes the read lock per call), never the
 * other way round. The server owns a stalls_t in its srv_t, sets stall and
 * core at open and calls stalls_start once the stored spans are replayed;
 * stall NULL: detection is off.
 *
 * Lag never makes an answer false (stalls.c, "Lag and drops"): the
 * detector's clock stays behind the oldest queued span, an answer first
 * waits (bounded) for the spans acknowledged before it, and a stall of a
 * write admitted before a span was dropped is withheld.
 */
#ifndef RIPPLE_SERVER_STALLS_H
#define RIPPLE_SERVER_STALLS_H

#include <stdint.h>

#include <pthread.h>

#include "analysis/stall.h"
#include "analysis/stall_queue.h"
#include "graph/core.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "store/store.h"

typedef struct stalls {
  stall_t *stall; /* NULL when off; guarded by mu */
  core_t *core;
  pthread_mutex_t mu;
  stallq_t *q; /* committed spans not fed yet */
  stallq_chunk_t chunk;
  pthread_t thread;
  int running;
} stalls_t;

/* The queue's size when the server gives none: 64 MiB, some 300,000 spans. */
#define STALLS_QUEUE_BYTES ((size_t)64 << 20)

/* Start the detector's thread with a queue of queue_bytes (0: the default).
 * Nothing to do when the detector is off. */
int stalls_start(stalls_t *s, size_t queue_bytes);
/* Stop the thread (spans still queued are not fed); before stall_free. */
void stalls_stop(stalls_t *s);
/* Queue committed spans for the detector; in the writer thread, with no
 * lock held. Never blocks on the detector: a span the queue has no room for
 * is dropped and counted. */
void stalls_feed(stalls_t *s, const dec_batch_t *b);
/* Feed one stored span at start-up (its body is parsed), before
 * stalls_start. */
void stalls_replay(stalls_t *s, const store_row_t *r);
/* Wait until the detector has fed every span acknowledged before this call,
 * at most timeout_ms; 1 when it has. */
int stalls_sync(stalls_t *s, int timeout_ms);
/* GET /v1/stalls (cpid NULL) and GET /v1/cpids/{cpid}/stalls (the stalls of
 * CPIDs that descend from it: in its own cascade, or everything reachable,
 * by scope; graph.h): {"stalls": [...]} with each stall's Events. Returns
 * 200, 404 (unknown CPID) or 503. */
int stalls_answer(stalls_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, sbuf_t *out);
/* GET /v1/stalls/expected: what the detector has learned. */
int stalls_model(stalls_t *s, sbuf_t *out);
/* The detector's families for /metrics. */
void stalls_metrics(stalls_t *s, sbuf_t *out);

#endif
