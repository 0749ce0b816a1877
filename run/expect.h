/*
 * expect.h - a scenario's expected cascade (docs/run.md, "Expected
 * cascades"): its `expect:` section read and checked (expect.c), a replayed
 * cascade's hops compared with it and shown as a table (expect.c), and the
 * replay itself: the change made as a person with a root CPID, the cascade
 * waited for and fetched from the trace server (replay.c). The hops of a
 * trace are counted by kubectl-ripple's kr_xhops (kubectl/export.h), the
 * same code that wrote the expectation.
 *
 * Memory: an xp_t owns its strings and its change step (xp_free); xp_row_t
 * strings are borrowed from the xp_t and the hops they were made from.
 */
#ifndef RIPPLE_RUN_EXPECT_H
#define RIPPLE_RUN_EXPECT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "run.h"

#define XP_MAX_HOPS 256
#define XP_NO_MAX (-1L)
#define XP_NO_BUDGET (-1LL)

typedef struct xp_hop {
  char writer[256], write[256], kind[128];
  long min, max;     /* max XP_NO_MAX: no upper bound */
  int64_t budget_ms; /* XP_NO_BUDGET: none */
} xp_hop_t;

typedef struct xp {
  json_t *change; /* the step that makes the change (scale, patch, apply, delete) */
  xp_hop_t *hops;
  size_t n;
  int extra_ok;       /* extra: ignore */
  int64_t timeout_ns; /* 0: the largest budget and --settle */
} xp_t;

/* The expect section of an expanded scenario. RIPPLE_EINVAL with err saying
 * which part is wrong; *out holds nothing then. */
int xp_parse(const json_t *expect, xp_t *out, char *err, size_t cap);
void xp_free(xp_t *x);

/* What differs about a hop (flags). */
enum { XP_OK = 0, XP_MISSING = 1, XP_EXTRA = 2, XP_COUNT = 4, XP_SLOW = 8 };

typedef struct xp_row {
  const char *writer, *write, *kind;
  long min, max;     /* the expectation; -2 for an extra hop */
  int64_t budget_ms; /* XP_NO_BUDGET for none (and extras) */
  size_t seen;
  int64_t last_ns; /* its latest write from the change; INT64_MIN when none */
  int verdict;     /* XP_* flags */
} xp_row_t;

/* One row per expected hop, in the scenario's order, then one per hop seen
 * that was not expected (unless extra: ignore). *rows malloc'd; returns how
 * many rows differ. */
size_t xp_compare(const xp_t *x, const kr_xhop_t *seen, size_t nseen, xp_row_t **rows,
                  size_t *nrows);
/* Has every expected hop been seen at least min times? */
int xp_complete(const xp_t *x, const kr_xhop_t *seen, size_t nseen);
/* The largest budget (ns); 0 without any. */
int64_t xp_max_budget_ns(const xp_t *x);
/* The table of rows; then to err_f one line per differing hop:
 * "hop differs: create pods/binding by kube-scheduler (Pod): missing". */
void xp_render(FILE *f, FILE *err_f, const xp_row_t *rows, size_t n);

/* ---- the replay (replay.c) ------------------------------------------------------ */

typedef struct xp_opts {
  const char *server, *server_service; /* ripple run --server, --server-service */
  const char *api;                     /* the API server's URL (through its proxy) */
  int64_t settle_ns;                   /* after every expected hop came */
  const char *rundir;                  /* trace-<rep>.json and expect-<rep>.json go there */
} xp_opts_t;

/* Make x's change as a person with a fresh root CPID (kubectl-ripple's
 * code: the context in the same write), wait until every expected hop came
 * and --settle passed, or until the timeout, fetch the trace and compare.
 * RIPPLE_OK when the check could be made: *differs holds how many hops
 * differ. Otherwise err says why (the change failed, no trace server). */
int xp_replay(runner_t *r, const xp_t *x, const xp_opts_t *o, int rep, size_t *differs, char *err,
              size_t cap);

#endif
