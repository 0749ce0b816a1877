/*
 * tracer.c - a component's handle on CPID tracing: starting root contexts,
 * merging contexts before a write, and reading contexts from objects while
 * counting the bad ones.
 *
 * The tracer owns no threads and does no I/O of its own: every record it makes
 * goes to the sink the component gave it (normally a shipper, which only
 * enqueues), so nothing here can block a controller.
 */
#include <pthread.h>
#include <stdlib.h>

#include "merge.h"
#include "tracer.h"

int tracer_random(const ripple_tracer_t *t, void *buf, size_t len) {
  if (t->random) return t->random(t->hook_ud, buf, len) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
  return rnd_bytes(buf, len);
}

static int tracer_cpid(const ripple_tracer_t *t, ripple_cpid_t *id) {
  int rc = tracer_random(t, id->b, sizeof id->b);
  if (rc != RIPPLE_OK) return rc;
  cpid_from_random(id);
  return RIPPLE_OK;
}

/* The merge's hash set is seeded once per process, before any tracer exists,
 * so no merge can run while the seed is being written. */
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;
static void seed_merge_hash(void) {
  uint64_t seed = 0;
  (void)rnd_bytes(&seed, sizeof seed);
  merge_init_seed(seed);
}

int ripple_tracer_new(const ripple_tracer_opts_t *opts, ripple_tracer_t **out) {
  if (!opts || !out || !opts->component || !*opts->component) return RIPPLE_EINVAL;
  if (opts->max_ancestors > RIPPLE_ANC_MAX) return RIPPLE_EINVAL;
  pthread_once(&seed_once, seed_merge_hash);
  ripple_tracer_t *t = calloc(1, sizeof *t);
  if (!t) return RIPPLE_ENOMEM;
  t->component = strdup(opts->component);
  if (!t->component) {
    free(t);
    return RIPPLE_ENOMEM;
  }
  t->n = opts->no_ancestors ? 0 : opts->max_ancestors ? opts->max_ancestors : RIPPLE_ANC_DEFAULT;
  t->sink = opts->sink;
  t->clock_ns = opts->clock_ns;
  t->random = opts->random;
  t->hook_ud = opts->hook_ud;
  *out = t;
  return RIPPLE_OK;
}

void ripple_tracer_free(ripple_tracer_t *t) {
  if (!t) return;
  free(t->component);
  free(t);
}

uint32_t ripple_tracer_max_ancestors(const ripple_tracer_t *t) { return t->n; }

void ripple_tracer_stats(const ripple_tracer_t *t, ripple_tracer_stats_t *out) {
  ripple_tracer_t *m = (ripple_tracer_t *)t; /* atomics are read-only here */
  out->roots = atomic_load(&m->st.roots);
  out->merges = atomic_load(&m->st.merges);
  out->mergelogs = atomic_load(&m->st.mergelogs);
  out->reused = atomic_load(&m->st.reused);
  out->unchanged = atomic_load(&m->st.unchanged);
  out->bad_ctx = atomic_load(&m->st.bad_ctx);
  out->cycles = atomic_load(&m->st.cycles);
  out->spans = atomic_load(&m->st.spans);
}

/* Malformed contexts are treated as absent, but never silently: they are
 * counted, and the first one is logged so an operator learns a writer is bad. */
static int absent_if_bad(ripple_tracer_t *t, int rc) {
  if (rc == RIPPLE_EBADCTX || rc == RIPPLE_EVERSION) {
    atomic_fetch_add(&t->st.bad_ctx, 1);
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_context", "error=%s note=\"treated as absent\"",
                    ripple_errname(rc));
    return RIPPLE_ENOENT;
  }
  return rc;
}

int ripple_tracer_extract(ripple_tracer_t *t, const char *json, size_t len, const char *kind,
                          ripple_ctx_t *out) {
  if (!t || !out) return RIPPLE_EINVAL;
  int rc = ripple_object_get_ctx(json, len, kind, t->n, out);
  if (rc != RIPPLE_OK) memset(out, 0, sizeof *out);
  return absent_if_bad(t, rc);
}

int ripple_tracer_extract_str(ripple_tracer_t *t, const char *s, size_t len, ripple_ctx_t *out) {
  if (!t || !out) return RIPPLE_EINVAL;
  if (!s || len == 0) {
    memset(out, 0, sizeof *out);
    return RIPPLE_ENOENT;
  }
  return absent_if_bad(t, ripple_ctx_decode(s, len, t->n, out));
}

static void emit_mergelog(ripple_tracer_t *t, const ripple_cpid_t *cpid, const ripple_cpid_t *src,
                          size_t nsrc, const ripple_objref_t *obj) {
  if (!t->sink.mergelog) return;
  ripple_mergelog_t ml = {.cpid = *cpid,
                          .sources = src,
                          .nsources = nsrc,
                          .time_ns = tracer_now(t),
                          .component = t->component,
                          .object = obj};
  t->sink.mergelog(t->sink.ud, &ml);
}

int ripple_root(ripple_tracer_t *t, const ripple_objref_t *obj, ripple_ctx_t *out) {
  if (!t || !out) return RIPPLE_EINVAL;
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  int rc = tracer_cpid(t, &c.cpid);
  if (rc != RIPPLE_OK) return rc;
  atomic_fetch_add(&t->st.roots, 1);
  emit_mergelog(t, &c.cpid, NULL, 0, obj);
  *out = c;
  return RIPPLE_OK;
}

#define MERGE_STACK 16

int ripple_merge(ripple_tracer_t *t, const ripple_ctx_t *target, const ripple_ctx_t *const *sources,
                 size_t nsources, const ripple_objref_t *obj, ripple_ctx_t *out,
                 ripple_merge_kind_t *how) {
  if (!t || !out || (nsources && !sources)) return RIPPLE_EINVAL;
  const ripple_ctx_t *cbuf[MERGE_STACK];
  ripple_cpid_t sbuf[MERGE_STACK];
  const ripple_ctx_t **c = cbuf;
  merge_result_t res = {.sources = sbuf};
  void *heap = NULL; /* one block for both arrays when the stack is too small */
  if (nsources + 1 > MERGE_STACK) {
    heap = malloc((nsources + 1) * (sizeof(ripple_cpid_t) + sizeof(const ripple_ctx_t *)));
    if (!heap) return RIPPLE_ENOMEM;
    res.sources = heap;
    c = (const ripple_ctx_t **)(res.sources + nsources + 1);
  }
  size_t m = 0;
  int has_target = ripple_ctx_is_set(target);
  if (has_target) c[m++] = target;
  for (size_t i = 0; i < nsources; i++)
    if (ripple_ctx_is_set(sources[i])) c[m++] = sources[i];

  int rc = merge_decide(c, m, has_target, t->n, &res);
  if (rc == RIPPLE_OK && res.how == RIPPLE_MERGE_NEW) rc = tracer_cpid(t, &res.out.cpid);
  if (rc == RIPPLE_OK) {
    switch (res.how) {
      case RIPPLE_MERGE_NEW:
        atomic_fetch_add(&t->st.mergelogs, 1);
        if (res.cycle) atomic_fetch_add(&t->st.cycles, 1);
        emit_mergelog(t, &res.out.cpid, res.sources, res.nsources, obj);
        break;
      case RIPPLE_MERGE_REUSED: atomic_fetch_add(&t->st.reused, 1); break;
      case RIPPLE_MERGE_UNCHANGED: atomic_fetch_add(&t->st.unchanged, 1); break;
      case RIPPLE_MERGE_NONE: break;
    }
    if (res.how != RIPPLE_MERGE_NONE) atomic_fetch_add(&t->st.merges, 1);
    *out = res.out;
    if (how) *how = res.how;
  }
  free(heap);
  return rc;
}

const char *ripple_merge_kind_name(ripple_merge_kind_t how) {
  switch (how) {
    case RIPPLE_MERGE_NONE: return "none";
    case RIPPLE_MERGE_UNCHANGED: return "unchanged";
    case RIPPLE_MERGE_REUSED: return "reused";
    case RIPPLE_MERGE_NEW: return "new";
  }
  return "?";
}
