/*
 * ticks.c - where an axis of a plot gets its ticks and how they are labelled
 * (plot.c draws them): round values, 1, 2 or 5 times a power of ten, from a
 * tick at or below the data to one at or above it, so the axis ends are
 * labelled too. Labels carry the unit, and durations pick theirs (µs, ms or s)
 * from the range, so a reader sees "1.5 s" and not "1.5e+03". Pure: no
 * drawing, so the tests can check every label.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"

/* The smallest step 1, 2 or 5 x 10^k that covers lo..hi in at most max
 * intervals; first..last is the tick range it gives. */
static double nice_step(double lo, double hi, int max, double min_step, double *first,
                        double *last) {
  static const double mant[] = {1, 2, 5};
  int e = (int)floor(log10((hi - lo) / max)) - 1;
  if (min_step > 0 && e < (int)floor(log10(min_step)) - 1) e = (int)floor(log10(min_step)) - 1;
  e = e < -300 ? -300 : e > 300 ? 300 : e; /* 10^k stays finite */
  for (int k = e; k < e + 64; k++) {
    for (int m = 0; m < 3; m++) {
      /* Divided for negative k: 1 / 10 is 0.1 to the last bit, 0.1 * 1 may not be. */
      double step = k >= 0 ? mant[m] * pow(10, k) : mant[m] / pow(10, -k);
      if (step < min_step) continue;
      /* The slack keeps values a rounding error off a tick on it. */
      double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
      if (k1 <= k0) k1 = k0 + 1;
      if (k1 - k0 <= max) {
        *first = k0, *last = k1;
        return step;
      }
    }
  }
  *first = lo / (hi - lo), *last = *first + 1; /* not reached for finite ranges */
  return hi - lo;
}

/* The label's number: as many decimals as the step needs, no trailing zeros,
 * never "-0". */
static void format_value(char *out, size_t cap, double v, double step, const char *unit) {
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (dec > 12) dec = 12;
  char num[64];
  snprintf(num, sizeof num, "%.*f", dec, v);
  if (strchr(num, '.')) {
    size_t n = strlen(num);
    while (num[n - 1] == '0') num[--n] = '\0';
    if (num[n - 1] == '.') num[--n] = '\0';
  }
  if (!strcmp(num, "-0")) snprintf(num, sizeof num, "0");
  snprintf(out, cap, "%s%s", num, unit);
}

/* Durations come in ms; the display unit follows the largest magnitude. */
static double duration_scale(double lo, double hi, const char **unit) {
  double m = fmax(fabs(lo), fabs(hi));
  if (m >= 1000) {
    *unit = " s";
    return 1e-3;
  }
  if (m > 0 && m < 1) {
    *unit = " \xc2\xb5s"; /* µs */
    return 1e3;
  }
  *unit = " ms";
  return 1;
}

void plot_ticks(double lo, double hi, plot_unit_t unit, int max_intervals, plot_ticks_t *out) {
  memset(out, 0, sizeof *out);
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  lo = fmax(fmin(lo, 1e300), -1e300), hi = fmax(fmin(hi, 1e300), -1e300);
  if (hi < lo) {
    double t = lo;
    lo = hi, hi = t;
  }
  if (hi == lo) { /* one value: a small range around it, or 0..1 */
    double half = lo == 0 ? 0.5 : fabs(lo) * 0.05;
    lo = lo == 0 ? 0 : lo - half, hi = hi == 0 ? 1 : hi + half;
  }
  if (max_intervals < 1) max_intervals = 1;
  if (max_intervals > PLOT_MAX_TICKS - 1) max_intervals = PLOT_MAX_TICKS - 1;
  /* Counts are whole: no tick between 0 and 1. */
  double first, last;
  double step = nice_step(lo, hi, max_intervals, unit == PLOT_UNIT_COUNT ? 1 : 0, &first, &last);
  const char *suffix = "";
  double scale = 1;
  switch (unit) {
    case PLOT_UNIT_MS: scale = duration_scale(first * step, last * step, &suffix); break;
    case PLOT_UNIT_COUNT: break;
    case PLOT_UNIT_PERCENT: suffix = "%"; break;
    case PLOT_UNIT_MIB: suffix = " MiB"; break;
  }
  out->step = step;
  out->n = (size_t)(last - first) + 1;
  for (size_t i = 0; i < out->n; i++) {
    out->v[i] = (first + (double)i) * step;
    format_value(out->label[i], sizeof out->label[i], out->v[i] * scale, step * scale, suffix);
  }
  out->lo = out->v[0], out->hi = out->v[out->n - 1];
}
