/*
 * ripplex/prom.h - Prometheus' text exposition format (version 0.0.4), the
 * one writer behind every ripple daemon's GET /metrics.
 *
 * Everything is appended to a caller's buffer; a family's HELP and TYPE lines
 * come first, then its samples. Label sets are passed as text without the
 * braces ("route=\"query\""); values from outside go through
 * prom_label_value() so that they cannot break a line.
 */
#ifndef RIPPLEX_PROM_H
#define RIPPLEX_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void prom_family(sbuf_t *o, const char *name, const char *type, const char *help);
/* One sample: name{labels} value; labels NULL or "" for none. */
void prom_sample_u(sbuf_t *o, const char *name, const char *labels, uint64_t v);
void prom_sample_d(sbuf_t *o, const char *name, const char *labels, double v);
/* A family of one unlabelled sample. */
void prom_counter(sbuf_t *o, const char *name, const char *help, uint64_t v);
void prom_gauge(sbuf_t *o, const char *name, const char *help, double v);
/* A label value with \\, \" and newlines escaped (no quotes added). */
void prom_label_value(sbuf_t *o, const char *v);

/* One histogram's samples (its family line is the caller's, once for all
 * label sets): counts[0..nbounds] are per bucket, not cumulative, the last
 * one above every bound; sum in the unit of the bounds (seconds). */
typedef struct prom_hist {
  const double *bounds;
  size_t nbounds;
  const uint64_t *counts;
  double sum;
  uint64_t count;
} prom_hist_t;
void prom_histogram(sbuf_t *o, const char *name, const char *labels, const prom_hist_t *h);

/* The bucket of a value: the first bound it does not exceed, or nbounds. */
size_t prom_bucket(const double *bounds, size_t nbounds, double v);

#endif
