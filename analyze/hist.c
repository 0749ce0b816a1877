/*
 * hist.c - histograms of hop latencies, one file per hop, in the manner of
 * the paper's figures 5 and 6: x is the latency, y the number of hop
 * instances in each bin. The same drawing (plot.c) becomes an SVG file or a
 * PNG image (for places that show pictures but not SVG: issue trackers,
 * slides).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "ripple/ripple.h"

void report_file_name(char *buf, size_t cap, const char *dir, const char *hop, const char *ext) {
  size_t n = (size_t)snprintf(buf, cap, "%s/", dir);
  for (const char *p = hop; *p && n + 5 < cap; p++) {
    if (p[0] == '-' && p[1] == '>') {
      n += (size_t)snprintf(buf + n, cap - n, "_to_");
      p++;
    } else {
      buf[n++] = *p == ':' ? '_' : *p;
    }
  }
  snprintf(buf + n, cap - n, "%s", ext);
}

void hop_hist(const hop_result_t *res, hop_id_t h, hop_hist_t *out) {
  const hop_stats_t *s = &res->stats[h];
  memset(out, 0, sizeof *out);
  out->lo = (double)s->min / 1e6, out->hi = (double)s->max / 1e6;
  if (out->hi <= out->lo) out->hi = out->lo + 1; /* one value: a single bar over 1 ms */
  out->ymax = 1;
  for (size_t i = 0; i < res->n; i++) {
    if (res->v[i].hop != h) continue;
    double v = (double)(res->v[i].end - res->v[i].start) / 1e6;
    int b = (int)((v - out->lo) / (out->hi - out->lo) * HIST_BINS);
    b = b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b;
    if (++out->bins[b] > out->ymax) out->ymax = out->bins[b];
  }
  out->ymax = (out->ymax + 3) / 4 * 4;
}

static int write_hists(const char *dir, const hop_result_t *res, plot_format_t fmt) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return RIPPLE_ESYS;
  for (int h = 0; h < HOP_COUNT; h++) {
    if (!res->stats[h].count) continue;
    hop_hist_t hist;
    hop_hist(res, (hop_id_t)h, &hist);
    char path[4096], title[256];
    report_file_name(path, sizeof path, dir, hop_name((hop_id_t)h),
                     fmt == PLOT_SVG ? ".svg" : ".png");
    snprintf(title, sizeof title, "%s (n=%zu)", hop_name((hop_id_t)h), res->stats[h].count);
    plot_t p = {.title = title,
                .xtitle = "latency",
                .ytitle = "count",
                .xunit = PLOT_UNIT_MS,
                .yunit = PLOT_UNIT_COUNT,
                .xlo = hist.lo,
                .xhi = hist.hi,
                .ylo = 0,
                .yhi = (double)hist.ymax,
                .bins = hist.bins,
                .nbins = HIST_BINS};
    int rc = plot_write(&p, fmt, path);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

int report_svg(const char *dir, const hop_result_t *res) { return write_hists(dir, res, PLOT_SVG); }

int report_png(const char *dir, const hop_result_t *res) { return write_hists(dir, res, PLOT_PNG); }
