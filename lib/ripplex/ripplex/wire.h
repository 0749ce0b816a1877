/*
 * ripplex/wire.h - mergelogs and spans as the trace server's JSON
 * (docs/api.md), appended to a buffer.
 *
 * One half of a contract: libripple's shipper and ripple_*_to_json() write
 * with these, and the trace server re-encodes what it decoded with the same
 * code, so the stored form is exactly the documented one.
 */
#ifndef RIPPLEX_WIRE_H
#define RIPPLEX_WIRE_H

#include <stdint.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

void wire_mergelog(sbuf_t *b, const ripple_mergelog_t *ml);
void wire_span(sbuf_t *b, const ripple_span_rec_t *sp);
/* 16 lowercase hex digits and a NUL. */
void wire_span_id(uint64_t id, char out[17]);
/* A CPID as a JSON string, quotes included. */
void wire_cpid(sbuf_t *b, const ripple_cpid_t *id);

#endif
