/*
 * tracer.h - the tracer's insides, shared by tracer.c and span.c.
 */
#ifndef RIPPLE_TRACER_H
#define RIPPLE_TRACER_H

#include <stdatomic.h>

#include "internal.h"

struct ripple_tracer {
  char *component;
  uint32_t n;
  ripple_sink_t sink;
  int64_t (*clock_ns)(void *ud);
  int (*random)(void *ud, void *buf, size_t len);
  void *hook_ud;
  struct {
    atomic_uint_fast64_t roots, merges, mergelogs, reused, unchanged, bad_ctx, cycles, spans;
  } st;
};

static inline int64_t tracer_now(const ripple_tracer_t *t) {
  return t->clock_ns ? t->clock_ns(t->hook_ud) : ripple_now_ns();
}

int tracer_random(const ripple_tracer_t *t, void *buf, size_t len);

#endif
