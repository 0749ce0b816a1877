/*
 * analyze.h - the parts of `ripple analyze`, shared by its main() and its tests:
 * reading change logs (changelog.c), measuring per-hop propagation times
 * (hops.c) and writing them out (report.c; histograms in hist.c, drawn by
 * plot.c with ticks from ticks.c). docs/analyze.md is the user-facing
 * description.
 */
#ifndef RIPPLE_ANALYZE_H
#define RIPPLE_ANALYZE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ripple/rules.h"

/* ---- change logs (changelog.c) ---- */

typedef enum cl_op { CL_ADD, CL_UPDATE, CL_DELETE } cl_op_t;

/* One line of a change log as `ripple watch` writes it. */
typedef struct cl_record {
  int64_t t; /* time_ns: when the notification arrived */
  cl_op_t op;
  bool relist;    /* found by a relist: its time is not when the change happened */
  size_t seq;     /* position in the input, to keep equal times in order */
  json_t *object; /* owned; kind and apiVersion filled in from resource if absent */
  json_t *old;    /* owned; NULL when not known */
  const char *uid, *kind, *ns, *name; /* borrowed from object */
} cl_record_t;

typedef struct cl_log {
  cl_record_t *r;
  size_t n, cap;
  size_t lines, malformed;
} cl_log_t;

/* Longest line read; longer ones are counted as malformed. */
#define CL_MAX_LINE (64u << 20)

/* Parse one line (no newline). RIPPLE_EJSON when it is not a change record. */
int cl_parse_line(const char *line, size_t len, cl_record_t *out);
void cl_record_clear(cl_record_t *r);
/* Add a line to the log: blank lines are skipped, bad ones counted. */
int cl_log_add_line(cl_log_t *log, const char *line, size_t len);
/* Read a file (zstd-compressed if it starts with the zstd magic) or every
 * change log in a directory (names containing ".jsonl" or ending in ".log"
 * or ".zst", in name order). err says what failed. */
int cl_log_read_path(cl_log_t *log, const char *path, char *err, size_t errlen);
/* Read from memory, compressed or not (tests, fuzzing). */
int cl_log_read_buffer(cl_log_t *log, const void *buf, size_t len);
/* Sort by time (stable). */
void cl_log_sort(cl_log_t *log);
void cl_log_free(cl_log_t *log);

/* ---- hops (hops.c) ---- */

typedef enum hop_id {
  HOP_DEPLOY_ADD_RS_ADD,
  HOP_DEPLOY_UPDATE_RS_UPDATE,
  HOP_RS_ADD_POD_ADD,
  HOP_RS_UPDATE_POD_ADD,
  HOP_RS_DELETE_POD_DELETE,
  HOP_POD_ADD_SCHEDULED,
  HOP_POD_SCHEDULED_RUNNING,
  HOP_POD_RUNNING_READY,
  HOP_POD_READY_ENDPOINTS,
  HOP_POD_READY_SLICE,
  HOP_E2E_DEPLOY_READY,
  HOP_E2E_DEPLOY_DELETE,
  HOP_COUNT
} hop_id_t;

/* One measured hop: from one object's change to another's (or the same one's). */
typedef struct hop_inst {
  hop_id_t hop;
  int64_t start, end; /* ns */
  const cl_record_t *from, *to;
} hop_inst_t;

typedef struct hop_stats {
  size_t count;
  int64_t min, p50, p90, p99, max; /* ns; nearest rank */
} hop_stats_t;

typedef struct hop_result {
  hop_inst_t *v;
  size_t n, cap;
  hop_stats_t stats[HOP_COUNT];
} hop_result_t;

const char *hop_name(hop_id_t h);
/* Measure every hop of a sorted log. Records stay owned by the log, which
 * must outlive the result. */
int hops_compute(const cl_log_t *log, const ripple_rules_t *rules, hop_result_t *out);
void hops_free(hop_result_t *res);
/* Nearest rank: the smallest value with at least p% of values at or below it,
 * i.e. sorted[ceil(p/100 * n) - 1]; 0 for no values. */
int64_t hop_percentile(const int64_t *sorted, size_t n, unsigned p);

/* ---- output (report.c, hist.c) ---- */

void report_table(FILE *f, const cl_log_t *log, const hop_result_t *res);
int report_json(const char *path, const cl_log_t *log, const hop_result_t *res);
int report_csv(const char *path, const hop_result_t *res);
/* One histogram per hop with values (hist.c), DIR/<hop>.svg or DIR/<hop>.png:
 * x the latency, y the number of instances in each bin. */
int report_svg(const char *dir, const hop_result_t *res);
int report_png(const char *dir, const hop_result_t *res);
/* DIR/<hop><ext>, the hop's name made a file name: "pod-add->scheduled" ->
 * "pod-add_to_scheduled", ':' -> '_'. */
void report_file_name(char *buf, size_t cap, const char *dir, const char *hop, const char *ext);

/* A hop's latencies binned as the histograms draw them: HIST_BINS bins from
 * its min to its max in ms (a 1 ms range for a single value), and the
 * tallest bin's count rounded up to a multiple of 4 (the y axis then goes
 * up to the next round tick). */
enum { HIST_BINS = 30 };
typedef struct hop_hist {
  size_t bins[HIST_BINS], ymax;
  double lo, hi; /* ms */
} hop_hist_t;
void hop_hist(const hop_result_t *res, hop_id_t h, hop_hist_t *out);

/* ---- plots (ticks.c, plot.c) ---- */

/* What an axis measures, which decides its labels: durations (values in ms,
 * shown in µs, ms or s as the range needs), counts (whole numbers), percent,
 * MiB. */
typedef enum plot_unit {
  PLOT_UNIT_MS,
  PLOT_UNIT_COUNT,
  PLOT_UNIT_PERCENT,
  PLOT_UNIT_MIB
} plot_unit_t;

enum { PLOT_MAX_TICKS = 16, PLOT_LABEL_LEN = 32 };
/* An axis's ticks: n round values (1, 2 or 5 x 10^k apart) from lo, at or
 * below the data, to hi, at or above it; label[i] is v[i] with its unit
 * ("0.5 s", "250 ms", "40%", "200 MiB", "12"). */
typedef struct plot_ticks {
  double lo, hi, step; /* in the unit given, ms for durations */
  size_t n;
  double v[PLOT_MAX_TICKS];
  char label[PLOT_MAX_TICKS][PLOT_LABEL_LEN];
} plot_ticks_t;
/* Ticks for data from lo to hi in at most max_intervals steps (at least 1;
 * lo == hi and non-finite values give a small range still). */
void plot_ticks(double lo, double hi, plot_unit_t unit, int max_intervals, plot_ticks_t *out);

/* The canvas (pixels, or points in the SVG) and the most intervals on each
 * axis; fewer x intervals are used when their labels would not fit. */
enum { PLOT_W = 640, PLOT_H = 400, PLOT_X_INTERVALS = 8, PLOT_Y_INTERVALS = 5 };

/* One line of a line plot: n (x, y) pairs, borrowed. */
typedef struct plot_series {
  const char *name;
  const double *xy;
  size_t n;
} plot_series_t;

/* What plot_write draws: bars (bins, nbins bins spanning xlo..xhi from 0) or
 * lines (series). The axes cover xlo..xhi and ylo..yhi, extended to round
 * ticks. Everything is borrowed. */
typedef struct plot {
  const char *title, *xtitle, *ytitle;
  plot_unit_t xunit, yunit;
  double xlo, xhi, ylo, yhi;
  const size_t *bins;
  size_t nbins;
  const plot_series_t *series;
  size_t nseries;
} plot_t;

typedef enum plot_format { PLOT_SVG, PLOT_PNG } plot_format_t;
/* Draw p into path as SVG or PNG. RIPPLE_ESYS when the file cannot be
 * written, RIPPLE_ENOMEM when cairo runs out of memory; both are logged. */
int plot_write(const plot_t *p, plot_format_t fmt, const char *path);

/* ---- resources (resplot.c) ---- */

/* Plot a run directory's resources.csv (written by `ripple run`): CPU use in
 * percent of one core and resident memory in MiB over time, one line per
 * process, as DIR/resources-cpu.svg and DIR/resources-memory.svg (the paper's
 * figures 7 and 8). RIPPLE_ENOENT when there is no such file; malformed rows
 * are skipped. *summary (may be NULL) gets one line per process with its
 * averages. */
int resplot_svg(const char *csv_path, const char *dir, char *summary, size_t cap);

#endif
