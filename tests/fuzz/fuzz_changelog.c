/*
 * fuzz_changelog.c - libFuzzer target for the change-log reader of `ripple
 * analyze` (plain lines and zstd streams) and the hop computation on top.
 *
 * Properties: any input is read without crashing; every line is either a
 * record or counted as malformed; hops never run backwards in time and each
 * hop's percentiles are ordered min <= p50 <= p90 <= p99 <= max.
 */
#include <stdlib.h>

#include "analyze.h"
#include "ripple/ripple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const cl_log_t *log, const hop_result_t *res) {
  /* A corrupt or cut zstd stream counts once without being a line. */
  if (log->n + log->malformed > log->lines + 1) abort();
  for (size_t i = 0; i < res->n; i++)
    if (res->v[i].end < res->v[i].start) abort();
  for (int h = 0; h < HOP_COUNT; h++) {
    const hop_stats_t *s = &res->stats[h];
    if (s->count && !(s->min <= s->p50 && s->p50 <= s->p90 && s->p90 <= s->p99 && s->p99 <= s->max))
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ripple_rules_t *rules;
  if (!rules && ripple_rules_new(&rules) != RIPPLE_OK) abort();
  cl_log_t log = {0};
  if (cl_log_read_buffer(&log, data, size) == RIPPLE_OK) {
    cl_log_sort(&log);
    hop_result_t res;
    if (hops_compute(&log, rules, &res) == RIPPLE_OK) {
      check(&log, &res);
      hops_free(&res);
    }
  }
  cl_log_free(&log);
  return 0;
}
