/*
 * export.c - `kubectl ripple export-test CPID`: a recorded cascade kept as a
 * scenario that `ripple run` replays and checks (docs/run.md, "Expected
 * cascades").
 *
 * A hop is every write of one writer, of one kind of write ("create
 * pods/binding", the span's name) carrying one kind's context, among the
 * writes that have a cause (the person's own root writes are the change, not
 * hops; nor are the watch agent's observations, spans without a kind).
 * Counting by these three, not by object, is what makes a cascade
 * comparable with its replay: the objects' names differ every time, the
 * writers and what they write do not.
 *
 * A hop's budget is the time from the change to its latest write, times the
 * margin, plus the floor: "the bindings are done within 3.2 s of the scale".
 * Measured from the change rather than from each write's cause, so that a
 * slow hop also shows in the hops after it, and a budget means something a
 * person can check with a stopwatch. Counts are exact for creates and
 * deletes and for bindings (a cascade makes a known number of objects); the
 * other writes (updates of status, mostly) come as often as informers fire,
 * so they get a range: at least one, at most three times what was seen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xtest.h"

#define KR_EXPORT_UPDATE_SLACK 3

long kr_xroot(const kr_trace_t *t) {
  for (size_t i = 0; i < t->n; i++)
    if (t->spans[i].cause < 0 && !strcmp(t->spans[i].cpid, t->cpid)) return (long)i;
  return -1;
}

int kr_xhops(const kr_trace_t *t, kr_xhop_t **out, size_t *n) {
  kr_xhop_t *rows = calloc(t->n + 1, sizeof *rows);
  if (!rows) return RIPPLE_ENOMEM;
  size_t nrows = 0;
  for (size_t i = 0; i < t->n; i++) {
    const kr_span_t *s = &t->spans[i];
    /* No kind: not a write but the watch agent's observation of one. */
    if (s->cause < 0 || !*s->kind) continue;
    size_t r = 0;
    while (r < nrows && (strcmp(rows[r].writer, s->service) != 0 ||
                         strcmp(rows[r].write, s->name) != 0 || strcmp(rows[r].kind, s->kind) != 0))
      r++;
    if (r == nrows) rows[nrows++] = (kr_xhop_t){s->service, s->name, s->kind, 0, INT64_MIN, 0};
    int64_t at = kr_diff(s->end_ns, t->t0_ns), since = kr_diff(s->end_ns, s->start_ns);
    rows[r].count++;
    if (at > rows[r].last_ns) rows[r].last_ns = at;
    if (since > rows[r].max_cause_ns) rows[r].max_cause_ns = since;
  }
  *out = rows;
  *n = nrows;
  return RIPPLE_OK;
}

int kr_export_margin_parse(const char *s, kr_export_opts_t *o) {
  char *end;
  errno = 0;
  double f = strtod(s, &end);
  if (end == s || errno || !(f > 0) || f > 1000) return RIPPLE_EINVAL;
  int64_t floor_ns = o->floor_ns;
  if (*end == '+') {
    if (ripple_duration_parse(end + 1, &floor_ns) != RIPPLE_OK || floor_ns < 0)
      return RIPPLE_EINVAL;
  } else if (*end) {
    return RIPPLE_EINVAL;
  }
  o->margin = f;
  o->floor_ns = floor_ns;
  return RIPPLE_OK;
}

int64_t kr_export_budget_ms(const kr_export_opts_t *o, int64_t observed_ns) {
  double ms =
      (observed_ns > 0 ? (double)observed_ns : 0.0) * o->margin / 1e6 + (double)o->floor_ns / 1e6;
  if (!(ms < 1e15)) return (int64_t)1e15; /* a trace's times may be anything */
  int64_t whole = (int64_t)ms;            /* rounded up, without libm */
  return (double)whole < ms ? whole + 1 : whole;
}

/* A string as YAML text (kr_yaml_value); a new string, "\"\"" when out of
 * memory. */
static char *yq(const char *s) {
  json_t *j = json_string(s ? s : "");
  char *y = j ? kr_yaml_value(j) : NULL;
  json_decref(j);
  return y ? y : strdup("\"\"");
}

/* Exact for what makes or removes objects; a range for the rest (above). */
static int exact_count(const char *write) {
  return !strncmp(write, "create ", 7) || !strncmp(write, "delete ", 7) ||
         strstr(write, "/binding") != NULL;
}

static void put_hop(FILE *f, const kr_xhop_t *h, const kr_export_opts_t *o) {
  char obs[32], *w = yq(h->writer), *wr = yq(h->write), *k = yq(h->kind);
  kr_fmt_dur(h->last_ns, obs, sizeof obs);
  fprintf(f, "    - {writer: %s, write: %s, kind: %s, ", w ? w : "\"\"", wr ? wr : "\"\"",
          k ? k : "\"\"");
  free(w);
  free(wr);
  free(k);
  if (exact_count(h->write))
    fprintf(f, "count: %zu", h->count);
  else
    fprintf(f, "min: 1, max: %zu", h->count * KR_EXPORT_UPDATE_SLACK);
  fprintf(f, ", budget_ms: %lld}   # seen: %zu, the last at %s\n",
          (long long)kr_export_budget_ms(o, h->last_ns), h->count, obs);
}

/* Text for a comment line: the trace server's answer names the CPID, and a
 * newline in it would end the comment and write YAML. */
static void comment_text(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (; s && *s && n + 1 < cap; s++) out[n++] = (unsigned char)*s < 0x20 ? '?' : *s;
  out[n] = '\0';
}

static void put_header(FILE *f, const kr_trace_t *t, const kr_export_opts_t *o,
                       const kr_xchange_t *c) {
  char now[RIPPLE_TIME_STRLEN + 1], floor[32], cpid[64], from[700];
  comment_text(t->cpid, cpid, sizeof cpid);
  comment_text(o->from, from, sizeof from);
  ripple_time_format(ripple_now_ns(), now);
  kr_fmt_dur(o->floor_ns, floor, sizeof floor);
  fprintf(f,
          "# A cascade kept as a test: kubectl ripple export-test %s\n"
          "# (the trace server %s), %s.\n"
          "# Replay and check it: ripple run THIS-FILE (docs/run.md, \"Expected cascades\").\n"
          "# Budgets: the time from the change to each hop's last write * %g + %s.\n",
          cpid, from, now, o->margin, floor);
  if (t->truncated)
    fprintf(f, "# The trace was cut short by the trace server: hops may be missing.\n");
  if (c->fill[0]) fprintf(f, "# FILL IN: %s\n", c->fill);
}

int kr_export_scenario(const kr_trace_t *t, const kr_export_opts_t *o, FILE *f, char *err,
                       size_t cap) {
  long r = kr_xroot(t);
  if (r < 0) {
    snprintf(err, cap, "the trace of %s has no root write (a person's change) to export", t->cpid);
    return RIPPLE_ENOENT;
  }
  kr_xchange_t c;
  kr_xhop_t *hops = NULL;
  size_t n = 0;
  int rc = kr_export_change(t, r, &c);
  if (rc != RIPPLE_OK) return rc;
  if ((rc = kr_xhops(t, &hops, &n)) != RIPPLE_OK) {
    kr_xchange_free(&c);
    return rc;
  }
  char *ns = yq(t->spans[r].ns);
  put_header(f, t, o, &c);
  fprintf(f, "name: %s\nparameters:\n", c.name);
  if (*t->spans[r].ns) fprintf(f, "  namespace: %s\n", ns ? ns : "\"\"");
  free(ns);
  fputs(c.params, f);
  fprintf(f, "steps:   # before the change, every repetition: the object as it was\n%s",
          *c.reset ? c.reset : "  - sleep: 0s\n");
  fprintf(f, "expect:\n  change:\n%s\n  hops:\n", c.change);
  for (size_t i = 0; i < n; i++) put_hop(f, &hops[i], o);
  if (!n) fprintf(f, "    []\n");
  free(hops);
  kr_xchange_free(&c);
  return ferror(f) ? RIPPLE_ESYS : RIPPLE_OK;
}

/* ---- the command ---------------------------------------------------------------- */

static int fetch(kr_ts_t *ts, const char *cpid, kr_trace_t *t, char *err, size_t cap) {
  kr_answers_t ans;
  /* The change's own cascade: a later change that merged this one's context
   * is not what this change caused, so not part of its test. */
  int rc = kr_tserver_fetch(ts, cpid, 0, &ans, err, cap);
  if (rc != RIPPLE_OK) return rc;
  char why[1024];
  /* The details say what the change was; without them it must be filled in. */
  int drc = kr_tserver_cpid_get(ts, cpid, "details", &ans.details, why, sizeof why);
  if (drc != RIPPLE_OK && drc != RIPPLE_ENOENT)
    fprintf(stderr, "warning: the trace without details: %s\n", why);
  rc = kr_trace_build(&ans, t, err, cap);
  if (rc == RIPPLE_EJSON && ans.details) {
    fprintf(stderr, "warning: the trace without details: %s\n", err);
    json_decref(ans.details);
    ans.details = NULL;
    rc = kr_trace_build(&ans, t, err, cap);
  }
  kr_answers_free(&ans);
  return rc;
}

int kr_export_test(const kr_args_t *a, kr_ts_t *ts, char *err, size_t cap) {
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, kr_ts_where(ts)};
  if (a->margin && kr_export_margin_parse(a->margin, &o) != RIPPLE_OK) {
    snprintf(err, cap, "--margin is FACTOR or FACTOR+DURATION (2, 1.5+500ms), not \"%s\"",
             a->margin);
    return RIPPLE_EINVAL;
  }
  kr_trace_t t;
  int rc = fetch(ts, a->cpid, &t, err, cap);
  if (rc != RIPPLE_OK) return rc;
  FILE *f = stdout;
  if (a->output && strcmp(a->output, "-") != 0 && !(f = fopen(a->output, "w"))) {
    snprintf(err, cap, "%s: %s", a->output, strerror(errno));
    kr_trace_free(&t);
    return RIPPLE_ESYS;
  }
  rc = kr_export_scenario(&t, &o, f, err, cap);
  if (f != stdout) {
    if (fclose(f) != 0 && rc == RIPPLE_OK) rc = RIPPLE_ESYS;
  } else if (fflush(f) != 0 && rc == RIPPLE_OK) {
    rc = RIPPLE_ESYS;
  }
  if (rc == RIPPLE_ESYS) snprintf(err, cap, "cannot write the scenario: %s", strerror(errno));
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory");
  kr_trace_free(&t);
  return rc;
}
