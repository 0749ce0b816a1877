/*
 * plot.c - draws every plot `ripple analyze` writes (the hop histograms of
 * hist.c, the resource lines of resplot.c) with cairo: one drawing onto a
 * cairo surface, which is an SVG file or an image written as PNG. A title,
 * axes with round ticks (ticks.c) labelled with their units, light grid lines,
 * then bars or one line per series with a legend. Margins are measured from
 * the text itself, so no label is cut at the canvas's edge.
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "ripple/ripple.h"

#define FONT "sans-serif"
enum { PAD = 10, TICK = 5, GAP = 4 };
static const double TITLE_PT = 14, LABEL_PT = 11, NAME_PT = 12;

static const unsigned colours[] = {0xc0392b, 0x2e6da4, 0x27ae60, 0x8e44ad,
                                   0xd68910, 0x16a085, 0x7f8c8d, 0x2c3e50};

/* Where the plot area is and what the axes show. */
typedef struct frame {
  double l, r, t, b; /* margins */
  double w, h;       /* the plot area */
  plot_ticks_t x, y;
} frame_t;

static void rgb(cairo_t *cr, unsigned c) {
  cairo_set_source_rgb(cr, (c >> 16 & 0xff) / 255.0, (c >> 8 & 0xff) / 255.0, (c & 0xff) / 255.0);
}

static void font(cairo_t *cr, double pt, bool bold) {
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, pt);
}

static double text_width(cairo_t *cr, const char *s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.width;
}

/* The height of a line of the current font: ascent plus descent. */
static double line_height(cairo_t *cr) {
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  return fe.ascent + fe.descent;
}

/* Text whose ink spans x - ax*width .. x + (1-ax)*width, its line's top at y
 * (ay 0), middle (0.5) or bottom (1). */
static void text(cairo_t *cr, double x, double y, double ax, double ay, const char *s) {
  cairo_text_extents_t e;
  cairo_font_extents_t fe;
  cairo_text_extents(cr, s, &e);
  cairo_font_extents(cr, &fe);
  cairo_move_to(cr, x - ax * e.width - e.x_bearing, y - ay * (fe.ascent + fe.descent) + fe.ascent);
  cairo_show_text(cr, s);
}

static double widest(cairo_t *cr, const plot_ticks_t *t) {
  double w = 0;
  for (size_t i = 0; i < t->n; i++) w = fmax(w, text_width(cr, t->label[i]));
  return w;
}

/* The x ticks: as many as PLOT_X_INTERVALS, fewer when their labels would
 * touch each other. */
static void x_ticks(cairo_t *cr, const plot_t *p, plot_ticks_t *t) {
  for (int m = PLOT_X_INTERVALS; m >= 1; m--) {
    plot_ticks(p->xlo, p->xhi, p->xunit, m, t);
    double room = (PLOT_W - 4.0 * PAD - 60) / (double)(t->n - 1);
    if (widest(cr, t) + 2 * PAD <= room) return;
  }
}

static void layout(cairo_t *cr, const plot_t *p, frame_t *f) {
  font(cr, LABEL_PT, false);
  x_ticks(cr, p, &f->x);
  plot_ticks(p->ylo, p->yhi, p->yunit, PLOT_Y_INTERVALS, &f->y);
  double label_h = line_height(cr);
  double first = text_width(cr, f->x.label[0]) / 2;
  double last = text_width(cr, f->x.label[f->x.n - 1]) / 2;
  double ylabels = widest(cr, &f->y);
  font(cr, NAME_PT, false);
  double name_h = line_height(cr);
  font(cr, TITLE_PT, true);
  double title_h = line_height(cr);
  f->l = fmax(PAD + name_h + 2 * GAP + ylabels + GAP + TICK, PAD + first);
  f->r = fmax(2 * PAD, PAD + last);
  f->t = PAD + title_h + 2 * GAP;
  f->b = TICK + GAP + label_h + 2 * GAP + name_h + PAD;
  f->w = PLOT_W - f->l - f->r, f->h = PLOT_H - f->t - f->b;
}

static double px(const frame_t *f, double x) {
  return f->l + f->w * (x - f->x.lo) / (f->x.hi - f->x.lo);
}
static double py(const frame_t *f, double y) {
  return f->t + f->h - f->h * (y - f->y.lo) / (f->y.hi - f->y.lo);
}

static void draw_titles(cairo_t *cr, const plot_t *p, const frame_t *f) {
  rgb(cr, 0x000000);
  font(cr, TITLE_PT, true);
  /* A long title is made smaller rather than cut. */
  double w = text_width(cr, p->title);
  if (w > PLOT_W - 2 * PAD) font(cr, TITLE_PT * (PLOT_W - 2 * PAD) / w, true);
  text(cr, PLOT_W / 2.0, PAD, 0.5, 0, p->title);
  font(cr, NAME_PT, false);
  text(cr, f->l + f->w / 2, PLOT_H - PAD, 0.5, 1, p->xtitle);
  cairo_save(cr);
  cairo_translate(cr, PAD, f->t + f->h / 2);
  cairo_rotate(cr, -M_PI / 2);
  text(cr, 0, 0, 0.5, 0, p->ytitle);
  cairo_restore(cr);
}

static void draw_axes(cairo_t *cr, const frame_t *f) {
  cairo_set_line_width(cr, 1);
  rgb(cr, 0xe4e4e4); /* the grid, under the data */
  for (size_t i = 1; i < f->y.n; i++) {
    double y = round(py(f, f->y.v[i])) + 0.5;
    cairo_move_to(cr, f->l, y);
    cairo_line_to(cr, f->l + f->w, y);
  }
  for (size_t i = 1; i < f->x.n; i++) {
    double x = round(px(f, f->x.v[i])) + 0.5;
    cairo_move_to(cr, x, f->t);
    cairo_line_to(cr, x, f->t + f->h);
  }
  cairo_stroke(cr);
  rgb(cr, 0x000000);
  font(cr, LABEL_PT, false);
  double x0 = round(f->l) + 0.5, y0 = round(f->t + f->h) + 0.5;
  for (size_t i = 0; i < f->x.n; i++) {
    double x = round(px(f, f->x.v[i])) + 0.5;
    cairo_move_to(cr, x, y0);
    cairo_line_to(cr, x, y0 + TICK);
    text(cr, x, y0 + TICK + GAP, 0.5, 0, f->x.label[i]);
  }
  for (size_t i = 0; i < f->y.n; i++) {
    double y = round(py(f, f->y.v[i])) + 0.5;
    cairo_move_to(cr, x0 - TICK, y);
    cairo_line_to(cr, x0, y);
    text(cr, x0 - TICK - GAP, y, 1, 0.5, f->y.label[i]);
  }
  cairo_move_to(cr, x0, f->t);
  cairo_line_to(cr, x0, y0);
  cairo_line_to(cr, f->l + f->w, y0);
  cairo_stroke(cr);
}

static void draw_bars(cairo_t *cr, const plot_t *p, const frame_t *f) {
  double bw = (p->xhi - p->xlo) / (double)p->nbins;
  for (size_t b = 0; b < p->nbins; b++) {
    if (!p->bins[b]) continue;
    double x0 = px(f, p->xlo + bw * (double)b), x1 = px(f, p->xlo + bw * (double)(b + 1));
    double y = py(f, (double)p->bins[b]);
    cairo_rectangle(cr, x0, y, x1 - x0, py(f, 0) - y);
  }
  rgb(cr, 0x4878a8);
  cairo_fill_preserve(cr);
  rgb(cr, 0xffffff);
  cairo_set_line_width(cr, 0.5);
  cairo_stroke(cr);
}

static void draw_lines(cairo_t *cr, const plot_t *p, const frame_t *f) {
  size_t nc = sizeof colours / sizeof colours[0];
  cairo_save(cr);
  cairo_rectangle(cr, f->l, f->t, f->w, f->h);
  cairo_clip(cr);
  cairo_set_line_width(cr, 1.5);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (size_t i = 0; i < p->nseries; i++) {
    const plot_series_t *s = &p->series[i];
    for (size_t k = 0; k < s->n; k++) {
      double x = px(f, s->xy[2 * k]), y = py(f, s->xy[2 * k + 1]);
      if (k == 0)
        cairo_move_to(cr, x, y);
      else
        cairo_line_to(cr, x, y);
    }
    rgb(cr, colours[i % nc]);
    cairo_stroke(cr);
  }
  cairo_restore(cr);
}

/* The series' names in their colours, top left in the plot area. */
static void draw_legend(cairo_t *cr, const plot_t *p, const frame_t *f) {
  if (!p->nseries) return;
  size_t nc = sizeof colours / sizeof colours[0];
  font(cr, LABEL_PT, false);
  double lh = line_height(cr) + 2, w = 0;
  for (size_t i = 0; i < p->nseries; i++) w = fmax(w, text_width(cr, p->series[i].name));
  double x = f->l + PAD, y = f->t + PAD;
  cairo_rectangle(cr, x - GAP, y - GAP, 24 + w + 2 * GAP, lh * (double)p->nseries + 2 * GAP);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_fill(cr);
  cairo_set_line_width(cr, 2);
  for (size_t i = 0; i < p->nseries; i++) {
    double ym = y + lh * ((double)i + 0.5);
    rgb(cr, colours[i % nc]);
    cairo_move_to(cr, x, ym);
    cairo_line_to(cr, x + 18, ym);
    cairo_stroke(cr);
    text(cr, x + 24, ym, 0, 0.5, p->series[i].name);
  }
}

static void plot_draw(cairo_t *cr, const plot_t *p) {
  frame_t f;
  layout(cr, p, &f);
  rgb(cr, 0xffffff);
  cairo_paint(cr);
  draw_axes(cr, &f);
  if (p->bins) draw_bars(cr, p, &f);
  draw_lines(cr, p, &f);
  draw_legend(cr, p, &f);
  draw_titles(cr, p, &f);
}

static int failed(const char *path, cairo_status_t st) {
  char qpath[4200], qerr[256];
  ripple_log_quote(path, qpath, sizeof qpath);
  ripple_log_quote(cairo_status_to_string(st), qerr, sizeof qerr);
  ripple_log(RIPPLE_LOG_ERROR, "analyze_plot_failed", "path=%s cairo=%s", qpath, qerr);
  return st == CAIRO_STATUS_NO_MEMORY ? RIPPLE_ENOMEM : RIPPLE_ESYS;
}

/* cairo keeps fonts and fontconfig its configuration for the life of the
 * process; releasing them at exit leaves LeakSanitizer only our own leaks to
 * report (fontconfig 2.14 loses track of some of its configuration otherwise). */
static void release_caches(void) {
  cairo_debug_reset_static_data();
  FcFini();
}

static void release_at_exit(void) { atexit(release_caches); }

int plot_write(const plot_t *p, plot_format_t fmt, const char *path) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, release_at_exit);
  cairo_surface_t *s = fmt == PLOT_SVG
                           ? cairo_svg_surface_create(path, PLOT_W, PLOT_H)
                           : cairo_image_surface_create(CAIRO_FORMAT_RGB24, PLOT_W, PLOT_H);
  /* Pixels, as the PNG; cairo's default, points, would show it a third larger. */
  if (fmt == PLOT_SVG) cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
  cairo_t *cr = cairo_create(s);
  plot_draw(cr, p);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  if (st == CAIRO_STATUS_SUCCESS && fmt == PLOT_PNG) st = cairo_surface_write_to_png(s, path);
  cairo_surface_finish(s); /* the SVG is written out here */
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
  cairo_surface_destroy(s);
  return st == CAIRO_STATUS_SUCCESS ? RIPPLE_OK : failed(path, st);
}
