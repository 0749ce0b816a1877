/*
 * expect.h - a scenario's expected cascade (docs/run.md, "Expected
 * cascades"): its `expect:` section read and checked (expect.c), the hops of
 * a cascade read from its trace as `kubectl ripple trace -o json` shows it
 * (trace.c), the two compared and shown as a table (expect.c), and the
 * replay itself (replay.c): the change made and the trace read by
 * kubectl-ripple, the program, found next to ripple-run (krexec.c), so the
 * change carries its root CPID exactly as a person's `kubectl ripple` change
 * does, and the trace is read the way the operator reads it.
 *
 * Memory: an xp_t owns its strings and its change step (xp_free); an
 * xp_seen_t array is the caller's (free()); xp_row_t strings are borrowed
 * from the xp_t and the seen hops they were made from.
 */
#ifndef RIPPLE_RUN_EXPECT_H
#define RIPPLE_RUN_EXPECT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "run.h"

#define XP_MAX_HOPS 256
#define XP_NO_MAX (-1L)
#define XP_NO_BUDGET (-1LL)
/* The webhook cuts every string it ships to 1024 bytes and "..." (docs/webhook.md). */
#define XP_NAME_MAX 1040

typedef struct xp_hop {
  char writer[XP_NAME_MAX], write[XP_NAME_MAX], kind[XP_NAME_MAX];
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

/* A hop of a cascade as seen: every write by one writer of one kind of
 * write carrying one kind's context. */
typedef struct xp_seen {
  char writer[XP_NAME_MAX], write[XP_NAME_MAX], kind[XP_NAME_MAX];
  size_t count;
  int64_t last_ns; /* its latest write's end, from the change */
} xp_seen_t;

/* The hops of a trace as kubectl-ripple's `trace -o json` gives it (its
 * "tree": nodes with component, write, kind, cause, at_ns, children): every
 * node with a cause and a kind (not the person's root writes, not the watch
 * agent's observations), grouped by component, write and kind in order of
 * first appearance, as kubectl ripple export-test groups them. RIPPLE_EJSON
 * with err for another shape. */
int xp_seen_from_trace(const json_t *trace, xp_seen_t **out, size_t *n, char *err, size_t cap);

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
size_t xp_compare(const xp_t *x, const xp_seen_t *seen, size_t nseen, xp_row_t **rows,
                  size_t *nrows);
/* Has every expected hop been seen at least min times? */
int xp_complete(const xp_t *x, const xp_seen_t *seen, size_t nseen);
/* The largest budget (ns); 0 without any. */
int64_t xp_max_budget_ns(const xp_t *x);
/* The table of rows to f; then to err_f one line per differing hop:
 * "hop differs: create pods/binding by kube-scheduler (Pod): missing". */
void xp_render(FILE *f, FILE *err_f, const xp_row_t *rows, size_t n);
/* "12.3ms", "1.25s" */
void xp_fmt_dur(int64_t ns, char *out, size_t cap);

/* ---- kubectl-ripple, the program (krexec.c) -------------------------------------- */

/* A program next to this one (as `ripple` finds its commands), else its
 * name, for execvp to find on PATH. */
void xp_sibling(const char *name, char *out, size_t cap);
/* Run argv (argv[0] found as execvp does) with no input; its standard output
 * into *out (NUL-terminated, at most 256 MiB; free it), its standard error
 * to the caller's, or discarded with quiet. *status: its exit status, -1
 * when it did not exit. RIPPLE_ESYS with err when it cannot run. */
int xp_exec(char *const argv[], int quiet, char **out, int *status, char *err, size_t cap);

/* ---- the replay (replay.c) ------------------------------------------------------ */

typedef struct xp_opts {
  const char *kubectl_ripple;          /* the program */
  const char *server, *server_service; /* ripple run --server, --server-service */
  const char *kubeconfig, *context;
  int64_t settle_ns;  /* after every expected hop came */
  const char *rundir; /* trace-<rep>.json and expect-<rep>.json go there */
} xp_opts_t;

/* Make x's change with kubectl-ripple (a fresh root CPID in the same
 * write), wait until every expected hop came and --settle passed, or until
 * the timeout, read the trace with kubectl-ripple and compare. RIPPLE_OK
 * when the check could be made: *differs holds how many hops differ.
 * Otherwise err says why (the change failed, the trace never came). */
int xp_replay(runner_t *r, const xp_t *x, const xp_opts_t *o, int rep, size_t *differs, char *err,
              size_t cap);

#endif
