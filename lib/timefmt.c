/*
 * timefmt.c - wall-clock time as int64 nanoseconds and its RFC 3339 text form.
 *
 * The wire format carries nanoseconds because hops in a control plane are often
 * shorter than a millisecond; every timestamp in ripple goes through here.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

int64_t ripple_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ripple_time_format(int64_t ns, char *out) { time_text(ns, out); }

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's method). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, int *out) {
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

int ripple_time_parse(const char *s, size_t len, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (!s || !out || len < 20) return RIPPLE_EINVAL;
  if (digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
      digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
      digits(s + 17, 2, &se))
    return RIPPLE_EINVAL;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60)
    return RIPPLE_EINVAL;
  if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return RIPPLE_EINVAL;
  size_t i = 19;
  int64_t frac = 0;
  if (i < len && s[i] == '.') {
    size_t nd = 0;
    for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
      if (nd < 9) frac = frac * 10 + (s[i] - '0');
    if (nd == 0) return RIPPLE_EINVAL;
    for (; nd < 9; nd++) frac *= 10;
  }
  int64_t off = 0;
  if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int oh, om;
    if (digits(s + i + 1, 2, &oh) || digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
      return RIPPLE_EINVAL;
    off = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return RIPPLE_EINVAL;
  }
  if (i != len) return RIPPLE_EINVAL;
  int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - off;
  /* Refuse what does not fit in int64 nanoseconds (years beyond ~2262). */
  if (secs > INT64_MAX / 1000000000 - 1 || secs < INT64_MIN / 1000000000 + 1) return RIPPLE_ERANGE;
  *out = secs * 1000000000 + frac;
  return RIPPLE_OK;
}

int ripple_duration_parse(const char *s, int64_t *out) {
  if (!s || !out) return RIPPLE_EINVAL;
  char *end;
  double v = strtod(s, &end);
  /* 1e7 s (four months) bounds every sensible timeout and keeps v * 1e9 in range. */
  if (end == s || !(v >= 0) || v > 1e7) return RIPPLE_EINVAL;
  double mul = 1e9;
  if (!strcmp(end, "ms"))
    mul = 1e6;
  else if (!strcmp(end, "m"))
    mul = 60e9;
  else if (!strcmp(end, "h"))
    mul = 3600e9;
  else if (!strcmp(end, "d"))
    mul = 86400e9;
  else if (*end && strcmp(end, "s") != 0)
    return RIPPLE_EINVAL;
  if (v * mul > 9e18) return RIPPLE_EINVAL;
  *out = (int64_t)(v * mul);
  return RIPPLE_OK;
}
