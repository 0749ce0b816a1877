/*
 * server.h - the trace server's state and its operations, independent of HTTP:
 * ingest (decode, store durably, add to the graph), queries by CPID, an
 * object's roots, listings, retention. http.c maps requests onto these.
 */
#ifndef RIPPLE_SERVER_SERVER_H
#define RIPPLE_SERVER_SERVER_H

#include <pthread.h>

#include "analysis/stall.h"
#include "graph/graph.h"
#include "graph/objects.h"
#include "graph/roots.h"
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
} srv_config_t;

typedef struct dwork dwork_t; /* the details' worker (trace_details.c) */

typedef struct srv {
  srv_config_t cfg;
  graph_t *g;
  roots_t *roots;        /* objects' root mergelogs, by uid */
  objects_t *objects;    /* objects' recent CPIDs, by kind/namespace/name */
  pthread_rwlock_t lock; /* guards g, roots and objects: the store's writer thread writes,
                            queries read */
  store_t *store;
  metrics_t m;
  atomic_int ready;
  /* Told after each commit how far a table goes (the OTLP exporter); set by
   * srv_on_commit. */
  void (*commit_fn)(void *ud, dec_kind_t kind, uint64_t last_seq);
  _Atomic(void *) commit_ud;
  atomic_uint_fast64_t otlp_spans[2];     /* POST /v1/traces: spans accepted, rejected */
  facts_t *facts;                         /* details: changes, Events, audit events */
  char *details_path;                     /* when made from db_path */
  atomic_uint_fast64_t details_stored[3]; /* changes, Events, audit events */
  atomic_uint_fast64_t details_refused;   /* requests refused with a 4xx */
  atomic_uint_fast64_t details_busy;      /* requests refused with 429: the worker's queue */
  dwork_t *dwork;
  atomic_uint_fast64_t audit_skipped, audit_malformed;
  stall_t *stall; /* NULL when off; guarded by lock (the writer feeds it) */
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
/* Answer a query about one CPID as a JSON document in out. Returns an HTTP
 * status (200, 404 for an unknown CPID). */
int srv_query(srv_t *s, query_t q, const ripple_cpid_t *cpid, size_t limit, sbuf_t *out);
/* A cursor this server hands out ("<time>.<seq>" of the last record of a
 * page: opaque to clients) into its parts: RIPPLE_OK or RIPPLE_EINVAL. */
int srv_cursor_parse(const char *s, int64_t *time, int64_t *seq);
/* The end of a page's answer: `],"next":"<time>.<seq>"}` when more follow,
 * else `],"next":null}`. */
void srv_page_end(sbuf_t *out, int more, int64_t time, int64_t seq);
/* A page of all mergelogs or spans, time-ordered. */
int srv_list(srv_t *s, dec_kind_t kind, int64_t since, int64_t until, const char *cursor,
             size_t limit, sbuf_t *out, char *err, size_t errcap);
/* The root mergelogs of an object (by its uid), newest first, at most limit:
 * {"roots": [...]}. Returns an HTTP status (200, 503). */
int srv_roots(srv_t *s, const char *uid, size_t limit, sbuf_t *out);
/* Is this CPID (still) in the graph? ud is the srv_t; the caller holds the
 * lock. */
int srv_cpid_live(void *ud, const ripple_cpid_t *cpid);

/* Objects and their recent CPIDs (objects.h), most recently written first:
 * {"objects": [...]}. NULL filters match anything. Returns 200 or 503. */
int srv_objects(srv_t *s, const char *kind, const char *ns, const char *name, size_t limit,
                sbuf_t *out);

/* Root search (store_roots), newest first, each root with a summary of its
 * cascade: {"roots": [...], "next": cursor or null}. Returns 200, 400 (a
 * cursor this server did not hand out; err says so) or 503. */
typedef struct srv_root_search {
  int64_t since, until; /* INT64_MIN, 0: no bound */
  const char *cursor, *component, *ns, *kind, *name;
  size_t limit;
} srv_root_search_t;
int srv_search_roots(srv_t *s, const srv_root_search_t *q, sbuf_t *out, char *err, size_t errcap);

void srv_metrics(srv_t *s, uint64_t connections, sbuf_t *out);

/* ---- details (trace_details.c) ---- */

/* Start and stop the thread that parses and stores details (before any
 * request, after the last). */
int srv_details_start(srv_t *s);
void srv_details_stop(srv_t *s);
/* POST /v1/details: the watch agent's changes and Events (details.h), all or
 * nothing. Returns 200, 400/413 (err says why), 429 (the queue is full:
 * retry later), 503. */
int srv_ingest_details(srv_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err);
/* POST /v1/audit: kube-apiserver's audit webhook backend (audit.h). */
int srv_ingest_audit(srv_t *s, const char *body, size_t len, size_t *accepted, dec_error_t *err);
/* GET /v1/cpids/{cpid}/details: the facts joined to the cascade's spans.
 * Returns 200, 404 (unknown CPID) or 503. */
int srv_details(srv_t *s, const ripple_cpid_t *cpid, size_t limit, sbuf_t *out);

/* ---- stalled cascades (stalls.c) ---- */

/* Feed committed spans to the detector; the caller holds the write lock. */
void srv_stall_feed(srv_t *s, const dec_batch_t *b);
/* Feed one stored span at start-up (its body is parsed). */
void srv_stall_replay(srv_t *s, const store_row_t *r);
/* Advance the detector's clock; takes the write lock. */
void srv_stall_tick(srv_t *s, int64_t now);
/* GET /v1/stalls (cpid NULL) and GET /v1/cpids/{cpid}/stalls (the stalls of
 * CPIDs that descend from it): {"stalls": [...]} with each stall's Events.
 * Returns 200, 404 (unknown CPID) or 503. */
int srv_stalls(srv_t *s, const ripple_cpid_t *cpid, sbuf_t *out);
/* GET /v1/stalls/expected: what the detector has learned. */
int srv_stall_model(srv_t *s, sbuf_t *out);
/* The detector's families for /metrics. */
void srv_stall_metrics(srv_t *s, sbuf_t *out);

#endif
