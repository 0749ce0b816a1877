/*
 * expect.c - a scenario's expected cascade (docs/run.md, "Expected
 * cascades"), read and compared with the hops of a replay:
 *
 *   expect:
 *     change: {scale: {resource: deployments, name: web, replicas: 4}}
 *     hops:
 *       - {writer: kube-scheduler, write: create pods/binding, kind: Pod,
 *          count: 2, budget_ms: 3000}
 *       - {writer: kwok, write: update pods/status, kind: Pod, min: 1, max: 6}
 *     extra: fail          # or ignore: hops not listed are not failures
 *     timeout: 30s         # default: the largest budget and --settle
 *
 * A hop differs when it is missing (expected, never seen), extra (seen,
 * not expected), seen a number of times outside its count, or its latest
 * write came later after the change than its budget. The scenario comes
 * from a file a person or export-test wrote, so every field is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"

static int bad(char *err, size_t cap, size_t i, const char *what) {
  if (i)
    snprintf(err, cap, "expect.hops[%zu]: %s", i - 1, what);
  else
    snprintf(err, cap, "expect: %s", what);
  return RIPPLE_EINVAL;
}

/* A whole number >= 0 (as a number, or text: "${N}" quoted). */
static int number(const json_t *v, long long max, long long *out) {
  const char *s = json_string_value(v);
  char *end;
  long long n;
  if (json_is_integer(v)) {
    n = json_integer_value(v);
  } else if (s && *s) {
    n = strtoll(s, &end, 10);
    if (*end) return -1;
  } else {
    return -1;
  }
  if (n < 0 || n > max) return -1;
  *out = n;
  return 0;
}

static int text(const json_t *o, const char *key, char *out, size_t cap) {
  const char *s = json_string_value(json_object_get(o, key));
  if (!s || !*s || strlen(s) >= cap) return -1;
  snprintf(out, cap, "%s", s);
  return 0;
}

static int parse_counts(const json_t *h, xp_hop_t *o) {
  const json_t *c = json_object_get(h, "count"), *mn = json_object_get(h, "min"),
               *mx = json_object_get(h, "max");
  long long v;
  if (c) {
    if (mn || mx || number(c, 1000000, &v) != 0) return -1;
    o->min = o->max = (long)v;
    return 0;
  }
  o->min = 1, o->max = XP_NO_MAX;
  if (mn) {
    if (number(mn, 1000000, &v) != 0) return -1;
    o->min = (long)v;
  }
  if (mx) {
    if (number(mx, 1000000, &v) != 0 || v < o->min) return -1;
    o->max = (long)v;
  }
  return 0;
}

static int parse_hop(const json_t *h, xp_hop_t *o, size_t i, char *err, size_t cap) {
  if (!json_is_object(h)) return bad(err, cap, i, "a hop is a mapping");
  if (text(h, "writer", o->writer, sizeof o->writer) || text(h, "write", o->write, sizeof o->write))
    return bad(err, cap, i, "needs 'writer' and 'write' (as spans name them: create pods)");
  const json_t *k = json_object_get(h, "kind");
  if (k && text(h, "kind", o->kind, sizeof o->kind))
    return bad(err, cap, i, "'kind' must be a kind's name");
  if (parse_counts(h, o) != 0)
    return bad(err, cap, i, "'count' (a whole number), or 'min' and/or 'max' (min <= max)");
  const json_t *b = json_object_get(h, "budget_ms");
  long long v;
  o->budget_ms = XP_NO_BUDGET;
  if (b) {
    if (number(b, 100000000000LL, &v) != 0)
      return bad(err, cap, i, "'budget_ms' must be a whole number of milliseconds");
    o->budget_ms = v;
  }
  return RIPPLE_OK;
}

static int parse_top(const json_t *e, xp_t *x, char *err, size_t cap) {
  const json_t *ch = json_object_get(e, "change");
  json_t *act = NULL;
  char why[256];
  if (!ch) return bad(err, cap, 0, "'change' is missing (the step that makes the change)");
  if (step_check(ch, why, sizeof why) != RIPPLE_OK) {
    snprintf(err, cap, "expect.change: %s", why);
    return RIPPLE_EINVAL;
  }
  static const char *const ok[] = {"scale", "patch", "apply", "delete", NULL};
  for (const char *const *a = ok; *a && !act; a++) act = json_object_get(ch, *a);
  if (!act) return bad(err, cap, 0, "'change' must be a scale, patch, apply or delete step");
  const char *extra = json_string_value(json_object_get(e, "extra"));
  if (json_object_get(e, "extra") &&
      (!extra || (strcmp(extra, "fail") != 0 && strcmp(extra, "ignore") != 0)))
    return bad(err, cap, 0, "'extra' is fail or ignore");
  x->extra_ok = extra && !strcmp(extra, "ignore");
  const json_t *to = json_object_get(e, "timeout");
  if (to && (!json_is_string(to) ||
             ripple_duration_parse(json_string_value(to), &x->timeout_ns) != RIPPLE_OK))
    return bad(err, cap, 0, "'timeout' is a duration (30s, 2m)");
  x->change = json_deep_copy(ch);
  return x->change ? RIPPLE_OK : RIPPLE_ENOMEM;
}

int xp_parse(const json_t *expect, xp_t *out, char *err, size_t cap) {
  xp_t x;
  memset(&x, 0, sizeof x);
  if (!json_is_object(expect)) return bad(err, cap, 0, "must be a mapping");
  int rc = parse_top(expect, &x, err, cap);
  const json_t *hops = json_object_get(expect, "hops");
  if (rc == RIPPLE_OK && (!json_is_array(hops) || json_array_size(hops) > XP_MAX_HOPS))
    rc = bad(err, cap, 0, "'hops' must be a list (at most 256)");
  if (rc == RIPPLE_OK && !(x.hops = calloc(json_array_size(hops) + 1, sizeof *x.hops)))
    rc = RIPPLE_ENOMEM;
  size_t i;
  const json_t *h;
  json_array_foreach(hops, i, h) {
    if (rc != RIPPLE_OK) break;
    rc = parse_hop(h, &x.hops[x.n], i + 1, err, cap);
    for (size_t k = 0; rc == RIPPLE_OK && k < x.n; k++)
      if (!strcmp(x.hops[k].writer, x.hops[x.n].writer) &&
          !strcmp(x.hops[k].write, x.hops[x.n].write) && !strcmp(x.hops[k].kind, x.hops[x.n].kind))
        rc = bad(err, cap, i + 1, "the same writer, write and kind as an earlier hop");
    if (rc == RIPPLE_OK) x.n++;
  }
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory");
  if (rc != RIPPLE_OK) {
    xp_free(&x);
    return rc;
  }
  *out = x;
  return RIPPLE_OK;
}

void xp_free(xp_t *x) {
  json_decref(x->change);
  free(x->hops);
  memset(x, 0, sizeof *x);
}

/* An expected hop without a kind matches a seen hop of any kind. */
static int matches(const xp_hop_t *h, const xp_seen_t *s) {
  return !strcmp(h->writer, s->writer) && !strcmp(h->write, s->write) &&
         (!*h->kind || !strcmp(h->kind, s->kind));
}

static void seen_of(const xp_hop_t *h, const xp_seen_t *seen, size_t nseen, char *used,
                    size_t *count, int64_t *last) {
  *count = 0;
  *last = INT64_MIN;
  for (size_t k = 0; k < nseen; k++) {
    if (!matches(h, &seen[k])) continue;
    if (used) used[k] = 1;
    *count += seen[k].count;
    if (seen[k].last_ns > *last) *last = seen[k].last_ns;
  }
}

size_t xp_compare(const xp_t *x, const xp_seen_t *seen, size_t nseen, xp_row_t **rows,
                  size_t *nrows) {
  xp_row_t *r = calloc(x->n + nseen + 1, sizeof *r);
  char *used = calloc(nseen + 1, 1);
  size_t n = 0, bad_rows = 0;
  if (!r || !used) {
    free(r);
    free(used);
    *rows = NULL, *nrows = 0;
    return 1; /* cannot compare: not a pass */
  }
  for (size_t i = 0; i < x->n; i++) {
    const xp_hop_t *h = &x->hops[i];
    xp_row_t *o = &r[n++];
    *o = (xp_row_t){h->writer, h->write, h->kind, h->min, h->max, h->budget_ms, 0, INT64_MIN, 0};
    seen_of(h, seen, nseen, used, &o->seen, &o->last_ns);
    if (o->seen == 0 && h->min > 0)
      o->verdict |= XP_MISSING;
    else if ((long)o->seen < h->min || (h->max != XP_NO_MAX && (long)o->seen > h->max))
      o->verdict |= XP_COUNT;
    if (o->seen && h->budget_ms != XP_NO_BUDGET && o->last_ns > h->budget_ms * 1000000LL)
      o->verdict |= XP_SLOW;
  }
  for (size_t k = 0; k < nseen && !x->extra_ok; k++) {
    if (used[k]) continue;
    r[n++] = (xp_row_t){seen[k].writer, seen[k].write, seen[k].kind,    -2,      -2,
                        XP_NO_BUDGET,   seen[k].count, seen[k].last_ns, XP_EXTRA};
  }
  for (size_t i = 0; i < n; i++) bad_rows += r[i].verdict != XP_OK;
  free(used);
  *rows = r;
  *nrows = n;
  return bad_rows;
}

int xp_complete(const xp_t *x, const xp_seen_t *seen, size_t nseen) {
  for (size_t i = 0; i < x->n; i++) {
    size_t c;
    int64_t last;
    seen_of(&x->hops[i], seen, nseen, NULL, &c, &last);
    if ((long)c < x->hops[i].min) return 0;
  }
  return 1;
}

int64_t xp_max_budget_ns(const xp_t *x) {
  int64_t m = 0;
  for (size_t i = 0; i < x->n; i++)
    if (x->hops[i].budget_ms != XP_NO_BUDGET && x->hops[i].budget_ms * 1000000LL > m)
      m = x->hops[i].budget_ms * 1000000LL;
  return m;
}

void xp_fmt_dur(int64_t ns, char *out, size_t cap) {
  const char *sign = ns < 0 ? "-" : "";
  uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (v < 1000000000ull)
    snprintf(out, cap, "%s%.1fms", sign, (double)v / 1e6);
  else
    snprintf(out, cap, "%s%.2fs", sign, (double)v / 1e9);
}

static void expected_text(const xp_row_t *r, char *out, size_t cap) {
  if (r->min == -2)
    snprintf(out, cap, "none");
  else if (r->min == r->max)
    snprintf(out, cap, "%ld", r->min);
  else if (r->max == XP_NO_MAX)
    snprintf(out, cap, ">= %ld", r->min);
  else
    snprintf(out, cap, "%ld..%ld", r->min, r->max);
}

static void verdict_text(const xp_row_t *r, char *out, size_t cap) {
  char exp[64], last[32];
  expected_text(r, exp, sizeof exp);
  xp_fmt_dur(r->last_ns, last, sizeof last);
  if (r->verdict == XP_OK) snprintf(out, cap, "ok");
  if (r->verdict & XP_MISSING) snprintf(out, cap, "missing (expected %s)", exp);
  if (r->verdict & XP_EXTRA) snprintf(out, cap, "extra (seen %zu, not expected)", r->seen);
  if (r->verdict & XP_COUNT) snprintf(out, cap, "count %zu, expected %s", r->seen, exp);
  if (r->verdict & XP_SLOW) {
    size_t n = r->verdict & XP_COUNT ? strlen(out) : 0;
    snprintf(out + n, cap - n, "%sover budget: the last at %s > %lld ms", n ? "; " : "", last,
             (long long)r->budget_ms);
  }
}

/* Text from the trace server may come from anyone who can write an object:
 * control characters are shown as '?'. */
static void clean(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

void xp_render(FILE *f, FILE *err_f, const xp_row_t *rows, size_t n) {
  int w = 26;
  for (size_t i = 0; i < n; i++) {
    int l = (int)(strlen(rows[i].writer) + strlen(rows[i].write) + strlen(rows[i].kind) + 4);
    if (l > w) w = l < 100 ? l : 100;
  }
  fprintf(f, "%-*s %5s %9s %10s %9s  %s\n", w, "HOP (writer: write, kind)", "SEEN", "EXPECTED",
          "LAST", "BUDGET", "VERDICT");
  for (size_t i = 0; i < n; i++) {
    const xp_row_t *r = &rows[i];
    char hop[3 * XP_NAME_MAX + 16], exp[64], last[32] = "-", budget[32] = "-";
    snprintf(hop, sizeof hop, "%s: %s, %s", r->writer, r->write, *r->kind ? r->kind : "any");
    clean(hop);
    expected_text(r, exp, sizeof exp);
    if (r->seen) xp_fmt_dur(r->last_ns, last, sizeof last);
    if (r->budget_ms != XP_NO_BUDGET)
      snprintf(budget, sizeof budget, "%lldms", (long long)r->budget_ms);
    fprintf(f, "%-*.100s %5zu %9s %10s %9s  %s\n", w, hop, r->seen, exp, last, budget,
            r->verdict == XP_OK ? "ok" : "DIFFERS");
  }
  fflush(f); /* the table first, then what differs */
  for (size_t i = 0; i < n; i++) {
    const xp_row_t *r = &rows[i];
    char hop[3 * XP_NAME_MAX + 16], v[200];
    if (r->verdict == XP_OK) continue;
    verdict_text(r, v, sizeof v);
    snprintf(hop, sizeof hop, "%s by %s (%s)", r->write, r->writer,
             *r->kind ? r->kind : "any kind");
    clean(hop);
    fprintf(err_f, "hop differs: %s: %s\n", hop, v);
  }
}
