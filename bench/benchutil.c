/*
 * benchutil.c - see benchutil.h.
 */
#include "benchutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  if (remove(path) != 0) fprintf(stderr, "bench: cannot remove %s\n", path);
  return 0;
}

void bench_rmtree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_measure(bench_fn fn, void *ud, long iters) {
  double r[BENCH_ROUNDS];
  fn(ud, iters / 10); /* warm up */
  for (int i = 0; i < BENCH_ROUNDS; i++) {
    double t0 = now_ns();
    fn(ud, iters);
    r[i] = (now_ns() - t0) / (double)iters;
  }
  qsort(r, BENCH_ROUNDS, sizeof r[0], cmp_double);
  return r[BENCH_ROUNDS / 2];
}
