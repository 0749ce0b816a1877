/*
 * otlp_export.h - ripple records as OpenTelemetry traces, for the exporter
 * (export.h): the mapping of ingest/otlp.h and docs/otlp.md, the other way.
 * Encoding takes the stored canonical JSON of records.
 *
 * Ownership: an otlp_batch_t owns everything added to it until
 * otlp_batch_free(); output goes to the caller's sbuf_t.
 */
#ifndef RIPPLE_SERVER_OTLP_EXPORT_H
#define RIPPLE_SERVER_OTLP_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/decode.h"
#include "ripplex/sbuf.h"

typedef struct otlp_batch otlp_batch_t;

int otlp_batch_new(otlp_batch_t **out);
/* Add one stored record (canonical JSON, docs/api.md). RIPPLE_EJSON when the
 * body is not a record (it is then left out). */
int otlp_batch_add(otlp_batch_t *b, dec_kind_t kind, const char *body, size_t len);
/* Spans in the batch (root spans included). */
size_t otlp_batch_spans(const otlp_batch_t *b);
/* The batch as an ExportTraceServiceRequest in protobuf, appended to out. */
int otlp_batch_encode(otlp_batch_t *b, sbuf_t *out);
/* Empty the batch for reuse. */
void otlp_batch_reset(otlp_batch_t *b);
void otlp_batch_free(otlp_batch_t *b);

/* An ExportTraceServiceResponse (protobuf) read for its partial success:
 * rejected spans and the message (NUL-terminated, cut to cap). An empty or
 * unreadable body reads as none rejected. */
void otlp_read_response(const void *body, size_t len, int64_t *rejected, char *msg, size_t cap);

#endif
