/*
 * svg.c - histograms of hop latencies as plain SVG, one file per hop, in the
 * manner of the paper's figures 5 and 6: x is latency in ms, y the number of
 * hop instances in each bin. Written by hand so the analyzer needs no
 * plotting library; any browser or converter shows the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

void svg_axes(FILE *f, const char *title, const char *xlabel, const char *ylabel, double lo,
              double hi, double ymax) {
  int pw = SVG_W - SVG_L - SVG_R, ph = SVG_H - SVG_T - SVG_B;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "font-family=\"sans-serif\" font-size=\"12\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
          "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
          SVG_W, SVG_H, SVG_W / 2, title);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", SVG_L,
          SVG_T + ph, SVG_L + pw, SVG_T + ph);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", SVG_L, SVG_T,
          SVG_L, SVG_T + ph);
  for (int i = 0; i <= 4; i++) {
    double x = SVG_L + pw * i / 4.0;
    double y = SVG_T + ph - ph * i / 4.0;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>\n", x, SVG_T + ph + 16,
            lo + (hi - lo) * i / 4.0);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", SVG_L - 6, y + 4,
            ymax * i / 4.0);
  }
  fprintf(f,
          "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
          "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">"
          "%s</text>\n",
          SVG_L + pw / 2, SVG_H - 10, xlabel, SVG_T + ph / 2, SVG_T + ph / 2, ylabel);
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

static int write_hist(const char *path, const char *title, const hop_result_t *res, hop_id_t h) {
  hop_hist_t hist;
  hop_hist(res, h, &hist);
  const size_t *bins = hist.bins, ymax = hist.ymax;
  double lo = hist.lo, hi = hist.hi;
  FILE *f = fopen(path, "w");
  if (!f) return RIPPLE_ESYS;
  svg_axes(f, title, "latency (ms)", "count", lo, hi, (double)ymax);
  double pw = SVG_W - SVG_L - SVG_R, ph = SVG_H - SVG_T - SVG_B, bw = pw / HIST_BINS;
  for (int b = 0; b < HIST_BINS; b++) {
    if (!bins[b]) continue;
    double bh = ph * (double)bins[b] / (double)ymax;
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4878a8\" "
            "stroke=\"white\"><title>%zu</title></rect>\n",
            SVG_L + b * bw, SVG_T + ph - bh, bw, bh, bins[b]);
  }
  fprintf(f, "</svg>\n");
  int rc = ferror(f) ? RIPPLE_ESYS : RIPPLE_OK;
  if (fclose(f) != 0) rc = RIPPLE_ESYS;
  return rc;
}

int report_svg(const char *dir, const hop_result_t *res) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return RIPPLE_ESYS;
  for (int h = 0; h < HOP_COUNT; h++) {
    if (!res->stats[h].count) continue;
    char path[4096], title[256];
    report_file_name(path, sizeof path, dir, hop_name((hop_id_t)h), ".svg");
    /* '>' must be escaped inside SVG text. */
    char esc[128];
    size_t n = 0;
    for (const char *p = hop_name((hop_id_t)h); *p && n + 5 < sizeof esc; p++) {
      if (*p == '>') {
        memcpy(esc + n, "&gt;", 4);
        n += 4;
      } else {
        esc[n++] = *p;
      }
    }
    esc[n] = '\0';
    snprintf(title, sizeof title, "%s (n=%zu)", esc, res->stats[h].count);
    int rc = write_hist(path, title, res, (hop_id_t)h);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}
