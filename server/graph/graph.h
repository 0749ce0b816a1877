/*
 * graph.h - the trace server's in-memory merge graph.
 *
 * Vertices are CPIDs; a mergelog {cpid, sources} adds an edge source -> cpid
 * for each source. An edge is a trigger edge when its source caused the merge
 * (the mergelog's "trigger" list names it, or the mergelog has no such list:
 * docs/api.md); the others carry an earlier context along. A change's own
 * cascade follows trigger edges only; what is reachable follows them all. Each vertex also
 * remembers where its records live in the store (its mergelog's row, its spans' rows), so every
 * query by CPID is answered from memory plus primary-key reads, and the store needs no index on
 * CPIDs (which would cost SQLite most of its insert rate).
 *
 * Not thread-safe by itself: the server guards it with a read-write lock (one
 * writer, many readers). Memory: about 80 bytes per vertex (see graph_memory()).
 */
#ifndef RIPPLE_SERVER_GRAPH_H
#define RIPPLE_SERVER_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

typedef struct graph graph_t;
typedef uint32_t vid_t; /* vertex id; 0 is never a vertex */

/* An empty graph: RIPPLE_OK, or RIPPLE_ENOMEM. */
int graph_new(graph_t **out);
void graph_free(graph_t *g);

/* Add a mergelog stored at row `seq`. trig is NULL (every source triggered
 * the merge: a mergelog without a trigger list) or one flag per source,
 * non-zero for a trigger. Returns 1 if added, 0 if this CPID already has a
 * mergelog (a retry or a liar: the first one wins), or RIPPLE_ENOMEM.
 * Duplicate sources (the first one's flag counts) and a source equal to cpid
 * are ignored. */
int graph_add_mergelog(graph_t *g, const ripple_cpid_t *cpid, const ripple_cpid_t *src, size_t nsrc,
                       const uint8_t *trig, int64_t time_ns, uint64_t seq);
/* Remember that a span of `cpid` (from time_ns to end_ns) is stored at row
 * `seq`. */
int graph_add_span(graph_t *g, const ripple_cpid_t *cpid, int64_t time_ns, int64_t end_ns,
                   uint64_t seq);
/* True if this CPID already has a mergelog. */
int graph_has_mergelog(const graph_t *g, const ripple_cpid_t *cpid);

vid_t graph_find(const graph_t *g, const ripple_cpid_t *cpid);
const ripple_cpid_t *graph_cpid(const graph_t *g, vid_t v);
uint64_t graph_mergelog_seq(const graph_t *g, vid_t v); /* 0: none */
/* Calls fn for each span row of v (most recent first). */
void graph_span_seqs(const graph_t *g, vid_t v, void (*fn)(void *ud, uint64_t seq), void *ud);

/* Which cascade of a change: its own (trigger edges only: what it caused)
 * or everything reachable (every edge: the CPID paper's related set). */
typedef enum { GRAPH_OWN, GRAPH_REACHABLE } graph_scope_t;

/* Vertices reachable from `from` along the scope's edges (itself first,
 * breadth first), at most `limit`. *out is malloc'd (free it); *truncated
 * tells whether the limit cut it. An unknown CPID gives RIPPLE_ENOENT. */
int graph_cascade(const graph_t *g, const ripple_cpid_t *from, graph_scope_t scope, size_t limit,
                  vid_t **out, size_t *n, int *truncated);
/* graph_cascade(..., GRAPH_REACHABLE, ...). */
int graph_related(const graph_t *g, const ripple_cpid_t *from, size_t limit, vid_t **out, size_t *n,
                  int *truncated);
/* graph_descends (below) in a scope: with GRAPH_OWN, desc is in anc's own
 * cascade (reached along trigger edges only). */
int graph_descends_in(const graph_t *g, const ripple_cpid_t *anc, const ripple_cpid_t *desc,
                      graph_scope_t scope);

/* 1 when desc is anc, or anc is reached walking edges backwards from desc
 * within `budget` vertices (a small walk, without allocating: a cascade's
 * CPIDs descend from their cause in a few merges); 0 otherwise, and for an
 * unknown CPID. */
#define GRAPH_DESCENDS_BUDGET 256
int graph_descends(const graph_t *g, const ripple_cpid_t *anc, const ripple_cpid_t *desc);

/* Walking edges backwards from `from`: the vertices with no incoming edge that
 * it came from, each with one shortest path from it to `from` (a list of
 * vertices, origin first). */
typedef struct graph_origin {
  vid_t *path;
  size_t len;
} graph_origin_t;
int graph_origins(const graph_t *g, const ripple_cpid_t *from, size_t limit, graph_origin_t **out,
                  size_t *n, int *truncated);
void graph_origins_free(graph_origin_t *o, size_t n);

/* Retention (the paper's deletion rule): a vertex with an incoming edge is
 * kept; one without goes with its outgoing edges, and vertices whose in-degree
 * drops to zero go too. Oldest first, until at most max_vertices remain (0: no
 * limit) and none is older than min_time_ns (0: no limit). If only cycles
 * remain over the limit, their oldest vertices go regardless. For every vertex
 * removed, `gone` is called with its records' rows so the store can drop them. */
typedef struct graph_gone {
  void (*vertex)(void *ud, const ripple_cpid_t *cpid, uint64_t mergelog_seq);
  void (*span)(void *ud, uint64_t seq);
  void *ud;
} graph_gone_t;
size_t graph_expire(graph_t *g, size_t max_vertices, int64_t min_time_ns, const graph_gone_t *gone);

/* How many spans v has; raises *last_end to their latest end (to the
 * millisecond) when later. */
size_t graph_span_count(const graph_t *g, vid_t v, int64_t *last_end);

size_t graph_vertices(const graph_t *g);
size_t graph_edges(const graph_t *g);
size_t graph_spans(const graph_t *g);
size_t graph_memory(const graph_t *g); /* bytes held, all structures */

#endif
