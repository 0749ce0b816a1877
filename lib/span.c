/*
 * span.c - spans: units of work inside a component, tagged with the CPID of
 * the change that caused them.
 *
 * As in the paper (section 3.4.3), the first span a component opens for an
 * observed change has no parent; children opened inside it carry its id.
 * Strings are copied in, so callers may pass temporaries.
 */
#include <stdlib.h>

#include "tracer.h"

struct ripple_span {
  ripple_tracer_t *t;
  ripple_cpid_t cpid;
  uint64_t id, parent;
  int64_t start;
  char *name;
  ripple_attr_t *attrs;
  size_t nattrs, cap;
};

static int span_new(ripple_tracer_t *t, const ripple_cpid_t *cpid, uint64_t parent,
                    const char *name, ripple_span_t **out) {
  if (!t || !name || !out) return RIPPLE_EINVAL;
  ripple_span_t *s = calloc(1, sizeof *s);
  if (!s) return RIPPLE_ENOMEM;
  s->name = strdup(name);
  if (!s->name) {
    free(s);
    return RIPPLE_ENOMEM;
  }
  int rc;
  do { /* 0 means "no span"; a random id of 0 is redrawn. */
    rc = tracer_random(t, &s->id, sizeof s->id);
  } while (rc == RIPPLE_OK && s->id == 0);
  if (rc != RIPPLE_OK) {
    free(s->name);
    free(s);
    return rc;
  }
  s->t = t;
  if (cpid) s->cpid = *cpid;
  s->parent = parent;
  s->start = tracer_now(t);
  *out = s;
  return RIPPLE_OK;
}

int ripple_span_start(ripple_tracer_t *t, const ripple_ctx_t *ctx, const char *name,
                      ripple_span_t **out) {
  return span_new(t, ctx ? &ctx->cpid : NULL, 0, name, out);
}

int ripple_span_start_child(const ripple_span_t *parent, const char *name, ripple_span_t **out) {
  if (!parent) return RIPPLE_EINVAL;
  return span_new(parent->t, &parent->cpid, parent->id, name, out);
}

int ripple_span_set_attr(ripple_span_t *s, const char *key, const char *value) {
  if (!s || !key || !value) return RIPPLE_EINVAL;
  char *v = strdup(value);
  if (!v) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < s->nattrs; i++) {
    if (strcmp(s->attrs[i].key, key) == 0) {
      free((char *)s->attrs[i].value);
      s->attrs[i].value = v;
      return RIPPLE_OK;
    }
  }
  char *k = strdup(key);
  if (!k) {
    free(v);
    return RIPPLE_ENOMEM;
  }
  if (s->nattrs == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    ripple_attr_t *a = realloc(s->attrs, cap * sizeof *a);
    if (!a) {
      free(k);
      free(v);
      return RIPPLE_ENOMEM;
    }
    s->attrs = a;
    s->cap = cap;
  }
  s->attrs[s->nattrs++] = (ripple_attr_t){k, v};
  return RIPPLE_OK;
}

void ripple_span_set_start(ripple_span_t *s, int64_t start_ns) {
  if (s) s->start = start_ns;
}

uint64_t ripple_span_id(const ripple_span_t *s) { return s ? s->id : 0; }

void ripple_span_discard(ripple_span_t *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nattrs; i++) {
    free((char *)s->attrs[i].key);
    free((char *)s->attrs[i].value);
  }
  free(s->attrs);
  free(s->name);
  free(s);
}

void ripple_span_end(ripple_span_t *s) {
  if (!s) return;
  ripple_tracer_t *t = s->t;
  atomic_fetch_add(&t->st.spans, 1);
  if (t->sink.span) {
    ripple_span_rec_t rec = {s->cpid,  s->id,         s->parent, t->component, s->name,
                             s->start, tracer_now(t), s->attrs,  s->nattrs};
    t->sink.span(t->sink.ud, &rec);
  }
  ripple_span_discard(s);
}
