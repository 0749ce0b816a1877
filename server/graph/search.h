/*
 * search.h - finding traces without a CPID: an object's recent CPIDs
 * (GET /v1/objects) and root search with a summary of each root's cascade
 * (GET /v1/roots), on the core's graph, indexes and store (core.h). The
 * dashboard's Find page is built on these. Also the page cursor every
 * listing of the API hands out.
 *
 * Answers are JSON documents appended to out; the functions return the HTTP
 * status to answer with.
 */
#ifndef RIPPLE_SERVER_SEARCH_H
#define RIPPLE_SERVER_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "graph/core.h"
#include "ripplex/sbuf.h"

/* Objects and their recent CPIDs (objects.h), most recently written first:
 * {"objects": [...]}. NULL filters match anything. Returns 200 or 503. */
int search_objects(core_t *c, const char *kind, const char *ns, const char *name, size_t limit,
                   sbuf_t *out);

/* Root search (store_roots), newest first, each root with a summary of its
 * cascade: {"roots": [...], "next": cursor or null}. Returns 200, 400 (a
 * cursor this server did not hand out; err says so) or 503. */
typedef struct search_roots_query {
  int64_t since, until; /* INT64_MIN, 0: no bound */
  const char *cursor, *component, *ns, *kind, *name;
  size_t limit;
  graph_scope_t scope; /* each root's summary: its own cascade or all it reaches */
} search_roots_query_t;
int search_roots(core_t *c, const search_roots_query_t *q, sbuf_t *out, char *err, size_t errcap);

/* A cursor this server hands out ("<time>.<seq>" of the last record of a
 * page: opaque to clients) into its parts: RIPPLE_OK or RIPPLE_EINVAL. */
int page_cursor_parse(const char *s, int64_t *time, int64_t *seq);
/* The end of a page's answer: `],"next":"<time>.<seq>"}` when more follow,
 * else `],"next":null}`. */
void page_end(sbuf_t *out, int more, int64_t time, int64_t seq);

#endif
