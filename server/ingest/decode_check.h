/*
 * decode_check.h - the one contract a span record meets before the server
 * keeps it, whatever it came as: POST /v1/spans (decode.c, ripple's JSON) or
 * POST /v1/traces (otlp_receive.c, OTLP decoded straight into records). Both
 * call these checks, with the same fields and messages, and build the record
 * with the same dec_span_append, so a span is refused or stored alike on both
 * paths (fuzz_otlp_direct checks it against the old OTLP -> JSON -> decode
 * route).
 *
 * What a check cannot see is the caller's: the JSON decoder's types, syntax
 * and duplicate keys; the OTLP receiver's span ids and trace ids as bytes, its
 * text made valid UTF-8 without NUL (which the JSON decoder gets from its
 * strict front end) and its attribute keys made unique.
 *
 * Errors: RIPPLE_OK, or RIPPLE_EINVAL/RIPPLE_ERANGE with *err filled in (the
 * record index given, the field, why); RIPPLE_ENOMEM from dec_span_append.
 * Memory: nothing is kept; dec_span_append copies into the batch.
 */
#ifndef RIPPLE_SERVER_DECODE_CHECK_H
#define RIPPLE_SERVER_DECODE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/decode.h"

/* Fill *err (index, field, message); returns rc. */
int dec_fail(dec_error_t *err, long index, int rc, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The request as a whole: at most lim->max_records records. */
int dec_check_count(const dec_limits_t *lim, size_t n, dec_error_t *err);
/* A record's CPID: not the nil UUID. */
int dec_check_cpid(const ripple_cpid_t *cpid, long index, dec_error_t *err);
/* A string field of len bytes: at most lim->max_string. */
int dec_check_text(const dec_limits_t *lim, long index, const char *field, size_t len,
                   dec_error_t *err);
/* A span id (span_id, parent_id when given): not zero. */
int dec_check_span_id(uint64_t id, long index, const char *field, dec_error_t *err);
/* A span's end: not before its start. */
int dec_check_span_times(int64_t start, int64_t end, long index, dec_error_t *err);
/* A span's attributes: at most lim->max_attrs. */
int dec_check_nattrs(const dec_limits_t *lim, size_t n, long index, dec_error_t *err);
/* One attribute: key and value at most lim->max_string bytes each. */
int dec_check_attr(const dec_limits_t *lim, long index, const char *key, size_t key_len,
                   size_t val_len, dec_error_t *err);

/* A mergelog's trigger list (ntrig CPIDs, all parsed) against its nsrc
 * sources: not empty, each one of the sources, none named twice. flags (one
 * per source) get 1 at the first position of each source the list names, 0
 * elsewhere. RIPPLE_OK, RIPPLE_EINVAL (*err names "trigger" or
 * "trigger[i]") or RIPPLE_ENOMEM. Sorts a copy when the lists are long, so
 * no body makes it quadratic. */
int dec_check_trigger(const ripple_cpid_t *src, size_t nsrc, const ripple_cpid_t *trig,
                      size_t ntrig, uint8_t *flags, long index, dec_error_t *err);

/* Every check of a span whose fields are all present (NUL-terminated
 * strings, service and name not NULL), in the order the JSON decoder names
 * them: what the OTLP receiver's records go through. */
int dec_check_span(const dec_limits_t *lim, const ripple_span_rec_t *sp, long index,
                   dec_error_t *err);

/* Append a checked span to b as the server keeps it: its canonical body and
 * the strings the indexes take (kind, namespace, name, owner, operation
 * attributes; service; name). b->rec must have room for one more record. */
int dec_span_append(dec_batch_t *b, const ripple_span_rec_t *sp);

#endif
