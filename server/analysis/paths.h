/*
 * paths.h - answers computed from whole traces: a cascade's critical path
 * (GET /v1/cpids/{cpid}/critical-path) and two cascades compared
 * (GET /v1/compare?a=CPID&b=CPID). The computing is ripplex's (critpath.h,
 * compare.h), shared with kubectl ripple, so the server and the client give
 * the same answer for the same trace; this file reads the traces (the same
 * answer /trace gives, graph/trace.h) and, for the critical path, the
 * details joined to them (trace_details.h), and wraps the result.
 *
 * Owns nothing: answers are JSON documents appended to out; the functions
 * return the HTTP status to answer with.
 */
#ifndef RIPPLE_SERVER_PATHS_H
#define RIPPLE_SERVER_PATHS_H

#include <stddef.h>

#include "analysis/trace_details.h"
#include "graph/core.h"
#include "graph/graph.h"
#include "ripplex/sbuf.h"

/* {"cpid", "scope", "truncated", "hops": [...], "total_ms", "writes"}
 * (ripplex/critpath.h) of cpid's cascade in scope, of at most limit CPIDs,
 * each hop with its "parts" (critpath_add_parts) from the details that
 * details (may be NULL) joins to the path's spans (tdet_span_writes); when
 * details cannot answer, the path comes without parts. 200, 404 (cpid unknown), 500 (no
 * memory) or 503. */
int paths_critical(core_t *c, tdet_t *details, const ripple_cpid_t *cpid, graph_scope_t scope,
                   size_t limit, sbuf_t *out);

/* {"a": {"cpid", "truncated", "total_ms", "writes"}, "b": {...}, "scope", "delta_ms",
 *  "hops": [...], "writers": [...]} (ripplex/compare.h) of the cascades of a
 * and b in scope. 200, 404 (either unknown), 500 or 503. */
int paths_compare(core_t *c, const ripple_cpid_t *a, const ripple_cpid_t *b, graph_scope_t scope,
                  size_t limit, sbuf_t *out);

#endif
