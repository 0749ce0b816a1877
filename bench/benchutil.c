/*
 * benchutil.c - see benchutil.h.
 */
#include "benchutil.h"

#include <ftw.h>
#include <stdio.h>

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  if (remove(path) != 0) fprintf(stderr, "bench: cannot remove %s\n", path);
  return 0;
}

void bench_rmtree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }
