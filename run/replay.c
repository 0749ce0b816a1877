/*
 * replay.c - the replay of an expected cascade (docs/run.md, "Expected
 * cascades"). The change is made by kubectl-ripple (`scale`, `patch`,
 * `apply`, `delete`), which writes a fresh root context in the same write
 * and prints "cpid: X", so the cascade that follows is exactly this
 * change's, made as a person makes it. Then `kubectl-ripple trace X -o json`
 * is asked every half second until every expected hop has come and --settle
 * has passed (extras that come late are seen too), or the timeout: the
 * largest budget and --settle, since a hop after its budget fails either
 * way. The last trace is compared and kept in the run directory
 * (trace-<rep>.json as kubectl-ripple wrote it, expect-<rep>.json the
 * comparison). The trace server is found by kubectl-ripple's own rules
 * (--server, --server-service, $RIPPLE_SERVER, ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"

#define XP_ARGV_MAX 24

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

typedef struct argv_b {
  char *v[XP_ARGV_MAX + 1];
  int n;
} argv_b;

static void push(argv_b *a, const char *s) {
  if (a->n < XP_ARGV_MAX) a->v[a->n++] = (char *)s;
  a->v[a->n] = NULL;
}

/* kubectl-ripple and the flags every call takes. */
static void base(argv_b *a, const xp_opts_t *o) {
  a->n = 0;
  push(a, o->kubectl_ripple);
  if (o->kubeconfig) push(a, "--kubeconfig"), push(a, o->kubeconfig);
  if (o->context) push(a, "--context"), push(a, o->context);
}

/* An inline or named manifest into a file kubectl-ripple apply -f reads. */
static int manifest_file(runner_t *r, const json_t *a, char *path, size_t pcap, char *err,
                         size_t cap) {
  const char *file = json_is_string(a) ? json_string_value(a) : str(a, "file");
  const json_t *m = json_object_get(a, "manifest");
  char *text = NULL;
  size_t len = 0;
  int rc = RIPPLE_OK;
  if (file)
    rc = scn_read_file(r->scn, r->run, file, &text, &len, err, cap);
  else
    text = json_is_string(m) ? strdup(json_string_value(m)) : json_dumps(m, JSON_COMPACT);
  if (rc != RIPPLE_OK) return rc;
  if (!text) return RIPPLE_ENOMEM;
  snprintf(path, pcap, "/tmp/ripple-run-change-XXXXXX");
  int fd = mkstemp(path);
  len = strlen(text);
  rc = fd >= 0 && write(fd, text, len) == (ssize_t)len ? RIPPLE_OK : RIPPLE_ESYS;
  if (fd >= 0) close(fd);
  if (rc != RIPPLE_OK) snprintf(err, cap, "cannot write the change's manifest to %s", path);
  free(text);
  return rc;
}

typedef struct change_buf {
  char file[64], obj[512], replicas[48], *patch;
  const char *verb;
} change_buf_t;

/* The change step as kubectl-ripple's command line. */
static int change_argv(runner_t *r, const json_t *step, const xp_opts_t *o, argv_b *a,
                       change_buf_t *b, char *err, size_t cap) {
  const char *act = json_object_iter_key(json_object_iter((json_t *)step));
  const json_t *s = json_object_get(step, act);
  b->verb = act;
  base(a, o);
  if (!strcmp(act, "apply")) {
    push(a, "apply"), push(a, "-f"), push(a, b->file), push(a, "--force-conflicts");
    push(a, "-n"), push(a, r->namespace_);
    return manifest_file(r, s, b->file, sizeof b->file, err, cap);
  }
  const char *ns = str(s, "namespace");
  snprintf(b->obj, sizeof b->obj, "%s/%s", str(s, "resource"), str(s, "name"));
  push(a, act), push(a, b->obj), push(a, "-n"), push(a, ns ? ns : r->namespace_);
  if (!strcmp(act, "scale")) {
    const json_t *n = json_object_get(s, "replicas");
    if (json_is_integer(n))
      snprintf(b->replicas, sizeof b->replicas, "--replicas=%lld",
               (long long)json_integer_value(n));
    else
      snprintf(b->replicas, sizeof b->replicas, "--replicas=%.32s", json_string_value(n));
    push(a, b->replicas);
  } else if (!strcmp(act, "patch")) {
    const char *type = str(s, "type");
    const json_t *p = json_object_get(s, "patch");
    b->patch = json_is_string(p) ? strdup(json_string_value(p)) : json_dumps(p, JSON_COMPACT);
    if (!b->patch) return RIPPLE_ENOMEM;
    push(a, "-p"), push(a, b->patch), push(a, "--type"), push(a, type ? type : "merge");
  }
  return RIPPLE_OK;
}

/* Make the change; its root CPID into cpid. */
static int make_change(runner_t *r, const json_t *step, const xp_opts_t *o, char *cpid, char *err,
                       size_t cap) {
  argv_b a;
  change_buf_t b;
  memset(&b, 0, sizeof b);
  char *out = NULL;
  int status = -1, rc = change_argv(r, step, o, &a, &b, err, cap);
  if (rc == RIPPLE_OK) rc = xp_exec(a.v, 0, &out, &status, err, cap);
  const char *c = out ? strstr(out, "cpid: ") : NULL;
  if (rc == RIPPLE_OK && (status != 0 || !c || strlen(c + 6) < RIPPLE_CPID_STRLEN)) {
    snprintf(err, cap, "%s %s failed (exit %d; its message is above)", o->kubectl_ripple, b.verb,
             status);
    rc = RIPPLE_ESTATE;
  }
  if (rc == RIPPLE_OK) snprintf(cpid, RIPPLE_CPID_STRLEN + 1, "%.*s", RIPPLE_CPID_STRLEN, c + 6);
  if (*b.file) unlink(b.file);
  free(b.patch);
  free(out);
  return rc;
}

/* One `kubectl-ripple trace CPID -o json`: the document, or NULL while the
 * trace server does not have the trace (yet). */
static json_t *read_trace(const xp_opts_t *o, const char *cpid, int quiet) {
  argv_b a;
  base(&a, o);
  if (o->server) push(&a, "--server"), push(&a, o->server);
  if (o->server_service) push(&a, "--server-service"), push(&a, o->server_service);
  push(&a, "trace"), push(&a, cpid), push(&a, "-o"), push(&a, "json");
  char *out = NULL, err[512];
  int status = -1;
  json_t *j = NULL;
  if (xp_exec(a.v, quiet, &out, &status, err, sizeof err) != RIPPLE_OK) {
    if (!quiet) fprintf(stderr, "ripple run: %s\n", err);
  } else if (status == 0) {
    j = json_loads(out, 0, NULL);
  }
  free(out);
  return j;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Poll until complete + settle, or the deadline; the last trace in *trace. */
static int wait_cascade(runner_t *r, const xp_t *x, const xp_opts_t *o, const char *cpid,
                        json_t **trace, char *err, size_t cap) {
  int64_t start = ripple_now_ns(), done_at = 0;
  int64_t deadline = start + (x->timeout_ns ? x->timeout_ns : xp_max_budget_ns(x) + o->settle_ns);
  if (!x->timeout_ns && !xp_max_budget_ns(x)) deadline += 60 * 1000000000LL;
  *trace = NULL;
  for (;;) {
    json_t *t = read_trace(o, cpid, 1);
    xp_seen_t *seen = NULL;
    size_t n = 0;
    char why[256];
    if (t && xp_seen_from_trace(t, &seen, &n, why, sizeof why) == RIPPLE_OK) {
      json_decref(*trace);
      *trace = t;
      if (!done_at && xp_complete(x, seen, n)) done_at = ripple_now_ns();
      char state[64];
      snprintf(state, sizeof state, "%lld writes",
               (long long)json_integer_value(json_object_get(t, "writes")));
      if (r->progress) r->progress(r->progress_ud, "the cascade", state);
      free(seen);
    } else {
      json_decref(t);
    }
    int64_t now = ripple_now_ns();
    if (*r->stop || now >= deadline || (done_at && now - done_at >= o->settle_ns)) break;
    sleep_ms(500);
  }
  if (*trace) return RIPPLE_OK;
  json_decref(read_trace(o, cpid, 0)); /* once more, its error shown */
  snprintf(err, cap,
           "no trace of the change's CPID %s could be read (is ripple-webhook "
           "registered for the namespace, and shipping to this trace server?)",
           cpid);
  return RIPPLE_ESTATE;
}

static void keep(const xp_opts_t *o, const char *file, int rep, json_t *j) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s-%d.json", o->rundir, file, rep);
  if (j && o->rundir) json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS);
  json_decref(j);
}

static json_t *rows_json(const xp_row_t *rows, size_t n, const char *cpid) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    const xp_row_t *r = &rows[i];
    json_array_append_new(
        arr,
        json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:b}", "writer", r->writer, "write",
                  r->write, "kind", r->kind, "min", (json_int_t)r->min, "max", (json_int_t)r->max,
                  "budget_ms", (json_int_t)r->budget_ms, "seen", (json_int_t)r->seen, "last_ns",
                  (json_int_t)(r->seen ? r->last_ns : -1), "missing",
                  (r->verdict & XP_MISSING) != 0, "extra", (r->verdict & XP_EXTRA) != 0, "count",
                  (r->verdict & XP_COUNT) != 0, "over_budget", (r->verdict & XP_SLOW) != 0));
  }
  return json_pack("{s:s,s:o}", "cpid", cpid, "hops", arr);
}

int xp_replay(runner_t *r, const xp_t *x, const xp_opts_t *o, int rep, size_t *differs, char *err,
              size_t cap) {
  char cpid[RIPPLE_CPID_STRLEN + 1] = "";
  json_t *trace = NULL;
  int rc = make_change(r, x->change, o, cpid, err, cap);
  if (rc == RIPPLE_OK) {
    printf("change made: cpid %s; waiting for its cascade\n", cpid);
    rc = wait_cascade(r, x, o, cpid, &trace, err, cap);
  }
  xp_seen_t *seen = NULL;
  size_t n = 0;
  if (rc == RIPPLE_OK) rc = xp_seen_from_trace(trace, &seen, &n, err, cap);
  if (rc == RIPPLE_OK) {
    xp_row_t *rows = NULL;
    size_t nrows = 0;
    *differs = xp_compare(x, seen, n, &rows, &nrows);
    printf("cascade of %s: %lld writes, %zu hops\n", cpid,
           (long long)json_integer_value(json_object_get(trace, "writes")), n);
    xp_render(stdout, stderr, rows, nrows);
    keep(o, "expect", rep, rows_json(rows, nrows, cpid));
    free(rows);
  }
  keep(o, "trace", rep, json_incref(trace));
  json_decref(trace);
  free(seen);
  return rc;
}
