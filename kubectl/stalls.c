/*
 * stalls.c - the writes of a cascade whose usual next hop has not come
 * (docs/api.md, "Stalled cascades"), shown after the trace's tree:
 *
 *   STALLED deployment-controller update replicasets ReplicaSet/web-7d9f for 41.20s,
 *   expected replicaset-controller create pods (usually within 350.0ms)
 *       FailedCreate: pods "web-7d9f-" is forbidden: exceeded quota
 *
 * (one line a stall, its object's Events indented under it). The answer is
 * the server's; a server older than the endpoint answers 404 and the trace
 * simply has no stalls section (main.c). Red on a terminal.
 */
#include <stdio.h>
#include <string.h>

#include "kr.h"

/* Events shown under one stall; the JSON output has them all. */
#define EVENTS_SHOWN 5

int kr_stalls_join(kr_trace_t *t, json_t *stalls, char *err, size_t cap) {
  json_t *arr = json_object_get(stalls, "stalls");
  json_t *empty = NULL;
  if (!arr && json_is_false(json_object_get(stalls, "enabled"))) arr = empty = json_array();
  if (!json_is_array(arr)) {
    json_decref(empty);
    snprintf(err, cap, "the trace server's answer is not the documented shape: %s",
             "stalls needs stalls[]");
    return RIPPLE_EJSON;
  }
  if (!t->keep) t->keep = json_array();
  if (!t->keep || json_array_append(t->keep, stalls) != 0 ||
      (empty && json_array_append(t->keep, empty) != 0)) {
    json_decref(empty);
    snprintf(err, cap, "out of memory keeping the stalls");
    return RIPPLE_ENOMEM;
  }
  json_decref(empty); /* t->keep holds it */
  t->stalls = arr;
  return RIPPLE_OK;
}

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s && *s ? s : "?";
}

/* Seconds from the answer as a duration; 0 when absent or out of range. */
static int seconds(const json_t *v, char *out, size_t cap) {
  double s = json_number_value(v);
  if (!json_is_number(v) || !(s >= 0) || s > 9.2e9) return 0;
  kr_fmt_dur((int64_t)(s * 1e9), out, cap);
  return 1;
}

static void stall_line(FILE *f, const json_t *st) {
  const json_t *obj = json_object_get(st, "object");
  const json_t *expect = json_object_get(st, "expect");
  char dur[32];
  fputs("STALLED ", f);
  kr_put_clean(f, str(st, "service"), 120);
  fputc(' ', f);
  kr_put_clean(f, str(st, "name"), 120);
  fputc(' ', f);
  kr_put_clean(f, str(obj, "kind"), 120);
  fputc('/', f);
  kr_put_clean(f, str(obj, "name"), 260);
  if (seconds(json_object_get(st, "waiting_seconds"), dur, sizeof dur)) fprintf(f, " for %s", dur);
  if (json_is_object(expect)) {
    fputs(", expected ", f);
    kr_put_clean(f, str(expect, "service"), 120);
    fputc(' ', f);
    kr_put_clean(f, str(expect, "name"), 120);
  } else {
    fputs(", expected any next hop", f);
  }
  if (seconds(json_object_get(st, "p99_seconds"), dur, sizeof dur))
    fprintf(f, " (usually within %s)", dur);
}

static void stall_events(FILE *f, const json_t *events) {
  size_t i, shown = 0;
  const json_t *e;
  json_array_foreach(events, i, e) {
    if (!json_is_object(e)) continue;
    if (shown++ == EVENTS_SHOWN) {
      fprintf(f, "    … %zu more Events (-o json has them all)\n", json_array_size(events) - i);
      break;
    }
    fputs("    ", f);
    kr_put_clean(f, str(e, "reason"), 120);
    fputs(": ", f);
    kr_put_clean(f, json_string_value(json_object_get(e, "message")), 300);
    fputc('\n', f);
  }
}

void kr_render_stalls(FILE *f, const kr_trace_t *t, int colour) {
  size_t i;
  const json_t *st;
  int first = 1;
  json_array_foreach(t->stalls, i, st) {
    if (!json_is_object(st)) continue;
    if (first) fputc('\n', f);
    first = 0;
    if (colour) fputs(C_RED, f);
    stall_line(f, st);
    if (colour) fputs(C_RESET, f);
    fputc('\n', f);
    stall_events(f, json_object_get(st, "events"));
  }
}
