/*
 * args.c - kubectl-ripple's command line.
 *
 * kubectl hands a plugin its arguments unchanged, including the global flags
 * it would otherwise have read itself (--kubeconfig, --context,
 * -n/--namespace), so they are parsed here, anywhere on the line, in every
 * form kubectl accepts: "--flag value", "--flag=value", and for the short
 * ones "-n value", "-n=value", "-nvalue". "--" ends the flags.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

typedef enum vflag {
  F_KUBECONFIG,
  F_CONTEXT,
  F_NAMESPACE,
  F_FILE,
  F_PATCH,
  F_TYPE,
  F_REPLICAS,
  F_SERVER,
  F_SERVER_SERVICE,
  F_OUTPUT,
  F_PORT,
  F_SCOPE,
  F_MARGIN,
  F_SINCE,
  F_KIND,
  F_WRITE,
} vflag_t;

/* Flags that take a value. */
static const struct {
  const char *lng;
  char shrt;
  vflag_t f;
} vflags[] = {
    {"kubeconfig", 0, F_KUBECONFIG},
    {"context", 0, F_CONTEXT},
    {"namespace", 'n', F_NAMESPACE},
    {"filename", 'f', F_FILE},
    {"patch", 'p', F_PATCH},
    {"type", 0, F_TYPE},
    {"replicas", 0, F_REPLICAS},
    {"server", 0, F_SERVER},
    {"output", 'o', F_OUTPUT},
    {"server-service", 0, F_SERVER_SERVICE},
    {"port", 0, F_PORT},
    {"scope", 0, F_SCOPE},
    {"margin", 0, F_MARGIN},
    {"since", 0, F_SINCE},
    {"kind", 0, F_KIND},
    {"write", 0, F_WRITE},
};

static const struct {
  const char *name;
  kr_cmd_t cmd;
} cmds[] = {
    {"apply", KR_CMD_APPLY},
    {"scale", KR_CMD_SCALE},
    {"patch", KR_CMD_PATCH},
    {"delete", KR_CMD_DELETE},
    {"trace", KR_CMD_TRACE},
    {"last", KR_CMD_LAST},
    {"why", KR_CMD_WHY},
    {"help", KR_CMD_HELP},
    {"version", KR_CMD_VERSION},
    {"dashboard", KR_CMD_DASHBOARD},
    {"export-test", KR_CMD_EXPORT_TEST},
    {"diff", KR_CMD_DIFF},
    {"hops", KR_CMD_HOPS},
};

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return RIPPLE_EINVAL;
}

static int set_value(kr_args_t *a, vflag_t f, const char *v, char *err, size_t cap) {
  switch (f) {
    case F_KUBECONFIG: a->kubeconfig = v; break;
    case F_CONTEXT: a->context = v; break;
    case F_NAMESPACE: a->namespace_ = v; break;
    case F_FILE: a->file = v; break;
    case F_PATCH: a->patch = v; break;
    case F_SERVER: a->server = v; break;
    case F_SERVER_SERVICE: {
      kr_where_t w;
      char why[256];
      if (kr_service_parse(v, &w, why, sizeof why) != RIPPLE_OK)
        return fail(err, cap, "--server-service: %s", why);
      a->server_service = v;
      break;
    }
    case F_TYPE:
      if (!strcmp(v, "strategic"))
        a->patch_type = RIPPLE_KUBE_PATCH_STRATEGIC;
      else if (!strcmp(v, "merge"))
        a->patch_type = RIPPLE_KUBE_PATCH_MERGE;
      else if (!strcmp(v, "json"))
        a->patch_type = RIPPLE_KUBE_PATCH_JSON;
      else
        return fail(err, cap, "--type must be strategic, merge or json, not \"%s\"", v);
      break;
    case F_REPLICAS: {
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (!*v || *end || errno || n < 0 || n > 1000000000L)
        return fail(err, cap, "--replicas must be a number of replicas (0 or more), not \"%s\"", v);
      a->replicas = n;
      break;
    }
    case F_PORT: {
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (!*v || *end || errno || n < 0 || n > 65535)
        return fail(err, cap, "--port must be a port number (0: any free one), not \"%s\"", v);
      a->port = n;
      break;
    }
    case F_SCOPE:
      if (strcmp(v, "own") != 0 && strcmp(v, "reachable") != 0)
        return fail(err, cap,
                    "--scope must be own (what the change caused) or reachable (everything "
                    "it reaches), not \"%s\"",
                    v);
      a->reachable = !strcmp(v, "reachable");
      break;
    case F_OUTPUT: /* checked once the command is known (export-test: a file) */
      a->output = v;
      a->json = !strcmp(v, "json");
      break;
    case F_MARGIN: a->margin = v; break;
    case F_SINCE:
      if (ripple_duration_parse(v, &a->since_ns) != RIPPLE_OK || a->since_ns <= 0)
        return fail(err, cap, "--since must be a duration before now (30m, 2h, 7d), not \"%s\"", v);
      break;
    case F_KIND: a->kind = v; break;
    case F_WRITE: a->write = v; break;
  }
  return RIPPLE_OK;
}

/* A flag at argv[*i]; *i moves past its value. 0: not a known value flag. */
static int value_flag(int argc, char *const *argv, int *i, kr_args_t *a, char *err, size_t cap,
                      int *matched) {
  const char *arg = argv[*i];
  *matched = 0;
  for (size_t k = 0; k < sizeof vflags / sizeof vflags[0]; k++) {
    const char *v = NULL;
    if (arg[1] == '-') {
      size_t n = strlen(vflags[k].lng);
      if (strncmp(arg + 2, vflags[k].lng, n) != 0) continue;
      if (arg[2 + n] == '=') {
        v = arg + 3 + n;
      } else if (arg[2 + n] != '\0') {
        continue;
      }
    } else {
      if (!vflags[k].shrt || arg[1] != vflags[k].shrt) continue;
      if (arg[2]) v = arg[2] == '=' ? arg + 3 : arg + 2;
    }
    *matched = 1;
    if (!v) {
      if (*i + 1 >= argc) return fail(err, cap, "%s needs a value", arg);
      v = argv[++*i];
    }
    return set_value(a, vflags[k].f, v, err, cap);
  }
  return RIPPLE_OK;
}

static int bool_flag(const char *arg, kr_args_t *a) {
  if (!strcmp(arg, "--force-conflicts")) {
    a->force_conflicts = 1;
  } else if (!strcmp(arg, "--no-browser")) {
    a->no_browser = 1;
  } else if (!strcmp(arg, "--reachable")) {
    a->reachable = 1;
  } else if (!strcmp(arg, "--critical-path")) {
    a->critical_path = 1;
  } else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
    a->cmd = KR_CMD_HELP;
  } else {
    return 0;
  }
  return 1;
}

static int positional(kr_args_t *a, const char *arg, size_t npos, char *err, size_t cap) {
  if (npos == 0) {
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
      if (!strcmp(arg, cmds[k].name)) {
        if (a->cmd != KR_CMD_HELP) a->cmd = cmds[k].cmd;
        return RIPPLE_OK;
      }
    return fail(err, cap, "unknown command \"%s\" (try: kubectl ripple help)", arg);
  }
  if (a->cmd == KR_CMD_HOPS) return fail(err, cap, "hops takes flags only, not \"%s\"", arg);
  if (a->cmd == KR_CMD_DIFF) {
    if (npos > 2) return fail(err, cap, "diff takes two CPIDs, \"%s\" is one too many", arg);
    *(npos == 1 ? &a->cpid : &a->cpid2) = arg;
    return RIPPLE_OK;
  }
  if (a->cmd == KR_CMD_TRACE || a->cmd == KR_CMD_DASHBOARD || a->cmd == KR_CMD_EXPORT_TEST) {
    if (npos > 1)
      return fail(err, cap, "%s takes one CPID, \"%s\" is one too many",
                  a->cmd == KR_CMD_TRACE       ? "trace"
                  : a->cmd == KR_CMD_DASHBOARD ? "dashboard"
                                               : "export-test",
                  arg);
    a->cpid = arg;
    return RIPPLE_OK;
  }
  if (npos == 1) {
    const char *slash = strchr(arg, '/');
    size_t rlen = slash ? (size_t)(slash - arg) : strlen(arg);
    if (rlen == 0 || rlen >= sizeof a->resource)
      return fail(err, cap, "\"%s\" is not KIND/NAME or KIND", arg);
    memcpy(a->resource, arg, rlen);
    a->resource[rlen] = '\0';
    if (slash) {
      if (!slash[1] || strchr(slash + 1, '/') || strlen(slash + 1) >= sizeof a->name)
        return fail(err, cap, "\"%s\" is not KIND/NAME", arg);
      snprintf(a->name, sizeof a->name, "%s", slash + 1);
    }
    return RIPPLE_OK;
  }
  if (npos == 2 && !a->name[0] && strlen(arg) < sizeof a->name) {
    snprintf(a->name, sizeof a->name, "%s", arg);
    return RIPPLE_OK;
  }
  return fail(err, cap, "unexpected argument \"%s\"", arg);
}

/* What each command needs, once everything is read. */
static int check(const kr_args_t *a, char *err, size_t cap) {
  int needs_object = a->cmd == KR_CMD_SCALE || a->cmd == KR_CMD_PATCH || a->cmd == KR_CMD_DELETE ||
                     a->cmd == KR_CMD_LAST || a->cmd == KR_CMD_WHY;
  if (needs_object && (!a->resource[0] || !a->name[0]))
    return fail(err, cap, "name the object as KIND/NAME (deploy/web) or KIND NAME");
  if (a->cmd != KR_CMD_DASHBOARD && (a->port >= 0 || a->no_browser))
    return fail(err, cap, "--port and --no-browser are dashboard's flags");
  if (a->reachable && a->cmd != KR_CMD_TRACE && a->cmd != KR_CMD_LAST &&
      a->cmd != KR_CMD_DASHBOARD && a->cmd != KR_CMD_DIFF && a->cmd != KR_CMD_HOPS)
    return fail(err, cap, "--reachable and --scope are for trace, last, diff, hops and dashboard");
  if (a->critical_path && a->cmd != KR_CMD_TRACE && a->cmd != KR_CMD_LAST)
    return fail(err, cap, "--critical-path is for trace and last");
  if (a->cmd != KR_CMD_EXPORT_TEST && a->output && !a->json)
    return fail(err, cap, "-o must be json (or left out for the tree), not \"%s\"", a->output);
  if (a->cmd != KR_CMD_EXPORT_TEST && a->margin)
    return fail(err, cap, "--margin is export-test's flag");
  if (a->cmd != KR_CMD_HOPS && (a->since_ns || a->kind || a->write))
    return fail(err, cap, "--since, --kind and --write are hops' flags");
  switch (a->cmd) {
    case KR_CMD_NONE: return fail(err, cap, "no command given (try: kubectl ripple help)");
    case KR_CMD_APPLY:
      if (!a->file) return fail(err, cap, "apply needs -f FILE (a YAML manifest, - for stdin)");
      if (a->resource[0]) return fail(err, cap, "apply takes its objects from -f FILE only");
      break;
    case KR_CMD_SCALE:
      if (a->replicas < 0) return fail(err, cap, "scale needs --replicas=N");
      break;
    case KR_CMD_PATCH:
      if (!a->patch) return fail(err, cap, "patch needs -p PATCH");
      break;
    case KR_CMD_TRACE:
      if (!a->cpid) return fail(err, cap, "trace needs a CPID");
      break;
    case KR_CMD_DIFF:
      if (!a->cpid2)
        return fail(err, cap, "diff needs two CPIDs: the cascade to compare with first");
      break;
    case KR_CMD_EXPORT_TEST:
      if (!a->cpid) return fail(err, cap, "export-test needs a CPID");
      break;
    default: break;
  }
  return RIPPLE_OK;
}

int kr_args_parse(int argc, char *const *argv, kr_args_t *out, char *err, size_t cap) {
  kr_args_t a;
  memset(&a, 0, sizeof a);
  a.replicas = -1;
  a.port = -1;
  a.patch_type = RIPPLE_KUBE_PATCH_STRATEGIC;
  size_t npos = 0;
  int flags_done = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    int rc, matched = 0;
    if (!flags_done && !strcmp(arg, "--")) {
      flags_done = 1;
      continue;
    }
    if (!flags_done && arg[0] == '-' && arg[1]) {
      if (bool_flag(arg, &a)) continue;
      if ((rc = value_flag(argc, argv, &i, &a, err, cap, &matched)) != RIPPLE_OK) return rc;
      if (!matched) return fail(err, cap, "unknown flag %s (try: kubectl ripple help)", arg);
      continue;
    }
    if ((rc = positional(&a, arg, npos++, err, cap)) != RIPPLE_OK) return rc;
  }
  if (a.cmd != KR_CMD_HELP && a.cmd != KR_CMD_VERSION) {
    int rc = check(&a, err, cap);
    if (rc != RIPPLE_OK) return rc;
  }
  *out = a;
  return RIPPLE_OK;
}

void kr_usage(FILE *f) {
  fputs(
      "kubectl ripple: changes that carry a root CPID, and the cascades they cause\n"
      "\n"
      "  kubectl ripple apply -f FILE [--force-conflicts]   server-side apply (fieldManager "
      "kubectl-ripple)\n"
      "  kubectl ripple scale KIND/NAME --replicas=N\n"
      "  kubectl ripple patch KIND/NAME -p PATCH [--type strategic|merge|json]\n"
      "  kubectl ripple delete KIND/NAME\n"
      "  kubectl ripple trace CPID [-o json] [--reachable]   the change's own cascade;\n"
      "      --reachable (--scope reachable): everything reachable from it\n"
      "  kubectl ripple last KIND/NAME [-o json] [--reachable]\n"
      "      --critical-path (trace, last): the chain of hops that decided how long it took\n"
      "  kubectl ripple diff CPID_A CPID_B [-o json] [--reachable]   two cascades compared, hop "
      "by hop\n"
      "  kubectl ripple hops [--since D] [--kind K] [--write W] [-o json] [--reachable]\n"
      "      every hop's times (p50, p90, p99, max) across the newest 50 changes' cascades\n"
      "  kubectl ripple why KIND/NAME [-o json]   the writes from the root change to\n"
      "      the object's latest write: who, what changed, how long each took\n"
      "  kubectl ripple dashboard [CPID] [--port N] [--no-browser] [--reachable]   the dashboard "
      "in\n"
      "      your browser, relayed from 127.0.0.1 (its URL first on stdout); Ctrl-C stops\n"
      "  kubectl ripple export-test CPID [-o FILE] [--margin FACTOR[+FLOOR]]   the cascade\n"
      "      as a scenario that `ripple run` replays and checks (hops, counts, budgets)\n"
      "\n"
      "Every change prints \"cpid: <CPID>\"; trace it with kubectl ripple trace.\n"
      "Flags: --kubeconfig FILE, --context NAME, -n/--namespace NS (as kubectl).\n"
      "The trace server: through the API server's service proxy with your kubeconfig's\n"
      "credentials, to --server-service NAMESPACE/SERVICE[:PORT] (else $RIPPLE_SERVER_SERVICE,\n"
      "else " KR_DEFAULT_SERVICE_NS "/" KR_DEFAULT_SERVICE_NAME ":" KR_DEFAULT_SERVICE_PORT
      "); or directly to --server URL (else $RIPPLE_SERVER):\n"
      "a port-forward; an https URL is verified against $RIPPLE_SERVER_CA (a PEM file), else\n"
      "the system's CAs. Reader token: $RIPPLE_READER_TOKEN, else the Secret "
      "SERVICE" KR_TOKEN_SECRET_SUFFIX
      ".\n"
      "Colours on a terminal unless NO_COLOR is set. See docs/kubectl-ripple.md.\n",
      f);
}
