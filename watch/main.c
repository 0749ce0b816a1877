/*
 * main.c - ripple-watch: records every change of chosen Kubernetes resources
 * as JSON lines (docs/watch.md), for ripple's analyzer.
 *
 *   ripple-watch --resources pods,deployments.apps --out changes.jsonl \
 *                --state-dir /var/lib/ripple-watch --rotate-size 100M
 *
 * Stops cleanly on SIGINT/SIGTERM: the output is flushed and every resource
 * checkpointed, so a restart resumes where it stopped.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "ripple/ripple.h"
#include "ripplex/opt.h"
#include "wconfig.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { stop_flag = sig; }

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-watch --resources LIST [options]\n"
          "  --resources LIST       comma-separated, as kubectl names them:\n"
          "                         pods,replicasets.apps,deployments.apps,widgets.example.com\n"
          "  --config FILE.yaml     resources with their own namespace and labelSelector\n"
          "                         (docs/watch.md)\n"
          "  --namespace NS         watch one namespace (default: all)\n"
          "  --selector SEL         label selector for every resource\n"
          "  --out FILE             where records go (default: stdout)\n"
          "  --rotate-size SIZE     rotate FILE at this size (e.g. 100M, 1G)\n"
          "  --rotate-every DUR     rotate FILE at this age (e.g. 1h, 30m)\n"
          "                         rotated files become FILE.<time>.zst\n"
          "  --state-dir DIR        checkpoints: a restart resumes, losing and repeating nothing\n"
          "  --checkpoint-every DUR how often moved resources are checkpointed (default 1s)\n"
          "  --report-every DUR     log CPU, memory and records (default 30s, 0: never)\n"
          "  --trace-server URL     send changes of objects with a ripple context as spans,\n"
          "                         and what every change changed (diffs, snapshots) and\n"
          "                         watched Events as details (docs/watch.md)\n"
          "  --redact POINTER       never send values at this JSON Pointer ('*' for any\n"
          "                         one key), e.g. /spec/template/spec/containers/*/env;\n"
          "                         repeatable (Secrets' data is never sent)\n"
          "  --no-details           with --trace-server, spans only\n"
          "  --no-records           with --trace-server, write no records: only send (in a\n"
          "                         cluster; not with --out, --state-dir, --rotate-*)\n"
          "  --trace-server-token-file F  the trace server's writer token: F's first line\n"
          "                         (a server started with --writer-token-file needs it)\n"
          "  --trace-server-ca F    CA (PEM) to trust for an https:// trace server\n"
          "  --keep-managed-fields  record metadata.managedFields too (left out by default:\n"
          "                         a third to a half of each object, and analysis needs none)\n"
          "  --kubeconfig FILES     as kubectl's (default: $KUBECONFIG, ~/.kube/config)\n"
          "  --context NAME         kubeconfig context\n"
          "  --log-level LEVEL      debug, info, warn, error (default info)\n");
}

/* "100M", "1G", "4096": bytes. */
static int parse_size(const char *s, uint64_t *out) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return RIPPLE_EINVAL;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k')
    mul = 1ULL << 10, end++;
  else if (*end == 'M' || *end == 'm')
    mul = 1ULL << 20, end++;
  else if (*end == 'G' || *end == 'g')
    mul = 1ULL << 30, end++;
  if (*end == 'B' || *end == 'i') end++;
  if (*end) return RIPPLE_EINVAL;
  *out = v * mul;
  return RIPPLE_OK;
}

static int add_resources(agent_opts_t *o, char *list) {
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (o->nres == AGENT_MAX_RES) return RIPPLE_ERANGE;
    o->res[o->nres++].name = t;
  }
  return RIPPLE_OK;
}

/* In the order of `longs` in main(), which the error message indexes. */
enum {
  O_RES = 256,
  O_NS,
  O_SEL,
  O_OUT,
  O_RSIZE,
  O_REVERY,
  O_STATE,
  O_CKPT,
  O_REPORT,
  O_KCFG,
  O_CTX,
  O_LOG,
  O_WTIMEOUT,
  O_CONFIG,
  O_TRACE,
  O_KEEPMF,
  O_REDACT,
  O_NODETAILS,
  O_TOKEN,
  O_TRACE_CA,
  O_NORECORDS
};

static char *trace_token; /* --trace-server-token-file's token, never logged */

static int parse_opt(agent_opts_t *o, int c, char *arg) {
  ripple_log_level_t lvl;
  switch (c) {
    case O_RES: return add_resources(o, arg);
    case O_CONFIG: {
      char err[512];
      int rc = wconfig_load(arg, o, err, sizeof err);
      if (rc != RIPPLE_OK) fprintf(stderr, "ripple-watch: --config %s\n", err);
      return rc;
    }
    case O_TRACE: o->trace_server = arg; return RIPPLE_OK;
    case O_KEEPMF: o->keep_managed_fields = 1; return RIPPLE_OK;
    case O_NODETAILS: o->no_details = 1; return RIPPLE_OK;
    case O_NORECORDS: o->no_records = 1; return RIPPLE_OK;
    case O_TOKEN:
      free(trace_token);
      trace_token = NULL;
      if (opt_token_file("ripple-watch", "--trace-server-token-file", arg, &trace_token))
        return RIPPLE_EINVAL;
      o->trace_token = trace_token;
      return RIPPLE_OK;
    case O_TRACE_CA:
      if (opt_ca_file("ripple-watch", "--trace-server-ca", arg)) return RIPPLE_EINVAL;
      o->trace_ca = arg;
      return RIPPLE_OK;
    case O_REDACT: {
      char err[200];
      if (o->redact.n == WDIFF_REDACT_MAX) return RIPPLE_ERANGE;
      if (wdiff_pattern_check(arg, err, sizeof err) != RIPPLE_OK) {
        fprintf(stderr, "ripple-watch: --redact %s: %s\n", arg, err);
        return RIPPLE_EINVAL;
      }
      o->redact.pattern[o->redact.n++] = arg;
      return RIPPLE_OK;
    }
    case O_NS: o->namespace_ = arg; return RIPPLE_OK;
    case O_SEL: o->selector = arg; return RIPPLE_OK;
    case O_OUT: o->out = arg; return RIPPLE_OK;
    case O_RSIZE: return parse_size(arg, &o->rotate_size);
    case O_REVERY: return ripple_duration_parse(arg, &o->rotate_ns);
    case O_STATE: o->state_dir = arg; return RIPPLE_OK;
    case O_CKPT: return ripple_duration_parse(arg, &o->checkpoint_ns);
    case O_REPORT: return ripple_duration_parse(arg, &o->report_ns);
    case O_KCFG: o->kubeconfig = arg; return RIPPLE_OK;
    case O_CTX: o->context = arg; return RIPPLE_OK;
    case O_WTIMEOUT: {
      char *end;
      unsigned long v = strtoul(arg, &end, 10);
      if (end == arg || *end || v > 86400) return RIPPLE_EINVAL;
      o->watch_timeout_s = (uint32_t)v;
      return RIPPLE_OK;
    }
    case O_LOG:
      if (ripple_log_level_parse(arg, &lvl) != RIPPLE_OK) return RIPPLE_EINVAL;
      ripple_log_setup("ripple-watch", lvl, NULL, NULL);
      return RIPPLE_OK;
    default: return RIPPLE_EINVAL;
  }
}

int main(int argc, char **argv) {
  static const struct option longs[] = {{"resources", 1, 0, O_RES},
                                        {"namespace", 1, 0, O_NS},
                                        {"selector", 1, 0, O_SEL},
                                        {"out", 1, 0, O_OUT},
                                        {"rotate-size", 1, 0, O_RSIZE},
                                        {"rotate-every", 1, 0, O_REVERY},
                                        {"state-dir", 1, 0, O_STATE},
                                        {"checkpoint-every", 1, 0, O_CKPT},
                                        {"report-every", 1, 0, O_REPORT},
                                        {"kubeconfig", 1, 0, O_KCFG},
                                        {"context", 1, 0, O_CTX},
                                        {"log-level", 1, 0, O_LOG},
                                        {"watch-timeout", 1, 0, O_WTIMEOUT},
                                        {"config", 1, 0, O_CONFIG},
                                        {"trace-server", 1, 0, O_TRACE},
                                        {"keep-managed-fields", 0, 0, O_KEEPMF},
                                        {"redact", 1, 0, O_REDACT},
                                        {"no-details", 0, 0, O_NODETAILS},
                                        {"trace-server-token-file", 1, 0, O_TOKEN},
                                        {"trace-server-ca", 1, 0, O_TRACE_CA},
                                        {"no-records", 0, 0, O_NORECORDS},
                                        {"help", 0, 0, 'h'},
                                        {0, 0, 0, 0}};
  static agent_opts_t o;
  o.report_ns = 30000000000LL;
  o.checkpoint_ns = 1000000000LL;
  ripple_log_setup("ripple-watch", RIPPLE_LOG_INFO, NULL, NULL);
  int c;
  while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
    if (c == 'h') {
      usage(stdout);
      return 0;
    }
    if (c == '?' || parse_opt(&o, c, optarg) != RIPPLE_OK) {
      if (c != '?')
        fprintf(stderr, "ripple-watch: bad value for --%s: %s\n", longs[c - O_RES].name, optarg);
      usage(stderr);
      return 2;
    }
  }
  if (o.nres == 0 || optind != argc) {
    usage(stderr);
    return 2;
  }
  if ((o.trace_token || o.trace_ca) && !o.trace_server) {
    fprintf(stderr,
            "ripple-watch: --trace-server-token-file and --trace-server-ca go with "
            "--trace-server\n");
    return 2;
  }
  if (o.no_records && (!o.trace_server || o.out || o.state_dir || o.rotate_size || o.rotate_ns)) {
    fprintf(stderr,
            "ripple-watch: --no-records only sends to --trace-server: it goes without --out, "
            "--state-dir and --rotate-*\n");
    return 2;
  }
  if (o.checkpoint_ns <= 0) o.checkpoint_ns = 1000000000LL;
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  int rc = agent_run(&o, &stop_flag);
  if (trace_token) memset(trace_token, 0, strlen(trace_token));
  free(trace_token);
  return rc;
}
