/*
 * replay.c - the replay of an expected cascade (docs/run.md, "Expected
 * cascades"): the change is made as `kubectl ripple` makes it, with a fresh
 * root context in the same write (kubectl-ripple's own code, kr_scale,
 * kr_patch, kr_apply, kr_delete, whose "cpid: X" line names the root), so
 * the cascade that follows is exactly this change's. Then the trace server
 * is asked for its trace every half second until every expected hop has
 * come and --settle has passed (extras that come late are seen too), or the
 * timeout: the largest budget and --settle, since a hop that comes after its
 * budget fails either way. The last trace is compared and kept in the run
 * directory (trace-<rep>.json, the hops as kubectl ripple trace -o json
 * shows them, and expect-<rep>.json, the comparison).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* An inline or named manifest into a file kr_apply can read; *path freed by
 * the caller after unlink. */
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

/* The change step as kubectl-ripple's command line would give it. */
static int change_args(runner_t *r, const json_t *step, kr_args_t *a, char *file, size_t fcap,
                       char **patch, char *err, size_t cap) {
  memset(a, 0, sizeof *a);
  a->replicas = -1, a->port = -1;
  const char *act = json_object_iter_key(json_object_iter((json_t *)step));
  const json_t *s = json_object_get(step, act);
  if (!strcmp(act, "apply")) {
    a->cmd = KR_CMD_APPLY;
    a->force_conflicts = 1; /* as ripple run's apply steps */
    int rc = manifest_file(r, s, file, fcap, err, cap);
    a->file = file;
    return rc;
  }
  snprintf(a->resource, sizeof a->resource, "%s", str(s, "resource"));
  snprintf(a->name, sizeof a->name, "%s", str(s, "name"));
  a->namespace_ = str(s, "namespace");
  if (!strcmp(act, "scale")) {
    const json_t *n = json_object_get(s, "replicas");
    a->cmd = KR_CMD_SCALE;
    a->replicas = json_is_integer(n) ? (long)json_integer_value(n) : atol(json_string_value(n));
  } else if (!strcmp(act, "delete")) {
    a->cmd = KR_CMD_DELETE;
  } else {
    const char *type = str(s, "type");
    const json_t *p = json_object_get(s, "patch");
    a->cmd = KR_CMD_PATCH;
    a->patch_type = !type || !strcmp(type, "merge") ? RIPPLE_KUBE_PATCH_MERGE
                    : !strcmp(type, "strategic")    ? RIPPLE_KUBE_PATCH_STRATEGIC
                                                    : RIPPLE_KUBE_PATCH_JSON;
    *patch = json_is_string(p) ? strdup(json_string_value(p)) : json_dumps(p, JSON_COMPACT);
    if (!*patch) return RIPPLE_ENOMEM;
    a->patch = *patch;
  }
  return RIPPLE_OK;
}

/* Make the change; its root CPID into cpid. */
static int make_change(runner_t *r, const json_t *step, char *cpid, char *err, size_t cap) {
  kr_args_t a;
  char file[64] = "", *patch = NULL, *out = NULL;
  size_t olen = 0;
  int rc = change_args(r, step, &a, file, sizeof file, &patch, err, cap);
  FILE *f = rc == RIPPLE_OK ? open_memstream(&out, &olen) : NULL;
  if (rc == RIPPLE_OK && !f) rc = RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) {
    kr_kube_t k = {r->kc, a.namespace_ ? a.namespace_ : r->namespace_, NULL};
    rc = a.cmd == KR_CMD_APPLY   ? kr_apply(&k, &a, f, err, cap)
         : a.cmd == KR_CMD_SCALE ? kr_scale(&k, &a, f, err, cap)
         : a.cmd == KR_CMD_PATCH ? kr_patch(&k, &a, f, err, cap)
                                 : kr_delete(&k, &a, f, err, cap);
    fclose(f);
  }
  const char *c = out ? strstr(out, "cpid: ") : NULL;
  if (rc == RIPPLE_OK && (!c || strlen(c + 6) < RIPPLE_CPID_STRLEN)) {
    snprintf(err, cap, "the change printed no CPID");
    rc = RIPPLE_ESTATE;
  }
  if (rc == RIPPLE_OK) snprintf(cpid, RIPPLE_CPID_STRLEN + 1, "%.*s", RIPPLE_CPID_STRLEN, c + 6);
  if (*file) unlink(file);
  free(patch);
  free(out);
  return rc;
}

/* The trace of cpid and its hops; RIPPLE_ENOENT while the server does not
 * know the CPID yet. */
static int fetch_hops(kr_ts_t *ts, const char *cpid, kr_trace_t *t, kr_xhop_t **hops, size_t *n,
                      char *err, size_t cap) {
  kr_answers_t ans;
  int rc = kr_tserver_fetch(ts, cpid, &ans, err, cap);
  if (rc != RIPPLE_OK) return rc;
  rc = kr_trace_build(&ans, t, err, cap);
  kr_answers_free(&ans);
  if (rc != RIPPLE_OK) return rc;
  rc = kr_xhops(t, hops, n);
  if (rc != RIPPLE_OK) kr_trace_free(t);
  return rc;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Poll until complete + settle, or the deadline; the last trace in *t. */
static int wait_cascade(runner_t *r, kr_ts_t *ts, const xp_t *x, const xp_opts_t *o,
                        const char *cpid, kr_trace_t *t, kr_xhop_t **hops, size_t *n, char *err,
                        size_t cap) {
  int64_t start = ripple_now_ns(), done_at = 0;
  int64_t deadline = start + (x->timeout_ns ? x->timeout_ns : xp_max_budget_ns(x) + o->settle_ns);
  if (!x->timeout_ns && !xp_max_budget_ns(x)) deadline += 60 * 1000000000LL;
  int rc = RIPPLE_ENOENT, have = 0;
  for (;;) {
    kr_trace_t nt;
    kr_xhop_t *nh = NULL;
    size_t nn = 0;
    rc = fetch_hops(ts, cpid, &nt, &nh, &nn, err, cap);
    if (rc == RIPPLE_OK) {
      if (have) {
        kr_trace_free(t);
        free(*hops);
      }
      *t = nt, *hops = nh, *n = nn, have = 1;
      if (!done_at && xp_complete(x, nh, nn)) done_at = ripple_now_ns();
      char state[64];
      snprintf(state, sizeof state, "%zu writes", t->n);
      if (r->progress) r->progress(r->progress_ud, "the cascade", state);
    } else if (rc != RIPPLE_ENOENT) {
      break;
    }
    int64_t now = ripple_now_ns();
    if (*r->stop || now >= deadline || (done_at && now - done_at >= o->settle_ns)) break;
    sleep_ms(500);
  }
  if (have) return RIPPLE_OK;
  if (rc == RIPPLE_ENOENT)
    snprintf(err, cap, "the trace server never knew the change's CPID %s (is ripple-webhook "
             "registered for the namespace, and shipping to this trace server?)", cpid);
  return rc == RIPPLE_OK ? RIPPLE_ESTATE : rc;
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
        arr, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:b}", "writer", r->writer,
                       "write", r->write, "kind", r->kind, "min", (json_int_t)r->min, "max",
                       (json_int_t)r->max, "budget_ms", (json_int_t)r->budget_ms, "seen",
                       (json_int_t)r->seen, "last_ns",
                       (json_int_t)(r->seen ? r->last_ns : -1), "missing",
                       (r->verdict & XP_MISSING) != 0, "extra", (r->verdict & XP_EXTRA) != 0,
                       "count", (r->verdict & XP_COUNT) != 0, "over_budget",
                       (r->verdict & XP_SLOW) != 0));
  }
  return json_pack("{s:s,s:o}", "cpid", cpid, "hops", arr);
}

int xp_replay(runner_t *r, const xp_t *x, const xp_opts_t *o, int rep, size_t *differs, char *err,
              size_t cap) {
  kr_args_t wa;
  kr_where_t w;
  kr_ts_t *ts = NULL;
  memset(&wa, 0, sizeof wa);
  wa.server = o->server, wa.server_service = o->server_service;
  int rc = kr_where_pick(&wa, &w, err, cap);
  if (rc == RIPPLE_OK) rc = kr_ts_open(&w, r->kc, o->api, &ts, err, cap);
  char cpid[RIPPLE_CPID_STRLEN + 1] = "";
  if (rc == RIPPLE_OK) rc = make_change(r, x->change, cpid, err, cap);
  kr_trace_t t;
  kr_xhop_t *hops = NULL;
  size_t n = 0;
  if (rc == RIPPLE_OK) {
    printf("change made: cpid %s; waiting for its cascade (trace server %s)\n", cpid,
           kr_ts_where(ts));
    rc = wait_cascade(r, ts, x, o, cpid, &t, &hops, &n, err, cap);
  }
  if (rc == RIPPLE_OK) {
    xp_row_t *rows = NULL;
    size_t nrows = 0;
    *differs = xp_compare(x, hops, n, &rows, &nrows);
    printf("cascade of %s: %zu writes, %zu hops\n", cpid, t.n, n);
    xp_render(stdout, stderr, rows, nrows);
    fflush(stdout);
    keep(o, "trace", rep, kr_trace_json(&t));
    keep(o, "expect", rep, rows_json(rows, nrows, cpid));
    free(rows);
    free(hops);
    kr_trace_free(&t);
  }
  kr_ts_free(ts);
  return rc;
}
