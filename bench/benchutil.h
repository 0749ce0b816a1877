/*
 * benchutil.h - what the benchmarks share that is not ripple's own code.
 */
#ifndef RIPPLE_BENCHUTIL_H
#define RIPPLE_BENCHUTIL_H

/* A micro benchmark's body: run the operation iters times. */
typedef void (*bench_fn)(void *ud, long iters);

#define BENCH_ROUNDS 7
/* Median ns per operation over BENCH_ROUNDS rounds of iters operations, after a warm-up
 * of iters / 10. */
double bench_measure(bench_fn fn, void *ud, long iters);

/* Remove a directory a benchmark made, with everything in it. */
void bench_rmtree(const char *dir);

#endif
