/*
 * report.c - the analyzer's outputs other than plots: the terminal summary
 * table, the JSON summary and the CSV of every measured hop instance. Times
 * are printed in milliseconds with microsecond precision; the nanosecond
 * values stay in the CSV so nothing is lost to rounding.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "ripple/ripple.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }

void report_table(FILE *f, const cl_log_t *log, const hop_result_t *res) {
  fprintf(f, "records %zu, malformed lines %zu\n\n", log->n, log->malformed);
  fprintf(f, "%-40s %7s %11s %11s %11s %11s\n", "hop", "count", "p50 ms", "p90 ms", "p99 ms",
          "max ms");
  for (int h = 0; h < HOP_COUNT; h++) {
    const hop_stats_t *s = &res->stats[h];
    if (!s->count) continue;
    fprintf(f, "%-40s %7zu %11.3f %11.3f %11.3f %11.3f\n", hop_name((hop_id_t)h), s->count,
            ms(s->p50), ms(s->p90), ms(s->p99), ms(s->max));
  }
}

static json_t *stats_json(const hop_stats_t *s) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "count", (json_int_t)s->count, "min_ms",
                   ms(s->min), "p50_ms", ms(s->p50), "p90_ms", ms(s->p90), "p99_ms", ms(s->p99),
                   "max_ms", ms(s->max));
}

int report_json(const char *path, const cl_log_t *log, const hop_result_t *res) {
  json_t *hops = json_object();
  json_t *doc = json_pack("{s:I, s:I, s:I, s:s, s:o}", "lines", (json_int_t)log->lines, "records",
                          (json_int_t)log->n, "malformed", (json_int_t)log->malformed, "percentile",
                          "nearest-rank", "hops", hops);
  if (!doc) return RIPPLE_ENOMEM;
  for (int h = 0; h < HOP_COUNT; h++) {
    json_t *s = stats_json(&res->stats[h]);
    if (!s || json_object_set_new(hops, hop_name((hop_id_t)h), s) != 0) {
      json_decref(doc);
      return RIPPLE_ENOMEM;
    }
  }
  int rc =
      json_dump_file(doc, path, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
  json_decref(doc);
  return rc;
}

/* Names and namespaces are DNS labels, but a hand-made log may hold
 * anything: quote every text field the CSV way. */
static void csv_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int report_csv(const char *path, const hop_result_t *res) {
  FILE *f = fopen(path, "w");
  if (!f) return RIPPLE_ESYS;
  fprintf(f, "hop,namespace,from_kind,from_name,to_kind,to_name,start_ns,end_ns,latency_ms\n");
  for (size_t i = 0; i < res->n; i++) {
    const hop_inst_t *h = &res->v[i];
    csv_str(f, hop_name(h->hop));
    fputc(',', f);
    csv_str(f, h->to->ns);
    fputc(',', f);
    csv_str(f, h->from->kind);
    fputc(',', f);
    csv_str(f, h->from->name);
    fputc(',', f);
    csv_str(f, h->to->kind);
    fputc(',', f);
    csv_str(f, h->to->name);
    fprintf(f, ",%lld,%lld,%.6f\n", (long long)h->start, (long long)h->end, ms(h->end - h->start));
  }
  int rc = ferror(f) ? RIPPLE_ESYS : RIPPLE_OK;
  if (fclose(f) != 0) rc = RIPPLE_ESYS;
  return rc;
}
