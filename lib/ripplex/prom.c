/*
 * prom.c - Prometheus' text exposition format (ripplex/prom.h).
 *
 * Gauges print with %.15g: integers up to 10^15 come out exact and without a
 * fraction, small fractions without trailing noise.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ripplex/prom.h"

void prom_family(sbuf_t *o, const char *name, const char *type, const char *help) {
  sbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void name_labels(sbuf_t *o, const char *name, const char *labels) {
  sbuf_puts(o, name);
  if (labels && *labels) sbuf_printf(o, "{%s}", labels);
}

void prom_sample_u(sbuf_t *o, const char *name, const char *labels, uint64_t v) {
  name_labels(o, name, labels);
  sbuf_printf(o, " %" PRIu64 "\n", v);
}

void prom_sample_d(sbuf_t *o, const char *name, const char *labels, double v) {
  name_labels(o, name, labels);
  sbuf_printf(o, " %.15g\n", v);
}

void prom_counter(sbuf_t *o, const char *name, const char *help, uint64_t v) {
  prom_family(o, name, "counter", help);
  prom_sample_u(o, name, NULL, v);
}

void prom_gauge(sbuf_t *o, const char *name, const char *help, double v) {
  prom_family(o, name, "gauge", help);
  prom_sample_d(o, name, NULL, v);
}

void prom_label_value(sbuf_t *o, const char *v) {
  for (; *v; v++) {
    if (*v == '\\' || *v == '"') {
      sbuf_putc(o, '\\');
      sbuf_putc(o, *v);
    } else if (*v == '\n') {
      sbuf_puts(o, "\\n");
    } else {
      sbuf_putc(o, *v);
    }
  }
}

/* name_bucket{labels,le="bound"} cumulative-count */
static void bucket(sbuf_t *o, const char *name, const char *labels, const char *le, uint64_t v) {
  sbuf_printf(o, "%s_bucket{", name);
  if (labels && *labels) sbuf_printf(o, "%s,", labels);
  sbuf_printf(o, "le=\"%s\"} %" PRIu64 "\n", le, v);
}

void prom_histogram(sbuf_t *o, const char *name, const char *labels, const prom_hist_t *h) {
  uint64_t cum = 0;
  char le[32];
  for (size_t b = 0; b < h->nbounds; b++) {
    cum += h->counts[b];
    snprintf(le, sizeof le, "%g", h->bounds[b]);
    bucket(o, name, labels, le, cum);
  }
  cum += h->counts[h->nbounds];
  bucket(o, name, labels, "+Inf", cum);
  sbuf_printf(o, "%s_sum", name);
  if (labels && *labels) sbuf_printf(o, "{%s}", labels);
  sbuf_printf(o, " %.9f\n%s_count", h->sum, name);
  if (labels && *labels) sbuf_printf(o, "{%s}", labels);
  sbuf_printf(o, " %" PRIu64 "\n", h->count);
}

size_t prom_bucket(const double *bounds, size_t nbounds, double v) {
  size_t b = 0;
  while (b < nbounds && v > bounds[b]) b++;
  return b;
}
