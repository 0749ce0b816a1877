/*
 * otlp.h - ripple records as OpenTelemetry traces, and OpenTelemetry traces as
 * ripple spans (OTLP/HTTP, protobuf or JSON). The mapping is documented in
 * docs/otlp.md; in short:
 *
 *   - a CPID is a trace id (its 16 bytes);
 *   - each CPID has a root span whose span id is the CPID's last 8 bytes
 *     (cpid_root_span in ripplex/cpid.h), made from its mergelog: a span named "ripple.root"
 *     (a person's change) or "ripple.merge", with a link to the root span of
 *     every source CPID;
 *   - a ripple span keeps its span id and parent; one without a parent hangs
 *     under its CPID's root span;
 *   - service.name is the component.
 *
 * This header is the receiving side: decoding (POST /v1/traces) turns the
 * spans of a request that belong to a CPID into ripple span records, straight
 * into a dec_batch_t through the checks POST /v1/spans uses (decode_check.h),
 * or, the route the server took before and the fuzz target's reference, into
 * a JSON array of ripple spans that dec_decode() accepts. The encoding for the exporter is
 * export/otlp_export.h; both are built on the messages of otlp.proto.
 *
 * Ownership: output goes to the caller's sbuf_t or dec_batch_t.
 */
#ifndef RIPPLE_SERVER_OTLP_H
#define RIPPLE_SERVER_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/decode.h"
#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

/* ---- receive ------------------------------------------------------------ */

typedef enum { OTLP_PROTOBUF, OTLP_JSON } otlp_encoding_t;

typedef struct otlp_recv {
  const dec_limits_t *lim; /* the server's limits: values are cut to fit them */
  /* Is this trace id a CPID the server knows (has in its graph)? */
  int (*known)(void *ud, const ripple_cpid_t *cpid);
  void *ud;
} otlp_recv_t;

typedef struct otlp_result {
  size_t spans;    /* spans in the request */
  size_t accepted; /* turned into ripple spans (in the output array) */
  size_t rejected; /* left out: not a CPID's, or malformed */
  char msg[192];   /* why the first was left out ("" when none was) */
} otlp_result_t;

/* Convert a request body. On RIPPLE_OK, out holds a JSON array of ripple
 * spans (possibly empty) and *res the counts. RIPPLE_EJSON when the body is
 * not an ExportTraceServiceRequest in that encoding (msg says why);
 * RIPPLE_ENOMEM when decoding it would take more memory than a request may. */
int otlp_receive(otlp_encoding_t enc, const void *body, size_t len, const otlp_recv_t *r,
                 sbuf_t *out, otlp_result_t *res);
/* Convert a request body straight into records, as dec_decode() would make
 * them from otlp_receive's array (the server's path). On RIPPLE_OK, *out
 * holds the accepted spans (free it with dec_batch_free) and *res the counts.
 * Else *out is empty and *err says why: RIPPLE_EJSON and RIPPLE_ENOMEM as
 * otlp_receive (res->msg copied), RIPPLE_ERANGE for more accepted spans than
 * a request may have, RIPPLE_EINVAL for a converted span the server's checks
 * refuse (a bug here: the conversion makes every span fit them). */
int otlp_receive_batch(otlp_encoding_t enc, const void *body, size_t len, const otlp_recv_t *r,
                       dec_batch_t *out, otlp_result_t *res, dec_error_t *err);
/* The answer to a request: an ExportTraceServiceResponse in the request's
 * encoding, with a partial success when spans were rejected. */
void otlp_response(otlp_encoding_t enc, const otlp_result_t *res, sbuf_t *out);

/* ---- shared by otlp_*.c ---------------------------------------------------- */

/* A span as both encodings see it, for otlp_receive's converter. Strings are
 * not NUL-terminated. */
typedef struct otlp_kv {
  const char *key, *val;
  size_t key_len, val_len;
} otlp_kv_t;

#endif
