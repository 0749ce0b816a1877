/*
 * benchutil.h - what the benchmarks share that is not ripple's own code.
 */
#ifndef RIPPLE_BENCHUTIL_H
#define RIPPLE_BENCHUTIL_H

/* Remove a directory a benchmark made, with everything in it. */
void bench_rmtree(const char *dir);

#endif
