/*
 * xtest.h - a recorded cascade kept as a test (docs/kubectl-ripple.md,
 * "export-test"; docs/run.md, "Expected cascades"): the hops of a trace
 * grouped by writer, write and kind (export.c), the scenario that
 * `kubectl ripple export-test` writes from them (export.c, exportchg.c), and
 * the command itself (export.c). `ripple run` groups the trace of its replay
 * (kubectl ripple trace -o json) by the same rule (run/trace.c), so a
 * recorded and a replayed cascade are counted alike.
 *
 * Memory: a kr_xhop_t's strings are borrowed from the kr_trace_t it was made
 * from; the array is the caller's (free()).
 */
#ifndef RIPPLE_KUBECTL_XTEST_H
#define RIPPLE_KUBECTL_XTEST_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "kr.h"

/* One hop of a cascade: every write by one writer of one kind of write
 * ("create pods/binding") carrying one kind's context (Pod). */
typedef struct kr_xhop {
  const char *writer, *write, *kind;
  size_t count;
  int64_t last_ns;      /* its latest write's end, from the change (t->t0_ns) */
  int64_t max_cause_ns; /* its longest time since a cause */
} kr_xhop_t;

/* The hops of t: its spans that have a cause (every write but the person's
 * own root writes), grouped by (writer, write, kind), in order of first
 * appearance; *out is malloc'd (free it), *n rows. */
int kr_xhops(const kr_trace_t *t, kr_xhop_t **out, size_t *n);

/* The root write of t: the queried CPID's first span without a cause; -1
 * when there is none. */
long kr_xroot(const kr_trace_t *t);

/* Budgets: observed time from the change * margin + floor, rounded up to a
 * millisecond. */
#define KR_EXPORT_MARGIN 2.0
#define KR_EXPORT_FLOOR_NS 1000000000LL

typedef struct kr_export_opts {
  double margin;    /* > 0 */
  int64_t floor_ns; /* >= 0 */
  const char *from; /* where the trace came from, for the header comment */
} kr_export_opts_t;

/* "FACTOR" or "FACTOR+DURATION" (2, 1.5+500ms) into margin and floor. */
int kr_export_margin_parse(const char *s, kr_export_opts_t *o);
int64_t kr_export_budget_ms(const kr_export_opts_t *o, int64_t observed_ns);

/* The change of the root write r of t as scenario YAML (exportchg.c): the
 * parameters it needs (with defaults when they were known), the steps that
 * put the object back as it was before the change, and the change itself.
 * fill holds a sentence for the header when something could not be known
 * ("" otherwise). Each part is text the caller frees. */
typedef struct kr_xchange {
  char *params; /* "  NAME: VALUE\n" lines, or "" */
  char *reset;  /* "  - STEP\n" lines under steps:, or "" */
  char *change; /* "    STEP" (a mapping under expect.change) */
  char name[128];
  char fill[512];
} kr_xchange_t;
int kr_export_change(const kr_trace_t *t, long r, kr_xchange_t *out);
void kr_xchange_free(kr_xchange_t *c);

/* A JSON value as one line of YAML (JSON's own syntax), "$" doubled because
 * ripple run substitutes ${NAME} in the whole file; a new string (free it),
 * NULL when out of memory. */
char *kr_yaml_value(const json_t *v);

/* The scenario for t (docs/run.md, "Expected cascades") to f. RIPPLE_ENOENT
 * with err when t has no root write. */
int kr_export_scenario(const kr_trace_t *t, const kr_export_opts_t *o, FILE *f, char *err,
                       size_t cap);

/* `kubectl ripple export-test CPID [-o FILE] [--margin F[+DUR]]`. */
int kr_export_test(const kr_args_t *a, kr_ts_t *ts, char *err, size_t cap);

#endif
