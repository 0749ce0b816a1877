/*
 * server.h - the trace server's state and its operations, independent of HTTP:
 * ingest (decode, store durably, add to the graph), queries by CPID, an
 * object's roots, listings, retention. http.c maps requests onto these.
 * srv_t owns every subsystem's state and wires them together (the commit
 * hook feeds the graph, the stall detector and the exporter), so the
 * subsystems below it never need this header (server/README.md).
 */
#ifndef RIPPLE_SERVER_SERVER_H
#define RIPPLE_SERVER_SERVER_H

#include <pthread.h>

#include "analysis/fights.h"
#include "analysis/stall.h"
#include "analysis/stalls.h"
#include "analysis/trace_details.h"
#include "export/export.h"
#include "graph/core.h"
#include "graph/search.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "serve/metrics.h"
#include "store/facts.h"
#include "store/store.h"

typedef struct srv_config {
  const char *db_path;
  int sync_full;
  size_t max_vertices; /* retention by size; 0: none */
  int64_t max_age_ns;  /* retention by age; 0: none */
  size_t query_limit;  /* most CPIDs one query walks */
  dec_limits_t limits;
  /* Details (facts.h): their own database, "<db_path>.details" when NULL. */
  const char *details_path;
  size_t details_queue;    /* facts waiting to be written, at most; 0: the default */
  size_t details_max_rows; /* retention by count; 0: none (max_age_ns applies too) */
  /* Stalled cascades (stall.h); stall_off: no detector. */
  stall_opts_t stall;
  int stall_off;
  size_t stall_queue_bytes; /* spans waiting for the detector, at most; 0: the default */
  /* Field fights (fights.h); fights_off: no detector. */
  fights_opts_t fights;
  int fights_off;
} srv_config_t;

typedef struct srv {
  srv_config_t cfg;
  core_t core; /* the graph, its indexes, their lock, the stores (graph/core.h) */
  metrics_t m;
  atomic_int ready;
  /* Told after each commit how far a table goes (the OTLP exporter); set by
   * srv_on_commit. */
  void (*commit_fn)(void *ud, dec_kind_t kind, uint64_t last_seq);
  _Atomic(void *) commit_ud;
  atomic_uint_fast64_t otlp_spans[2]; /* POST /v1/traces: spans accepted, rejected */
  char *details_path;                 /* when made from db_path */
  tdet_t details;                     /* details' ingest and answers (trace_details.h) */
  stalls_t stalls;                    /* the stall detector (stalls.h); its stall NULL: off */
  fights_t *fights;                   /* the field-fight detector (fights.h); NULL: off */
  exp_source_t export_src;            /* srv_export_source */
} srv_t;

/* Open the store, rebuild the graph from it, start the writer. */
int srv_open(srv_t *s, const srv_config_t *cfg, char *err, size_t errcap);
void srv_close(srv_t *s);

/* Ingest one request body. On a client error returns 4xx status with the
 * problem in *err; 200 when every record is durable; 503 when storage failed. */
int srv_ingest(srv_t *s, dec_kind_t kind, const char *body, size_t len, size_t *accepted,
               dec_error_t *err);

/* Call fn(ud, kind, seq of the batch's last row) in the writer thread after
 * each committed batch; fn NULL: stop. fn must be quick and never block on
 * I/O (it holds up the next commit). */
void srv_on_commit(srv_t *s, void (*fn)(void *ud, dec_kind_t kind, uint64_t last_seq), void *ud);

/* Ingest an OTLP/HTTP trace request (POST /v1/traces): the spans that belong
 * to a CPID become ripple spans (otlp.h). Returns an HTTP status and the
 * answer (an ExportTraceServiceResponse in the request's encoding, or
 * the problem in err for a 4xx/5xx). */
int srv_ingest_otlp(srv_t *s, int json, const char *body, size_t len, sbuf_t *answer,
                    dec_error_t *err);

typedef enum { Q_RELATED, Q_ORIGINS, Q_MERGELOGS, Q_SPANS } query_t;
/* Answer a query about one CPID as a JSON document in out: related,
 * mergelogs and spans over its cascade in `scope` (graph.h; origins ignore
 * it). Returns an HTTP status (200, 404 for an unknown CPID). */
int srv_query(srv_t *s, query_t q, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
              sbuf_t *out);
/* A page of all mergelogs or spans, time-ordered. */
int srv_list(srv_t *s, dec_kind_t kind, int64_t since, int64_t until, const char *cursor,
             size_t limit, sbuf_t *out, char *err, size_t errcap);
/* The root mergelogs of an object (by its uid), newest first, at most limit:
 * {"roots": [...]}. Returns an HTTP status (200, 503). */
int srv_roots(srv_t *s, const char *uid, size_t limit, sbuf_t *out);
/* Is this CPID (still) in the graph? ud is the srv_t; the caller holds the
 * lock. */
int srv_cpid_live(void *ud, const ripple_cpid_t *cpid);

void srv_metrics(srv_t *s, uint64_t connections, sbuf_t *out);

/* The exporter's view of the server (export.h): its store, and srv_on_commit
 * to be told of commits. Valid from srv_open to srv_close. */
const exp_source_t *srv_export_source(srv_t *s);

/* Search (graph/search.h), details (analysis/trace_details.h) and stalled
 * cascades (analysis/stalls.h) are answered by their subsystems from
 * s->core, s->details and s->stalls: http.c calls them directly. */

#endif
