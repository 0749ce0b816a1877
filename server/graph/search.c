/*
 * search.c - finding traces without a CPID, and the API's page cursors
 * (search.h).
 */
#include "graph/search.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/clock.h"
#include "ripplex/wire.h"

/* How many CPIDs a root's summary walks; past it the summary says so. */
#define SUMMARY_WALK_MAX 10000

/* Is this CPID (still) in the graph? ud is the core_t; the caller holds
 * the lock. */
static int cpid_live(void *ud, const ripple_cpid_t *cpid) {
  const core_t *s = ud;
  return graph_find(s->g, cpid) != 0;
}

static void put_time(sbuf_t *o, int64_t ns) {
  char t[RIPPLE_TIME_STRLEN + 1];
  time_text(ns, t);
  sbuf_printf(o, "\"%s\"", t);
}

static void put_object(sbuf_t *o, const obj_found_t *f) {
  sbuf_puts(o, "{\"kind\":");
  sbuf_json_str(o, f->kind);
  sbuf_puts(o, ",\"namespace\":");
  sbuf_json_str(o, f->ns);
  sbuf_puts(o, ",\"name\":");
  sbuf_json_str(o, f->name);
  sbuf_puts(o, ",\"cpids\":[");
  for (size_t i = 0; i < f->n; i++) {
    sbuf_puts(o, i ? ",{\"cpid\":" : "{\"cpid\":");
    wire_cpid(o, &f->cpid[i].cpid);
    sbuf_puts(o, ",\"time\":");
    put_time(o, f->cpid[i].time);
    sbuf_printf(o, ",\"writes\":%" PRIu32 "}", f->cpid[i].writes);
  }
  sbuf_puts(o, "]}");
}

int search_objects(core_t *s, const char *kind, const char *ns, const char *name, size_t limit,
                   sbuf_t *out) {
  obj_found_t *f = malloc((limit ? limit : 1) * sizeof *f);
  if (!f) return 503;
  pthread_rwlock_rdlock(&s->lock);
  long n = objects_find(s->objects, kind, ns, name, cpid_live, s, f, limit);
  sbuf_puts(out, "{\"objects\":[");
  for (long i = 0; i < n; i++) {
    if (i) sbuf_putc(out, ',');
    put_object(out, &f[i]);
  }
  sbuf_puts(out, "]}");
  pthread_rwlock_unlock(&s->lock);
  free(f);
  return n < 0 || out->oom ? 503 : 200;
}

typedef struct found_ctx {
  core_t *s;
  sbuf_t *out;
  size_t count;
  int64_t last_time, last_seq;
  graph_scope_t scope;
} found_ctx_t;

/* The cascade below a root (its own, or all it reaches): its CPIDs, their
 * spans, the latest end. */
static void put_summary(core_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, sbuf_t *o) {
  vid_t *vs = NULL;
  size_t n = 0, spans = 0;
  int truncated = 0;
  int64_t end = INT64_MIN;
  pthread_rwlock_rdlock(&s->lock);
  int rc = graph_cascade(s->g, cpid, scope, SUMMARY_WALK_MAX, &vs, &n, &truncated);
  for (size_t i = 0; rc == RIPPLE_OK && i < n; i++) spans += graph_span_count(s->g, vs[i], &end);
  pthread_rwlock_unlock(&s->lock);
  free(vs);
  sbuf_printf(o, ",\"summary\":{\"scope\":\"%s\",\"cpids\":%zu,\"spans\":%zu,\"end\":",
              scope == GRAPH_OWN ? "own" : "reachable", n, spans);
  if (end == INT64_MIN)
    sbuf_puts(o, "null");
  else
    put_time(o, end);
  sbuf_printf(o, ",\"truncated\":%s}", truncated ? "true" : "false");
}

/* One root: its stored mergelog with "summary" added inside. */
static int found_root(void *ud, uint64_t seq, int64_t time, const ripple_cpid_t *cpid,
                      const char *body, size_t len) {
  found_ctx_t *c = ud;
  if (len < 2 || body[len - 1] != '}') return RIPPLE_OK; /* not ours: skip */
  if (c->count++) sbuf_putc(c->out, ',');
  sbuf_put(c->out, body, len - 1);
  put_summary(c->s, cpid, c->scope, c->out);
  sbuf_putc(c->out, '}');
  c->last_time = time;
  c->last_seq = (int64_t)seq;
  return c->out->oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

int search_roots(core_t *s, const search_roots_query_t *q, sbuf_t *out, char *err, size_t errcap) {
  store_root_query_t sq = {.since = q->since,
                           .before_time = q->until ? q->until : INT64_MAX,
                           .before_seq = q->until ? INT64_MIN : INT64_MAX,
                           .component = q->component,
                           .ns = q->ns,
                           .kind = q->kind,
                           .name = q->name,
                           .limit = q->limit};
  if (q->cursor && *q->cursor && page_cursor_parse(q->cursor, &sq.before_time, &sq.before_seq)) {
    snprintf(err, errcap, "cursor '%.64s' is not one this server handed out", q->cursor);
    return 400;
  }
  found_ctx_t c = {s, out, 0, 0, 0, q->scope};
  int more;
  sbuf_puts(out, "{\"roots\":[");
  if (store_roots(s->store, &sq, found_root, &c, &more) != RIPPLE_OK) return 503;
  page_end(out, more, c.last_time, c.last_seq);
  return out->oom ? 503 : 200;
}

int page_cursor_parse(const char *s, int64_t *time, int64_t *seq) {
  if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) return RIPPLE_EINVAL;
  char *end;
  errno = 0;
  *time = strtoll(s, &end, 10);
  if (end == s || *end != '.' || errno) return RIPPLE_EINVAL;
  const char *p = end + 1;
  if (!(p[0] == '-' || (p[0] >= '0' && p[0] <= '9'))) return RIPPLE_EINVAL;
  *seq = strtoll(p, &end, 10);
  return end == p || *end || errno ? RIPPLE_EINVAL : RIPPLE_OK;
}

void page_end(sbuf_t *out, int more, int64_t time, int64_t seq) {
  if (more)
    sbuf_printf(out, "],\"next\":\"%" PRId64 ".%" PRId64 "\"}", time, seq);
  else
    sbuf_puts(out, "],\"next\":null}");
}
