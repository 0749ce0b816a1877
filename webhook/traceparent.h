/*
 * traceparent.h - W3C trace context in the annotation of KEP-5915
 * (`tracing.k8s.io/traceparent`, provisional), next to ripple's own context.
 *
 * A CPID is an OpenTelemetry trace id (its 16 bytes), and each CPID has a
 * root span whose span id is the CPID's last 8 bytes (the trace server's
 * OTLP exporter relies on this), so the traceparent of a CPID is
 *
 *     00-<the CPID's 32 lower-case hex digits>-<its last 16>-01
 *
 * The parser takes outside input (any client may set the annotation) and
 * accepts exactly version 00 in lower case, as W3C Trace Context writes it;
 * anything else is malformed. docs/format.md, "W3C trace context (KEP-5915)".
 */
#ifndef RIPPLE_WEBHOOK_TRACEPARENT_H
#define RIPPLE_WEBHOOK_TRACEPARENT_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

#define WH_TRACEPARENT_KEY "tracing.k8s.io/traceparent"
/* "00-" 32 "-" 16 "-" 2 */
#define WH_TRACEPARENT_LEN 55

typedef struct wh_traceparent {
  ripple_cpid_t trace_id; /* the 16 bytes as they are: no UUID version forced */
  uint64_t span_id;       /* the 16 hex digits, most significant first */
  uint8_t flags;          /* read, not interpreted */
} wh_traceparent_t;

/* Parse exactly len bytes: RIPPLE_OK, or RIPPLE_EBADCTX (*out untouched) for
 * anything but version 00 with lower-case hex, a trace id and a span id that
 * are not all zero. */
int wh_traceparent_parse(const char *s, size_t len, wh_traceparent_t *out);

/* The traceparent of a CPID into out (WH_TRACEPARENT_LEN + 1 bytes). 1, or
 * 0 (out untouched) when the CPID's last 8 bytes are all zero: its root
 * span's id would be 0, which W3C forbids. A random CPID always has a
 * non-zero byte 8 (the UUID variant); a client-chosen one may not. */
int wh_traceparent_of(const ripple_cpid_t *cpid, char out[WH_TRACEPARENT_LEN + 1]);

/* The span id of a CPID's root span: its last 8 bytes, most significant
 * first. */
uint64_t wh_traceparent_root_span(const ripple_cpid_t *cpid);

/* ---- with the engine (core.h) ---- */

#include "core.h"

/* KEP-5915's traceparent (traceparent.c), with --traceparent only. The
 * client's trace context in a person's write to a main resource: RIPPLE_OK
 * with *tp when the write sets a well-formed one that can be a CPID,
 * RIPPLE_ENOENT when it sets none (or the flag is off), RIPPLE_EBADCTX (and
 * d->tp_invalid) when it is malformed. */
int wh_traceparent_client(const wh_t *w, const wh_review_t *r, wh_decision_t *d,
                          wh_traceparent_t *tp);
/* kube-apiserver's traceparent header, valid by wh_apiserver_tp (wh.h), into
 * r->apiserver_trace and r->apiserver_span when its sampled flag is set (both
 * "" for NULL, an unsampled or a malformed one: it is parsed again). */
void wh_apiserver_tp_take(const char *tp, wh_review_t *r);
/* After a decision that wrote a context (d->wrote_ctx): the traceparent of
 * its CPID into the same patch, unless the rules keep the object's own. */
int wh_traceparent_patch(const wh_t *w, const wh_review_t *r, wh_decision_t *d);

#endif
