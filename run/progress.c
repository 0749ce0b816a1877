/*
 * progress.c - what `ripple run` shows while it works.
 *
 * On a terminal the current step sits on one line that is rewritten in place
 * (with a wait's state: "37/100 Ready"); each finished step leaves one line
 * with its duration. Without a terminal (CI, a pipe) only the finished lines
 * are printed, so logs stay readable.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ripple/ripple.h"
#include "run.h"

static FILE *out;
static int tty;
static char cur_prefix[64], cur_what[512];
static int64_t cur_start, last_draw;

void progress_init(FILE *f) {
  out = f;
  tty = isatty(fileno(f));
}

void progress_step(const char *prefix, const char *what) {
  snprintf(cur_prefix, sizeof cur_prefix, "%s", prefix);
  snprintf(cur_what, sizeof cur_what, "%s", what);
  cur_start = ripple_now_ns();
  if (!tty) return;
  fprintf(out, "\r\033[K%s %s ...", prefix, what);
  fflush(out);
}

void progress_wait(void *ud, const char *what, const char *state) {
  (void)ud, (void)what;
  int64_t now = ripple_now_ns();
  if (!tty || now - last_draw < 100000000LL) return;
  last_draw = now;
  fprintf(out, "\r\033[K%s %s: %s (%.1f s)", cur_prefix, cur_what, state,
          (double)(now - cur_start) / 1e9);
  fflush(out);
}

void progress_done(const char *prefix, const char *what, double seconds, int ok, const char *err) {
  if (tty) fputs("\r\033[K", out);
  if (ok)
    fprintf(out, "%s %s: %.3f s\n", prefix, what, seconds);
  else
    fprintf(out, "%s %s: FAILED after %.3f s: %s\n", prefix, what, seconds, err);
  fflush(out);
}
