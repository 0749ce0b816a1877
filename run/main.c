/*
 * main.c - `ripple run SCENARIO.yaml`: run a change scenario on a cluster and
 * leave a run directory that `ripple analyze` reads (docs/run.md).
 *
 * The order matters for honest numbers: the watch agent is started and has
 * listed every resource before the first step, so every change of the
 * scenario is recorded; it is stopped (cleanly, so its output is complete)
 * after the last step and a short settling time; the namespace the run made
 * is deleted only after that, so its teardown does not pollute the log.
 *
 * RUNDIR holds: scenario.yaml (the file as given), params.json (every
 * parameter, written before anything runs), changes.jsonl (the agent's
 * records), agent.txt (its log), resources.csv (CPU and memory samples of the
 * agent and of processes named with --measure) and run.json (each step's
 * times and outcome, the resource summary; written at the end).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"
#include "ripple/ripple.h"
#include "run.h"

#define MAX_MEASURE 6

typedef struct opts {
  const char *scenario, *out, *namespace_, *kubeconfig, *context;
  const char *server, *server_service; /* the trace server of an expected cascade */
  const char *sets[SCN_MAX_PARAMS];
  int nsets, repetitions, keep, no_watch;
  struct {
    char name[64];
    pid_t pid;
  } measure[MAX_MEASURE];
  int nmeasure;
  int64_t sample_ns, settle_ns;
} opts_t;

typedef struct run {
  opts_t *o;
  scn_t scn;
  runner_t rn;
  char dir[PATH_MAX], ns[64];
  json_t *steps; /* the timeline for run.json */
  int failed, created_ns;
  size_t differs; /* hops of expected cascades that differed, all repetitions */
} run_t;

static volatile int interrupted;
static void on_signal(int sig) {
  (void)sig;
  interrupted++;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-run [options] SCENARIO.yaml\n"
          "\n"
          "Runs a change scenario (docs/run.md) with the watch agent recording, and\n"
          "leaves a run directory for `ripple analyze`.\n"
          "\n"
          "  --set NAME=VALUE      a parameter (repeatable), e.g. --set N=200\n"
          "  --repetitions R       instead of the scenario's\n"
          "  --out DIR             the run directory (default runs/<name>-<UTC time>)\n"
          "  --namespace NS        where objects go (default: a new ripple-<name>-<time>,\n"
          "                        deleted at the end unless --keep)\n"
          "  --keep                keep the namespace the run created\n"
          "  --no-watch            do not start the watch agent\n"
          "  --measure NAME=PID    also sample this process's CPU and memory (repeatable),\n"
          "                        e.g. --measure kube-apiserver=$(pgrep -f kube-apiserver)\n"
          "  --sample-every DUR    sampling interval (default 1s)\n"
          "  --settle DUR          wait after the last step before stopping the agent\n"
          "                        (default 2s)\n"
          "  --server URL          the trace server for a scenario's expect: (as kubectl\n"
          "                        ripple's; default $RIPPLE_SERVER, else through the API\n"
          "                        server's proxy to --server-service NS/NAME[:PORT],\n"
          "                        $RIPPLE_SERVER_SERVICE, ripple-system/ripple-server)\n"
          "  --server-service S    see --server\n"
          "  --kubeconfig FILES    as kubectl's (default: $KUBECONFIG, ~/.kube/config)\n"
          "  --context NAME        kubeconfig context\n");
}

static int parse_measure(opts_t *o, const char *arg) {
  const char *eq = strchr(arg, '=');
  char *end;
  long pid = eq ? strtol(eq + 1, &end, 10) : 0;
  if (!eq || eq == arg || eq - arg >= 64 || pid <= 0 || *end || o->nmeasure == MAX_MEASURE)
    return RIPPLE_EINVAL;
  snprintf(o->measure[o->nmeasure].name, 64, "%.*s", (int)(eq - arg), arg);
  o->measure[o->nmeasure++].pid = (pid_t)pid;
  return RIPPLE_OK;
}

static int parse_args(int argc, char **argv, opts_t *o) {
  enum {
    O_SET = 256,
    O_REP,
    O_OUT,
    O_NS,
    O_KEEP,
    O_NOWATCH,
    O_MEAS,
    O_SAMPLE,
    O_SETTLE,
    O_KCFG,
    O_CTX,
    O_SERVER,
    O_SERVICE
  };
  static const struct option longs[] = {{"set", 1, 0, O_SET},
                                        {"repetitions", 1, 0, O_REP},
                                        {"out", 1, 0, O_OUT},
                                        {"namespace", 1, 0, O_NS},
                                        {"keep", 0, 0, O_KEEP},
                                        {"no-watch", 0, 0, O_NOWATCH},
                                        {"measure", 1, 0, O_MEAS},
                                        {"sample-every", 1, 0, O_SAMPLE},
                                        {"settle", 1, 0, O_SETTLE},
                                        {"kubeconfig", 1, 0, O_KCFG},
                                        {"context", 1, 0, O_CTX},
                                        {"server", 1, 0, O_SERVER},
                                        {"server-service", 1, 0, O_SERVICE},
                                        {"help", 0, 0, 'h'},
                                        {0, 0, 0, 0}};
  o->sample_ns = 1000000000LL, o->settle_ns = 2000000000LL;
  int c, rc = RIPPLE_OK;
  while (rc == RIPPLE_OK && (c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
    char *end;
    switch (c) {
      case 'h': usage(stdout); exit(0);
      case O_SET: rc = o->nsets < SCN_MAX_PARAMS ? (o->sets[o->nsets++] = optarg, 0) : -1; break;
      case O_REP:
        o->repetitions = (int)strtol(optarg, &end, 10);
        rc = *end || o->repetitions < 1 ? RIPPLE_EINVAL : RIPPLE_OK;
        break;
      case O_OUT: o->out = optarg; break;
      case O_NS: o->namespace_ = optarg; break;
      case O_KEEP: o->keep = 1; break;
      case O_NOWATCH: o->no_watch = 1; break;
      case O_MEAS: rc = parse_measure(o, optarg); break;
      case O_SAMPLE: rc = ripple_duration_parse(optarg, &o->sample_ns); break;
      case O_SETTLE: rc = ripple_duration_parse(optarg, &o->settle_ns); break;
      case O_KCFG: o->kubeconfig = optarg; break;
      case O_CTX: o->context = optarg; break;
      case O_SERVER: o->server = optarg; break;
      case O_SERVICE: o->server_service = optarg; break;
      default: rc = RIPPLE_EINVAL;
    }
    if (rc != RIPPLE_OK && c != '?')
      fprintf(stderr, "ripple run: bad value for an option: %s\n", optarg);
  }
  if (rc != RIPPLE_OK || optind != argc - 1) {
    usage(stderr);
    return RIPPLE_EINVAL;
  }
  o->scenario = argv[optind];
  return RIPPLE_OK;
}

/* mkdir -p; the run directory itself must be new or empty, so runs never mix. */
static int make_rundir(const char *dir) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return RIPPLE_ESYS;
    *p = '/';
  }
  if (mkdir(dir, 0755) == 0) return RIPPLE_OK;
  if (errno != EEXIST || rmdir(dir) != 0) return RIPPLE_ESYS; /* rmdir: empty? */
  return mkdir(dir, 0755) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
}

static int write_json(const run_t *r, const char *file, const json_t *v) {
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s", r->dir, file);
  return json_dump_file(v, path, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
}

static int copy_scenario(const run_t *r) {
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/scenario.yaml", r->dir);
  FILE *f = fopen(path, "w");
  if (!f) return RIPPLE_ESYS;
  size_t n = fwrite(r->scn.text, 1, r->scn.len, f);
  return fclose(f) == 0 && n == r->scn.len ? RIPPLE_OK : RIPPLE_ESYS;
}

/* A DNS label from the scenario's name and the time: ripple-paper2-20261122t101500. */
static void default_namespace(const char *name, const char *stamp, char *out, size_t cap) {
  char raw[128];
  snprintf(raw, sizeof raw, "ripple-%s-%s", name, stamp);
  size_t n = 0;
  for (const char *p = raw; *p && n + 1 < cap && n < 63; p++) {
    char c = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    out[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
  }
  while (n && out[n - 1] == '-') n--;
  out[n] = '\0';
}

static int ensure_namespace(run_t *r, char *err, size_t cap) {
  const ripple_kube_resource_t *nsr = NULL, *sar = NULL;
  ripple_kube_status_t st = {0};
  int rc = ripple_kube_resolve(r->rn.kc, "namespaces", &nsr, &st);
  if (rc == RIPPLE_OK) rc = ripple_kube_resolve(r->rn.kc, "serviceaccounts", &sar, &st);
  json_t *obj = NULL;
  if (rc == RIPPLE_OK) rc = ripple_kube_get(r->rn.kc, nsr, NULL, r->ns, &obj, &st);
  json_decref(obj);
  if (rc == RIPPLE_KUBE_ENOTFOUND) {
    json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                           "name", r->ns);
    rc = ns ? ripple_kube_create(r->rn.kc, nsr, NULL, ns, NULL, NULL, &st) : RIPPLE_ENOMEM;
    json_decref(ns);
    r->created_ns = rc == RIPPLE_OK;
  }
  /* Pods cannot be created before the namespace's default ServiceAccount exists. */
  for (int i = 0; rc == RIPPLE_OK && i < 600; i++) {
    obj = NULL;
    int g = ripple_kube_get(r->rn.kc, sar, r->ns, "default", &obj, &st);
    json_decref(obj);
    if (g == RIPPLE_OK) break;
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  if (rc != RIPPLE_OK)
    snprintf(err, cap, "namespace %s: %s", r->ns,
             st.message[0] ? st.message : ripple_kube_strerror(rc));
  return rc;
}

static int connect_cluster(run_t *r, char *err, size_t cap) {
  ripple_kube_config_t *cfg = NULL;
  ripple_kube_config_opts_t co = {.kubeconfig = r->o->kubeconfig, .context = r->o->context};
  int rc = ripple_kube_config_load(&co, &cfg, err, cap);
  if (rc == RIPPLE_OK && (rc = ripple_kube_client_new(cfg, NULL, &r->rn.kc)) != RIPPLE_OK)
    snprintf(err, cap, "cannot make a Kubernetes client: %s", ripple_kube_strerror(rc));
  ripple_kube_config_free(cfg);
  return rc;
}

/* Run one list of steps; every step goes into the timeline. */
static int run_list(run_t *r, const json_t *doc, const char *phase, int rep) {
  json_t *list = json_object_get(doc, phase), *step;
  size_t i;
  r->rn.run = rep;
  json_array_foreach(list, i, step) {
    char what[600], prefix[64], err[1024] = "";
    step_describe(step, what, sizeof what);
    if (!strcmp(phase, "steps"))
      snprintf(prefix, sizeof prefix, "[%d/%d] %zu/%zu", rep, r->scn.repetitions, i + 1,
               json_array_size(list));
    else
      snprintf(prefix, sizeof prefix, "[%s] %zu/%zu", phase, i + 1, json_array_size(list));
    progress_step(prefix, what);
    int64_t t0 = ripple_now_ns();
    int rc = step_run(&r->rn, step, err, sizeof err);
    int64_t t1 = ripple_now_ns();
    progress_done(prefix, what, (double)(t1 - t0) / 1e9, rc == RIPPLE_OK, err);
    json_array_append_new(
        r->steps,
        json_pack("{s:s,s:i,s:i,s:s,s:I,s:I,s:b,s:s?}", "phase", phase, "run", rep, "index",
                  (int)i + 1, "step", what, "start_ns", (json_int_t)t0, "end_ns", (json_int_t)t1,
                  "ok", rc == RIPPLE_OK, "error", rc == RIPPLE_OK ? NULL : err));
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

/* The change of an expected cascade, after the repetition's steps: made,
 * waited for, compared (expect.h); it goes into the timeline as a step. */
static int run_expect(run_t *r, const json_t *expect, int rep) {
  xp_t x;
  char err[1024] = "", what[600], prefix[64];
  int rc = xp_parse(expect, &x, err, sizeof err);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple run: %s\n", err);
    return rc;
  }
  char prog[PATH_MAX];
  xp_sibling("kubectl-ripple", prog, sizeof prog);
  xp_opts_t o = {
      prog,  r->o->server, r->o->server_service, r->o->kubeconfig, r->o->context, r->o->settle_ns,
      r->dir};
  size_t differs = 0;
  step_describe(x.change, what, sizeof what);
  snprintf(prefix, sizeof prefix, "[%d/%d] change", rep, r->scn.repetitions);
  progress_step(prefix, what);
  int64_t t0 = ripple_now_ns();
  rc = xp_replay(&r->rn, &x, &o, rep, &differs, err, sizeof err);
  int64_t t1 = ripple_now_ns();
  if (rc == RIPPLE_OK && differs)
    snprintf(err, sizeof err, "%zu hop%s of the cascade differ%s from the expected", differs,
             differs == 1 ? "" : "s", differs == 1 ? "s" : "");
  progress_done(prefix, what, (double)(t1 - t0) / 1e9, rc == RIPPLE_OK && !differs, err);
  json_array_append_new(
      r->steps,
      json_pack("{s:s,s:i,s:i,s:s,s:I,s:I,s:b,s:s?,s:I}", "phase", "expect", "run", rep, "index", 1,
                "step", what, "start_ns", (json_int_t)t0, "end_ns", (json_int_t)t1, "ok",
                rc == RIPPLE_OK && !differs, "error", rc == RIPPLE_OK && !differs ? NULL : err,
                "differs", (json_int_t)differs));
  r->differs += differs;
  xp_free(&x);
  return rc;
}

static int run_phase(run_t *r, const char *phase, int rep) {
  json_t *doc = NULL;
  char err[1024];
  int rc = scn_expand(&r->scn, rep, &doc, err, sizeof err);
  if (rc != RIPPLE_OK) fprintf(stderr, "ripple run: %s\n", err);
  if (rc == RIPPLE_OK) rc = run_list(r, doc, phase, rep);
  if (rc == RIPPLE_OK && !strcmp(phase, "steps") && json_object_get(doc, "expect"))
    rc = run_expect(r, json_object_get(doc, "expect"), rep);
  json_decref(doc);
  return rc;
}

/* The watch's resources: the scenario's watch.resources (a list or "a,b"). */
static int watch_resources(run_t *r, char *out, size_t cap) {
  json_t *doc = NULL;
  char err[512];
  if (scn_expand(&r->scn, 1, &doc, err, sizeof err) != RIPPLE_OK) return RIPPLE_EINVAL;
  json_t *res = json_object_get(json_object_get(doc, "watch"), "resources"), *v;
  size_t i, n = 0;
  out[0] = '\0';
  if (json_is_string(res)) snprintf(out, cap, "%s", json_string_value(res));
  json_array_foreach(res, i, v) {
    if (json_is_string(v))
      n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? "," : "",
                            json_string_value(v));
  }
  if (!out[0]) snprintf(out, cap, "deployments.apps,replicasets.apps,pods");
  json_decref(doc);
  return n < cap ? RIPPLE_OK : RIPPLE_ERANGE;
}

/* ripple-watch next to this program (as `ripple` finds its commands), else on PATH. */
static void watch_program(char *out, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) {
    snprintf(out, cap, "%.*s/ripple-watch", (int)(slash - self), self);
    if (access(out, X_OK) == 0) return;
  }
  snprintf(out, cap, "ripple-watch"); /* execvp searches PATH */
}

/* Parameters, the run directory, params.json: everything before the cluster is touched. */
static int prepare(run_t *r, char *err, size_t cap) {
  opts_t *o = r->o;
  int rc = scn_load(o->scenario, &r->scn, err, cap);
  for (int i = 0; rc == RIPPLE_OK && i < o->nsets; i++) rc = scn_set(&r->scn, o->sets[i], err, cap);
  if (rc != RIPPLE_OK) return rc;
  if (o->repetitions) r->scn.repetitions = o->repetitions;
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
  const char *ns = o->namespace_ ? o->namespace_
                                 : json_string_value(json_object_get(r->scn.params, "namespace"));
  if (ns)
    snprintf(r->ns, sizeof r->ns, "%s", ns);
  else
    default_namespace(r->scn.name, stamp, r->ns, sizeof r->ns);
  json_object_set_new(r->scn.params, "namespace", json_string(r->ns));
  json_t *doc = NULL; /* every repetition's expansion must work before anything runs */
  for (int rep = 1; rc == RIPPLE_OK && rep <= r->scn.repetitions; rep++) {
    rc = scn_expand(&r->scn, rep, &doc, err, cap);
    xp_t x;
    if (rc == RIPPLE_OK && json_object_get(doc, "expect") &&
        (rc = xp_parse(json_object_get(doc, "expect"), &x, err, cap)) == RIPPLE_OK)
      xp_free(&x);
    json_decref(doc);
  }
  if (rc != RIPPLE_OK) return rc;
  if (o->out)
    snprintf(r->dir, sizeof r->dir, "%s", o->out);
  else
    snprintf(r->dir, sizeof r->dir, "runs/%s-%s", r->scn.name, stamp);
  if (make_rundir(r->dir) != RIPPLE_OK) {
    snprintf(err, cap, "run directory %.1024s: %s (it must be new or empty)", r->dir,
             strerror(errno));
    return RIPPLE_ESYS;
  }
  json_t *p =
      json_pack("{s:s,s:s,s:O,s:i,s:s,s:s?,s:s?,s:s}", "scenario", o->scenario, "name", r->scn.name,
                "parameters", r->scn.params, "repetitions", r->scn.repetitions, "namespace", r->ns,
                "kubeconfig", o->kubeconfig, "context", o->context, "ripple_version", "0.1.0");
  rc = p && copy_scenario(r) == RIPPLE_OK ? write_json(r, "params.json", p) : RIPPLE_ESYS;
  json_decref(p);
  if (rc != RIPPLE_OK) snprintf(err, cap, "cannot write to %.1024s: %s", r->dir, strerror(errno));
  return rc;
}

static int start_watching(run_t *r, sampler_t **smp, agentproc_t **agent, char *err, size_t cap) {
  char csv[PATH_MAX + 32], res[2048], prog[PATH_MAX + 16];
  snprintf(csv, sizeof csv, "%s/resources.csv", r->dir);
  int rc = sampler_start(csv, r->o->sample_ns, smp);
  if (rc != RIPPLE_OK) {
    snprintf(err, cap, "%.1024s: %s", csv, strerror(errno));
    return rc;
  }
  for (int i = 0; i < r->o->nmeasure; i++)
    sampler_add(*smp, r->o->measure[i].name, r->o->measure[i].pid);
  if (r->o->no_watch) return RIPPLE_OK;
  if (watch_resources(r, res, sizeof res) != RIPPLE_OK) {
    snprintf(err, cap, "watch.resources: too many or malformed");
    return RIPPLE_EINVAL;
  }
  watch_program(prog, sizeof prog);
  agentproc_opts_t ao = {.program = prog,
                         .rundir = r->dir,
                         .resources = res,
                         .namespace_ = r->ns,
                         .kubeconfig = r->o->kubeconfig,
                         .context = r->o->context};
  printf("watching %s in namespace %s -> %s/changes.jsonl\n", res, r->ns, r->dir);
  rc = agentproc_start(&ao, 120000, agent, err, cap);
  if (rc == RIPPLE_OK) sampler_add(*smp, "ripple-watch", agentproc_pid(*agent));
  return rc;
}

/* setup once, the steps `repetitions` times, teardown once even after a failure. */
static int run_scenario(run_t *r) {
  int rc = run_phase(r, "setup", 1);
  for (int rep = 1; rc == RIPPLE_OK && rep <= r->scn.repetitions; rep++)
    rc = run_phase(r, "steps", rep);
  if (interrupted) fprintf(stderr, "ripple run: interrupted; tearing down (again to skip)\n");
  int was = interrupted;
  interrupted = 0;
  int trc = run_phase(r, "teardown", r->scn.repetitions);
  interrupted += was;
  return rc != RIPPLE_OK ? rc : trc;
}

static void print_summary(const run_t *r, const json_t *res) {
  json_t *agent = json_object_get(res, "ripple-watch");
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)res, k, v) {
    printf("%-16s cpu %.3f s, memory avg %.0f KiB, max %lld KiB\n", k,
           json_real_value(json_object_get(v, "cpu_s")),
           json_real_value(json_object_get(v, "rss_avg_kib")),
           (long long)json_integer_value(json_object_get(v, "rss_max_kib")));
  }
  json_object_foreach((json_t *)res, k, v) {
    if (!agent || v == agent) continue;
    double cpu = json_real_value(json_object_get(v, "cpu_s"));
    double mem = json_real_value(json_object_get(v, "rss_avg_kib"));
    if (cpu > 0 && mem > 0)
      printf("  ripple-watch / %s: cpu %.1f%%, memory %.1f%%\n", k,
             100 * json_real_value(json_object_get(agent, "cpu_s")) / cpu,
             100 * json_real_value(json_object_get(agent, "rss_avg_kib")) / mem);
  }
  printf("%s: %s\nnext: ripple analyze %s\n", r->failed ? "FAILED" : "done", r->dir, r->dir);
}

static void finish(run_t *r, sampler_t *smp, agentproc_t *agent, int64_t started) {
  /* Let the last changes of the cascade reach the agent before it stops. */
  for (int64_t end = ripple_now_ns() + r->o->settle_ns;
       agent && ripple_now_ns() < end && interrupted < 2;) {
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
  int arc = agentproc_stop(agent);
  if (arc != RIPPLE_OK) {
    fprintf(stderr, "ripple run: the watch agent did not stop cleanly; see %s/agent.txt\n", r->dir);
    r->failed = 1;
  }
  json_t *res = NULL;
  sampler_stop(smp, &res);
  if (r->created_ns && !r->o->keep && r->rn.kc) {
    const ripple_kube_resource_t *nsr;
    ripple_kube_status_t st = {0};
    if (ripple_kube_resolve(r->rn.kc, "namespaces", &nsr, &st) == RIPPLE_OK)
      ripple_kube_delete(r->rn.kc, nsr, NULL, r->ns, NULL, &st);
  }
  char t0[RIPPLE_TIME_STRLEN + 1], t1[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(started, t0);
  ripple_time_format(ripple_now_ns(), t1);
  json_t *doc = json_pack("{s:s,s:s,s:s,s:s,s:O,s:i,s:O,s:O*}", "name", r->scn.name, "status",
                          r->failed ? "failed" : "ok", "started", t0, "finished", t1, "parameters",
                          r->scn.params, "repetitions", r->scn.repetitions, "steps", r->steps,
                          "resources", res);
  if (!doc || write_json(r, "run.json", doc) != RIPPLE_OK) {
    fprintf(stderr, "ripple run: cannot write %s/run.json: %s\n", r->dir, strerror(errno));
    r->failed = 1;
  }
  print_summary(r, res);
  json_decref(doc);
  json_decref(res);
}

int main(int argc, char **argv) {
  static opts_t o;
  static run_t r;
  ripple_log_setup("ripple-run", RIPPLE_LOG_WARN, NULL, NULL);
  if (parse_args(argc, argv, &o) != RIPPLE_OK) return 2;
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  r.o = &o;
  r.steps = json_array();
  r.rn.scn = &r.scn;
  r.rn.namespace_ = r.ns;
  r.rn.stop = &interrupted;
  r.rn.progress = progress_wait;
  progress_init(stdout);
  char err[2048];
  int64_t started = ripple_now_ns();
  int rc = prepare(&r, err, sizeof err);
  if (rc == RIPPLE_OK) rc = connect_cluster(&r, err, sizeof err);
  if (rc == RIPPLE_OK) rc = ensure_namespace(&r, err, sizeof err);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple run: %s\n", err);
    ripple_kube_client_free(r.rn.kc);
    scn_free(&r.scn);
    json_decref(r.steps);
    return 1;
  }
  sampler_t *smp = NULL;
  agentproc_t *agent = NULL;
  rc = start_watching(&r, &smp, &agent, err, sizeof err);
  if (rc != RIPPLE_OK) fprintf(stderr, "ripple run: %s\n", err);
  if (rc == RIPPLE_OK) rc = run_scenario(&r);
  r.failed = rc != RIPPLE_OK || r.differs;
  finish(&r, smp, agent, started);
  ripple_kube_client_free(r.rn.kc);
  scn_free(&r.scn);
  json_decref(r.steps);
  return r.failed ? 1 : 0;
}
