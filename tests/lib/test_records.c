/*
 * test_records.c - spans, the wire encoding of records, logging and time.
 * Records are parsed back with jansson: the encoder must always produce valid
 * JSON with the documented fields, whatever strings it is given.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static json_t *parse(const char *s) {
  json_error_t err;
  json_t *j = json_loads(s, 0, &err);
  if (!j) fail_msg("invalid JSON (%s): %s", err.text, s);
  return j;
}

static const char *str(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

static void spans_parent_child_and_attrs(void **state) {
  (void)state;
  capture_t *cap = capture_new(2);
  ripple_tracer_t *t = capture_tracer(cap, "replicaset-controller", 10);
  ripple_ctx_t c;
  ripple_root(t, NULL, &c);
  ripple_span_t *sync, *create, *dropped;
  assert_int_equal(ripple_span_start(t, &c, "syncReplicaSet", &sync), RIPPLE_OK);
  cap->now += 1000;
  assert_int_equal(ripple_span_start_child(sync, "createPods", &create), RIPPLE_OK);
  assert_int_equal(ripple_span_set_attr(create, "count", "10"), RIPPLE_OK);
  assert_int_equal(ripple_span_set_attr(create, "count", "11"), RIPPLE_OK); /* later wins */
  assert_int_equal(ripple_span_set_attr(create, "namespace", "default"), RIPPLE_OK);
  for (int i = 0; i < 6; i++) { /* grow the attribute array past its first size */
    char k[8];
    snprintf(k, sizeof k, "k%d", i);
    assert_int_equal(ripple_span_set_attr(create, k, "v"), RIPPLE_OK);
  }
  assert_int_equal(ripple_span_start_child(sync, "abandoned", &dropped), RIPPLE_OK);
  ripple_span_discard(dropped);
  cap->now += 5000;
  ripple_span_end(create);
  ripple_span_set_start(sync, cap->now - 100000);
  ripple_span_end(sync);
  assert_int_equal(cap->nsp, 2);
  const cap_span_t *child = &cap->sp[0], *parent = &cap->sp[1];
  assert_string_equal(child->name, "createPods");
  assert_string_equal(child->service, "replicaset-controller");
  assert_true(ripple_cpid_equal(&child->cpid, &c.cpid));
  assert_true(ripple_cpid_equal(&parent->cpid, &c.cpid));
  assert_int_equal(child->parent_id, parent->span_id);
  assert_int_equal(parent->parent_id, 0);
  assert_int_not_equal(parent->span_id, 0);
  assert_int_equal(child->end_ns - child->start_ns, 5000);
  assert_int_equal(parent->end_ns - parent->start_ns, 100000);
  assert_int_equal(child->nattrs, 8);
  assert_string_equal(child->attr_key[0], "count");
  assert_string_equal(child->attr_val[0], "11");
  ripple_tracer_stats_t st;
  ripple_tracer_stats(t, &st);
  assert_int_equal(st.spans, 2);
  assert_int_equal(ripple_span_start(t, &c, NULL, &sync), RIPPLE_EINVAL);
  ripple_tracer_free(t);
  free(cap);
}

static void mergelog_json(void **state) {
  (void)state;
  ripple_cpid_t src[2] = {test_cpid(1), test_cpid(2)};
  ripple_objref_t obj = {"apps/v1", "ReplicaSet", "default", "web-\"5d\"", NULL};
  ripple_mergelog_t ml = {.cpid = test_cpid(3),
                          .sources = src,
                          .nsources = 2,
                          .time_ns = 1763762790123456789LL,
                          .component = "deployment-controller",
                          .object = &obj};
  char *s = NULL;
  size_t len;
  assert_int_equal(ripple_mergelog_to_json(&ml, &s, &len), RIPPLE_OK);
  json_t *j = parse(s);
  char want[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&ml.cpid, want);
  assert_string_equal(str(j, "cpid"), want);
  json_t *sources = json_object_get(j, "sources");
  assert_int_equal(json_array_size(sources), 2);
  ripple_cpid_format(&src[1], want);
  assert_string_equal(json_string_value(json_array_get(sources, 1)), want);
  assert_string_equal(str(j, "time"), "2025-11-21T22:06:30.123456789Z");
  assert_string_equal(str(j, "component"), "deployment-controller");
  json_t *o = json_object_get(j, "object");
  assert_string_equal(str(o, "name"), "web-\"5d\"");
  assert_null(json_object_get(o, "uid"));     /* unset fields are left out, not null */
  assert_null(json_object_get(j, "trigger")); /* not known: left out */
  json_decref(j);
  ripple_free(s);

  /* The source that caused it: src[1]; src[0] was carried along. */
  ml.trigger = &src[1];
  ml.ntrigger = 1;
  assert_int_equal(ripple_mergelog_to_json(&ml, &s, &len), RIPPLE_OK);
  j = parse(s);
  json_t *trig = json_object_get(j, "trigger");
  assert_int_equal(json_array_size(trig), 1);
  assert_string_equal(json_string_value(json_array_get(trig, 0)), want);
  json_decref(j);
  ripple_free(s);
  ml.ntrigger = 3; /* more than the sources: refused */
  assert_int_equal(ripple_mergelog_to_json(&ml, &s, &len), RIPPLE_EINVAL);
  ml.ntrigger = 0;

  ripple_mergelog_t root = {.cpid = test_cpid(4)};
  assert_int_equal(ripple_mergelog_to_json(&root, &s, &len), RIPPLE_OK);
  j = parse(s);
  assert_int_equal(json_array_size(json_object_get(j, "sources")), 0);
  assert_string_equal(str(j, "time"), "1970-01-01T00:00:00.000000000Z");
  assert_null(json_object_get(j, "object"));
  json_decref(j);
  ripple_free(s);
}

static void span_json_escapes_anything(void **state) {
  (void)state;
  /* Quotes, backslashes, control characters and invalid UTF-8 (a lone
   * continuation byte, an overlong slash, a surrogate) must all come out as
   * valid JSON. */
  const char *nasty = "a\"b\\c\n\x01\x80\xc0\xaf\xed\xa0\x80 caf\xc3\xa9";
  ripple_attr_t attrs[1] = {{"k\"ey", nasty}};
  ripple_span_rec_t sp = {test_cpid(5), 0xdeadbeefcafef00dULL, 0x1ULL, nasty, "n", 1, 2, attrs, 1};
  char *s = NULL;
  assert_int_equal(ripple_span_to_json(&sp, &s, NULL), RIPPLE_OK);
  json_t *j = parse(s);
  assert_string_equal(str(j, "span_id"), "deadbeefcafef00d");
  assert_string_equal(str(j, "parent_id"), "0000000000000001");
  const char *svc = str(j, "service");
  assert_non_null(svc);
  assert_memory_equal(svc, "a\"b\\c\n\x01", 7);
  assert_non_null(strstr(svc, "caf\xc3\xa9"));  /* valid UTF-8 kept as is */
  assert_non_null(strstr(svc, "\xef\xbf\xbd")); /* invalid bytes became U+FFFD */
  assert_non_null(json_object_get(json_object_get(j, "attributes"), "k\"ey"));
  json_decref(j);
  ripple_free(s);
}

static char last_line[2048];
static int lines;
static void capture_log(void *ud, ripple_log_level_t level, const char *line) {
  (void)ud;
  (void)level;
  snprintf(last_line, sizeof last_line, "%s", line);
  lines++;
}

static void log_lines(void **state) {
  (void)state;
  ripple_log_setup("webhook", RIPPLE_LOG_INFO, capture_log, NULL);
  ripple_log(RIPPLE_LOG_DEBUG, "hidden", "x=1");
  assert_int_equal(lines, 0);
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  c.cpid = test_cpid(7);
  ripple_log_set_ctx(&c);
  char q[64];
  ripple_log_quote("two words \"and\" more", q, sizeof q);
  ripple_log(RIPPLE_LOG_WARN, "admitted", "object=%s note=%s", "pods/web-1", q);
  assert_int_equal(lines, 1);
  char cpid[RIPPLE_CPID_STRLEN + 1], want[128];
  ripple_cpid_format(&c.cpid, cpid);
  snprintf(want, sizeof want,
           "level=warn component=webhook event=admitted cpid=%s object=pods/web-1", cpid);
  assert_non_null(strstr(last_line, want));
  assert_non_null(strstr(last_line, "note=\"two words \\\"and\\\" more\""));
  assert_int_equal(strncmp(last_line, "ts=", 3), 0);
  ripple_log_set_ctx(NULL);
  ripple_log(RIPPLE_LOG_ERROR, "multi", "msg=%s", "line1\nline2");
  assert_null(strstr(last_line, "cpid="));
  assert_null(strchr(last_line, '\n')); /* one event, one line */
  ripple_log_quote("plain", q, sizeof q);
  assert_string_equal(q, "plain");
  ripple_log_quote("", q, sizeof q);
  assert_string_equal(q, "\"\"");
  ripple_log_level_t lv;
  assert_int_equal(ripple_log_level_parse("WARN", &lv), RIPPLE_OK);
  assert_int_equal(lv, RIPPLE_LOG_WARN);
  assert_int_equal(ripple_log_level_parse("loud", &lv), RIPPLE_EINVAL);
  ripple_log_setup("test", RIPPLE_LOG_INFO, NULL, NULL);
}

static void durations(void **state) {
  (void)state;
  int64_t ns = 0;
  assert_int_equal(ripple_duration_parse("1.5m", &ns), RIPPLE_OK);
  assert_int_equal(ns, 90000000000LL);
  assert_int_equal(ripple_duration_parse("250ms", &ns), RIPPLE_OK);
  assert_int_equal(ns, 250000000LL);
  assert_int_equal(ripple_duration_parse("30", &ns), RIPPLE_OK); /* seconds */
  assert_int_equal(ns, 30000000000LL);
  assert_int_equal(ripple_duration_parse("2h", &ns), RIPPLE_OK);
  assert_int_equal(ns, 7200000000000LL);
  assert_int_equal(ripple_duration_parse("7d", &ns), RIPPLE_OK);
  assert_int_equal(ns, 604800000000000LL);
  ns = 5;
  assert_int_equal(ripple_duration_parse("-1s", &ns), RIPPLE_EINVAL);
  assert_int_equal(ripple_duration_parse("3 days", &ns), RIPPLE_EINVAL);
  assert_int_equal(ripple_duration_parse("1e300s", &ns), RIPPLE_EINVAL);
  assert_int_equal(ripple_duration_parse("", &ns), RIPPLE_EINVAL);
  assert_int_equal(ns, 5); /* untouched on failure */
}

static void time_round_trip(void **state) {
  (void)state;
  char s[RIPPLE_TIME_STRLEN + 1];
  int64_t vals[] = {0, 1, 999999999, 1763762790123456789LL, 951782400000000000LL /* 2000-02-29 */,
                    -1};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    ripple_time_format(vals[i], s);
    assert_int_equal(strlen(s), RIPPLE_TIME_STRLEN);
    int64_t back;
    assert_int_equal(ripple_time_parse(s, strlen(s), &back), RIPPLE_OK);
    assert_int_equal(back, vals[i]);
  }
  int64_t t;
  assert_int_equal(ripple_time_parse("2025-11-21T23:06:30.5+01:00", 27, &t), RIPPLE_OK);
  assert_int_equal(t, 1763762790500000000LL);
  assert_int_equal(ripple_time_parse("2025-11-21T22:06:30Z", 20, &t), RIPPLE_OK);
  assert_int_equal(t, 1763762790000000000LL);
  const char *bad[] = {"2025-11-21",           "2025-13-01T00:00:00Z",  "2025-02-29T00:00:00Z",
                       "2025-11-21T22:06:30",  "2025-11-21T22:06:30.Z", "2025-11-21T22:06:30Zjunk",
                       "2025-11-21T24:00:00Z", "20x5-11-21T22:06:30Z"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_not_equal(ripple_time_parse(bad[i], strlen(bad[i]), &t), RIPPLE_OK);
}

/* The formatter keeps the last day's date per thread: every value, across
 * midnights both ways and before 1970, must still read as gmtime says. */
static void time_format_matches_gmtime(void **state) {
  (void)state;
  int64_t base[] = {0, 1763762790123456789LL, 951868799999999999LL /* 2000-02-29 23:59:59.999 */,
                    -86400000000000LL - 1};
  int64_t steps[] = {0,
                     1,
                     999999999,
                     1000000000,
                     86399000000000LL,
                     86400000000000LL,
                     -1,
                     -1000000000,
                     -86400000000000LL,
                     365LL * 86400000000000LL};
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
    for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
      int64_t ns = base[i] + steps[j];
      char got[RIPPLE_TIME_STRLEN + 1], want[64];
      ripple_time_format(ns, got);
      int64_t sec = ns / 1000000000, frac = ns % 1000000000;
      if (frac < 0) frac += 1000000000, sec -= 1;
      time_t t = (time_t)sec;
      struct tm tm;
      assert_non_null(gmtime_r(&t, &tm));
      size_t n = strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm);
      snprintf(want + n, sizeof want - n, ".%09lldZ", (long long)frac);
      assert_string_equal(got, want);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(time_format_matches_gmtime),
      cmocka_unit_test(spans_parent_child_and_attrs),
      cmocka_unit_test(mergelog_json),
      cmocka_unit_test(span_json_escapes_anything),
      cmocka_unit_test(log_lines),
      cmocka_unit_test(time_round_trip),
      cmocka_unit_test(durations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
