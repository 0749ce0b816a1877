/*
 * test_lease.c - the decider election's pure part (webhook/lease.h): MicroTime
 * text, reading Lease records (malformed ones too), the take / renew / step
 * down decision with made-up local times, and a seeded simulation of several
 * replicas with drifting clocks, slow and failing requests and frozen
 * threads, in which two replicas must never both be the decider. Then the
 * handle against an address where nothing listens (no cluster).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "testutil.h"

#define MS 1000000LL
#define SEC 1000000000LL

/* ---- MicroTime ------------------------------------------------------------- */

static void time_format(void **state) {
  (void)state;
  char t[WH_LEASE_MICROTIME + 1];
  wh_lease_time_format(0, t);
  assert_string_equal(t, "1970-01-01T00:00:00.000000Z");
  wh_lease_time_format(1136214245 * SEC + 123456789, t); /* Go's reference time */
  assert_string_equal(t, "2006-01-02T15:04:05.123456Z");
  wh_lease_time_format(-1, t);
  assert_string_equal(t, "1969-12-31T23:59:59.999999Z");
  wh_lease_time_format(951782400 * SEC, t);
  assert_string_equal(t, "2000-02-29T00:00:00.000000Z");
}

static void time_parse(void **state) {
  (void)state;
  static const struct {
    const char *s;
    int64_t ns;
  } good[] = {
      {"2006-01-02T15:04:05.123456Z", 1136214245 * SEC + 123456000},
      {"2006-01-02T15:04:05Z", 1136214245 * SEC},
      {"2006-01-02T15:04:05.1Z", 1136214245 * SEC + 100000000},
      {"2006-01-02T15:04:05.123456789Z", 1136214245 * SEC + 123456789},
      {"2006-01-02T16:34:05+01:30", 1136214245 * SEC},
      {"2006-01-02T10:04:05.5-05:00", 1136214245 * SEC + 500000000},
      {"2004-02-29T00:00:00Z", 1078012800 * SEC},
      {"1970-01-01T00:00:00Z", 0},
      {"1969-12-31T23:59:59.999999Z", -1000},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    int64_t ns = 42;
    assert_int_equal(wh_lease_time_parse(good[i].s, &ns), RIPPLE_OK);
    assert_true(ns == good[i].ns);
  }
  static const char *const bad[] = {
      "",
      "2006-01-02",
      "2006-01-02T15:04:05",
      "2006-01-02t15:04:05Z",
      "2006-01-02T15:04:05z",
      "2006-01-02 15:04:05Z",
      "2006-01-02T15:04:05.Z",
      "2006-01-02T15:04:05.1234567890Z",
      "2006-01-02T15:04:05Zx",
      "2006-01-02T24:00:00Z",
      "2006-01-02T15:60:05Z",
      "2006-01-02T15:04:60Z",
      "2006-13-02T15:04:05Z",
      "2006-00-02T15:04:05Z",
      "2006-02-29T15:04:05Z",
      "1900-02-29T00:00:00Z",
      "2006-04-31T00:00:00Z",
      "0000-01-01T00:00:00Z",
      "2300-01-01T00:00:00Z",
      "1600-01-01T00:00:00Z",
      "2006-01-02T15:04:05+1:00",
      "2006-01-02T15:04:05+01:60",
      "2006-01-02T15:04:05+0100",
      "+006-01-02T15:04:05Z",
      "2006-01-02T15:04:05.123456Z2006-01-02T15:04:05.123456Z",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t ns = 42;
    if (wh_lease_time_parse(bad[i], &ns) != RIPPLE_EINVAL) fail_msg("accepted '%s'", bad[i]);
    assert_true(ns == 42);
  }
  int64_t ns;
  assert_int_equal(wh_lease_time_parse(NULL, &ns), RIPPLE_EINVAL);
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

/* Every formatted time parses back to itself (to the microsecond). */
static void time_round_trip(void **state) {
  (void)state;
  uint64_t seed = 0x1ea5e5eedULL, s = seed;
  for (int i = 0; i < 100000; i++) {
    int64_t ns = (int64_t)(rng_next(&s) % (8000000000ULL * SEC / 1000)) * 1000 - 1000000000 * SEC;
    char t[WH_LEASE_MICROTIME + 1];
    wh_lease_time_format(ns, t);
    int64_t back;
    if (wh_lease_time_parse(t, &back) != RIPPLE_OK || back != ns - (ns % 1000 + 1000) % 1000)
      fail_msg("seed %llx: %lld -> %s", (unsigned long long)seed, (long long)ns, t);
  }
}

/* ---- records --------------------------------------------------------------- */

static json_t *lease_obj(const char *spec) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
           "\"name\":\"d\",\"namespace\":\"n\",\"resourceVersion\":\"17\"},\"spec\":%s}",
           spec);
  json_t *o = json_loads(text, JSON_ALLOW_NUL, NULL);
  assert_non_null(o);
  return o;
}

static int parse_spec(const char *spec, wh_lease_rec_t *r) {
  json_t *o = lease_obj(spec);
  int bad = wh_lease_rec_parse(o, r);
  json_decref(o);
  return bad;
}

static void rec_good(void **state) {
  (void)state;
  wh_lease_rec_t r;
  assert_int_equal(parse_spec("{\"holderIdentity\":\"https://10.1.2.3:8443\","
                              "\"leaseDurationSeconds\":4,\"acquireTime\":"
                              "\"2006-01-02T15:04:05.000000Z\",\"renewTime\":"
                              "\"2006-01-02T15:04:07.500000Z\",\"leaseTransitions\":3}",
                              &r),
                   0);
  assert_int_equal(r.state, WH_LEASE_HELD);
  assert_string_equal(r.holder, "https://10.1.2.3:8443");
  assert_string_equal(r.rv, "17");
  assert_string_equal(r.acquire, "2006-01-02T15:04:05.000000Z");
  assert_string_equal(r.renew, "2006-01-02T15:04:07.500000Z");
  assert_int_equal(r.duration_s, 4);
  assert_int_equal(r.transitions, 3);
  /* What the API server stores for a new Lease with no spec, or a released one. */
  assert_int_equal(parse_spec("{}", &r), 0);
  assert_int_equal(r.state, WH_LEASE_FREE);
  assert_int_equal(parse_spec("{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1}", &r), 0);
  assert_int_equal(r.state, WH_LEASE_FREE);
  assert_int_equal(r.duration_s, 1);
  /* The spec written back is the record's. */
  assert_int_equal(
      parse_spec("{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":9,\"acquireTime\":"
                 "\"x\",\"renewTime\":\"y\",\"leaseTransitions\":2}",
                 &r),
      0);
  json_t *spec = wh_lease_spec(&r);
  json_t *want =
      json_pack("{s:s, s:i, s:s, s:s, s:i}", "holderIdentity", "a", "leaseDurationSeconds", 9,
                "acquireTime", "x", "renewTime", "y", "leaseTransitions", 2);
  assert_true(json_equal(spec, want));
  json_decref(spec);
  json_decref(want);
}

static void rec_malformed(void **state) {
  (void)state;
  wh_lease_rec_t r;
  char huge[400], spec[600];
  memset(huge, 'h', sizeof huge - 1);
  huge[sizeof huge - 1] = '\0';
  /* A holder of the wrong type, too long, or with a NUL: someone unknown. */
  static const char *const holders[] = {"7", "{}", "[\"a\"]", "true", "\"a\\u0000b\"", NULL};
  for (size_t i = 0; i <= sizeof holders / sizeof holders[0] - 1; i++) {
    if (holders[i])
      snprintf(spec, sizeof spec, "{\"holderIdentity\":%s}", holders[i]);
    else
      snprintf(spec, sizeof spec, "{\"holderIdentity\":\"%s\"}", huge);
    assert_int_equal(parse_spec(spec, &r), 1);
    assert_int_equal(r.state, WH_LEASE_BAD);
    assert_string_equal(r.holder, "");
  }
  /* Durations and counts out of range or of the wrong type count as absent. */
  static const char *const specs[] = {
      "{\"leaseDurationSeconds\":0}",      "{\"leaseDurationSeconds\":-4}",
      "{\"leaseDurationSeconds\":3601}",   "{\"leaseDurationSeconds\":\"4\"}",
      "{\"leaseDurationSeconds\":4.5}",    "{\"leaseTransitions\":-1}",
      "{\"leaseTransitions\":4294967296}", "{\"renewTime\":5}",
      "{\"acquireTime\":{\"a\":1}}",
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    assert_int_equal(parse_spec(specs[i], &r), 1);
    assert_int_equal(r.duration_s, 0);
    assert_int_equal(r.transitions, 0);
    assert_string_equal(r.renew, "");
    assert_string_equal(r.acquire, "");
  }
  assert_int_equal(parse_spec("[]", &r), 1);
  json_t *o = json_loads("{\"metadata\":{\"resourceVersion\":5},\"spec\":{}}", 0, NULL);
  assert_int_equal(wh_lease_rec_parse(o, &r), 1);
  assert_string_equal(r.rv, "");
  json_decref(o);
  o = json_loads("{}", 0, NULL);
  assert_int_equal(wh_lease_rec_parse(o, &r), 1);
  json_decref(o);
  o = json_loads("[]", 0, NULL);
  assert_int_equal(wh_lease_rec_parse(o, &r), RIPPLE_EJSON);
  json_decref(o);
  assert_int_equal(wh_lease_rec_parse(NULL, &r), RIPPLE_EJSON);
}

/* ---- the decision ---------------------------------------------------------- */

static const char *const ME = "https://10.0.0.1:8443", *const OTHER = "https://10.0.0.2:8443";
#define DUR (4 * SEC)
#define DEADLINE (3 * SEC)

static wh_lease_rec_t rec(const char *holder, const char *rv, const char *renew) {
  wh_lease_rec_t r;
  memset(&r, 0, sizeof r);
  r.state = holder ? (*holder ? WH_LEASE_HELD : WH_LEASE_FREE) : WH_LEASE_BAD;
  snprintf(r.holder, sizeof r.holder, "%s", holder ? holder : "");
  snprintf(r.rv, sizeof r.rv, "%s", rv);
  snprintf(r.renew, sizeof r.renew, "%s", renew);
  snprintf(r.acquire, sizeof r.acquire, "2006-01-02T15:04:05.000000Z");
  r.duration_s = 4;
  return r;
}

static void decide_create_renew_step_down(void **state) {
  (void)state;
  wh_lease_view_t v;
  memset(&v, 0, sizeof v);
  assert_int_equal(wh_lease_observe(&v, NULL, ME, 0), 0);
  assert_int_equal(wh_lease_decide(&v, ME, 0, DUR), WH_LEASE_CREATE);
  wh_lease_rec_t next;
  wh_lease_plan(&v, WH_LEASE_CREATE, ME, 1136214245 * SEC, 4, &next);
  assert_int_equal(next.state, WH_LEASE_HELD);
  assert_string_equal(next.holder, ME);
  assert_string_equal(next.acquire, "2006-01-02T15:04:05.000000Z");
  assert_string_equal(next.renew, next.acquire);
  assert_int_equal(next.transitions, 0);
  assert_int_equal(next.duration_s, 4);
  /* The server stores it: this replica decides, counted from the write's start. */
  snprintf(next.rv, sizeof next.rv, "1");
  unsigned f = wh_lease_wrote(&v, WH_LEASE_CREATE, &next, ME, 10 * MS, 50 * MS);
  assert_true(f & WH_LEASE_NEW_HOLDER);
  assert_false(f & WH_LEASE_LOST);
  assert_int_equal(v.gen, 1);
  assert_true(wh_lease_is_decider(&v, 50 * MS, DEADLINE));
  assert_true(wh_lease_is_decider(&v, 10 * MS + DEADLINE - 1, DEADLINE));
  assert_false(wh_lease_is_decider(&v, 10 * MS + DEADLINE, DEADLINE));
  assert_int_equal(wh_lease_decide(&v, ME, 60 * MS, DUR), WH_LEASE_RENEW);
  /* A renewal keeps the acquisition and the count; the holding is the same. */
  wh_lease_plan(&v, WH_LEASE_RENEW, ME, 1136214246 * SEC, 4, &next);
  assert_string_equal(next.acquire, "2006-01-02T15:04:05.000000Z");
  assert_string_equal(next.renew, "2006-01-02T15:04:06.000000Z");
  assert_string_equal(next.rv, "1");
  snprintf(next.rv, sizeof next.rv, "2");
  f = wh_lease_wrote(&v, WH_LEASE_RENEW, &next, ME, 1 * SEC, 1 * SEC + 5 * MS);
  assert_int_equal(f, WH_LEASE_CHANGED);
  assert_int_equal(v.gen, 1);
  assert_true(wh_lease_is_decider(&v, 1 * SEC + DEADLINE - 1, DEADLINE));
  /* Renewals fail: the deadline passes, and it steps down before anyone
   * could take the Lease (DUR after the write). */
  assert_int_equal(wh_lease_step_down(&v, 1 * SEC + DEADLINE - 1, DEADLINE), 0);
  assert_true(v.held);
  assert_int_equal(wh_lease_step_down(&v, 1 * SEC + DEADLINE, DEADLINE), 1);
  assert_false(v.held);
  assert_false(wh_lease_is_decider(&v, 1 * SEC + DEADLINE, DEADLINE));
  assert_int_equal(wh_lease_step_down(&v, 9 * SEC, DEADLINE), 0);
  /* The record still names it, written by this process: it takes it again
   * (a new holding) as soon as it can write. */
  assert_int_equal(wh_lease_decide(&v, ME, 5 * SEC, DUR), WH_LEASE_TAKE);
  wh_lease_plan(&v, WH_LEASE_TAKE, ME, 1136214250 * SEC, 4, &next);
  assert_int_equal(next.transitions, 1);
  assert_string_equal(next.acquire, "2006-01-02T15:04:10.000000Z");
}

static void decide_wait_then_take(void **state) {
  (void)state;
  wh_lease_view_t v;
  memset(&v, 0, sizeof v);
  wh_lease_rec_t r = rec(OTHER, "5", "t1");
  r.transitions = 6;
  assert_int_equal(wh_lease_observe(&v, &r, ME, 100 * MS), WH_LEASE_CHANGED | WH_LEASE_NEW_HOLDER);
  assert_int_equal(wh_lease_decide(&v, ME, 100 * MS, DUR), WH_LEASE_WAIT);
  /* The same record read again does not restart the wait... */
  assert_int_equal(wh_lease_observe(&v, &r, ME, 2 * SEC), 0);
  assert_int_equal(wh_lease_decide(&v, ME, 100 * MS + DUR - 1, DUR), WH_LEASE_WAIT);
  /* ...a renewal does, whatever its timestamps say (they are not compared). */
  r = rec(OTHER, "6", "t0");
  r.transitions = 6;
  assert_int_equal(wh_lease_observe(&v, &r, ME, 3 * SEC), WH_LEASE_CHANGED);
  assert_int_equal(wh_lease_decide(&v, ME, 100 * MS + DUR, DUR), WH_LEASE_WAIT);
  assert_int_equal(wh_lease_decide(&v, ME, 3 * SEC + DUR - 1, DUR), WH_LEASE_WAIT);
  assert_int_equal(wh_lease_decide(&v, ME, 3 * SEC + DUR, DUR), WH_LEASE_TAKE);
  wh_lease_rec_t next;
  wh_lease_plan(&v, WH_LEASE_TAKE, ME, 0, 4, &next);
  assert_int_equal(next.transitions, 7);
  assert_string_equal(next.rv, "6");
  assert_string_equal(next.holder, ME);
  /* The record's own duration counts, not this replica's. */
  r = rec(OTHER, "7", "t2");
  r.duration_s = 10;
  wh_lease_observe(&v, &r, ME, 20 * SEC);
  assert_int_equal(wh_lease_decide(&v, ME, 20 * SEC + DUR, DUR), WH_LEASE_WAIT);
  assert_int_equal(wh_lease_decide(&v, ME, 30 * SEC, DUR), WH_LEASE_TAKE);
  /* No valid duration: this replica's. */
  r = rec(OTHER, "8", "t2");
  r.duration_s = 0;
  wh_lease_observe(&v, &r, ME, 40 * SEC);
  assert_int_equal(wh_lease_dur_ns(&v, DUR), DUR);
  assert_int_equal(wh_lease_decide(&v, ME, 40 * SEC + DUR, DUR), WH_LEASE_TAKE);
}

static void decide_free_bad_and_mine(void **state) {
  (void)state;
  wh_lease_view_t v;
  memset(&v, 0, sizeof v);
  /* Free (released, or never held): taken at once. */
  wh_lease_rec_t r = rec("", "3", "t");
  wh_lease_observe(&v, &r, ME, 0);
  assert_int_equal(wh_lease_decide(&v, ME, 0, DUR), WH_LEASE_TAKE);
  /* A holder nobody can read: held until it expires. */
  r = rec(NULL, "4", "t");
  assert_true(wh_lease_observe(&v, &r, ME, 1 * SEC) & WH_LEASE_NEW_HOLDER);
  assert_int_equal(wh_lease_decide(&v, ME, 1 * SEC + DUR - 1, DUR), WH_LEASE_WAIT);
  assert_int_equal(wh_lease_decide(&v, ME, 1 * SEC + DUR, DUR), WH_LEASE_TAKE);
  /* This replica's name, from an earlier run (not held by this process). */
  r = rec(ME, "5", "t");
  wh_lease_observe(&v, &r, ME, 2 * SEC);
  assert_false(wh_lease_is_decider(&v, 2 * SEC, DEADLINE));
  assert_int_equal(wh_lease_decide(&v, ME, 2 * SEC, DUR), WH_LEASE_TAKE);
  /* No resourceVersion: no conditional write, so none at all. */
  r = rec("", "", "t");
  wh_lease_observe(&v, &r, ME, 3 * SEC);
  assert_int_equal(wh_lease_decide(&v, ME, 99 * SEC, DUR), WH_LEASE_WAIT);
}

static void decide_lost(void **state) {
  (void)state;
  wh_lease_view_t v;
  memset(&v, 0, sizeof v);
  wh_lease_rec_t r = rec(ME, "1", "t1");
  wh_lease_wrote(&v, WH_LEASE_CREATE, &r, ME, 0, 0);
  assert_true(v.held);
  /* Someone else's write that keeps the holding (a label): still held. */
  r = rec(ME, "2", "t1");
  assert_int_equal(wh_lease_observe(&v, &r, ME, 1 * SEC), WH_LEASE_CHANGED);
  assert_true(wh_lease_is_decider(&v, 1 * SEC, DEADLINE));
  /* Another holder: lost at once, whatever the deadline. */
  r = rec(OTHER, "3", "t2");
  unsigned f = wh_lease_observe(&v, &r, ME, 1 * SEC);
  assert_int_equal(f, WH_LEASE_CHANGED | WH_LEASE_NEW_HOLDER | WH_LEASE_LOST);
  assert_false(wh_lease_is_decider(&v, 1 * SEC, DEADLINE));
  assert_int_equal(v.gen, 2);
  /* The same identity acquiring anew (a restart elsewhere) is a new holding. */
  wh_lease_wrote(&v, WH_LEASE_TAKE, &(wh_lease_rec_t){0}, ME, 0, 0); /* a dud answer */
  assert_false(v.held);
  r = rec(ME, "9", "t3");
  wh_lease_wrote(&v, WH_LEASE_TAKE, &r, ME, 2 * SEC, 2 * SEC);
  uint64_t g = v.gen;
  wh_lease_rec_t again = rec(ME, "10", "t4");
  snprintf(again.acquire, sizeof again.acquire, "2007-01-01T00:00:00.000000Z");
  f = wh_lease_observe(&v, &again, ME, 3 * SEC);
  assert_true(f & WH_LEASE_NEW_HOLDER && f & WH_LEASE_LOST);
  assert_int_equal(v.gen, g + 1);
  /* Deleted while held: lost. */
  wh_lease_wrote(&v, WH_LEASE_TAKE, &again, ME, 3 * SEC, 3 * SEC);
  assert_true(v.held);
  f = wh_lease_observe(&v, NULL, ME, 4 * SEC);
  assert_true(f & WH_LEASE_LOST);
  assert_int_equal(wh_lease_decide(&v, ME, 4 * SEC, DUR), WH_LEASE_CREATE);
}

static void plan_release_and_bad_acquire(void **state) {
  (void)state;
  wh_lease_view_t v;
  memset(&v, 0, sizeof v);
  wh_lease_rec_t r = rec(ME, "4", "t");
  r.transitions = INT32_MAX;
  snprintf(r.acquire, sizeof r.acquire, "not a time");
  wh_lease_wrote(&v, WH_LEASE_TAKE, &r, ME, 0, 0);
  wh_lease_rec_t next;
  wh_lease_plan(&v, WH_LEASE_RENEW, ME, 0, 4, &next);
  assert_string_equal(next.acquire, "1970-01-01T00:00:00.000000Z");
  wh_lease_plan(&v, WH_LEASE_TAKE, ME, 0, 4, &next);
  assert_int_equal(next.transitions, INT32_MAX);
  wh_lease_plan(&v, WH_LEASE_RELEASE, ME, 0, 4, &next);
  assert_int_equal(next.state, WH_LEASE_FREE);
  assert_string_equal(next.holder, "");
  assert_int_equal(next.duration_s, 1);
  assert_int_equal(next.transitions, INT32_MAX);
  assert_string_equal(next.rv, "4");
  snprintf(next.rv, sizeof next.rv, "5");
  unsigned f = wh_lease_wrote(&v, WH_LEASE_RELEASE, &next, ME, 1, 1);
  assert_true(f & WH_LEASE_LOST);
  assert_false(wh_lease_is_decider(&v, 1, DEADLINE));
}

/* ---- simulation ------------------------------------------------------------- */

/* The API server: one record and its resourceVersion. A request's rc: 0
 * stored or read, 1 conflict or not found, 2 never reached the server, 3
 * done there but its answer lost. */
typedef struct sim_server {
  int exists;
  wh_lease_rec_t rec;
  uint64_t rv;
} sim_server_t;

enum { IDLE, GET, WRITE };
typedef struct sim_replica {
  char me[32];
  wh_lease_view_t v;
  double rate;    /* its clock's rate against real time */
  int64_t offset; /* and its start */
  int phase;
  wh_lease_action_t a;
  wh_lease_rec_t plan, got;
  int64_t start_local, accept_at, respond_at, next_tick;
  int rc;
  int64_t frozen_until;
} sim_replica_t;

static int64_t local(const sim_replica_t *p, int64_t t) {
  return p->offset + (int64_t)((double)t * p->rate);
}

static void sim_send(sim_replica_t *p, int phase, int64_t t, uint64_t *s) {
  p->phase = phase;
  p->start_local = local(p, t);
  uint64_t x = rng_next(s);
  /* Mostly quick; sometimes slow; now and then lost or hung for seconds. */
  int64_t lat = x % 10 == 0 ? (int64_t)(x >> 8) % (1500 * MS) : (int64_t)(x >> 8) % (40 * MS);
  lat = lat - lat % (2 * MS) + 2 * MS; /* whole steps, accepted after this one */
  p->accept_at = t + lat / 2;
  p->respond_at = t + lat;
  p->rc = x % 37 == 0 ? 2 : x % 41 == 0 ? 3 : 0;
}

static void sim_accept(sim_server_t *srv, sim_replica_t *p) {
  if (p->rc == 2) return;
  int lost = p->rc == 3;
  if (p->phase == GET) {
    p->rc = lost ? 3 : srv->exists ? 0 : 1;
    p->got = srv->rec;
    return;
  }
  int stale =
      p->a == WH_LEASE_CREATE ? srv->exists : !srv->exists || strcmp(p->plan.rv, srv->rec.rv) != 0;
  if (stale) {
    p->rc = lost ? 3 : 1;
    return;
  }
  srv->exists = 1;
  srv->rec = p->plan;
  snprintf(srv->rec.rv, sizeof srv->rec.rv, "%llu", (unsigned long long)++srv->rv);
  p->got = srv->rec;
}

/* lease.c's tick, one answer at a time. */
static void sim_answer(sim_replica_t *p, int64_t t, uint64_t *s) {
  int64_t now = local(p, t);
  if (p->phase == WRITE) {
    p->phase = IDLE;
    if (p->rc == 0) wh_lease_wrote(&p->v, p->a, &p->got, p->me, p->start_local, now);
    if (p->rc != 1 || p->a != WH_LEASE_RENEW) return;
  } else {
    p->phase = IDLE;
    if (p->rc >= 2) return;
    wh_lease_observe(&p->v, p->rc == 0 ? &p->got : NULL, p->me, now);
    p->a = wh_lease_decide(&p->v, p->me, now, DUR);
    if (p->a == WH_LEASE_WAIT) return;
    wh_lease_plan(&p->v, p->a, p->me, t, 4, &p->plan);
    sim_send(p, WRITE, t, s);
    return;
  }
  sim_send(p, GET, t, s); /* a renewal's conflict: read */
}

static void sim_tick(sim_replica_t *p, int64_t t, uint64_t *s) {
  p->next_tick = t + 500 * MS;
  wh_lease_step_down(&p->v, local(p, t), DEADLINE);
  if (p->v.held) {
    p->a = WH_LEASE_RENEW;
    wh_lease_plan(&p->v, p->a, p->me, t, 4, &p->plan);
    sim_send(p, WRITE, t, s);
  } else {
    sim_send(p, GET, t, s);
  }
}

static void sim_step(sim_server_t *srv, sim_replica_t *p, int64_t t, uint64_t *s) {
  if (p->phase != IDLE && t == p->accept_at) sim_accept(srv, p);
  if (t < p->frozen_until) return;
  if (rng_next(s) % 20000 == 0) p->frozen_until = t + (int64_t)(rng_next(s) % (8 * SEC));
  if (p->phase != IDLE && t >= p->respond_at) sim_answer(p, t, s);
  if (p->phase == IDLE && t >= p->next_tick) sim_tick(p, t, s);
}

/* Three replicas whose clocks run up to 2% apart, for two simulated hours
 * in 1 ms steps, each frozen for up to 8 s about every 20 s: never two
 * deciders; there is one most of the time, and it changes often. */
static void simulation(void **state) {
  (void)state;
  uint64_t seed = 0x5eed1ea5eULL, s = seed;
  sim_server_t srv;
  memset(&srv, 0, sizeof srv);
  sim_replica_t p[3];
  memset(p, 0, sizeof p);
  for (int i = 0; i < 3; i++) {
    snprintf(p[i].me, sizeof p[i].me, "https://10.0.0.%d:8443", i + 1);
    p[i].rate = 0.99 + 0.01 * i;
    p[i].offset = (int64_t)(rng_next(&s) % (1000 * SEC));
  }
  int64_t with_decider = 0, steps = 0, takes = 0;
  int last = -1;
  for (int64_t t = 0; t < 7200 * SEC; t += MS, steps++) {
    int n = 0, who = -1;
    for (int i = 0; i < 3; i++) {
      sim_step(&srv, &p[i], t, &s);
      if (wh_lease_is_decider(&p[i].v, local(&p[i], t), DEADLINE)) n++, who = i;
    }
    if (n > 1)
      fail_msg("seed %llx: two deciders at %lld ms", (unsigned long long)seed, (long long)(t / MS));
    if (n) with_decider++;
    if (n && who != last) takes++, last = who;
  }
  fprintf(stderr, "# decider %lld of %lld ms, %lld changes of decider\n", (long long)with_decider,
          (long long)steps, (long long)takes);
  assert_true(with_decider > steps / 2);
  assert_true(takes > 100);
}

/* ---- the handle -------------------------------------------------------------- */

static ripple_kube_client_t *client_nowhere(const char *dir) {
  char path[300];
  snprintf(path, sizeof path, "%s/kubeconfig", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(
      "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
      "    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n"
      "- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user: {token: t}\n",
      f);
  fclose(f);
  ripple_kube_config_opts_t co = {.kubeconfig = path};
  ripple_kube_config_t *cfg;
  char err[256];
  if (ripple_kube_config_load(&co, &cfg, err, sizeof err) != RIPPLE_OK) fail_msg("%s", err);
  ripple_kube_client_opts_t o = {.timeout_ms = 500};
  ripple_kube_client_t *c;
  assert_int_equal(ripple_kube_client_new(cfg, &o, &c), RIPPLE_OK);
  ripple_kube_config_free(cfg);
  return c;
}

/* Options are checked; with no API server nobody is the decider, and stop
 * returns. */
static void handle_without_server(void **state) {
  (void)state;
  char dir[] = "/tmp/test_lease.XXXXXX";
  assert_non_null(mkdtemp(dir));
  ripple_kube_client_t *c = client_nowhere(dir);
  wh_lease_t *l = NULL;
  wh_lease_opts_t o = {.kc = c, .ns = "n", .name = "d", .identity = ME};
  char longid[WH_LEASE_ID_MAX + 1];
  memset(longid, 'x', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  static const wh_lease_opts_t bad[] = {
      {.ns = "n", .name = "d", .identity = "x"},
      {.kc = (void *)1, .name = "d", .identity = "x"},
      {.kc = (void *)1, .ns = "n", .name = "", .identity = "x"},
      {.kc = (void *)1, .ns = "n", .name = "d"},
      {.kc = (void *)1, .ns = "n", .name = "d", .identity = "x", .renew_deadline_ms = 4000},
      {.kc = (void *)1, .ns = "n", .name = "d", .identity = "x", .retry_ms = 3000},
      {.kc = (void *)1,
       .ns = "n",
       .name = "d",
       .identity = "x",
       .duration_ms = 3600001,
       .renew_deadline_ms = 3000},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(wh_lease_start(&bad[i], &l), RIPPLE_EINVAL);
  wh_lease_opts_t lo = o;
  lo.identity = longid;
  assert_int_equal(wh_lease_start(&lo, &l), RIPPLE_EINVAL);
  assert_int_equal(wh_lease_start(&o, NULL), RIPPLE_EINVAL);
  assert_null(l);
  o.retry_ms = 50, o.renew_deadline_ms = 150, o.duration_ms = 1000;
  assert_int_equal(wh_lease_start(&o, &l), RIPPLE_OK);
  char holder[64] = "x";
  int64_t since = 1;
  uint64_t gen = 1;
  for (int i = 0; i < 10; i++) {
    assert_int_equal(wh_lease_state(l, holder, sizeof holder, &since, &gen), 0);
    assert_string_equal(holder, "");
    assert_true(since == 0 && gen == 0);
    usleep(20000);
  }
  wh_lease_pause(l, 1);
  wh_lease_pause(l, 0);
  wh_lease_stop(l);
  wh_lease_stop(NULL);
  wh_lease_pause(NULL, 1);
  assert_int_equal(wh_lease_state(NULL, holder, sizeof holder, &since, &gen), 0);
  ripple_kube_client_free(c);
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(time_format),
      cmocka_unit_test(time_parse),
      cmocka_unit_test(time_round_trip),
      cmocka_unit_test(rec_good),
      cmocka_unit_test(rec_malformed),
      cmocka_unit_test(decide_create_renew_step_down),
      cmocka_unit_test(decide_wait_then_take),
      cmocka_unit_test(decide_free_bad_and_mine),
      cmocka_unit_test(decide_lost),
      cmocka_unit_test(plan_release_and_bad_acquire),
      cmocka_unit_test(simulation),
      cmocka_unit_test(handle_without_server),
  };
  ripple_log_setup("test", RIPPLE_LOG_ERROR, NULL, NULL);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
