/*
 * trace.h - a whole trace in one answer (GET /v1/cpids/{cpid}/trace): the
 * related CPIDs, their mergelogs and their spans, as the three answers
 * /related, /mergelogs and /spans give them, from one walk of the merge graph
 * and one read of the store. The dashboard asks for it first thing (issue 28:
 * one request instead of three), and its live mode asks only for what was
 * stored after the cursor of its last answer.
 *
 * Owns nothing: reads the core's graph under its read lock, then the store
 * (core.h). Answers are JSON documents appended to out; the functions return
 * the HTTP status to answer with.
 */
#ifndef RIPPLE_SERVER_TRACE_H
#define RIPPLE_SERVER_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/core.h"
#include "ripplex/sbuf.h"

/* Where a trace answer ended: records stored after it are new. Record rows
 * (seq) grow as records are stored, one sequence per kind. */
typedef struct trace_cursor {
  uint64_t mergelog, span; /* the last row seen of each kind; 0: none */
} trace_cursor_t;

/* "<mergelog seq>.<span seq>" (opaque to clients) into c: RIPPLE_OK or
 * RIPPLE_EINVAL. */
int trace_cursor_parse(const char *s, trace_cursor_t *c);

/* {"cpid", "scope", "truncated", "related": [...], "mergelogs": [...],
 * "spans": [...], "next": cursor}: the CPIDs of cpid's cascade in `scope`
 * (its own, or everything reachable: graph.h), at most limit, and of them the
 * mergelogs and spans stored after `since` (all with since NULL). Returns 200,
 * 404 (cpid unknown) or 503. */
int trace_answer(core_t *c, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                 const trace_cursor_t *since, sbuf_t *out);
/* "own" or "reachable" (NULL or "": `dflt`) into *scope: RIPPLE_OK or
 * RIPPLE_EINVAL. */
int trace_scope_parse(const char *s, graph_scope_t dflt, graph_scope_t *scope);
/* The scope's name, as the API spells it. */
const char *trace_scope_name(graph_scope_t scope);

#endif
