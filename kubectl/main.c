/*
 * main.c - kubectl-ripple, a kubectl plugin (docs/kubectl-ripple.md): changes
 * that carry a fresh root CPID (apply, scale, patch, delete), the cascades
 * they cause, from the trace server (trace, last), and the chain of writes
 * behind an object (why).
 *
 * kubectl runs it as `kubectl ripple ...` when it is on PATH. Exit status: 0
 * done, 1 the cluster or the trace server said no (the message says why), 2
 * a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr.h"
#include "xtest.h"

/* An answer that only adds to the trace (details, stalls): a server older
 * than it (404) gives none; a failure is said on stderr and the trace shown
 * without it. */
static json_t *optional(kr_ts_t *ts, const char *cpid, const char *what, int reachable) {
  char err[1024], q[64];
  json_t *j = NULL;
  /* Details and stalls of the trace's scope. */
  snprintf(q, sizeof q, "%s?scope=%s", what, reachable ? "reachable" : "own");
  int rc = kr_tserver_cpid_get(ts, cpid, q, &j, err, sizeof err);
  if (rc != RIPPLE_OK && rc != RIPPLE_ENOENT)
    fprintf(stderr, "warning: the trace without %s: %s\n", what, err);
  return rc == RIPPLE_OK ? j : NULL;
}

static int print_trace(const kr_args_t *a, kr_ts_t *ts, const char *cpid) {
  char err[1024];
  kr_answers_t ans;
  kr_trace_t t;
  int rc = kr_tserver_fetch(ts, cpid, a->reachable, &ans, err, sizeof err);
  if (rc == RIPPLE_OK) {
    ans.stalls = optional(ts, cpid, "stalls", a->reachable);
    /* Only the text shows them (changed fields, refusals, in the tree). */
    if (!a->json) ans.details = optional(ts, cpid, "details", a->reachable);
    rc = kr_trace_build(&ans, &t, err, sizeof err);
    if (rc == RIPPLE_EJSON && (ans.details || ans.stalls)) {
      fprintf(stderr, "warning: the trace without details and stalls: %s\n", err);
      json_decref(ans.details);
      json_decref(ans.stalls);
      ans.details = ans.stalls = NULL;
      rc = kr_trace_build(&ans, &t, err, sizeof err);
    }
    kr_answers_free(&ans);
  }
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  /* The CPID asked for (kr_tserver_fetch parsed it), not the answer's. */
  ripple_cpid_t id;
  char canon[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_parse(cpid, strlen(cpid), &id);
  ripple_cpid_format(&id, canon);
  char *url = kr_ts_dashboard_url(ts, canon);
  if (!url) {
    rc = -1;
  } else if (a->json) {
    json_t *j = kr_trace_json(&t);
    rc = j && !json_object_set_new(j, "dashboard", json_string(url)) &&
                 !json_object_set_new(j, "scope", json_string(a->reachable ? "reachable" : "own"))
             ? json_dumpf(j, stdout, JSON_INDENT(2))
             : -1;
    json_decref(j);
    fputc('\n', stdout);
  } else {
    int colour = kr_want_colour(STDOUT_FILENO);
    kr_render_tree(stdout, &t, colour);
    kr_render_stalls(stdout, &t, colour);
    kr_render_hops(stdout, &t, colour);
    /* After the tree: scripts read its first line (cpid ...). */
    printf("\nscope: %s\n", a->reachable
                                ? "everything reachable from the change (the CPID paper's set)"
                                : "the change's own cascade (--reachable: everything reachable)");
    kr_ts_put_dashboard(stdout, ts, url, canon, a->reachable);
  }
  free(url);
  kr_trace_free(&t);
  if (rc != 0) fprintf(stderr, "error: out of memory writing the trace\n");
  return fflush(stdout) == 0 && rc == 0 ? 0 : 1;
}

/* The command, once the trace server (for trace, last and why) is open. */
static int run(kr_kube_t *k, const kr_args_t *a) {
  char err[1024], cpid[RIPPLE_CPID_STRLEN + 1];
  int rc;
  switch (a->cmd) {
    case KR_CMD_TRACE:
      return a->critical_path ? kr_critical_path(a, k->ts, a->cpid)
                              : print_trace(a, k->ts, a->cpid);
    case KR_CMD_DIFF: return kr_diff_cascades(a, k->ts);
    case KR_CMD_HOPS: return kr_hop_stats(a, k->ts);
    case KR_CMD_DASHBOARD: return kr_dashboard(a, k->ts);
    case KR_CMD_EXPORT_TEST: rc = kr_export_test(a, k->ts, err, sizeof err); break;
    case KR_CMD_APPLY: rc = kr_apply(k, a, stdout, err, sizeof err); break;
    case KR_CMD_SCALE: rc = kr_scale(k, a, stdout, err, sizeof err); break;
    case KR_CMD_PATCH: rc = kr_patch(k, a, stdout, err, sizeof err); break;
    case KR_CMD_DELETE: rc = kr_delete(k, a, stdout, err, sizeof err); break;
    case KR_CMD_WHY: rc = kr_why(k, a, stdout, err, sizeof err); break;
    default: rc = kr_last_cpid(k, a, cpid, err, sizeof err); break;
  }
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  if (a->cmd != KR_CMD_LAST) return 0;
  return a->critical_path ? kr_critical_path(a, k->ts, cpid) : print_trace(a, k->ts, cpid);
}

/* With a client as kubectl would make it (none for a trace from a URL), and
 * the trace server where the flags say (docs/kubectl-ripple.md). */
static int with_cluster(const kr_args_t *a, const kr_where_t *w) {
  char err[1024];
  int reads = a->cmd == KR_CMD_TRACE || a->cmd == KR_CMD_LAST || a->cmd == KR_CMD_WHY ||
              a->cmd == KR_CMD_DASHBOARD || a->cmd == KR_CMD_EXPORT_TEST || a->cmd == KR_CMD_DIFF ||
              a->cmd == KR_CMD_HOPS;
  int url_only = a->cmd == KR_CMD_TRACE || a->cmd == KR_CMD_DASHBOARD ||
                 a->cmd == KR_CMD_EXPORT_TEST || a->cmd == KR_CMD_DIFF || a->cmd == KR_CMD_HOPS;
  ripple_kube_config_t *cfg = NULL;
  kr_kube_t k = {NULL, NULL, NULL};
  int rc = RIPPLE_OK;
  if (!url_only || !w->url) {
    ripple_kube_config_opts_t co = {a->kubeconfig, a->context, a->namespace_, 0};
    if (ripple_kube_config_load(&co, &cfg, err, sizeof err) != RIPPLE_OK) {
      fprintf(stderr, "error: %s%s\n", err,
              url_only ? " (the trace server is reached through the API server "
                         "unless --server URL names it)"
                       : "");
      return 1;
    }
    ripple_kube_client_opts_t clo = {.timeout_ms = 60000,
                                     .user_agent = "kubectl-ripple/" RIPPLE_VERSION_STRING};
    k.namespace_ = ripple_kube_config_namespace(cfg);
    rc = ripple_kube_client_new(cfg, &clo, &k.kc);
    if (rc != RIPPLE_OK)
      snprintf(err, sizeof err, "cannot make a Kubernetes client: %s", ripple_kube_strerror(rc));
  }
  if (rc == RIPPLE_OK && reads)
    rc = kr_ts_open(w, k.kc, cfg ? ripple_kube_config_server(cfg) : NULL, &k.ts, err, sizeof err);
  int status = 1;
  if (rc == RIPPLE_OK)
    status = run(&k, a);
  else
    fprintf(stderr, "error: %s\n", err);
  kr_ts_free(k.ts);
  ripple_kube_client_free(k.kc);
  ripple_kube_config_free(cfg);
  return status;
}

/* Standard descriptors that were closed are /dev/null: otherwise the next
 * file or socket opened would be, say, descriptor 1, and what is printed
 * (dashboard's URL with its secret) would go into it. */
static void std_fds_open(void) {
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      /* the lowest free descriptor, fd itself: those below are open */
      int n = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
      if (n >= 0 && n != fd) close(n);
    }
}

int main(int argc, char **argv) {
  std_fds_open();
  ripple_log_setup("kubectl-ripple", RIPPLE_LOG_WARN, NULL, NULL);
  kr_args_t a;
  kr_where_t w;
  char err[512];
  if (kr_args_parse(argc, argv, &a, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 2;
  }
  if (a.cmd == KR_CMD_HELP) {
    kr_usage(stdout);
    return 0;
  }
  if (a.cmd == KR_CMD_VERSION) {
    printf("kubectl-ripple %s\n", RIPPLE_VERSION_STRING);
    return 0;
  }
  if (kr_where_pick(&a, &w, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "error: %s\n", err);
    return 2;
  }
  return with_cluster(&a, &w);
}
