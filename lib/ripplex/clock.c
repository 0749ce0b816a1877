/*
 * clock.c - monotonic time for durations and deadlines, and the fixed text
 * form of wall-clock timestamps (RFC 3339, nanoseconds, UTC).
 */
#include <string.h>
#include <time.h>

#include "ripplex/clock.h"

int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put_digits(char *p, int64_t v, int n) {
  for (int i = n - 1; i >= 0; i--, v /= 10) p[i] = (char)('0' + v % 10);
}

void time_text(int64_t ns, char out[RIPPLE_TIME_STRLEN + 1]) {
  int64_t sec = ns / 1000000000, frac = ns % 1000000000;
  if (frac < 0) {
    frac += 1000000000;
    sec -= 1;
  }
  time_t t = (time_t)sec;
  struct tm tm;
  if (!gmtime_r(&t, &tm)) memset(&tm, 0, sizeof tm);
  /* Fixed layout "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ": written digit by digit, it
   * is cheap enough for the shipper's hot loop and can never overflow. */
  memcpy(out, "0000-00-00T00:00:00.000000000Z", RIPPLE_TIME_STRLEN + 1);
  put_digits(out, tm.tm_year < -1900 ? 0 : (tm.tm_year + 1900) % 10000, 4);
  put_digits(out + 5, tm.tm_mon + 1, 2);
  put_digits(out + 8, tm.tm_mday, 2);
  put_digits(out + 11, tm.tm_hour, 2);
  put_digits(out + 14, tm.tm_min, 2);
  put_digits(out + 17, tm.tm_sec, 2);
  put_digits(out + 20, frac, 9);
}
