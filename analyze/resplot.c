/*
 * resplot.c - the cost of the measurement itself, drawn: CPU and memory of
 * the watch agent next to kube-apiserver's over a run (the paper's figures 7
 * and 8), from the resources.csv that `ripple run` samples.
 *
 * CPU use is the CPU time a process gained between two samples divided by
 * the wall time between them (100% = one core busy), so the plot shows when
 * the agent works, not only how much in total. plot.c draws the lines.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "ripple/ripple.h"

#define RP_MAX_PROCS 8

typedef struct rpoint {
  double t, cpu, mem; /* seconds since the first sample, % of a core, MiB */
} rpoint_t;

typedef struct rseries {
  char name[64];
  rpoint_t *p;
  size_t n, cap;
  double last_cpu_s, last_t;
} rseries_t;

typedef struct rdata {
  rseries_t s[RP_MAX_PROCS];
  int ns;
  long long t0;
} rdata_t;

static rseries_t *series(rdata_t *d, const char *name) {
  for (int i = 0; i < d->ns; i++)
    if (!strcmp(d->s[i].name, name)) return &d->s[i];
  if (d->ns == RP_MAX_PROCS) return NULL;
  rseries_t *s = &d->s[d->ns++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->last_t = -1;
  return s;
}

static int push(rseries_t *s, double t, double cpu, double mem) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    rpoint_t *p = realloc(s->p, cap * sizeof *p);
    if (!p) return RIPPLE_ENOMEM;
    s->p = p, s->cap = cap;
  }
  s->p[s->n++] = (rpoint_t){t, cpu, mem};
  return RIPPLE_OK;
}

/* The next comma-separated field of *line, or NULL. */
static char *field(char **line) {
  char *f = *line, *comma = f ? strchr(f, ',') : NULL;
  if (comma) *comma = '\0';
  *line = comma ? comma + 1 : NULL;
  return f;
}

/* One CSV row: time_ns,process,pid,cpu_s,rss_kib; the header and torn rows
 * are skipped. */
static void add_row(rdata_t *d, char *line) {
  char *time = field(&line), *name = field(&line), *pid = field(&line), *cpu = field(&line);
  char *rss = field(&line), *e1 = NULL, *e2 = NULL, *e3 = NULL;
  if (!rss || !*name || strlen(name) >= 64 || !pid) return;
  long long t = strtoll(time, &e1, 10);
  double cpu_s = strtod(cpu, &e2);
  long rss_kib = strtol(rss, &e3, 10);
  if (*e1 || *e2 || (*e3 && *e3 != '\n') || t <= 0) return;
  if (!d->t0) d->t0 = t;
  rseries_t *s = series(d, name);
  double ts = (double)(t - d->t0) / 1e9;
  if (!s) return;
  if (s->last_t >= 0 && ts > s->last_t)
    (void)push(s, ts, 100.0 * (cpu_s - s->last_cpu_s) / (ts - s->last_t), (double)rss_kib / 1024.0);
  s->last_t = ts, s->last_cpu_s = cpu_s;
}

/* One plot of CPU (mem 0) or memory (mem 1), time in ms on x. */
static int plot(const rdata_t *d, const char *path, const char *title, const char *ytitle,
                int mem) {
  double tmax = 1000, ymax = 0;
  plot_series_t lines[RP_MAX_PROCS];
  double *xy[RP_MAX_PROCS] = {0};
  int rc = RIPPLE_OK;
  for (int i = 0; i < d->ns && rc == RIPPLE_OK; i++) {
    const rseries_t *s = &d->s[i];
    xy[i] = malloc((s->n ? s->n : 1) * 2 * sizeof *xy[i]);
    if (!xy[i]) rc = RIPPLE_ENOMEM;
    for (size_t k = 0; xy[i] && k < s->n; k++) {
      xy[i][2 * k] = s->p[k].t * 1000;
      xy[i][2 * k + 1] = mem ? s->p[k].mem : s->p[k].cpu;
      tmax = fmax(tmax, xy[i][2 * k]);
      ymax = fmax(ymax, xy[i][2 * k + 1]);
    }
    lines[i] = (plot_series_t){s->name, xy[i], s->n};
  }
  plot_t p = {.title = title,
              .xtitle = "time",
              .ytitle = ytitle,
              .xunit = PLOT_UNIT_MS,
              .yunit = mem ? PLOT_UNIT_MIB : PLOT_UNIT_PERCENT,
              .xlo = 0,
              .xhi = tmax,
              .ylo = 0,
              .yhi = ymax > 0 ? ymax * 1.1 : 1, /* room for the legend */
              .series = lines,
              .nseries = (size_t)d->ns};
  if (rc == RIPPLE_OK) rc = plot_write(&p, PLOT_SVG, path);
  for (int i = 0; i < d->ns; i++) free(xy[i]);
  return rc;
}

static void summarise(const rdata_t *d, char *out, size_t cap) {
  size_t n = 0;
  if (cap) out[0] = '\0';
  for (int i = 0; i < d->ns && n < cap; i++) {
    const rseries_t *s = &d->s[i];
    double cpu = 0, mem = 0;
    for (size_t k = 0; k < s->n; k++) cpu += s->p[k].cpu, mem += s->p[k].mem;
    if (s->n) cpu /= (double)s->n, mem /= (double)s->n;
    n += (size_t)snprintf(out + n, cap - n,
                          "%-16s cpu avg %6.2f%% of a core, memory avg %8.1f MiB\n", s->name, cpu,
                          mem);
  }
}

int resplot_svg(const char *csv_path, const char *dir, char *summary, size_t cap) {
  FILE *f = fopen(csv_path, "r");
  if (!f) return errno == ENOENT ? RIPPLE_ENOENT : RIPPLE_ESYS;
  rdata_t d;
  memset(&d, 0, sizeof d);
  char line[512];
  while (fgets(line, sizeof line, f)) add_row(&d, line);
  fclose(f);
  int rc = RIPPLE_OK;
  if (dir && mkdir(dir, 0755) != 0 && errno != EEXIST) rc = RIPPLE_ESYS;
  char path[4096];
  if (dir && rc == RIPPLE_OK) {
    snprintf(path, sizeof path, "%s/resources-cpu.svg", dir);
    rc = plot(&d, path, "CPU use", "CPU (100% = one core)", 0);
  }
  if (dir && rc == RIPPLE_OK) {
    snprintf(path, sizeof path, "%s/resources-memory.svg", dir);
    rc = plot(&d, path, "Resident memory", "resident memory", 1);
  }
  if (summary) summarise(&d, summary, cap);
  for (int i = 0; i < RP_MAX_PROCS; i++) free(d.s[i].p);
  return rc;
}
