/*
 * leaserec.c - the election's pure part (lease.h): what a Lease says, its
 * MicroTime text, and what a replica does about it given only its own
 * monotonic times. No I/O and no clock reads here, so the tests drive every
 * case (take, renew, step down, malformed records) with made-up times.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lease.h"
#include "ripplex/clock.h"

#define NS 1000000000LL

/* ---- MicroTime ----------------------------------------------------------- */

void wh_lease_time_format(int64_t wall_ns, char out[WH_LEASE_MICROTIME + 1]) {
  /* ripplex's nanosecond text, cut to the microseconds MicroTime keeps. */
  char full[RIPPLE_TIME_STRLEN + 1];
  time_text(wall_ns, full);
  memcpy(out, full, WH_LEASE_MICROTIME - 1);
  out[WH_LEASE_MICROTIME - 1] = 'Z';
  out[WH_LEASE_MICROTIME] = '\0';
}

/* n decimal digits at *p (advanced), within [lo, hi]; -1 otherwise. */
static int64_t digits(const char **p, int n, int64_t lo, int64_t hi) {
  int64_t v = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (**p < '0' || **p > '9') return -1;
    v = v * 10 + (**p - '0');
  }
  return v < lo || v > hi ? -1 : v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): no timegm, no time zone, no libc extension. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int64_t month_days(int64_t y, int64_t m) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return days[m - 1] + (m == 2 && leap);
}

/* ".ddd" (0 to 9 digits) as ns; -1 when there are more than 9 digits or a
 * dot without any. */
static int64_t fraction(const char **p) {
  if (**p != '.') return 0;
  (*p)++;
  int64_t v = 0, scale = NS;
  int n = 0;
  for (; **p >= '0' && **p <= '9'; (*p)++, n++) {
    if (n == 9) return -1;
    scale /= 10;
    v += (**p - '0') * scale;
  }
  return n ? v : -1;
}

/* "Z" or "+hh:mm"/"-hh:mm" ending the text: the offset east of UTC in
 * seconds, or INT64_MIN. */
static int64_t zone(const char *p) {
  if (p[0] == 'Z' && !p[1]) return 0;
  if (p[0] != '+' && p[0] != '-') return INT64_MIN;
  int sign = p[0] == '-' ? -1 : 1;
  p++;
  int64_t h = digits(&p, 2, 0, 23);
  if (h < 0 || *p++ != ':') return INT64_MIN;
  int64_t m = digits(&p, 2, 0, 59);
  if (m < 0 || *p) return INT64_MIN;
  return sign * (h * 3600 + m * 60);
}

int wh_lease_time_parse(const char *s, int64_t *wall_ns) {
  if (!s || strnlen(s, WH_LEASE_TIME_MAX) >= WH_LEASE_TIME_MAX) return RIPPLE_EINVAL;
  const char *p = s;
  int64_t y = digits(&p, 4, 1, 9999);
  if (y < 0 || *p++ != '-') return RIPPLE_EINVAL;
  int64_t mo = digits(&p, 2, 1, 12);
  if (mo < 0 || *p++ != '-') return RIPPLE_EINVAL;
  int64_t d = digits(&p, 2, 1, month_days(y, mo));
  if (d < 0 || *p++ != 'T') return RIPPLE_EINVAL;
  int64_t h = digits(&p, 2, 0, 23);
  if (h < 0 || *p++ != ':') return RIPPLE_EINVAL;
  int64_t mi = digits(&p, 2, 0, 59);
  if (mi < 0 || *p++ != ':') return RIPPLE_EINVAL;
  int64_t sec = digits(&p, 2, 0, 59);
  int64_t frac = sec < 0 ? -1 : fraction(&p);
  int64_t off = frac < 0 ? INT64_MIN : zone(p);
  if (off == INT64_MIN) return RIPPLE_EINVAL;
  int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
  /* int64 ns reach from 1677 to 2262. */
  if (t <= INT64_MIN / NS || t >= INT64_MAX / NS - 1) return RIPPLE_EINVAL;
  *wall_ns = t * NS + frac;
  return RIPPLE_OK;
}

/* ---- the record ----------------------------------------------------------- */

/* A string member into out: 0 when it fits or is absent (out ""), 1 when it
 * has the wrong type, holds a NUL or does not fit (out ""). */
static int text(const json_t *v, char *out, size_t cap) {
  out[0] = '\0';
  if (!v || json_is_null(v)) return 0;
  if (!json_is_string(v)) return 1;
  size_t n = json_string_length(v);
  const char *s = json_string_value(v);
  if (n >= cap || strlen(s) != n) return 1;
  memcpy(out, s, n + 1);
  return 0;
}

/* An integer member within [lo, hi] into *out: 0 when it is or is absent
 * (*out 0), 1 otherwise (*out 0). */
static int integer(const json_t *v, int64_t lo, int64_t hi, int64_t *out) {
  *out = 0;
  if (!v || json_is_null(v)) return 0;
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) return 1;
  *out = json_integer_value(v);
  return 0;
}

int wh_lease_rec_parse(const json_t *lease, wh_lease_rec_t *out) {
  if (!json_is_object(lease)) return RIPPLE_EJSON;
  wh_lease_rec_t r;
  memset(&r, 0, sizeof r);
  const json_t *md = json_object_get(lease, "metadata"), *spec = json_object_get(lease, "spec");
  int bad = text(json_object_get(md, "resourceVersion"), r.rv, sizeof r.rv);
  if (!r.rv[0] && !bad) bad++; /* absent: no write could be conditional */
  if (spec && !json_is_object(spec)) bad++;
  const json_t *holder = json_object_get(spec, "holderIdentity");
  if (text(holder, r.holder, sizeof r.holder)) {
    r.state = WH_LEASE_BAD, bad++;
  } else {
    r.state = r.holder[0] ? WH_LEASE_HELD : WH_LEASE_FREE;
  }
  bad += text(json_object_get(spec, "acquireTime"), r.acquire, sizeof r.acquire);
  bad += text(json_object_get(spec, "renewTime"), r.renew, sizeof r.renew);
  bad +=
      integer(json_object_get(spec, "leaseDurationSeconds"), 1, WH_LEASE_DUR_MAX_S, &r.duration_s);
  bad += integer(json_object_get(spec, "leaseTransitions"), 0, INT32_MAX, &r.transitions);
  *out = r;
  return bad;
}

json_t *wh_lease_spec(const wh_lease_rec_t *r) {
  return json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", r->holder, "leaseDurationSeconds",
                   (json_int_t)r->duration_s, "acquireTime", r->acquire, "renewTime", r->renew,
                   "leaseTransitions", (json_int_t)r->transitions);
}

/* ---- the decision --------------------------------------------------------- */

/* client-go's "observed raw record": any write shows in one of these. */
static int same_record(const wh_lease_rec_t *a, const wh_lease_rec_t *b) {
  return a->state == b->state && !strcmp(a->holder, b->holder) && !strcmp(a->renew, b->renew) &&
         !strcmp(a->rv, b->rv);
}

/* One holding: one holder from one acquisition. The same identity acquiring
 * again is a new holding: a restarted replica has lost its memory. */
static int same_holding(const wh_lease_rec_t *a, const wh_lease_rec_t *b) {
  return a->state == b->state && !strcmp(a->holder, b->holder) && !strcmp(a->acquire, b->acquire);
}

static int names(const wh_lease_rec_t *r, const char *me) {
  return r->state == WH_LEASE_HELD && !strcmp(r->holder, me);
}

unsigned wh_lease_observe(wh_lease_view_t *v, const wh_lease_rec_t *r, const char *me,
                          int64_t now_ns) {
  static const wh_lease_rec_t none;
  if (!r) { /* no Lease at all */
    unsigned f = v->exists ? WH_LEASE_CHANGED | WH_LEASE_NEW_HOLDER : 0;
    if (v->exists) v->gen++, v->observed_ns = now_ns;
    if (v->held) v->held = 0, f |= WH_LEASE_LOST;
    v->exists = 0;
    v->rec = none;
    return f;
  }
  unsigned f = 0;
  if (!v->exists || !same_record(&v->rec, r)) f |= WH_LEASE_CHANGED, v->observed_ns = now_ns;
  if (!v->exists || !same_holding(&v->rec, r)) f |= WH_LEASE_NEW_HOLDER, v->gen++;
  if (v->held && (!names(r, me) || strcmp(r->acquire, v->rec.acquire) != 0))
    v->held = 0, f |= WH_LEASE_LOST;
  v->rec = *r;
  v->exists = 1;
  return f;
}

int64_t wh_lease_dur_ns(const wh_lease_view_t *v, int64_t dflt_ns) {
  int64_t s = v->rec.duration_s;
  return s >= 1 && s <= WH_LEASE_DUR_MAX_S ? s * NS : dflt_ns;
}

wh_lease_action_t wh_lease_decide(const wh_lease_view_t *v, const char *me, int64_t now_ns,
                                  int64_t dflt_ns) {
  if (!v->exists) return WH_LEASE_CREATE;
  if (v->held) return WH_LEASE_RENEW;
  if (!v->rec.rv[0]) return WH_LEASE_WAIT;
  /* A record naming this replica that this process did not write is an
   * earlier run's (same pod address); every write is conditional, so taking
   * it over at once is as safe as any take. */
  if (v->rec.state == WH_LEASE_FREE || names(&v->rec, me)) return WH_LEASE_TAKE;
  if (now_ns - v->observed_ns >= wh_lease_dur_ns(v, dflt_ns)) return WH_LEASE_TAKE;
  return WH_LEASE_WAIT;
}

void wh_lease_plan(const wh_lease_view_t *v, wh_lease_action_t a, const char *me, int64_t wall_ns,
                   int64_t dur_s, wh_lease_rec_t *next) {
  wh_lease_rec_t r;
  memset(&r, 0, sizeof r);
  char now[WH_LEASE_MICROTIME + 1];
  wh_lease_time_format(wall_ns, now);
  snprintf(r.rv, sizeof r.rv, "%s", v->rec.rv);
  snprintf(r.renew, sizeof r.renew, "%s", now);
  snprintf(r.acquire, sizeof r.acquire, "%s", now);
  r.duration_s = dur_s;
  r.transitions = v->exists ? v->rec.transitions : 0;
  int64_t t;
  if (a == WH_LEASE_RELEASE) {
    r.state = WH_LEASE_FREE;
    r.duration_s = 1; /* as client-go releases: whoever reads it next may take it */
  } else {
    r.state = WH_LEASE_HELD;
    snprintf(r.holder, sizeof r.holder, "%s", me);
    if (a == WH_LEASE_TAKE && r.transitions < INT32_MAX) r.transitions++;
    if (a == WH_LEASE_RENEW && wh_lease_time_parse(v->rec.acquire, &t) == RIPPLE_OK)
      snprintf(r.acquire, sizeof r.acquire, "%s", v->rec.acquire);
  }
  *next = r;
}

unsigned wh_lease_wrote(wh_lease_view_t *v, wh_lease_action_t a, const wh_lease_rec_t *r,
                        const char *me, int64_t start_ns, int64_t now_ns) {
  int was = v->held;
  v->held = 0; /* judged by what was stored, below */
  unsigned f = wh_lease_observe(v, r, me, now_ns);
  snprintf(v->mine_rv, sizeof v->mine_rv, "%s", r->rv);
  if (a != WH_LEASE_RELEASE && names(r, me)) {
    v->held = 1;
    /* The server accepted the write after it started, and others count
     * their duration from when they saw it: measured from the start, this
     * replica's deadline ends first. */
    v->renewed_ns = start_ns;
  } else if (was) {
    f |= WH_LEASE_LOST;
  }
  return f;
}

int wh_lease_is_decider(const wh_lease_view_t *v, int64_t now_ns, int64_t deadline_ns) {
  return v->held && v->exists && now_ns - v->renewed_ns < deadline_ns;
}

int wh_lease_step_down(wh_lease_view_t *v, int64_t now_ns, int64_t deadline_ns) {
  if (!v->held || now_ns - v->renewed_ns < deadline_ns) return 0;
  v->held = 0;
  return 1;
}
