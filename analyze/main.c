/*
 * main.c - `ripple analyze`: reads change logs written by `ripple watch` and
 * reports per-hop propagation times (docs/analyze.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "analyze.h"
#include "ripple/ripple.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-analyze [options] LOG|RUNDIR...\n"
          "\n"
          "Per-hop propagation times from change logs of `ripple watch` (plain or\n"
          "zstd-compressed files, or directories of them).\n"
          "\n"
          "  --json FILE    write the per-hop summary as JSON\n"
          "  --csv FILE     write one row per measured hop instance\n"
          "  --svg DIR      write one latency histogram per hop (DIR/<hop>.svg)\n"
          "  --png DIR      the same as PNG images\n"
          "  --rules FILE   more relation rules (YAML, docs/analyze.md)\n"
          "  -q, --quiet    no summary table\n"
          "  -h, --help     this text\n");
}

typedef struct opts {
  const char *json, *csv, *svg, *png, *rules;
  int quiet;
} opts_t;

static int parse_opts(int argc, char **argv, opts_t *o) {
  static const struct option longopts[] = {
      {"json", required_argument, NULL, 'j'},  {"csv", required_argument, NULL, 'c'},
      {"svg", required_argument, NULL, 's'},   {"png", required_argument, NULL, 'p'},
      {"rules", required_argument, NULL, 'r'}, {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
    switch (c) {
      case 'j': o->json = optarg; break;
      case 'c': o->csv = optarg; break;
      case 's': o->svg = optarg; break;
      case 'p': o->png = optarg; break;
      case 'r': o->rules = optarg; break;
      case 'q': o->quiet = 1; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "ripple-analyze: name at least one change log or run directory\n\n");
    usage(stderr);
    return 2;
  }
  return -1;
}

static int write_outputs(const opts_t *o, const cl_log_t *log, const hop_result_t *res) {
  if (!o->quiet) report_table(stdout, log, res);
  if (o->json && report_json(o->json, log, res) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: cannot write %s\n", o->json);
    return 1;
  }
  if (o->csv && report_csv(o->csv, res) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: cannot write %s\n", o->csv);
    return 1;
  }
  if (o->svg && report_svg(o->svg, res) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: cannot write histograms into %s\n", o->svg);
    return 1;
  }
  if (o->png && report_png(o->png, res) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: cannot write histograms into %s\n", o->png);
    return 1;
  }
  return 0;
}

/* A run directory of `ripple run` also holds the cost of measuring: its
 * resources.csv is summarised and, with --svg, plotted. */
static int resources(const opts_t *o, const char *path) {
  char csv[4096], summary[2048];
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0; /* a plain change log */
  snprintf(csv, sizeof csv, "%s/resources.csv", path);
  int rc = resplot_svg(csv, o->svg, summary, sizeof summary);
  if (rc == RIPPLE_ENOENT || rc == RIPPLE_ESYS) return rc == RIPPLE_ESYS && o->svg ? 1 : 0;
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: cannot plot %s: %s\n", csv, ripple_strerror(rc));
    return 1;
  }
  if (!o->quiet) printf("\nresources sampled in %s:\n%s", path, summary);
  return 0;
}

static int run(const opts_t *o, ripple_rules_t *rules, int npaths, char **paths) {
  char err[512];
  if (o->rules && ripple_rules_load_file(rules, o->rules, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: %s\n", err);
    return 1;
  }
  cl_log_t log = {0};
  for (int i = 0; i < npaths; i++) {
    if (cl_log_read_path(&log, paths[i], err, sizeof err) != RIPPLE_OK) {
      fprintf(stderr, "ripple-analyze: %s\n", err);
      cl_log_free(&log);
      return 1;
    }
  }
  if (log.malformed)
    fprintf(stderr, "ripple-analyze: skipped %zu malformed line(s) of %zu\n", log.malformed,
            log.lines);
  cl_log_sort(&log);
  hop_result_t res;
  int rc = hops_compute(&log, rules, &res);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: %s\n", ripple_strerror(rc));
    cl_log_free(&log);
    return 1;
  }
  int status = write_outputs(o, &log, &res);
  for (int i = 0; status == 0 && i < npaths; i++) status = resources(o, paths[i]);
  hops_free(&res);
  cl_log_free(&log);
  return status;
}

int main(int argc, char **argv) {
  opts_t o = {0};
  int status = parse_opts(argc, argv, &o);
  if (status >= 0) return status;
  ripple_rules_t *rules;
  if (ripple_rules_new(&rules) != RIPPLE_OK) {
    fprintf(stderr, "ripple-analyze: out of memory\n");
    return 1;
  }
  status = run(&o, rules, argc - optind, argv + optind);
  ripple_rules_free(rules);
  return status;
}
