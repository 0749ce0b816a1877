/*
 * trace_details.h - the trace server's side of details (docs/api.md,
 * "Details"): storing what POST /v1/details and POST /v1/audit bring
 * (details.h into store/facts.h) from a worker thread of its own, and
 * answering GET /v1/cpids/{cpid}/details by joining facts to the cascade's
 * spans (the joins are described in trace_details.c).
 *
 * The server owns a tdet_t in its srv_t: it sets core, limits and
 * query_limit before tdet_start and reads the counters for /metrics.
 * Threads: every call but tdet_start and tdet_stop may come from any thread.
 */
#ifndef RIPPLE_SERVER_TRACE_DETAILS_H
#define RIPPLE_SERVER_TRACE_DETAILS_H

#include <stdatomic.h>
#include <stddef.h>

#include "analysis/fights.h"
#include "graph/core.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"

typedef struct dwork dwork_t; /* the details' worker (trace_details.c) */

typedef struct tdet {
  core_t *core;
  dec_limits_t limits;                    /* the server's, for the details' records */
  size_t query_limit;                     /* most CPIDs one answer walks */
  atomic_uint_fast64_t details_stored[3]; /* changes, Events, audit events */
  atomic_uint_fast64_t details_refused;   /* requests refused with a 4xx */
  atomic_uint_fast64_t details_busy;      /* requests refused with 429: the worker's queue */
  atomic_uint_fast64_t details_late;      /* requests taken over by their own thread: late */
  atomic_uint_fast64_t audit_skipped, audit_malformed;
  fights_t *fights; /* the field-fight detector fed with each change stored, or NULL */
  dwork_t *dwork;
} tdet_t;

/* Start and stop the thread that parses and stores details (before any
 * request, after the last). */
int tdet_start(tdet_t *s);
void tdet_stop(tdet_t *s);
/* POST /v1/details: the watch agent's changes and Events (details.h), all or
 * nothing. Returns 200, 400/413 (err says why), 429 (the queue is full:
 * retry later), 503. */
int tdet_ingest(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err);
/* POST /v1/audit: kube-apiserver's audit webhook backend (audit.h). */
int tdet_ingest_audit(tdet_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err);
/* The parser's queue: requests queued or being parsed, and their bodies'
 * bytes (bounded: past 256 MiB, 429). */
void tdet_pending(tdet_t *s, size_t *requests, size_t *bytes);
/* GET /v1/cpids/{cpid}/details: the facts joined to the spans of the
 * cascade in `scope` (graph.h). Returns 200, 404 (unknown CPID) or 503. */
int tdet_answer(tdet_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                sbuf_t *out);
/* The "writes" of tdet_answer (each span's change and audit event, joined
 * the same way) for only the spans named in span_ids of the CPIDs cpids:
 * {"spans": N, "writes": [...]} (N: the spans found). What the critical
 * path's parts need (analysis/paths.h), without reading a whole cascade's
 * facts. Returns 200 or 503. */
int tdet_span_writes(tdet_t *s, const ripple_cpid_t *cpids, size_t n, const char *const *span_ids,
                     size_t nspans, sbuf_t *out);

#endif
