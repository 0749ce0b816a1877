/*
 * jaeger_lab.c - the lab's Jaeger v2 as a child process of a test (see
 * jaeger_lab.h): free loopback ports, a configuration of its own in a
 * temporary directory, start-up until healthy, queries through
 * http_client.h, and the end of the process whatever happens to the test.
 */
#include "jaeger_lab.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "ripple/ripple.h"

#define START_TIMEOUT_MS 30000
#define STOP_TIMEOUT_MS 10000
#define MAX_TRACES 100000

enum { PORT_OTLP, PORT_QUERY, PORT_QUERY_GRPC, PORT_HEALTH, NPORTS };

struct jaeger_lab {
  pid_t pid;
  unsigned port[NPORTS];
  unsigned grpc_port; /* OTLP gRPC receiver's, 0: none */
  char bin[1024];
  char dir[256], config[300], log[300];
  char otlp_url[64], query_url[64], health_url[64];
  char last_err[512];
};

/* Every Jaeger this process started and has not reaped: killed at exit, so
 * a test that fails (cmocka longjmps past its cleanup) leaves none behind. */
#define MAX_LIVE 8
static pid_t live[MAX_LIVE];
static int atexit_done;

static void kill_live(void) {
  for (int i = 0; i < MAX_LIVE; i++) {
    if (live[i] > 0) {
      kill(live[i], SIGKILL);
      waitpid(live[i], NULL, 0);
      live[i] = 0;
    }
  }
}

static void live_add(pid_t pid) {
  if (!atexit_done) atexit_done = atexit(kill_live) == 0;
  for (int i = 0; i < MAX_LIVE; i++) {
    if (live[i] <= 0) {
      live[i] = pid;
      return;
    }
  }
}

static void live_del(pid_t pid) {
  for (int i = 0; i < MAX_LIVE; i++)
    if (live[i] == pid) live[i] = 0;
}

static int errf(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int errf(char *err, size_t cap, int rc, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return rc;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* NPORTS distinct free ports on 127.0.0.1: all sockets stay bound until every
 * port is known, so no two are the same. Another process may still take one
 * before Jaeger binds it; start-up then fails with Jaeger's message. */
static int pick_ports(unsigned port[NPORTS]) {
  int fd[NPORTS], rc = RIPPLE_OK;
  for (int i = 0; i < NPORTS; i++) fd[i] = -1;
  for (int i = 0; i < NPORTS && rc == RIPPLE_OK; i++) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd[i], (struct sockaddr *)&a, &len) != 0)
      rc = RIPPLE_ESYS;
    else
      port[i] = ntohs(a.sin_port);
  }
  for (int i = 0; i < NPORTS; i++)
    if (fd[i] >= 0) close(fd[i]);
  return rc;
}

/* The OTLP receiver's gRPC protocol, after its http (the configuration's
 * last lines), with jaeger_lab_start_grpc only. */
#define GRPC_AFTER_HTTP "      grpc:\n        endpoint: 127.0.0.1:"

/* The configuration (docs/lab.md, "Jaeger"): OTLP/HTTP in, memory storage,
 * the query API and a health check, nothing else. No batch processor and no
 * exporter queue: the receiver answers only after the storage write. The
 * query extension's own tracing would dial OTLP gRPC on localhost:4317, and
 * the collector's metrics would listen on :8888; both are off. */
static int write_config(const jaeger_lab_t *j) {
  FILE *f = fopen(j->config, "w");
  if (!f) return RIPPLE_ESYS;
  fprintf(f,
          "service:\n"
          "  extensions: [jaeger_storage, jaeger_query, healthcheckv2]\n"
          "  pipelines:\n"
          "    traces:\n"
          "      receivers: [otlp]\n"
          "      exporters: [jaeger_storage_exporter]\n"
          "  telemetry:\n"
          "    metrics:\n"
          "      level: none\n"
          "    logs:\n"
          "      level: info\n"
          "extensions:\n"
          "  jaeger_storage:\n"
          "    backends:\n"
          "      lab_store:\n"
          "        memory:\n"
          "          max_traces: %d\n"
          "  jaeger_query:\n"
          "    storage:\n"
          "      traces: lab_store\n"
          "    enable_tracing: false\n"
          "    http:\n"
          "      endpoint: 127.0.0.1:%u\n"
          "    grpc:\n"
          "      endpoint: 127.0.0.1:%u\n"
          "  healthcheckv2:\n"
          "    use_v2: true\n"
          "    http:\n"
          "      endpoint: 127.0.0.1:%u\n"
          "      status:\n"
          "        enabled: true\n"
          "        path: /status\n"
          "exporters:\n"
          "  jaeger_storage_exporter:\n"
          "    trace_storage: lab_store\n"
          "    queue:\n"
          "      enabled: false\n"
          "receivers:\n"
          "  otlp:\n"
          "    protocols:\n"
          "      http:\n"
          "        endpoint: 127.0.0.1:%u\n",
          MAX_TRACES, j->port[PORT_QUERY], j->port[PORT_QUERY_GRPC], j->port[PORT_HEALTH],
          j->port[PORT_OTLP]);
  if (j->grpc_port) fprintf(f, "%s%u\n", GRPC_AFTER_HTTP, j->grpc_port);
  return fclose(f) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
}

/* The last lines of the log (at most about 1.5 KB), for error messages. */
static void log_tail(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  char buf[1536];
  long from = 0;
  if (fseek(f, 0, SEEK_END) == 0) {
    long end = ftell(f);
    from = end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0;
  }
  fseek(f, from, SEEK_SET);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *s = buf;
  if (from > 0 && strchr(s, '\n')) s = strchr(s, '\n') + 1; /* from a line's start */
  snprintf(out, cap, "%s", s);
}

static int spawn(jaeger_lab_t *j) {
  char cfg_arg[320];
  snprintf(cfg_arg, sizeof cfg_arg, "file:%s", j->config);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return RIPPLE_ESYS;
  if (pid == 0) {
    /* Dies with the test, even one killed by a signal or a CTest timeout. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(126);
    int fd = open(j->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int nul = open("/dev/null", O_RDONLY);
    if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
    close_range(3, ~0U, 0);
    execl(j->bin, j->bin, "--config", cfg_arg, (char *)NULL);
    dprintf(2, "jaeger_lab: cannot run %s: %s\n", j->bin, strerror(errno));
    _exit(127);
  }
  j->pid = pid;
  live_add(pid);
  return RIPPLE_OK;
}

static void reap(jaeger_lab_t *j) {
  waitpid(j->pid, NULL, 0);
  live_del(j->pid);
  j->pid = -1;
}

/* Does url answer at all (any HTTP status)? With want > 0, with that status. */
static int answers(const char *url, long want) {
  hc_resp_t r;
  int ok = hc_request("GET", url, NULL, 0, NULL, &r) == 0 && (want ? r.status == want : 1);
  hc_resp_free(&r);
  return ok;
}

/* Until the health check says 200 and the query API and the receiver answer. */
static int wait_healthy(jaeger_lab_t *j, char *err, size_t errcap) {
  char services[96], tail[1600];
  snprintf(services, sizeof services, "%s/api/v3/services", j->query_url);
  long long deadline = now_ms() + START_TIMEOUT_MS;
  for (;;) {
    int st;
    if (waitpid(j->pid, &st, WNOHANG) == j->pid) {
      live_del(j->pid);
      j->pid = -1;
      log_tail(j->log, tail, sizeof tail);
      return errf(err, errcap, RIPPLE_ESTATE,
                  "jaeger (%s) exited with %s %d before it was healthy; the end of %s:\n%s", j->bin,
                  WIFEXITED(st) ? "status" : "signal",
                  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), j->log, tail);
    }
    if (answers(j->health_url, 200) && answers(services, 200) && answers(j->otlp_url, 0))
      return RIPPLE_OK;
    if (now_ms() > deadline) {
      kill(j->pid, SIGKILL);
      reap(j);
      log_tail(j->log, tail, sizeof tail);
      return errf(err, errcap, RIPPLE_ETIMEDOUT,
                  "jaeger (%s) was not healthy at %s after %d s (killed); the end of %s:\n%s",
                  j->bin, j->health_url, START_TIMEOUT_MS / 1000, j->log, tail);
    }
    sleep_ms(50);
  }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_dir(jaeger_lab_t *j) {
  if (!j->dir[0]) return;
  const char *keep = getenv("RIPPLE_JAEGER_KEEP");
  if (keep && *keep && strcmp(keep, "0") != 0)
    fprintf(stderr, "jaeger_lab: kept %s (RIPPLE_JAEGER_KEEP)\n", j->dir);
  else
    nftw(j->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  j->dir[0] = '\0';
}

static int prepare(jaeger_lab_t *j, char *err, size_t errcap) {
  const char *bin = getenv("RIPPLE_LAB_JAEGER");
  if (!bin || !*bin)
    return errf(err, errcap, RIPPLE_EINVAL,
                "RIPPLE_LAB_JAEGER is not set: build the lab's Jaeger with `lab/build.sh "
                "--jaeger` and export RIPPLE_LAB_JAEGER=$(lab/build.sh --print-jaeger) (`lab/lab "
                "env` and scripts/with-lab do)");
  if (access(bin, X_OK) != 0)
    return errf(err, errcap, RIPPLE_EINVAL,
                "RIPPLE_LAB_JAEGER=%s is not an executable file (%s): run `lab/build.sh --jaeger`",
                bin, strerror(errno));
  if (snprintf(j->bin, sizeof j->bin, "%s", bin) >= (int)sizeof j->bin)
    return errf(err, errcap, RIPPLE_EINVAL, "RIPPLE_LAB_JAEGER is too long");
  if (pick_ports(j->port) != RIPPLE_OK)
    return errf(err, errcap, RIPPLE_ESYS, "cannot find free ports on 127.0.0.1: %s",
                strerror(errno));
  const char *tmp = getenv("TMPDIR");
  snprintf(j->dir, sizeof j->dir, "%s/ripple-jaeger-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(j->dir)) {
    int e = errno;
    j->dir[0] = '\0';
    return errf(err, errcap, RIPPLE_ESYS, "mkdtemp: %s", strerror(e));
  }
  snprintf(j->config, sizeof j->config, "%s/config.yaml", j->dir);
  snprintf(j->log, sizeof j->log, "%s/jaeger.log", j->dir);
  snprintf(j->otlp_url, sizeof j->otlp_url, "http://127.0.0.1:%u/v1/traces", j->port[PORT_OTLP]);
  snprintf(j->query_url, sizeof j->query_url, "http://127.0.0.1:%u", j->port[PORT_QUERY]);
  snprintf(j->health_url, sizeof j->health_url, "http://127.0.0.1:%u/status", j->port[PORT_HEALTH]);
  if (write_config(j) != RIPPLE_OK)
    return errf(err, errcap, RIPPLE_ESYS, "cannot write %s: %s", j->config, strerror(errno));
  return RIPPLE_OK;
}

int jaeger_lab_start(jaeger_lab_t **out, char *err, size_t errcap) {
  return jaeger_lab_start_grpc(out, 0, err, errcap);
}

int jaeger_lab_start_grpc(jaeger_lab_t **out, unsigned grpc_port, char *err, size_t errcap) {
  if (err && errcap) err[0] = '\0';
  if (!out) return errf(err, errcap, RIPPLE_EINVAL, "jaeger_lab_start: out is NULL");
  if (grpc_port > 65535) return errf(err, errcap, RIPPLE_EINVAL, "gRPC port %u", grpc_port);
  jaeger_lab_t *j = calloc(1, sizeof *j);
  if (!j) return errf(err, errcap, RIPPLE_ENOMEM, "out of memory");
  j->pid = -1;
  j->grpc_port = grpc_port;
  int rc = prepare(j, err, errcap);
  if (rc == RIPPLE_OK) rc = jaeger_lab_restart(j, err, errcap);
  if (rc != RIPPLE_OK) {
    jaeger_lab_stop(j);
    return rc;
  }
  *out = j;
  return RIPPLE_OK;
}

int jaeger_lab_restart(jaeger_lab_t *j, char *err, size_t errcap) {
  if (err && errcap) err[0] = '\0';
  if (!j) return errf(err, errcap, RIPPLE_EINVAL, "jaeger_lab_restart: j is NULL");
  if (j->pid > 0) jaeger_lab_kill(j);
  if (spawn(j) != RIPPLE_OK) return errf(err, errcap, RIPPLE_ESYS, "fork: %s", strerror(errno));
  return wait_healthy(j, err, errcap);
}

const char *jaeger_lab_otlp_url(const jaeger_lab_t *j) { return j->otlp_url; }
const char *jaeger_lab_query_url(const jaeger_lab_t *j) { return j->query_url; }
const char *jaeger_lab_log_path(const jaeger_lab_t *j) { return j->log; }
pid_t jaeger_lab_pid(const jaeger_lab_t *j) { return j->pid; }
const char *jaeger_lab_last_error(const jaeger_lab_t *j) { return j->last_err; }

static int is_hex(const char *s, size_t n) {
  if (!s || strlen(s) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return 0;
  }
  return 1;
}

int jaeger_lab_trace(jaeger_lab_t *j, const char *trace_hex32, json_t **out) {
  if (!j || !out) return RIPPLE_EINVAL;
  j->last_err[0] = '\0';
  if (!is_hex(trace_hex32, 32)) {
    snprintf(j->last_err, sizeof j->last_err, "trace id '%s' is not 32 hex digits",
             trace_hex32 ? trace_hex32 : "(null)");
    return RIPPLE_EINVAL;
  }
  char url[160];
  snprintf(url, sizeof url, "%s/api/v3/traces/%s?raw_traces=true", j->query_url, trace_hex32);
  hc_resp_t r;
  if (hc_request("GET", url, NULL, 0, NULL, &r) != 0) {
    hc_resp_free(&r);
    snprintf(j->last_err, sizeof j->last_err, "GET %s: no answer (is Jaeger running?)", url);
    return RIPPLE_ESTATE;
  }
  int rc = RIPPLE_OK;
  json_t *doc = NULL;
  if (r.status == 404) {
    rc = RIPPLE_ENOENT;
  } else if (r.status != 200) {
    rc = RIPPLE_ESTATE;
  } else {
    doc = json_loadb(r.body ? r.body : "", r.len, 0, NULL);
    if (!json_is_object(json_object_get(doc, "result"))) rc = RIPPLE_EJSON;
  }
  if (rc != RIPPLE_OK)
    snprintf(j->last_err, sizeof j->last_err, "GET %s: status %ld: %.300s", url, r.status,
             r.body ? r.body : "");
  else
    *out = json_incref(json_object_get(doc, "result"));
  json_decref(doc);
  hc_resp_free(&r);
  return rc;
}

int jaeger_lab_wait_spans(jaeger_lab_t *j, const char *trace_hex32, size_t want, int timeout_ms,
                          json_t **out) {
  if (!j || !out) return RIPPLE_EINVAL;
  long long deadline = now_ms() + timeout_ms;
  size_t have = 0;
  for (;;) {
    json_t *res = NULL;
    int rc = jaeger_lab_trace(j, trace_hex32, &res);
    if (rc != RIPPLE_OK && rc != RIPPLE_ENOENT) return rc;
    have = rc == RIPPLE_OK ? jaeger_lab_count_spans(res) : 0;
    if (have >= want) {
      *out = res;
      return RIPPLE_OK;
    }
    json_decref(res);
    if (now_ms() > deadline) break;
    sleep_ms(50);
  }
  snprintf(j->last_err, sizeof j->last_err, "trace %s: %zu of %zu spans after %d ms", trace_hex32,
           have, want, timeout_ms);
  return RIPPLE_ETIMEDOUT;
}

/* Calls fn for every span until it returns non-zero; returns that span. */
static json_t *each_span(const json_t *result, int (*fn)(json_t *span, void *ud), void *ud) {
  size_t i, k, m;
  json_t *rs, *ss, *sp;
  json_array_foreach(json_object_get(result, "resourceSpans"), i, rs) {
    json_array_foreach(json_object_get(rs, "scopeSpans"), k, ss) {
      json_array_foreach(json_object_get(ss, "spans"), m, sp) {
        if (fn(sp, ud)) return sp;
      }
    }
  }
  return NULL;
}

static int count_one(json_t *span, void *ud) {
  (void)span;
  ++*(size_t *)ud;
  return 0;
}

size_t jaeger_lab_count_spans(const json_t *result) {
  size_t n = 0;
  each_span(result, count_one, &n);
  return n;
}

static int has_id(json_t *span, void *ud) {
  const char *id = json_string_value(json_object_get(span, "spanId"));
  return id && !strcasecmp(id, ud);
}

json_t *jaeger_lab_find_span(const json_t *result, const char *span_hex16) {
  if (!span_hex16) return NULL;
  return each_span(result, has_id, (void *)span_hex16);
}

int jaeger_lab_kill(jaeger_lab_t *j) {
  if (!j || j->pid <= 0) return RIPPLE_ESTATE;
  kill(j->pid, SIGKILL);
  reap(j);
  return RIPPLE_OK;
}

void jaeger_lab_stop(jaeger_lab_t *j) {
  if (!j) return;
  if (j->pid > 0) {
    kill(j->pid, SIGTERM);
    long long deadline = now_ms() + STOP_TIMEOUT_MS;
    while (waitpid(j->pid, NULL, WNOHANG) == 0) {
      if (now_ms() > deadline) {
        kill(j->pid, SIGKILL);
        waitpid(j->pid, NULL, 0);
        break;
      }
      sleep_ms(20);
    }
    live_del(j->pid);
    j->pid = -1;
  }
  remove_dir(j);
  free(j);
}
