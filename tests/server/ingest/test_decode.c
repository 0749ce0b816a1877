/*
 * test_decode.c - the trace server's POST body decoder (server/decode.c).
 *
 * Accepted records are re-encoded canonically, and the canonical form is a
 * fixed point (decoding it again gives it back). Every kind of bad input is
 * refused as a whole, naming the first bad record and field with the right
 * code: RIPPLE_EJSON for a body that is not a JSON array (the server answers
 * 400), RIPPLE_EINVAL for a bad record (400), RIPPLE_ERANGE for a limit (413).
 *
 * Behaviour chosen by the decoder and pinned here: an empty array is accepted
 * (zero records); unknown fields are ignored and dropped from the canonical
 * form, so newer clients can send more; null optional fields count as absent;
 * times may have any fraction and a UTC offset, are stored as UTC with nine
 * digits and are not held to the string limit; CPIDs in either case are
 * stored in lower case; a CPID may have only one mergelog per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

#define A "9c459e9c-463c-42d6-bf69-f6f89ba0d84e"
#define B "ee62eb1f-b56a-4b55-91ec-a11a6fa82728"
#define D "4f590beb-a49d-4db0-83da-5a6b5dc5d570"
#define T "2026-11-21T22:18:34.356047558Z"
#define T2 "2026-11-21T22:18:34.358112001Z"

/* Records of a given shape, for building bodies. */
#define ML_AT(cpid, sources, time) \
  "{\"cpid\":\"" cpid "\",\"sources\":[" sources "],\"time\":\"" time "\"}"
#define ML_OK(cpid) ML_AT(cpid, "", T)
#define SP_WITH(extra)                                                    \
  "{\"cpid\":\"" A                                                        \
  "\",\"span_id\":\"5c1d9e0a7b3f2e11\",\"service\":\"s\",\"name\":\"n\"," \
  "\"start\":\"" T "\",\"end\":\"" T2 "\"" extra "}"

static const dec_limits_t roomy = {10000, 4096, 64, 4096};
/* Small enough to reach every limit with a short body. */
static const dec_limits_t tight = {4, 3, 2, 40};
#define S40 "0123456789abcdef0123456789abcdef01234567"
#define S41 S40 "8"
#define E4 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" /* 4 characters, 8 bytes */
#define E20 E4 E4 E4 E4 E4

static char *body_of(const dec_batch_t *b, size_t i) {
  char *s = strndup(b->body.p + b->rec[i].body_off, b->rec[i].body_len);
  assert_non_null(s);
  return s;
}

static void accept(dec_kind_t kind, const char *json, const dec_limits_t *lim, dec_batch_t *b) {
  dec_error_t err;
  memset(&err, 'x', sizeof err); /* dec_decode must fill it in */
  int rc = dec_decode(kind, json, strlen(json), lim, b, &err);
  if (rc != RIPPLE_OK)
    fail_msg("refused (%d, record %ld, field '%s': %s): %s", rc, err.index, err.field, err.msg,
             json);
}

/* Decoding the canonical records again must give exactly them back. */
static void assert_fixed_point(const dec_batch_t *b, const dec_limits_t *lim) {
  sbuf_t again;
  sbuf_init(&again);
  sbuf_putc(&again, '[');
  for (size_t i = 0; i < b->n; i++) {
    if (i) sbuf_putc(&again, ',');
    sbuf_put(&again, b->body.p + b->rec[i].body_off, b->rec[i].body_len);
  }
  sbuf_putc(&again, ']');
  dec_batch_t c;
  sbuf_putc(&again, '\0');
  accept(b->kind, again.p, lim, &c);
  assert_int_equal(c.n, b->n);
  assert_int_equal(c.body.len, b->body.len);
  assert_memory_equal(c.body.p, b->body.p, b->body.len);
  for (size_t i = 0; i < b->n; i++) {
    assert_memory_equal(&c.rec[i].cpid, &b->rec[i].cpid, sizeof c.rec[i].cpid);
    assert_int_equal(c.rec[i].time, b->rec[i].time);
    assert_int_equal(c.rec[i].nsrc, b->rec[i].nsrc);
    assert_int_equal(c.rec[i].has_trigger, b->rec[i].has_trigger);
    if (b->rec[i].has_trigger)
      assert_memory_equal(dec_trigger(&c, &c.rec[i]), dec_trigger(b, &b->rec[i]), b->rec[i].nsrc);
    assert_int_equal(c.rec[i].uid_len, b->rec[i].uid_len);
    if (b->rec[i].uid_len)
      assert_memory_equal(c.uids.p + c.rec[i].uid_off, b->uids.p + b->rec[i].uid_off,
                          b->rec[i].uid_len);
  }
  assert_int_equal(c.nsrc, b->nsrc);
  if (b->nsrc) assert_memory_equal(c.src, b->src, b->nsrc * sizeof *b->src);
  dec_batch_free(&c);
  sbuf_free(&again);
}

/* Accept json and expect one record whose canonical form is `want`. */
static void canonical(dec_kind_t kind, const char *json, const char *want) {
  dec_batch_t b;
  accept(kind, json, &roomy, &b);
  assert_int_equal(b.n, 1);
  char *got = body_of(&b, 0);
  assert_string_equal(got, want);
  free(got);
  assert_fixed_point(&b, &roomy);
  dec_batch_free(&b);
}

static int64_t tparse(const char *s) {
  int64_t t;
  assert_int_equal(ripple_time_parse(s, strlen(s), &t), RIPPLE_OK);
  return t;
}

static ripple_cpid_t cparse(const char *s) {
  ripple_cpid_t c;
  assert_int_equal(ripple_cpid_parse(s, strlen(s), &c), RIPPLE_OK);
  return c;
}

/* ---- accepted -------------------------------------------------------------- */

static void mergelog_full(void **state) {
  (void)state;
  static const char want[] =
      "{\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D "\"],\"time\":\"" T
      "\",\"component\":\"kubectl\",\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":"
      "\"Deployment\",\"namespace\":\"default\",\"name\":\"web\",\"uid\":\"5b0c1f7e\"}}";
  dec_batch_t b;
  accept(DEC_MERGELOGS,
         "["
         "\n  {\"cpid\": \"" A "\", \"sources\": [\"" B "\", \"" D
         "\"],"
         " \"time\": \"" T
         "\", \"component\": \"kubectl\", \"object\": {\"apiVersion\":"
         " \"apps/v1\", \"kind\": \"Deployment\", \"namespace\": \"default\", \"name\": \"web\","
         " \"uid\": \"5b0c1f7e\"}}\n]",
         &roomy, &b);
  assert_int_equal(b.kind, DEC_MERGELOGS);
  assert_int_equal(b.n, 1);
  ripple_cpid_t a = cparse(A), s1 = cparse(B), s2 = cparse(D);
  assert_memory_equal(&b.rec[0].cpid, &a, sizeof a);
  assert_int_equal(b.rec[0].time, tparse(T));
  assert_int_equal(b.rec[0].nsrc, 2);
  assert_memory_equal(&b.src[b.rec[0].src_off], &s1, sizeof s1);
  assert_memory_equal(&b.src[b.rec[0].src_off + 1], &s2, sizeof s2);
  char *got = body_of(&b, 0);
  assert_string_equal(got, want);
  free(got);
  assert_fixed_point(&b, &roomy);
  dec_batch_free(&b);
}

static void mergelog_variants(void **state) {
  (void)state;
  /* A root: empty sources, no optional fields. */
  canonical(DEC_MERGELOGS, "[" ML_OK(A) "]", ML_OK(A));
  /* Keys in any order, unknown fields (even deep ones) dropped, null optional
   * fields absent, an object with one field, a CPID in upper case, a time with
   * an offset and no fraction. */
  canonical(DEC_MERGELOGS,
            "[{\"time\":\"2026-11-21T22:18:34+02:00\",\"future\":{\"x\":[1,[2,{\"y\":null}]]},"
            "\"component\":null,\"object\":{\"kind\":\"Pod\",\"other\":1},\"sources\":[\"" B
            "\"],\"cpid\":\"9C459E9C-463C-42D6-BF69-F6F89BA0D84E\"}]",
            "{\"cpid\":\"" A "\",\"sources\":[\"" B
            "\"],\"time\":\"2026-11-21T20:18:34.000000000Z\",\"object\":{\"kind\":\"Pod\"}}");
  /* An empty object is no object; empty strings are kept. */
  canonical(DEC_MERGELOGS,
            "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T
            "\",\"component\":\"\",\"object\":{}}]",
            "{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"component\":\"\"}");
  /* Strings are re-escaped: \u escapes become UTF-8, controls stay escaped. */
  canonical(DEC_MERGELOGS,
            "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T
            "\",\"component\":\"a\\u00e9\\\"\\n\\u0001\\/\"}]",
            "{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T
            "\",\"component\":\"a\xc3\xa9\\\"\\n\\u0001/\"}");
  /* A leap second and a longer fraction: normalised, not refused. */
  canonical(DEC_MERGELOGS, "[" ML_AT(A, "", "2016-12-31T23:59:60.1234567891Z") "]",
            ML_AT(A, "", "2017-01-01T00:00:00.123456789Z"));
  /* Duplicate sources are the graph's business, not an error. */
  canonical(DEC_MERGELOGS, "[" ML_AT(A, "\"" B "\",\"" B "\"", T) "]",
            ML_AT(A, "\"" B "\",\"" B "\"", T));
}

static void mergelog_batch(void **state) {
  (void)state;
  dec_batch_t b;
  accept(DEC_MERGELOGS,
         "[" ML_AT(A, "\"" B "\"", T) "," ML_OK(B) "," ML_AT(D, "\"" A "\",\"" B "\"", T2) "]",
         &tight, &b);
  assert_int_equal(b.n, 3);
  assert_int_equal(b.nsrc, 3);
  assert_int_equal(b.rec[0].nsrc, 1);
  assert_int_equal(b.rec[1].nsrc, 0);
  assert_int_equal(b.rec[2].nsrc, 2);
  ripple_cpid_t a = cparse(A), bb = cparse(B);
  assert_memory_equal(&b.src[b.rec[0].src_off], &bb, sizeof bb);
  assert_memory_equal(&b.src[b.rec[2].src_off], &a, sizeof a);
  assert_int_equal(b.rec[2].time, tparse(T2));
  /* The bodies lie back to back, each a record of its own. */
  const char *want[] = {ML_AT(A, "\"" B "\"", T), ML_OK(B), ML_AT(D, "\"" A "\",\"" B "\"", T2)};
  size_t off = 0;
  for (size_t i = 0; i < 3; i++) {
    char *got = body_of(&b, i);
    assert_string_equal(got, want[i]);
    assert_int_equal(b.rec[i].body_off, off);
    off += b.rec[i].body_len;
    free(got);
  }
  assert_int_equal(b.body.len, off);
  assert_fixed_point(&b, &tight);
  dec_batch_free(&b);
  /* As many records as the limit allows. */
  accept(
      DEC_MERGELOGS,
      "[" ML_OK(A) "," ML_OK(B) "," ML_OK(D) "," ML_OK("4f590beb-a49d-4db0-83da-5a6b5dc5d571") "]",
      &tight, &b);
  assert_int_equal(b.n, 4);
  dec_batch_free(&b);
}

/* Times are not held to the string limit: their canonical form may be longer
 * than what was sent, and must be accepted again. */
static void time_not_a_string_limit(void **state) {
  (void)state;
  static const dec_limits_t tiny = {4, 3, 2, 8};
  dec_batch_t b;
  accept(DEC_MERGELOGS,
         "[" ML_AT(A, "", "2026-11-21T22:18:34Z") "," ML_AT(B, "", "2026-11-21T22:18:34.5Z") "]",
         &tiny, &b);
  char *got = body_of(&b, 0);
  assert_string_equal(got, ML_AT(A, "", "2026-11-21T22:18:34.000000000Z"));
  free(got);
  assert_fixed_point(&b, &tiny);
  dec_batch_free(&b);
}

static void empty_array(void **state) {
  (void)state;
  /* Nothing to store is not an error: the answer is {"accepted":0}. */
  dec_batch_t b;
  for (int kind = 0; kind < 2; kind++) {
    accept((dec_kind_t)kind, " [ ] ", &tight, &b);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.body.len, 0);
    dec_batch_free(&b);
  }
}

static void span_full_and_minimal(void **state) {
  (void)state;
  static const char full[] =
      "{\"cpid\":\"" A
      "\",\"span_id\":\"5c1d9e0a7b3f2e11\",\"parent_id\":\"0b7e5d4c3a291f00\","
      "\"service\":\"replicaset-controller\",\"name\":\"syncReplicaSet\",\"start\":\"" T
      "\",\"end\":\"" T2 "\",\"attributes\":{\"object\":\"replicasets/web\",\"verb\":\"update\"}}";
  canonical(DEC_SPANS, "[" SP_WITH("") "]", SP_WITH(""));
  canonical(DEC_SPANS, "[" SP_WITH(",\"parent_id\":null,\"attributes\":null,\"extra\":[]") "]",
            SP_WITH(""));
  canonical(DEC_SPANS, "[" SP_WITH(",\"attributes\":{}") "]", SP_WITH(""));
  dec_batch_t b;
  char in[sizeof full + 8];
  snprintf(in, sizeof in, "[%s]", full);
  accept(DEC_SPANS, in, &roomy, &b);
  assert_int_equal(b.kind, DEC_SPANS);
  assert_int_equal(b.rec[0].time, tparse(T)); /* a span's time is its start */
  assert_int_equal(b.rec[0].nsrc, 0);
  char *got = body_of(&b, 0);
  assert_string_equal(got, full);
  free(got);
  dec_batch_free(&b);
  /* Many spans of one CPID in a request are normal; start == end is fine. */
  accept(DEC_SPANS,
         "[" SP_WITH("") ",{\"cpid\":\"" A
                         "\",\"span_id\":\"0000000000000001\","
                         "\"service\":\"\",\"name\":\"\",\"start\":\"" T "\",\"end\":\"" T "\"}]",
         &tight, &b);
  assert_int_equal(b.n, 2);
  assert_fixed_point(&b, &tight);
  dec_batch_free(&b);
}

/* ---- refused --------------------------------------------------------------- */

/* Expect json to be refused with rc at record `index`, field `field`. */
#define REFUSED(kind, json, rc, index, field) \
  refused(__LINE__, kind, json, strlen(json), rc, index, field)

static void refused(int line, dec_kind_t kind, const char *json, size_t len, int rc, long index,
                    const char *field) {
  dec_batch_t b;
  dec_error_t err;
  memset(&err, 'x', sizeof err); /* dec_decode must fill it in */
  int got = dec_decode(kind, json, len, &tight, &b, &err);
  if (got != rc || err.index != index || strcmp(err.field, field) != 0)
    fail_msg("line %d: want %s at %ld '%s', got %s at %ld '%s' (%s)", line, ripple_errname(rc),
             index, field, ripple_errname(got), err.index, err.field, err.msg);
  assert_true(strlen(err.msg) > 3); /* something a person can act on */
  /* All or nothing: nothing of the batch is left. */
  assert_null(b.rec);
  assert_null(b.src);
  assert_null(b.body.p);
  assert_int_equal(b.n, 0);
}

static void not_an_array(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
  REFUSED(M, "", RIPPLE_EJSON, -1, "");
  REFUSED(M, "[", RIPPLE_EJSON, -1, "");
  REFUSED(M, "[" ML_OK(A) ",]", RIPPLE_EJSON, -1, "");
  REFUSED(M, "[" ML_OK(A) "] x", RIPPLE_EJSON, -1, "");
  REFUSED(M, ML_OK(A), RIPPLE_EJSON, -1, "");
  REFUSED(M, "\"" A "\"", RIPPLE_EJSON, -1, "");
  REFUSED(M, "null", RIPPLE_EJSON, -1, "");
  REFUSED(M, "[" ML_OK(A) ",1]", RIPPLE_EINVAL, 1, "");
  REFUSED(M, "[null]", RIPPLE_EINVAL, 0, "");
  REFUSED(M, "[[" ML_OK(A) "]]", RIPPLE_EINVAL, 0, "");
  /* The count is checked before any record: 5 > 4, whatever they hold. */
  REFUSED(M, "[1,2,3,4,5]", RIPPLE_ERANGE, -1, "");
  REFUSED(DEC_SPANS, "[{},{},{},{},{}]", RIPPLE_ERANGE, -1, "");
  /* A key twice in one object is ambiguous: which one would we store? */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"cpid\":\"" B "\",\"sources\":[],\"time\":\"" T "\"}]",
          RIPPLE_EJSON, -1, "");
}

static void bad_encoding_and_nesting(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
  /* Not UTF-8 (a lone continuation byte, an overlong '/', a surrogate). */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"component\":\"\x80\"}]",
          RIPPLE_EJSON, -1, "");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"component\":\"\xc0\xaf\"}]",
          RIPPLE_EJSON, -1, "");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"x\":\"\\ud800\"}]",
          RIPPLE_EJSON, -1, "");
  /* NUL: jansson refuses \u0000 itself, and a raw NUL byte ends nothing. */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"component\":\"a\\u0000\"}]",
          RIPPLE_EJSON, -1, "");
  static const char raw_nul[] = "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\"}\0]";
  refused(__LINE__, M, raw_nul, sizeof raw_nul - 1, RIPPLE_EJSON, -1, "");
  /* Deep nesting is refused by the parser's depth limit, not the stack. */
  size_t depth = 100000;
  char *deep = malloc(2 * depth + 64);
  assert_non_null(deep);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  refused(__LINE__, M, deep, 2 * depth, RIPPLE_EJSON, -1, "");
  int n = snprintf(deep, 64, "[{\"cpid\":\"" A "\",\"x\":");
  memset(deep + n, '[', depth);
  refused(__LINE__, M, deep, (size_t)n + depth, RIPPLE_EJSON, -1, "");
  free(deep);
}

static void mergelog_fields(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
  /* cpid */
  REFUSED(M, "[" ML_OK(A) ",{\"sources\":[],\"time\":\"" T "\"}]", RIPPLE_EINVAL, 1, "cpid");
  REFUSED(M, "[" ML_OK("not-a-cpid") "]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[" ML_OK("00000000-0000-0000-0000-000000000000") "]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[" ML_OK("9c459e9c-463c-42d6-bf69-f6f89ba0d84g") "]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[" ML_OK("9c459e9c463c-42d6-bf69-f6f89ba0d84e0") "]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[" ML_OK(A "0") "]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[{\"cpid\":7,\"sources\":[],\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0, "cpid");
  REFUSED(M, "[{\"cpid\":null,\"sources\":[],\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0, "cpid");
  /* A repeated mergelog CPID is not a bad record: see test_repeated_cpid. */
  /* time: RFC 3339, a real date, within int64 nanoseconds */
  static const char *bad_times[] = {"2026-11-21",
                                    "yesterday",
                                    "2026-11-21T22:18:34",
                                    "2026-11-21T22:18:34.Z",
                                    "2026-13-01T00:00:00Z",
                                    "2026-02-29T00:00:00Z",
                                    "2026-11-21T24:00:00Z",
                                    "2026-11-21T22:18:34.5+0200",
                                    "9999-12-31T23:59:59Z",
                                    "1066-10-14T09:00:00Z",
                                    "2026-11-21T22:18:34Z ",
                                    " 2026-11-21T22:18:34Z"};
  for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++) {
    char json[256];
    snprintf(json, sizeof json,
             "[" ML_OK(B) ",{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"%s\"}]", bad_times[i]);
    REFUSED(M, json, RIPPLE_EINVAL, 1, "time");
  }
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":1700000000}]", RIPPLE_EINVAL, 0, "time");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[]}]", RIPPLE_EINVAL, 0, "time");
  /* sources */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0, "sources");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":null,\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0,
          "sources");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":\"" B "\",\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0,
          "sources");
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":{},\"time\":\"" T "\"}]", RIPPLE_EINVAL, 0,
          "sources");
  REFUSED(M, "[" ML_AT(A, "\"" B "\",\"" D "\",\"x\"", T) "]", RIPPLE_EINVAL, 0, "sources[2]");
  REFUSED(M, "[" ML_AT(A, "\"" B "\",7", T) "]", RIPPLE_EINVAL, 0, "sources[1]");
  REFUSED(M, "[" ML_AT(A, "\"" A "\"", T) "]", RIPPLE_EINVAL, 0, "sources[0]"); /* itself */
  REFUSED(M, "[" ML_AT(A, "\"" B "\",\"" B "\",\"" B "\",\"" D "\"", T) "]", RIPPLE_ERANGE, 0,
          "sources");
  /* The first bad record is named, though later ones are bad too. */
  REFUSED(M, "[" ML_OK(A) "," ML_OK("x") ",{}]", RIPPLE_EINVAL, 1, "cpid");
}

static void mergelog_optional_fields(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
#define WITH(extra) "[{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\"," extra "}]"
  dec_batch_t b;
  accept(M, WITH("\"component\":\"" S40 "\""), &tight, &b); /* 40 bytes: fits */
  dec_batch_free(&b);
  accept(M, WITH("\"component\":\"" E20 "\""), &tight, &b); /* 20 characters, 40 bytes */
  dec_batch_free(&b);
  REFUSED(M, WITH("\"component\":\"" E20 "!\""), RIPPLE_ERANGE, 0,
          "component"); /* bytes count, not characters */
  REFUSED(M, WITH("\"component\":\"" S41 "\""), RIPPLE_ERANGE, 0, "component");
  REFUSED(M, WITH("\"component\":5"), RIPPLE_EINVAL, 0, "component");
  REFUSED(M, WITH("\"component\":[]"), RIPPLE_EINVAL, 0, "component");
  REFUSED(M, WITH("\"object\":\"Pod\""), RIPPLE_EINVAL, 0, "object");
  REFUSED(M, WITH("\"object\":[]"), RIPPLE_EINVAL, 0, "object");
  REFUSED(M, WITH("\"object\":{\"kind\":5}"), RIPPLE_EINVAL, 0, "object.kind");
  REFUSED(M, WITH("\"object\":{\"uid\":true}"), RIPPLE_EINVAL, 0, "object.uid");
  REFUSED(M, WITH("\"object\":{\"name\":\"" S41 "\"}"), RIPPLE_ERANGE, 0, "object.name");
#undef WITH
}

static void span_fields(void **state) {
  (void)state;
  const dec_kind_t S = DEC_SPANS;
#define SP(fields) "[" SP_WITH("") ",{\"cpid\":\"" A "\"," fields "}]"
#define REST "\"service\":\"s\",\"name\":\"n\",\"start\":\"" T "\",\"end\":\"" T2 "\""
  REFUSED(S, SP(REST), RIPPLE_EINVAL, 1, "span_id");
  static const char *bad_ids[] = {"\"5C1D9E0A7B3F2E11\"",
                                  "\"5c1d9e0a7b3f2e1\"",
                                  "\"5c1d9e0a7b3f2e110\"",
                                  "\"0000000000000000\"",
                                  "\"5c1d9e0a7b3f2e1g\"",
                                  "12345",
                                  "\"\"",
                                  "null"};
  for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
    char json[512];
    snprintf(json, sizeof json, SP("\"span_id\":%s," REST), bad_ids[i]);
    REFUSED(S, json, RIPPLE_EINVAL, 1, "span_id");
    snprintf(json, sizeof json, SP("\"span_id\":\"0000000000000001\",\"parent_id\":%s," REST),
             bad_ids[i]);
    /* parent_id is optional: null is absent, anything else must be an id. */
    if (strcmp(bad_ids[i], "null") != 0) REFUSED(S, json, RIPPLE_EINVAL, 1, "parent_id");
  }
#define ID "\"span_id\":\"0000000000000001\","
  REFUSED(S, SP(ID "\"name\":\"n\",\"start\":\"" T "\",\"end\":\"" T2 "\""), RIPPLE_EINVAL, 1,
          "service");
  REFUSED(S, SP(ID "\"service\":\"s\",\"name\":1,\"start\":\"" T "\",\"end\":\"" T2 "\""),
          RIPPLE_EINVAL, 1, "name");
  REFUSED(S, SP(ID "\"service\":\"" S41 "\",\"name\":\"n\",\"start\":\"" T "\",\"end\":\"" T2 "\""),
          RIPPLE_ERANGE, 1, "service");
  REFUSED(S, SP(ID "\"service\":\"s\",\"name\":\"n\",\"start\":\"now\",\"end\":\"" T2 "\""),
          RIPPLE_EINVAL, 1, "start");
  REFUSED(S, SP(ID "\"service\":\"s\",\"name\":\"n\",\"start\":\"" T "\""), RIPPLE_EINVAL, 1,
          "end");
  REFUSED(S, SP(ID "\"service\":\"s\",\"name\":\"n\",\"start\":\"" T2 "\",\"end\":\"" T "\""),
          RIPPLE_EINVAL, 1, "end");                                    /* before its start */
  REFUSED(S, SP(ID "\"cpid\":\"" B "\"," REST), RIPPLE_EJSON, -1, ""); /* cpid twice */
  REFUSED(S, "[{\"span_id\":\"0000000000000001\"," REST "}]", RIPPLE_EINVAL, 0, "cpid");
  /* attributes: an object of at most 2 strings of at most 40 bytes */
  REFUSED(S, SP(ID REST ",\"attributes\":[]"), RIPPLE_EINVAL, 1, "attributes");
  REFUSED(S, SP(ID REST ",\"attributes\":\"a=b\""), RIPPLE_EINVAL, 1, "attributes");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"a\":\"1\",\"b\":2}"), RIPPLE_EINVAL, 1, "attributes.b");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"n\":null}"), RIPPLE_EINVAL, 1, "attributes.n");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"o\":{}}"), RIPPLE_EINVAL, 1, "attributes.o");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}"), RIPPLE_ERANGE, 1,
          "attributes");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"a\":\"" S41 "\"}"), RIPPLE_ERANGE, 1, "attributes.a");
  REFUSED(S, SP(ID REST ",\"attributes\":{\"" S41 "\":\"v\"}"), RIPPLE_ERANGE, 1,
          "attributes." S40); /* the key, cut */
  dec_batch_t b;
  accept(S, SP(ID REST ",\"attributes\":{\"" S40 "\":\"" S40 "\",\"b\":\"\"}"), &tight, &b);
  assert_int_equal(b.n, 2);
  char *got = body_of(&b, 1);
  assert_non_null(strstr(got, "\"attributes\":{\"" S40 "\":\"" S40 "\",\"b\":\"\"}"));
  free(got);
  assert_fixed_point(&b, &tight);
  dec_batch_free(&b);
#undef ID
#undef REST
#undef SP
}

/* The uid of a root's object is kept for the roots index, and only then: not
 * for a merge, a root without an object or a uid, or a uid the index does not
 * take (docs/api.md: 1 to 128 letters, digits or '-'). */
/* A CPID has one mergelog and the first wins: a repeat in the same request, even
 * far apart and even with other sources or its own object uid, is dropped from the
 * batch (counted in dups) and leaves nothing behind: not its body, sources, uid or
 * strings; the records after it are kept as they are. */
static void repeated_cpid(void **state) {
  (void)state;
  dec_batch_t b;
  accept(DEC_MERGELOGS,
         "[" ML_OK(A) "," ML_AT(B, "\"" A "\"", T) "," ML_AT(A, "\"" D "\"", T2) ","
         "{\"cpid\":\"" A "\",\"sources\":[],\"time\":\"" T "\",\"component\":\"again\","
         "\"object\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"dup-uid\"}}," ML_OK(D) "]",
         &roomy, &b);
  assert_int_equal(b.n, 3);
  assert_int_equal(b.dups, 2);
  assert_int_equal(b.nsrc, 1); /* B's source only */
  char *first = body_of(&b, 0), *third = body_of(&b, 2);
  assert_string_equal(first, ML_OK(A));
  assert_non_null(strstr(third, D));
  assert_int_equal(b.rec[2].nsrc, 0);
  assert_int_equal(b.uids.len, 0);
  assert_null(b.strs.len ? memmem(b.strs.p, b.strs.len, "again", 5) : NULL);
  free(first);
  free(third);
  assert_fixed_point(&b, &roomy);
  dec_batch_free(&b);
}

static void mergelog_root_uids(void **state) {
  (void)state;
#define OBJ(uid) ",\"object\":{\"kind\":\"Pod\",\"uid\":" uid "}"
#define U129 "\"" S40 S40 S40 "012345678\""
#define ROOT(id, extra) "{\"cpid\":\"" id "\",\"sources\":[],\"time\":\"" T "\"" extra "}"
  static const char *const body =
      "[" ROOT("00000000-0000-4000-8000-000000000001", OBJ("\"5b0c1f7e-2b7a-4c39\"")) ","
      "{\"cpid\":\"00000000-0000-4000-8000-000000000002\",\"sources\":[\"" A
      "\"],\"time\":\"" T "\"" OBJ("\"merge-uid\"") "},"
      ROOT("00000000-0000-4000-8000-000000000003", "") ","
      ROOT("00000000-0000-4000-8000-000000000004", OBJ("null")) ","
      ROOT("00000000-0000-4000-8000-000000000005", OBJ("\"\"")) ","
      ROOT("00000000-0000-4000-8000-000000000006", OBJ("\"a_b\"")) ","
      ROOT("00000000-0000-4000-8000-000000000007", OBJ(U129)) ","
      ROOT("00000000-0000-4000-8000-000000000008", OBJ("\"" S40 S40 S40 "01234567\"")) ","
      ROOT("00000000-0000-4000-8000-000000000009", OBJ("\"Ab-9\"")) "]";
  dec_batch_t b;
  accept(DEC_MERGELOGS, body, &roomy, &b);
  assert_int_equal(b.n, 9);
  static const char u128[] = S40 S40 S40 "01234567";
  static const char *const want[9] = {"5b0c1f7e-2b7a-4c39", "", "", "", "", "", "", u128, "Ab-9"};
  for (size_t i = 0; i < 9; i++) {
    assert_int_equal(b.rec[i].uid_len, strlen(want[i]));
    if (*want[i]) assert_memory_equal(b.uids.p + b.rec[i].uid_off, want[i], strlen(want[i]));
  }
  assert_fixed_point(&b, &roomy);
  dec_batch_free(&b);
  assert_true(dec_uid_ok("5b0c1f7e-2b7a-4c39-9b1e-0d8f1b5e7a11", 36));
  assert_false(dec_uid_ok("", 0));
  assert_false(dec_uid_ok("a/b", 3));
  assert_false(dec_uid_ok("a\0b", 3));
#undef OBJ
#undef U129
#undef ROOT
}

/* ---- trigger lists (docs/api.md "Sending records") ------------------------ */

/* The flags of record 0 of b as a string of '0' and '1', one per source. */
static void flags_of(const dec_batch_t *b, char *out) {
  const uint8_t *f = dec_trigger(b, &b->rec[0]);
  assert_non_null(f);
  for (uint32_t i = 0; i < b->rec[0].nsrc; i++) out[i] = f[i] ? '1' : '0';
  out[b->rec[0].nsrc] = '\0';
}

static void mergelog_trigger(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
  /* Kept in the canonical body just after sources, whatever order it came in. */
  canonical(M,
            "[{\"trigger\":[\"" D "\"],\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D
            "\"],\"time\":\"" T "\"}]",
            "{\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D "\"],\"trigger\":[\"" D
            "\"],\"time\":\"" T "\"}");
  canonical(M,
            "[{\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D "\"],\"trigger\":[\"" D "\",\"" B
            "\"],\"time\":\"" T "\",\"component\":\"c\"}]",
            "{\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D "\"],\"trigger\":[\"" D "\",\"" B
            "\"],\"time\":\"" T "\",\"component\":\"c\"}");
  dec_batch_t b;
  char f[64];
  accept(M, "[" ML_AT(A, "\"" B "\",\"" D "\"", T) "]", &tight, &b);
  assert_null(dec_trigger(&b, &b.rec[0])); /* none named: every source */
  dec_batch_free(&b);
  accept(M, "[{\"cpid\":\"" A "\",\"sources\":[\"" B "\"],\"trigger\":null,\"time\":\"" T "\"}]",
         &tight, &b);
  assert_null(dec_trigger(&b, &b.rec[0]));
  assert_null(strstr(b.body.p, "trigger"));
  dec_batch_free(&b);
  /* A repeated source: the flag is on its first place (the graph's edge). */
  accept(M,
         "[" ML_OK(B) ",{\"cpid\":\"" A "\",\"sources\":[\"" D "\",\"" B "\",\"" B
                      "\"],\"trigger\":[\"" B "\"],\"time\":\"" T "\"}]",
         &tight, &b);
  assert_null(dec_trigger(&b, &b.rec[0]));
  const uint8_t *fl = dec_trigger(&b, &b.rec[1]);
  assert_non_null(fl);
  assert_true(!fl[0] && fl[1] && !fl[2]);
  dec_batch_free(&b);
  /* A long list (sorted lookup): 40 sources, every third a trigger. */
  sbuf_t j;
  sbuf_init(&j);
  sbuf_puts(&j, "[{\"cpid\":\"" A "\",\"sources\":[");
  for (int i = 0; i < 40; i++)
    sbuf_printf(&j, "%s\"%08x-0000-4000-8000-000000000000\"", i ? "," : "", 40 - i);
  sbuf_puts(&j, "],\"trigger\":[");
  for (int i = 39; i >= 0; i -= 3)
    sbuf_printf(&j, "%s\"%08x-0000-4000-8000-000000000000\"", i == 39 ? "" : ",", 40 - i);
  sbuf_printf(&j, "],\"time\":\"" T "\"}]");
  accept(M, j.p, &roomy, &b);
  flags_of(&b, f);
  assert_string_equal(f, "1001001001001001001001001001001001001001");
  assert_fixed_point(&b, &roomy);
  dec_batch_free(&b);
  sbuf_free(&j);
}

static void mergelog_trigger_refused(void **state) {
  (void)state;
  const dec_kind_t M = DEC_MERGELOGS;
#define TRIG(trigger)                                                                              \
  "[{\"cpid\":\"" A "\",\"sources\":[\"" B "\",\"" D "\"],\"time\":\"" T "\",\"trigger\":" trigger \
  "}]"
  REFUSED(M, TRIG("\"" B "\""), RIPPLE_EINVAL, 0, "trigger");
  REFUSED(M, TRIG("{}"), RIPPLE_EINVAL, 0, "trigger");
  REFUSED(M, TRIG("true"), RIPPLE_EINVAL, 0, "trigger");
  REFUSED(M, TRIG("[]"), RIPPLE_EINVAL, 0, "trigger");
  REFUSED(M, TRIG("[7]"), RIPPLE_EINVAL, 0, "trigger[0]");
  REFUSED(M, TRIG("[\"" B "\",null]"), RIPPLE_EINVAL, 0, "trigger[1]");
  REFUSED(M, TRIG("[\"not-a-cpid\"]"), RIPPLE_EINVAL, 0, "trigger[0]");
  REFUSED(M, TRIG("[\"" A "\"]"), RIPPLE_EINVAL, 0, "trigger[0]"); /* not among sources */
  REFUSED(M, TRIG("[\"" D "\",\"" D "\"]"), RIPPLE_EINVAL, 0, "trigger[1]");
  REFUSED(M, TRIG("[\"" D "\",\"" B "\",\"" D "\"]"), RIPPLE_EINVAL, 0, "trigger");
  REFUSED(M, TRIG("[\"" B "\",\"" B "\",\"" B "\",\"" B "\",\"" B "\"]"), RIPPLE_EINVAL, 0,
          "trigger");
  /* A root has no sources, so no trigger either. */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[],\"trigger\":[\"" B "\"],\"time\":\"" T "\"}]",
          RIPPLE_EINVAL, 0, "trigger");
  /* Sources are checked first; a later bad record is named by its index. */
  REFUSED(M, "[{\"cpid\":\"" A "\",\"sources\":[7],\"trigger\":[],\"time\":\"" T "\"}]",
          RIPPLE_EINVAL, 0, "sources[0]");
  REFUSED(M,
          "[" ML_OK(B) ",{\"cpid\":\"" A "\",\"sources\":[\"" B "\"],\"trigger\":[],\"time\":\"" T
                       "\"}]",
          RIPPLE_EINVAL, 1, "trigger");
#undef TRIG
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mergelog_full),
      cmocka_unit_test(mergelog_variants),
      cmocka_unit_test(mergelog_batch),
      cmocka_unit_test(empty_array),
      cmocka_unit_test(time_not_a_string_limit),
      cmocka_unit_test(span_full_and_minimal),
      cmocka_unit_test(not_an_array),
      cmocka_unit_test(bad_encoding_and_nesting),
      cmocka_unit_test(mergelog_fields),
      cmocka_unit_test(mergelog_optional_fields),
      cmocka_unit_test(span_fields),
      cmocka_unit_test(mergelog_root_uids),
      cmocka_unit_test(repeated_cpid),
      cmocka_unit_test(mergelog_trigger),
      cmocka_unit_test(mergelog_trigger_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
