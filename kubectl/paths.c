/*
 * paths.c - `kubectl ripple trace CPID --critical-path` (and `last
 * --critical-path`): which hops decided how long a cascade took; and
 * `kubectl ripple diff CPID_A CPID_B`: two cascades of the same kind of
 * change compared. Both are computed here by ripplex (critpath.h,
 * compare.h) from the traces this plugin reads anyway, the same code the
 * trace server's /critical-path and /v1/compare answer with; the path's
 * hops split into their parts from the server's details of the cascade
 * (critpath_add_parts), as the server's /critical-path does. And
 * `kubectl ripple hops`: the server's GET /v1/hops (many cascades, which
 * only the server reads at once) as a table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr.h"
#include "ripplex/compare.h"
#include "ripplex/critpath.h"

/* cpid's trace, as critpath.h and compare.h read one (a new reference), or
 * NULL with err said. */
static json_t *trace_of(kr_ts_t *ts, const char *cpid, int reachable, char *err, size_t cap) {
  kr_answers_t ans;
  if (kr_tserver_fetch(ts, cpid, reachable, &ans, err, cap) != RIPPLE_OK) return NULL;
  json_t *t = json_pack("{s:O?, s:O?}", "spans", json_object_get(ans.spans, "spans"), "mergelogs",
                        json_object_get(ans.mergelogs, "mergelogs"));
  kr_answers_free(&ans);
  if (!t) snprintf(err, cap, "out of memory reading the trace of %s", cpid);
  return t;
}

/* in with control characters replaced (kr_put_clean), into out: a trace's
 * strings come from whoever could write an object. */
static void clean(const char *in, char *out, size_t cap) {
  FILE *m = fmemopen(out, cap, "w");
  if (!m) {
    snprintf(out, cap, "?");
    return;
  }
  kr_put_clean(m, in, cap > 8 ? cap - 8 : 0);
  fclose(m);
}

static const char *s(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}

static double num(const json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}

/* "Kind ns/name", or the kind alone for an object not named yet (a Pod's
 * create by generateName). Outside strings go through kr_clean. */
static void object_of(const json_t *h, char *out, size_t cap) {
  char kind[64], ns[128], name[256];
  clean(s(h, "kind"), kind, sizeof kind);
  clean(s(h, "namespace"), ns, sizeof ns);
  clean(s(h, "name"), name, sizeof name);
  if (*name)
    snprintf(out, cap, "%s %s%s%s", kind, ns, *ns ? "/" : "", name);
  else
    snprintf(out, cap, "%s", kind);
}

/* One part of a hop (critpath.h) as a column: "-" when it is not known. */
static void part_col(const json_t *h, const char *k, char *out, size_t cap) {
  const json_t *v = json_object_get(json_object_get(h, "parts"), k);
  if (json_is_number(v))
    snprintf(out, cap, "%.0f", json_number_value(v));
  else
    snprintf(out, cap, "-");
}

/* The parts' columns (seen, wrote, admission) of h, or "" without parts. */
static void parts_cols(const json_t *h, int any, char *out, size_t cap) {
  char a[32], b[32], c[32];
  if (!any) {
    *out = 0;
    return;
  }
  part_col(h, "seen_ms", a, sizeof a);
  part_col(h, "wrote_ms", b, sizeof b);
  part_col(h, "admission_ms", c, sizeof c);
  snprintf(out, cap, " %7s %7s %7s ", a, b, c);
}

static void print_path(FILE *f, const json_t *path, const char *cpid, int colour) {
  const char *bold = colour ? C_BOLD : "", *reset = colour ? C_RESET : "";
  const json_t *hops = json_object_get(path, "hops"), *h, *longest = NULL;
  size_t i;
  int any = 0; /* a hop has parts: their columns are shown */
  json_array_foreach(hops, i, h) {
    if (!longest || num(h, "ms") > num(longest, "ms")) longest = h;
    any |= json_object_get(h, "parts") != NULL;
  }
  fprintf(f, "critical path of %s: %zu hops, %.0f ms from the change to its last write\n", cpid,
          json_array_size(hops), num(path, "total_ms"));
  char head[64] = "";
  if (any) snprintf(head, sizeof head, " %7s %7s %7s ", "seen", "wrote", "adm");
  fprintf(f, "  %8s %s %-24s %-28s %s\n", "+ms", head, "component", "write", "object");
  json_array_foreach(hops, i, h) {
    char comp[64], write[64], obj[480], parts[100]; /* obj: kind, namespace, name, separators */
    clean(s(h, "component"), comp, sizeof comp);
    clean(s(h, "write"), write, sizeof write);
    object_of(h, obj, sizeof obj);
    parts_cols(h, any, parts, sizeof parts);
    int mark = h == longest && num(h, "ms") > 0;
    fprintf(f, "%s  %8.0f %s %-24s %-28s %s%s\n", mark ? bold : "", num(h, "ms"), parts, comp,
            write, obj, mark ? reset : "");
  }
  if (any)
    fprintf(f,
            "+ms split (ms): seen, until the watch agent saw the write before; wrote, until "
            "the API server received this one; adm, its admission (docs/api.md)\n");
}

/* Each hop's parts from the server's details of the trace's scope
 * (critpath_add_parts). A server older than details (404) gives none; a
 * failure is said on stderr and the path shown without them. */
static void add_parts(kr_ts_t *ts, const char *cpid, int reachable, json_t *path) {
  char err[1024];
  json_t *d = NULL;
  int rc = kr_tserver_cpid_get(
      ts, cpid, reachable ? "details?scope=reachable" : "details?scope=own", &d, err, sizeof err);
  if (rc == RIPPLE_OK && critpath_add_parts(path, d) != RIPPLE_OK)
    snprintf(err, sizeof err, "out of memory"), rc = RIPPLE_ENOMEM;
  if (rc != RIPPLE_OK && rc != RIPPLE_ENOENT)
    fprintf(stderr, "warning: the critical path without its hops' parts: %s\n", err);
  json_decref(d);
}

int kr_critical_path(const kr_args_t *a, kr_ts_t *ts, const char *cpid) {
  char err[1024];
  json_t *t = trace_of(ts, cpid, a->reachable, err, sizeof err), *path = NULL;
  if (t && critpath_compute(t, &path) != RIPPLE_OK) snprintf(err, sizeof err, "out of memory");
  json_decref(t);
  if (!path) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  add_parts(ts, cpid, a->reachable, path);
  int rc = 0;
  if (a->json) {
    json_object_set_new(path, "cpid", json_string(cpid));
    json_object_set_new(path, "scope", json_string(a->reachable ? "reachable" : "own"));
    rc = json_dumpf(path, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
  } else {
    print_path(stdout, path, cpid, kr_want_colour(STDOUT_FILENO));
  }
  json_decref(path);
  return fflush(stdout) == 0 && rc == 0 ? 0 : 1;
}

static void side_text(const json_t *side, char *out, size_t cap) {
  if (json_is_null(side) || !side)
    snprintf(out, cap, "-");
  else
    snprintf(out, cap, "%lldx %.0f", (long long)json_integer_value(json_object_get(side, "count")),
             num(side, "max_ms"));
}

static void print_diff(FILE *f, const json_t *cmp, const char *ca, const char *cb, int colour) {
  const char *bold = colour ? C_BOLD : "", *reset = colour ? C_RESET : "";
  fprintf(f, "a %s: %.0f ms, %lld writes\n", ca, num(json_object_get(cmp, "a"), "total_ms"),
          (long long)json_integer_value(json_object_get(json_object_get(cmp, "a"), "writes")));
  fprintf(f, "b %s: %.0f ms, %lld writes (%+.0f ms)\n", cb,
          num(json_object_get(cmp, "b"), "total_ms"),
          (long long)json_integer_value(json_object_get(json_object_get(cmp, "b"), "writes")),
          num(cmp, "delta_ms"));
  fprintf(f, "  %-12s %9s  %-24s %-28s %-14s %-14s\n", "change", "delta ms", "component", "write",
          "a: n x max ms", "b: n x max ms");
  const json_t *h, *w;
  size_t i;
  json_array_foreach(json_object_get(cmp, "hops"), i, h) {
    char comp[64], write[64], sa[40], sb[40];
    clean(s(h, "component"), comp, sizeof comp);
    clean(s(h, "write"), write, sizeof write);
    side_text(json_object_get(h, "a"), sa, sizeof sa);
    side_text(json_object_get(h, "b"), sb, sizeof sb);
    int same = !strcmp(s(h, "change"), "same");
    fprintf(f, "%s  %-12s %+9.0f  %-24s %-28s %-14s %-14s%s\n", same ? "" : bold, s(h, "change"),
            num(h, "delta_ms"), comp, write, sa, sb, same ? "" : reset);
  }
  json_array_foreach(json_object_get(cmp, "writers"), i, w) {
    char write[64], kind[64];
    clean(s(w, "write"), write, sizeof write);
    clean(s(w, "kind"), kind, sizeof kind);
    fprintf(f, "writer changed: %s of %s\n", write, kind);
  }
}

int kr_diff_cascades(const kr_args_t *a, kr_ts_t *ts) {
  char err[1024] = "out of memory";
  json_t *ta = trace_of(ts, a->cpid, a->reachable, err, sizeof err), *tb = NULL, *cmp = NULL;
  if (ta) tb = trace_of(ts, a->cpid2, a->reachable, err, sizeof err);
  if (ta && tb && compare_compute(ta, tb, &cmp) != RIPPLE_OK)
    snprintf(err, sizeof err, "out of memory");
  json_decref(ta);
  json_decref(tb);
  if (!cmp) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  int rc = 0;
  if (a->json) {
    json_object_set_new(json_object_get(cmp, "a"), "cpid", json_string(a->cpid));
    json_object_set_new(json_object_get(cmp, "b"), "cpid", json_string(a->cpid2));
    json_object_set_new(cmp, "scope", json_string(a->reachable ? "reachable" : "own"));
    rc = json_dumpf(cmp, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
  } else {
    print_diff(stdout, cmp, a->cpid, a->cpid2, kr_want_colour(STDOUT_FILENO));
  }
  json_decref(cmp);
  return fflush(stdout) == 0 && rc == 0 ? 0 : 1;
}

/* GET /v1/hops's path for a's filters, into path; RIPPLE_EINVAL when it
 * does not fit. */
static int hops_path(const kr_args_t *a, char *path, size_t cap) {
  snprintf(path, cap, "/v1/hops");
  int rc = RIPPLE_OK;
  if (a->since_ns) {
    char t[40];
    ripple_time_format(ripple_now_ns() - a->since_ns, t);
    rc = kr_relay_query_add(path, cap, "since", t);
  }
  if (rc == RIPPLE_OK && a->kind) rc = kr_relay_query_add(path, cap, "kind", a->kind);
  if (rc == RIPPLE_OK && a->write) rc = kr_relay_query_add(path, cap, "write", a->write);
  if (rc == RIPPLE_OK && a->reachable) rc = kr_relay_query_add(path, cap, "scope", "reachable");
  return rc;
}

static void print_hops(FILE *f, const json_t *ans, int colour) {
  const json_t *roots = json_object_get(ans, "roots"), *h;
  long long n = (long long)json_integer_value(json_object_get(roots, "count"));
  fprintf(f, "%s%lld change%s (%s cascades)%s\n",
          json_is_true(json_object_get(roots, "truncated")) ? "the newest " : "", n,
          n == 1 ? "" : "s", s(ans, "scope"),
          json_is_true(json_object_get(roots, "truncated")) ? "; more in the range left out" : "");
  fprintf(f, "  %-24s %-28s %-12s %8s %7s %9s %9s %9s %9s\n", "component", "write", "kind",
          "cascades", "writes", "p50 ms", "p90 ms", "p99 ms", "max ms");
  size_t i;
  json_array_foreach(json_object_get(ans, "hops"), i, h) {
    char comp[64], write[64], kind[64];
    clean(s(h, "component"), comp, sizeof comp);
    clean(s(h, "write"), write, sizeof write);
    clean(s(h, "kind"), kind, sizeof kind);
    int first = colour && i == 0;
    fprintf(f, "%s  %-24s %-28s %-12s %8lld %7lld %9.0f %9.0f %9.0f %9.0f%s\n", first ? C_BOLD : "",
            comp, write, kind, (long long)json_integer_value(json_object_get(h, "cascades")),
            (long long)json_integer_value(json_object_get(h, "writes")), num(h, "p50_ms"),
            num(h, "p90_ms"), num(h, "p99_ms"), num(h, "max_ms"), first ? C_RESET : "");
  }
}

int kr_hop_stats(const kr_args_t *a, kr_ts_t *ts) {
  char path[8192], err[1024];
  long status = 0;
  char *body = NULL;
  size_t len = 0;
  if (hops_path(a, path, sizeof path) != RIPPLE_OK) {
    fprintf(stderr, "error: --kind and --write are too long\n");
    return 1;
  }
  if (kr_ts_get_raw(ts, path, &status, &body, &len, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  json_t *ans = status == 200 ? json_loadb(body, len, 0, NULL) : NULL;
  if (!ans) {
    if (status == 404)
      fprintf(stderr, "error: the trace server has no GET /v1/hops (older than this plugin)\n");
    else
      fprintf(stderr, "error: GET /v1/hops answered %ld%s\n", status,
              status == 200 ? " with something not JSON" : "");
    free(body);
    return 1;
  }
  free(body);
  int rc = 0;
  if (a->json) {
    rc = json_dumpf(ans, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
  } else {
    print_hops(stdout, ans, kr_want_colour(STDOUT_FILENO));
  }
  json_decref(ans);
  return fflush(stdout) == 0 && rc == 0 ? 0 : 1;
}
