/*
 * graph.c - the merge graph, laid out for size: tens of millions of CPIDs must
 * fit in memory, so there are no per-vertex allocations.
 *
 *   vertices  48 bytes each in chunked pools, addressed by 32-bit ids
 *   edges     8 bytes per direction: singly linked lists threaded through a
 *             pool (an out-list on the source, an in-list on the target)
 *   spans     16 bytes per span row, a list on the span's CPID, with its end
 *             to the millisecond (for summaries)
 *   index     open addressing over vertex ids, linear probing, load <= 0.7
 *
 * Chunks never move, so growing is cheap and memory grows by one chunk at a
 * time; freed slots go on free lists threaded through the slots themselves.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

#include "ripplex/cpid.h"
#include "ripplex/rnd.h"

#define CHUNK_BITS 16
#define CHUNK (1u << CHUNK_BITS)
#define FREE_VERTEX UINT32_MAX /* indeg value of a free vertex slot */

typedef struct vertex {
  ripple_cpid_t cpid;
  int64_t time;    /* when the CPID was made (its mergelog's time, or first seen) */
  uint64_t ml_seq; /* row of its mergelog, 0 if none yet */
  uint32_t out;    /* first out-edge */
  uint32_t in;     /* first in-edge; also the free-list link of a free slot */
  uint32_t span;   /* first span node */
  uint32_t indeg;  /* FREE_VERTEX for a free slot */
} vertex_t;

typedef struct edge {
  uint32_t v;    /* the other end, and EDGE_TRIGGER when the edge is a trigger edge */
  uint32_t next; /* also the free-list link */
} edge_t;

/* The top bit of an edge's other end says whether the source caused the
 * merge (a trigger edge, graph.h): it costs no memory, and vertex ids stay
 * below it (VERTEX_MAX). */
#define EDGE_TRIGGER 0x80000000u
#define VERTEX_MAX (EDGE_TRIGGER - 1)

typedef struct span_node {
  uint64_t seq;
  uint32_t next;  /* also the free-list link */
  int32_t end_ms; /* the span's end, in ms after its vertex's time (clamped) */
} span_node_t;

/* A pool of fixed-size slots in chunks; slot 0 is reserved to mean "none". */
typedef struct pool {
  char **chunk;
  size_t nchunk;
  size_t esz, link_off; /* element size; where a free slot keeps its link */
  uint32_t top;         /* next never-used slot */
  uint32_t max;         /* the largest slot index it hands out */
  uint32_t free;        /* head of the free list */
  size_t live;
} pool_t;

struct graph {
  pool_t v, e, s;
  uint32_t *slots; /* vertex ids, 0 = empty */
  size_t mask, used;
  uint64_t seed;
};

/* ---- pools ---------------------------------------------------------------- */

static void *pool_at(const pool_t *p, uint32_t i) {
  return p->chunk[i >> CHUNK_BITS] + (size_t)(i & (CHUNK - 1)) * p->esz;
}

static uint32_t *pool_link(const pool_t *p, uint32_t i) {
  return (uint32_t *)((char *)pool_at(p, i) + p->link_off);
}

/* A fresh slot's index, or 0 when memory runs out. */
static uint32_t pool_alloc(pool_t *p) {
  uint32_t i = p->free;
  if (i) {
    p->free = *pool_link(p, i);
  } else {
    if (p->top >= p->max) return 0;
    i = p->top;
    if ((i >> CHUNK_BITS) >= p->nchunk) {
      char **c = realloc(p->chunk, (p->nchunk + 1) * sizeof *c);
      if (!c) return 0;
      p->chunk = c;
      if (!(c[p->nchunk] = malloc((size_t)CHUNK * p->esz))) return 0;
      p->nchunk++;
    }
    p->top++;
  }
  memset(pool_at(p, i), 0, p->esz);
  p->live++;
  return i;
}

static void pool_release(pool_t *p, uint32_t i) {
  *pool_link(p, i) = p->free;
  p->free = i;
  p->live--;
}

static void pool_init(pool_t *p, size_t esz, size_t link_off) {
  memset(p, 0, sizeof *p);
  p->esz = esz;
  p->link_off = link_off;
  p->top = 1; /* slot 0 means "none" */
  p->max = UINT32_MAX;
}

static void pool_fini(pool_t *p) {
  for (size_t i = 0; i < p->nchunk; i++) free(p->chunk[i]);
  free(p->chunk);
}

static vertex_t *V(const graph_t *g, vid_t v) { return pool_at(&g->v, v); }
static edge_t *E(const graph_t *g, uint32_t e) { return pool_at(&g->e, e); }
static span_node_t *S(const graph_t *g, uint32_t s) { return pool_at(&g->s, s); }
/* The vertex at the other end of edge e. */
static vid_t TO(const graph_t *g, uint32_t e) { return E(g, e)->v & ~EDGE_TRIGGER; }
static int TRIG(const graph_t *g, uint32_t e) { return (E(g, e)->v & EDGE_TRIGGER) != 0; }

/* ---- the index ------------------------------------------------------------ */

static size_t home(const graph_t *g, const ripple_cpid_t *id) {
  return (size_t)cpid_hash(id, g->seed) & g->mask;
}

static int index_grow(graph_t *g) {
  size_t cap = (g->mask + 1) * 2;
  uint32_t *old = g->slots, *n = calloc(cap, sizeof *n);
  if (!n) return RIPPLE_ENOMEM;
  size_t oldcap = g->mask + 1;
  g->slots = n;
  g->mask = cap - 1;
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i]) continue;
    size_t j = home(g, &V(g, old[i])->cpid);
    while (n[j]) j = (j + 1) & g->mask;
    n[j] = old[i];
  }
  free(old);
  return RIPPLE_OK;
}

vid_t graph_find(const graph_t *g, const ripple_cpid_t *cpid) {
  for (size_t i = home(g, cpid);; i = (i + 1) & g->mask) {
    vid_t v = g->slots[i];
    if (!v) return 0;
    if (cpid_eq(&V(g, v)->cpid, cpid)) return v;
  }
}

/* Remove v from the index with backward-shift deletion (no tombstones, so
 * lookups stay short however much is deleted). */
static void index_remove(graph_t *g, vid_t v) {
  size_t i = home(g, &V(g, v)->cpid);
  while (g->slots[i] != v) i = (i + 1) & g->mask;
  for (size_t j = (i + 1) & g->mask;; j = (j + 1) & g->mask) {
    vid_t w = g->slots[j];
    if (!w) break;
    size_t h = home(g, &V(g, w)->cpid);
    /* w may move into the hole at i if its home is not in (i, j]. */
    if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
      g->slots[i] = w;
      i = j;
    }
  }
  g->slots[i] = 0;
  g->used--;
}

/* Find or create the vertex of cpid; 0 when out of memory. */
static vid_t vertex_get(graph_t *g, const ripple_cpid_t *cpid, int64_t time) {
  vid_t v = graph_find(g, cpid);
  if (v) return v;
  if ((g->used + 1) * 10 > (g->mask + 1) * 7 && index_grow(g) != RIPPLE_OK) return 0;
  if (!(v = pool_alloc(&g->v))) return 0;
  vertex_t *x = V(g, v);
  x->cpid = *cpid;
  x->time = time;
  size_t i = home(g, cpid);
  while (g->slots[i]) i = (i + 1) & g->mask;
  g->slots[i] = v;
  g->used++;
  return v;
}

/* ---- building ------------------------------------------------------------- */

int graph_new(graph_t **out) {
  graph_t *g = calloc(1, sizeof *g);
  if (!g) return RIPPLE_ENOMEM;
  pool_init(&g->v, sizeof(vertex_t), offsetof(vertex_t, in));
  g->v.max = VERTEX_MAX;
  pool_init(&g->e, sizeof(edge_t), offsetof(edge_t, next));
  pool_init(&g->s, sizeof(span_node_t), offsetof(span_node_t, next));
  g->mask = 1023;
  g->slots = calloc(g->mask + 1, sizeof *g->slots);
  if (!g->slots) {
    free(g);
    return RIPPLE_ENOMEM;
  }
  (void)rnd_bytes(&g->seed, sizeof g->seed);
  *out = g;
  return RIPPLE_OK;
}

void graph_free(graph_t *g) {
  if (!g) return;
  pool_fini(&g->v);
  pool_fini(&g->e);
  pool_fini(&g->s);
  free(g->slots);
  free(g);
}

static int edge_push(graph_t *g, uint32_t *head, vid_t other, uint32_t trig) {
  uint32_t e = pool_alloc(&g->e);
  if (!e) return RIPPLE_ENOMEM;
  E(g, e)->v = other | trig;
  E(g, e)->next = *head;
  *head = e;
  return RIPPLE_OK;
}

/* Unlink the edge to `other` from the list at *head and free it. */
static void edge_unlink(graph_t *g, uint32_t *head, vid_t other) {
  for (uint32_t *p = head; *p; p = &E(g, *p)->next) {
    if (TO(g, *p) == other) {
      uint32_t e = *p;
      *p = E(g, e)->next;
      pool_release(&g->e, e);
      return;
    }
  }
}

/* Add s -> v in both lists or in neither: an edge in one list only would make
 * removing s decrement v's in-degree for an edge v never counted, which frees
 * v while edges still point at it. */
static int edge_add(graph_t *g, vid_t s, vid_t v, int trigger) {
  uint32_t t = trigger ? EDGE_TRIGGER : 0;
  if (edge_push(g, &V(g, s)->out, v, t) != RIPPLE_OK) return RIPPLE_ENOMEM;
  if (edge_push(g, &V(g, v)->in, s, t) != RIPPLE_OK) {
    edge_unlink(g, &V(g, s)->out, v);
    return RIPPLE_ENOMEM;
  }
  V(g, v)->indeg++;
  return RIPPLE_OK;
}

int graph_add_mergelog(graph_t *g, const ripple_cpid_t *cpid, const ripple_cpid_t *src, size_t nsrc,
                       const uint8_t *trig, int64_t time_ns, uint64_t seq) {
  vid_t v = vertex_get(g, cpid, time_ns);
  if (!v) return RIPPLE_ENOMEM;
  if (V(g, v)->ml_seq) return 0;
  V(g, v)->ml_seq = seq;
  V(g, v)->time = time_ns;
  for (size_t i = 0; i < nsrc; i++) {
    if (cpid_eq(&src[i], cpid)) continue;
    vid_t s = vertex_get(g, &src[i], time_ns);
    if (!s) return RIPPLE_ENOMEM;
    /* A repeated source: its newest out-edge is the one to v added by this
     * loop (edges into v come only from v's one mergelog). O(1) where
     * comparing with every earlier source would be quadratic in a list of
     * thousands, under the server's write lock. */
    uint32_t e = V(g, s)->out;
    if (e && TO(g, e) == v) continue;
    if (edge_add(g, s, v, !trig || trig[i]) != RIPPLE_OK) return RIPPLE_ENOMEM;
  }
  return 1;
}

int graph_add_span(graph_t *g, const ripple_cpid_t *cpid, int64_t time_ns, int64_t end_ns,
                   uint64_t seq) {
  vid_t v = vertex_get(g, cpid, time_ns);
  if (!v) return RIPPLE_ENOMEM;
  uint32_t n = pool_alloc(&g->s);
  if (!n) return RIPPLE_ENOMEM;
  int64_t ms = end_ns / 1000000 - V(g, v)->time / 1000000; /* no overflow */
  S(g, n)->end_ms = (int32_t)(ms > INT32_MAX ? INT32_MAX : ms < INT32_MIN ? INT32_MIN : ms);
  S(g, n)->seq = seq;
  S(g, n)->next = V(g, v)->span;
  V(g, v)->span = n;
  return RIPPLE_OK;
}

int graph_has_mergelog(const graph_t *g, const ripple_cpid_t *cpid) {
  vid_t v = graph_find(g, cpid);
  return v && V(g, v)->ml_seq != 0;
}

const ripple_cpid_t *graph_cpid(const graph_t *g, vid_t v) { return &V(g, v)->cpid; }
uint64_t graph_mergelog_seq(const graph_t *g, vid_t v) { return V(g, v)->ml_seq; }

void graph_span_seqs(const graph_t *g, vid_t v, void (*fn)(void *ud, uint64_t seq), void *ud) {
  for (uint32_t n = V(g, v)->span; n; n = S(g, n)->next) fn(ud, S(g, n)->seq);
}

size_t graph_span_count(const graph_t *g, vid_t v, int64_t *last_end) {
  size_t n = 0;
  for (uint32_t s = V(g, v)->span; s; s = S(g, s)->next, n++) {
    int64_t end = V(g, v)->time + (int64_t)S(g, s)->end_ms * 1000000;
    if (end > *last_end) *last_end = end;
  }
  return n;
}

size_t graph_vertices(const graph_t *g) { return g->v.live; }
size_t graph_edges(const graph_t *g) { return g->e.live / 2; }
size_t graph_spans(const graph_t *g) { return g->s.live; }

size_t graph_memory(const graph_t *g) {
  size_t chunks =
      (g->v.nchunk * g->v.esz + g->e.nchunk * g->e.esz + g->s.nchunk * g->s.esz) * CHUNK;
  return sizeof *g + chunks + (g->mask + 1) * sizeof *g->slots;
}

/* ---- traversal ------------------------------------------------------------ */

/* A set of vertex ids with a value each (visited marks, BFS parents). */
typedef struct vmap {
  uint32_t *key, *val;
  size_t mask, used;
} vmap_t;

static int vmap_init(vmap_t *m, size_t hint) {
  size_t cap = 64;
  while (cap < hint * 2) cap <<= 1;
  m->key = calloc(cap, sizeof *m->key);
  m->val = calloc(cap, sizeof *m->val);
  m->mask = cap - 1;
  m->used = 0;
  return m->key && m->val ? RIPPLE_OK : RIPPLE_ENOMEM;
}

static void vmap_fini(vmap_t *m) {
  free(m->key);
  free(m->val);
}

static size_t vslot(const vmap_t *m, uint32_t k) {
  size_t i = (size_t)(k * 2654435761u) & m->mask;
  while (m->key[i] && m->key[i] != k) i = (i + 1) & m->mask;
  return i;
}

/* Insert k -> val unless present. 1: inserted, 0: present, <0: error. */
static int vmap_put(vmap_t *m, uint32_t k, uint32_t val) {
  if ((m->used + 1) * 2 > m->mask + 1) {
    vmap_t n;
    if (vmap_init(&n, m->mask + 1) != RIPPLE_OK) {
      vmap_fini(&n);
      return RIPPLE_ENOMEM;
    }
    for (size_t i = 0; i <= m->mask; i++)
      if (m->key[i]) {
        size_t j = vslot(&n, m->key[i]);
        n.key[j] = m->key[i];
        n.val[j] = m->val[i];
        n.used++;
      }
    vmap_fini(m);
    *m = n;
  }
  size_t i = vslot(m, k);
  if (m->key[i]) return 0;
  m->key[i] = k;
  m->val[i] = val;
  m->used++;
  return 1;
}

static uint32_t vmap_get(const vmap_t *m, uint32_t k) {
  size_t i = vslot(m, k);
  return m->key[i] ? m->val[i] : 0;
}

/* Breadth-first walk from `start` along out-edges (forward) or in-edges, all
 * of them or (trigger_only) the trigger edges. The visited map holds each
 * vertex's BFS parent. Returns the order of visit. */
static int bfs(const graph_t *g, vid_t start, int forward, int trigger_only, size_t limit,
               vmap_t *seen, vid_t **out, size_t *n, int *truncated) {
  size_t cap = 64, len = 0;
  vid_t *q = malloc(cap * sizeof *q);
  if (!q) return RIPPLE_ENOMEM;
  if (vmap_init(seen, 16) != RIPPLE_OK) { /* it may have got one of its two arrays */
    vmap_fini(seen);
    free(q);
    return RIPPLE_ENOMEM;
  }
  *truncated = 0;
  q[len++] = start;
  vmap_put(seen, start, 0);
  for (size_t head = 0; head < len; head++) {
    vertex_t *x = V(g, q[head]);
    for (uint32_t e = forward ? x->out : x->in; e; e = E(g, e)->next) {
      if (trigger_only && !TRIG(g, e)) continue;
      vid_t w = TO(g, e);
      int r = vmap_put(seen, w, q[head]);
      if (r < 0) goto oom;
      if (r == 0) continue;
      if (len == limit) {
        *truncated = 1;
        goto done;
      }
      if (len == cap) {
        vid_t *nq = realloc(q, (cap *= 2) * sizeof *q);
        if (!nq) goto oom;
        q = nq;
      }
      q[len++] = w;
    }
  }
done:
  *out = q;
  *n = len;
  return RIPPLE_OK;
oom:
  free(q);
  vmap_fini(seen);
  return RIPPLE_ENOMEM;
}

int graph_cascade(const graph_t *g, const ripple_cpid_t *from, graph_scope_t scope, size_t limit,
                  vid_t **out, size_t *n, int *truncated) {
  vid_t v = graph_find(g, from);
  if (!v) return RIPPLE_ENOENT;
  vmap_t seen;
  int rc = bfs(g, v, 1, scope == GRAPH_OWN, limit ? limit : SIZE_MAX, &seen, out, n, truncated);
  if (rc == RIPPLE_OK) vmap_fini(&seen);
  return rc;
}

int graph_related(const graph_t *g, const ripple_cpid_t *from, size_t limit, vid_t **out, size_t *n,
                  int *truncated) {
  return graph_cascade(g, from, GRAPH_REACHABLE, limit, out, n, truncated);
}

int graph_descends(const graph_t *g, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  return graph_descends_in(g, anc, desc, GRAPH_REACHABLE);
}

int graph_descends_in(const graph_t *g, const ripple_cpid_t *anc, const ripple_cpid_t *desc,
                      graph_scope_t scope) {
  if (!memcmp(anc, desc, sizeof *anc)) return 1;
  vid_t a = graph_find(g, anc), d = graph_find(g, desc);
  if (!a || !d) return 0;
  /* Depth first over in-edges; a vertex reached twice is walked twice, which
   * the budget bounds. */
  vid_t stack[GRAPH_DESCENDS_BUDGET];
  size_t top = 0, budget = GRAPH_DESCENDS_BUDGET;
  stack[top++] = d;
  while (top && budget--) {
    vid_t x = stack[--top];
    if (x == a) return 1;
    for (uint32_t e = V(g, x)->in; e && top < GRAPH_DESCENDS_BUDGET; e = E(g, e)->next)
      if (scope == GRAPH_REACHABLE || TRIG(g, e)) stack[top++] = TO(g, e);
  }
  return 0;
}

void graph_origins_free(graph_origin_t *o, size_t n) {
  for (size_t i = 0; o && i < n; i++) free(o[i].path);
  free(o);
}

/* The path from origin w to v along the BFS parents (origin first). */
static int origin_path(const vmap_t *parent, vid_t w, vid_t v, graph_origin_t *out) {
  size_t len = 1;
  for (vid_t x = w; x != v; x = vmap_get(parent, x)) len++;
  vid_t *path = malloc(len * sizeof *path);
  if (!path) return RIPPLE_ENOMEM;
  size_t j = 0;
  for (vid_t x = w;; x = vmap_get(parent, x)) {
    path[j++] = x;
    if (x == v) break;
  }
  *out = (graph_origin_t){path, len};
  return RIPPLE_OK;
}

int graph_origins(const graph_t *g, const ripple_cpid_t *from, size_t limit, graph_origin_t **out,
                  size_t *n, int *truncated) {
  vid_t v = graph_find(g, from);
  if (!v) return RIPPLE_ENOENT;
  vmap_t parent; /* for each vertex reached backwards: its child toward `from` */
  vid_t *order;
  size_t len;
  int rc = bfs(g, v, 0, 0, limit ? limit : SIZE_MAX, &parent, &order, &len, truncated);
  if (rc != RIPPLE_OK) return rc;
  size_t count = 0, k = 0;
  for (size_t i = 0; i < len; i++) count += V(g, order[i])->indeg == 0;
  graph_origin_t *o = calloc(count ? count : 1, sizeof *o);
  if (!o) rc = RIPPLE_ENOMEM;
  for (size_t i = 0; o && rc == RIPPLE_OK && i < len; i++)
    if (V(g, order[i])->indeg == 0 && (rc = origin_path(&parent, order[i], v, &o[k])) == RIPPLE_OK)
      k++;
  free(order);
  vmap_fini(&parent);
  if (rc != RIPPLE_OK) {
    graph_origins_free(o, k);
    return rc;
  }
  *out = o;
  *n = k;
  return RIPPLE_OK;
}

/* ---- retention ------------------------------------------------------------ */

/* Remove v, then every vertex whose in-degree that drops to zero. */
static size_t remove_cascade(graph_t *g, vid_t v, const graph_gone_t *gone, vid_t **stack,
                             size_t *cap) {
  size_t removed = 0, top = 0;
  (*stack)[top++] = v;
  while (top) {
    vid_t x = (*stack)[--top];
    vertex_t *vx = V(g, x);
    if (vx->indeg == FREE_VERTEX) continue;
    while (vx->in) { /* only in the cycle fallback: cut the edges coming in */
      vid_t s = TO(g, vx->in);
      edge_unlink(g, &V(g, s)->out, x);
      edge_unlink(g, &vx->in, s);
    }
    while (vx->out) {
      vid_t t = TO(g, vx->out);
      vertex_t *vt = V(g, t);
      edge_unlink(g, &vt->in, x);
      edge_unlink(g, &vx->out, t);
      if (--vt->indeg == 0) {
        if (top == *cap) {
          vid_t *ns = realloc(*stack, (*cap *= 2) * sizeof **stack);
          if (!ns) continue; /* t stays: a root now, the next pass takes it */
          *stack = ns;
        }
        (*stack)[top++] = t;
      }
    }
    for (uint32_t s = vx->span, next; s; s = next) {
      next = S(g, s)->next;
      if (gone && gone->span) gone->span(gone->ud, S(g, s)->seq);
      pool_release(&g->s, s);
    }
    if (gone && gone->vertex) gone->vertex(gone->ud, &vx->cpid, vx->ml_seq);
    index_remove(g, x);
    vx->indeg = FREE_VERTEX;
    memset(&vx->cpid, 0, sizeof vx->cpid);
    pool_release(&g->v, x);
    removed++;
  }
  return removed;
}

typedef struct aged {
  int64_t time;
  vid_t v;
} aged_t;

static int cmp_aged(const void *a, const void *b) {
  const aged_t *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}

/* Live vertices (only roots, or all) sorted oldest first. */
static aged_t *collect(const graph_t *g, int roots_only, size_t *n) {
  aged_t *a = malloc((g->v.live + 1) * sizeof *a);
  size_t k = 0;
  for (uint32_t v = 1; a && v < g->v.top; v++) {
    const vertex_t *x = V(g, v);
    if (x->indeg == FREE_VERTEX || (roots_only && x->indeg != 0)) continue;
    a[k++] = (aged_t){x->time, v};
  }
  if (a) qsort(a, k, sizeof *a, cmp_aged);
  *n = k;
  return a;
}

size_t graph_expire(graph_t *g, size_t max_vertices, int64_t min_time_ns,
                    const graph_gone_t *gone) {
  size_t removed = 0, cap = 256;
  vid_t *stack = malloc(cap * sizeof *stack);
  if (!stack) return 0;
  for (int pass = 0; pass < 2; pass++) {
    int over = max_vertices && g->v.live > max_vertices;
    if (!over && !min_time_ns) break;
    size_t n;
    aged_t *a = collect(g, pass == 0, &n);
    if (!a) break;
    for (size_t i = 0; i < n; i++) {
      over = max_vertices && g->v.live > max_vertices;
      int old = min_time_ns && a[i].time < min_time_ns;
      if (!over && !old) break;
      /* In the fallback pass (cycles only), age alone never removes a vertex
       * that still has an incoming edge. */
      if (pass == 1 && !over) break;
      if (V(g, a[i].v)->indeg == FREE_VERTEX) continue; /* went with an earlier one */
      removed += remove_cascade(g, a[i].v, gone, &stack, &cap);
    }
    free(a);
    if (!(max_vertices && g->v.live > max_vertices)) break;
  }
  free(stack);
  return removed;
}
