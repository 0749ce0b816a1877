/*
 * trace.c - a whole trace in one answer (trace.h).
 */
#include "graph/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/wire.h"

typedef struct rows {
  uint64_t *v;
  size_t n, cap;
  uint64_t after; /* only rows past it */
  uint64_t max;   /* the largest row seen, new or not */
  int all;        /* take every row (of a CPID new to the trace) */
  int oom;
} rows_t;

static void rows_push(rows_t *r, uint64_t seq) {
  if (seq > r->max) r->max = seq;
  if ((seq <= r->after && !r->all) || r->oom) return;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 256;
    uint64_t *v = realloc(r->v, cap * sizeof *v);
    if (!v) {
      r->oom = 1;
      return;
    }
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = seq;
}

static void push_span(void *ud, uint64_t seq) { rows_push(ud, seq); }

int trace_cursor_parse(const char *s, trace_cursor_t *c) {
  if (!(s[0] >= '0' && s[0] <= '9')) return RIPPLE_EINVAL;
  char *end;
  errno = 0;
  unsigned long long m = strtoull(s, &end, 10);
  if (*end != '.' || errno || !(end[1] >= '0' && end[1] <= '9')) return RIPPLE_EINVAL;
  const char *p = end + 1;
  unsigned long long sp = strtoull(p, &end, 10);
  if (*end || errno) return RIPPLE_EINVAL;
  c->mergelog = m;
  c->span = sp;
  return RIPPLE_OK;
}

int trace_scope_parse(const char *s, graph_scope_t dflt, graph_scope_t *scope) {
  if (!s || !*s)
    *scope = dflt;
  else if (!strcmp(s, "own"))
    *scope = GRAPH_OWN;
  else if (!strcmp(s, "reachable"))
    *scope = GRAPH_REACHABLE;
  else
    return RIPPLE_EINVAL;
  return RIPPLE_OK;
}

const char *trace_scope_name(graph_scope_t scope) {
  return scope == GRAPH_OWN ? "own" : "reachable";
}

int trace_answer(core_t *c, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                 const trace_cursor_t *since, sbuf_t *out) {
  vid_t *vs;
  size_t n;
  int truncated;
  rows_t mls = {.after = since ? since->mergelog : 0}, sps = {.after = since ? since->span : 0};
  /* Under the lock only the walk and the row numbers; the bodies are read
   * from the store after it, as the three single answers do. */
  pthread_rwlock_rdlock(&c->lock);
  int rc = graph_cascade(c->g, cpid, scope, limit, &vs, &n, &truncated);
  if (rc != RIPPLE_OK) {
    pthread_rwlock_unlock(&c->lock);
    return rc == RIPPLE_ENOENT ? 404 : 503;
  }
  sbuf_puts(out, "{\"cpid\":");
  wire_cpid(out, cpid);
  sbuf_printf(out, ",\"scope\":\"%s\",\"truncated\":%s,\"related\":[", trace_scope_name(scope),
              truncated ? "true" : "false");
  for (size_t i = 0; i < n; i++) {
    if (i) sbuf_putc(out, ',');
    wire_cpid(out, graph_cpid(c->g, vs[i]));
    uint64_t seq = graph_mergelog_seq(c->g, vs[i]);
    if (seq) rows_push(&mls, seq);
    /* A CPID whose mergelog is new may have had spans before it (they came
     * first): they are new to this trace, whatever their rows. */
    sps.all = seq > mls.after;
    graph_span_seqs(c->g, vs[i], push_span, &sps);
  }
  pthread_rwlock_unlock(&c->lock);
  free(vs);
  int first = 1;
  sbuf_puts(out, "],\"mergelogs\":[");
  if (!mls.oom && !sps.oom) rc = store_bodies(c->store, DEC_MERGELOGS, mls.v, mls.n, out, &first);
  first = 1;
  sbuf_puts(out, "],\"spans\":[");
  if (rc == RIPPLE_OK && !mls.oom && !sps.oom)
    rc = store_bodies(c->store, DEC_SPANS, sps.v, sps.n, out, &first);
  /* The cursor never goes back: a trace whose rows all went (retention)
   * keeps the caller's. */
  uint64_t ml = mls.max > mls.after ? mls.max : mls.after;
  uint64_t sp = sps.max > sps.after ? sps.max : sps.after;
  sbuf_printf(out, "],\"next\":\"%" PRIu64 ".%" PRIu64 "\"}", ml, sp);
  int oom = mls.oom || sps.oom || out->oom;
  free(mls.v);
  free(sps.v);
  return rc == RIPPLE_OK && !oom ? 200 : 503;
}
