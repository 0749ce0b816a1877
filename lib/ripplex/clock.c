/*
 * clock.c - monotonic time for durations and deadlines, and the fixed text
 * form of wall-clock timestamps (RFC 3339, nanoseconds, UTC).
 */
#include <stdint.h>
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

/* The date part of the day last formatted by this thread: records come in
 * bursts of the same day, and gmtime_r (with its time-zone lock) was most of
 * the cost of a timestamp. */
static _Thread_local int64_t cached_day = INT64_MIN;
static _Thread_local char cached_date[11];

static void date_text(int64_t sec, char out[11]) {
  int64_t day = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
  if (day != cached_day) {
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) memset(&tm, 0, sizeof tm);
    memcpy(cached_date, "0000-00-00", 11);
    put_digits(cached_date, tm.tm_year < -1900 ? 0 : (tm.tm_year + 1900) % 10000, 4);
    put_digits(cached_date + 5, tm.tm_mon + 1, 2);
    put_digits(cached_date + 8, tm.tm_mday, 2);
    cached_day = day;
  }
  memcpy(out, cached_date, 10);
}

void time_text(int64_t ns, char out[RIPPLE_TIME_STRLEN + 1]) {
  int64_t sec = ns / 1000000000, frac = ns % 1000000000;
  if (frac < 0) {
    frac += 1000000000;
    sec -= 1;
  }
  int64_t tod = sec % 86400; /* seconds into the UTC day */
  if (tod < 0) tod += 86400;
  /* Fixed layout "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ": written digit by digit, it
   * is cheap enough for the shipper's hot loop and can never overflow. */
  memcpy(out, "0000-00-00T00:00:00.000000000Z", RIPPLE_TIME_STRLEN + 1);
  date_text(sec, out);
  put_digits(out + 11, tod / 3600, 2);
  put_digits(out + 14, tod / 60 % 60, 2);
  put_digits(out + 17, tod % 60, 2);
  put_digits(out + 20, frac, 9);
}
