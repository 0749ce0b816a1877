/*
 * export.h - the OTLP exporter: every stored mergelog and span, sent as
 * OpenTelemetry traces (otlp.h) to an OTLP/HTTP endpoint (Jaeger, an
 * OpenTelemetry Collector, any backend that takes OTLP).
 *
 * It reads the durable store behind a cursor of its own (the last row of each
 * table it has delivered), kept in a file beside the database, so a restart
 * goes on where the last acknowledged request ended: delivery is at least
 * once, never less. One thread, its own read connection: ingest never waits
 * for it; the writer only tells it, after each commit, how far the tables go.
 *
 * Answers are treated as OTLP says: 2xx delivered (a partial success is
 * logged and counted, never retried); 429, 502, 503, 504 and connection
 * failures retried with exponential backoff and jitter, or after the
 * Retry-After the endpoint asks for; any other answer drops the batch
 * (counted and logged: it would fail forever). The backlog (rows not yet
 * delivered) is bounded: past max_backlog the oldest are skipped and counted.
 *
 * Ownership: exp_start copies the configuration's strings; exp_stop frees
 * everything.
 */
#ifndef RIPPLE_SERVER_EXPORT_H
#define RIPPLE_SERVER_EXPORT_H

#include <stdint.h>

#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "store/store.h"

typedef struct exp_config {
  const char *url;         /* http(s)://host:port/v1/traces, used as given */
  char **headers;          /* "Name: value" each, NULL-terminated; may be NULL */
  const char *ca_file;     /* PEM bundle to verify the endpoint; NULL: the system's */
  const char *client_cert; /* PEM files for mutual TLS; NULL: none */
  const char *client_key;
  int gzip;           /* compress request bodies */
  size_t batch;       /* most rows of each table per request */
  size_t max_backlog; /* most rows of each table waiting; older ones are skipped */
  int64_t timeout_ms; /* per request */
  int64_t backoff_min_ms, backoff_max_ms;
  const char *cursor_path; /* where the cursor is kept */
} exp_config_t;

typedef struct exp exp_t;

/* What the exporter reads: the store, and how it is told after each commit
 * how far a table goes. subscribe(owner, fn, ud) has fn(ud, kind, last_seq)
 * called in the writer thread after each commit; fn NULL stops it (the
 * server's srv_on_commit, through srv_export_source). */
typedef void (*exp_commit_fn)(void *ud, dec_kind_t kind, uint64_t last_seq);
typedef struct exp_source {
  store_t *store;
  void (*subscribe)(void *owner, exp_commit_fn fn, void *ud);
  void *owner;
} exp_source_t;

/* Read the cursor and start the exporter's thread. RIPPLE_OK, or an error
 * with err saying what is wrong (a cursor file that cannot be written). */
int exp_start(const exp_source_t *src, const exp_config_t *c, exp_t **out, char *err,
              size_t errcap);
/* Stop: the request in flight is abandoned (it is sent again after a
 * restart), the cursor is saved. NULL is a no-op. */
void exp_stop(exp_t *e);
typedef struct exp_stats {
  uint64_t cursor[2], last[2]; /* [0] mergelogs, [1] spans: delivered up to, committed up to */
  uint64_t exported[2], dropped_backlog[2], dropped_rejected[2], unreadable;
  uint64_t requests_ok, requests_retry, requests_rejected, spans_rejected;
} exp_stats_t;
void exp_stats(exp_t *e, exp_stats_t *out);
/* The exporter's metrics (ripple_otlp_export_*), Prometheus text. */
void exp_metrics(exp_t *e, sbuf_t *out);

/* The cursor file's contents: "ripple-otlp-cursor 1 <mergelog seq> <span seq>\n".
 * Parsed strictly: RIPPLE_OK or RIPPLE_EINVAL. */
int exp_cursor_parse(const char *text, uint64_t *ml, uint64_t *sp);

#endif
