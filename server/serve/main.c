/*
 * main.c - ripple-server: the trace server of CPID tracing.
 *
 *   ripple-server [--listen 127.0.0.1:7480] [--db ripple.db] ...
 *
 * Receives mergelogs and spans from instrumented components (libripple's
 * shipper), keeps them durably, and answers "what did this change cause?"
 * (docs/api.md), with the dashboard's files beside the API (web.h). Stops
 * cleanly on SIGINT/SIGTERM: in-flight commits finish, and everything
 * acknowledged is on disk.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export.h"
#include "ripplex/httpd.h"
#include "ripplex/opt.h"
#include "serve/http.h"
#include "serve/server.h"
#include "serve/web.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: ripple-server [options]\n"
      "  --listen ADDR:PORT       where to listen (default 127.0.0.1:7480; port 0 = any)\n"
      "  --db PATH                SQLite database (default ripple.db)\n"
      "  --sync normal|full       normal survives a crash of the process (default);\n"
      "                           full also survives power loss (an fsync per commit)\n"
      "  --max-cpids N            retention: keep at most N CPIDs (default 10000000, 0 = no "
      "limit)\n"
      "  --max-age DURATION       retention: drop what is older, e.g. 72h, 30m (default: keep)\n"
      "  --max-body BYTES         largest request body (default 16777216)\n"
      "  --max-batch N            most records in one request (default 10000)\n"
      "  --max-connections N      (default 256)\n"
      "  --max-connections-per-ip N  from one client address (default 64; 0 = no limit)\n"
      "  --max-body-in-flight BYTES  request body bytes held by all connections together;\n"
      "                           more get 503 (default 268435456; 0 = no limit)\n"
      "  --idle-timeout D         close a connection silent for D (default 15s)\n"
      "  --request-deadline D     a request's headers and body must arrive within D\n"
      "                           (default 30s; 0 = none)\n"
      "  --query-limit N          most CPIDs one query walks (default 100000)\n"
      "  --writer-token-file F    bearer tokens allowed to POST, one per line\n"
      "  --reader-token-file F    bearer tokens allowed to GET /v1 and /metrics\n"
      "                           (tokens of 16 characters or more; a --listen address\n"
      "                           other than loopback needs both files)\n"
      "  --insecure               listen on any address without tokens (anyone may\n"
      "                           write and read)\n"
      "  --tls-cert F --tls-key F serve HTTPS\n"
      "  --web DIR                the dashboard's files: DIR/index.html and DIR/assets/\n"
      "                           (default: share/ripple/web beside the program's bin/)\n"
      "  --no-web                 serve no dashboard (the API only)\n"
      "  --otlp-endpoint URL      also send every trace over OTLP/HTTP (protobuf) to URL,\n"
      "                           e.g. http://127.0.0.1:4318/v1/traces (docs/otlp.md)\n"
      "  --otlp-header 'N: V'     a header on every OTLP request (repeatable)\n"
      "  --otlp-headers-file F    headers from a file, one 'Name: value' per line (secrets)\n"
      "  --otlp-ca-file F         PEM bundle to verify an https endpoint\n"
      "  --otlp-client-cert F --otlp-client-key F   mutual TLS\n"
      "  --otlp-compression gzip|none   (default gzip)\n"
      "  --otlp-batch N           most rows of each table per request (default 1000)\n"
      "  --otlp-max-backlog N     most rows waiting per table; older are skipped (default "
      "1000000)\n"
      "  --otlp-timeout D         per request (default 10s)\n"
      "  --otlp-cursor-file F     where export progress is kept (default DB.otlp-cursor)\n"
      "  --details-db PATH        database of changes, Events and audit events\n"
      "                           (default DB.details)\n"
      "  --details-queue N        most details waiting to be written; more get 429\n"
      "                           (default 100000)\n"
      "  --details-max-rows N     retention of details by count (default: none; --max-age\n"
      "                           applies)\n"
      "  --max-audit-body BYTES   largest POST /v1/audit body (default 67108864)\n"
      "  --stall-multiple X       flag a write whose usual next hop is later than X times\n"
      "                           its p99 (default 3)\n"
      "  --stall-min-wait D       never flag before D (default 5s)\n"
      "  --stall-min-samples N    learn from at least N writes of a hop first (default 10)\n"
      "  --stall-min-share X      a next hop is expected when it followed at least this\n"
      "                           share of writes (default 0.9)\n"
      "  --stall-horizon D        a write is learned from D after it (default 10m)\n"
      "  --no-stalls              no stalled-cascade detection\n"
      "  --fight-window D         two writers setting a field back and forth within D\n"
      "                           of each other fight (default 10m)\n"
      "  --no-fights              no field-fight detection\n"
      "  --log-level LEVEL        debug, info, warn, error (default info)\n");
}

static void free_tokens(char **t);

/* One token per line, white space and CR around it trimmed; blank lines and
 * lines starting with # are skipped. Every token has OPT_TOKEN_MIN
 * characters or more. */
static char **read_tokens(const char *path) {
  char *text = NULL;
  if (opt_file("ripple-server", path, &text) != RIPPLE_OK) return NULL;
  size_t n = 0;
  char **t = calloc(strlen(text) / 2 + 2, sizeof *t);
  for (char *save = NULL, *line = strtok_r(text, "\r\n", &save); t && line;
       line = strtok_r(NULL, "\r\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    size_t len = strlen(line);
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\t')) line[--len] = '\0';
    if (!*line || *line == '#') continue;
    if (len < OPT_TOKEN_MIN) {
      fprintf(stderr,
              "ripple-server: %s: a token is %zu characters, shorter than %d: too easy to "
              "guess\n",
              path, len, OPT_TOKEN_MIN);
      free(text);
      free_tokens(t);
      return NULL;
    }
    t[n++] = strdup(line);
  }
  free(text);
  if (t && n == 0) {
    fprintf(stderr, "ripple-server: %s holds no token\n", path);
    free(t);
    return NULL;
  }
  return t;
}

static void free_tokens(char **t) {
  for (size_t i = 0; t && t[i]; i++) free(t[i]);
  free(t);
}

/* Open, serve until SIGINT or SIGTERM, close. Returns the exit status. */
static int serve(const srv_config_t *cfg, http_opts_t *ho, const exp_config_t *ec,
                 const sigset_t *sigs) {
  static srv_t srv;
  char err[512];
  if (srv_open(&srv, cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-server: %s\n", err);
    return 1;
  }
  /* The exporter starts before anything can be posted, so its view of the
   * store at start is complete. */
  exp_t *ex = NULL;
  if (ec->url && exp_start(srv_export_source(&srv), ec, &ex, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-server: --otlp-endpoint: %s\n", err);
    srv_close(&srv);
    return 1;
  }
  if (ex) {
    ho->more_metrics = (void (*)(void *, sbuf_t *))exp_metrics;
    ho->more_metrics_ud = ex;
  }
  http_t *h;
  if (http_start(&srv, ho, &h, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-server: %s\n", err);
    exp_stop(ex);
    srv_close(&srv);
    return 1;
  }
  ripple_log(RIPPLE_LOG_INFO, "listening", "addr=%s:%u tls=%s db=%s", ho->host, http_port(h),
             ho->tls_cert ? "on" : "off", cfg->db_path);
  int sig;
  sigwait(sigs, &sig);
  ripple_log(RIPPLE_LOG_INFO, "stopping", "signal=%d", sig);
  http_stop(h);
  exp_stop(ex);
  srv_close(&srv);
  ripple_log(RIPPLE_LOG_INFO, "stopped", NULL);
  return 0;
}

typedef struct options {
  srv_config_t cfg;
  http_opts_t ho;
  exp_config_t ec;
  char **otlp_headers; /* --otlp-header and --otlp-headers-file, NULL-terminated */
  size_t notlp_headers;
  char *cursor; /* the default cursor path, DB.otlp-cursor */
  ripple_log_level_t level;
  char *cert, *key;
  char host[64];
  const char *web_dir; /* --web */
  int no_web;          /* --no-web */
  int insecure;        /* --insecure */
  web_t *web;
} options_t;

static void options_free(options_t *o) {
  free_tokens(o->otlp_headers);
  free(o->cursor);
  free_tokens(o->ho.writer_tokens);
  free_tokens(o->ho.reader_tokens);
  free(o->cert);
  free(o->key);
  web_free(o->web);
}

/* A file option: a repeated option replaces the earlier value. */
static int file_option(char **slot, const char *path) {
  free(*slot);
  *slot = NULL;
  return opt_file("ripple-server", path, slot);
}

static int tokens_option(char ***slot, const char *path) {
  free_tokens(*slot);
  return (*slot = read_tokens(path)) ? RIPPLE_OK : RIPPLE_EINVAL;
}

static int sync_option(srv_config_t *c, const char *v) {
  if (strcmp(v, "full") != 0 && strcmp(v, "normal") != 0) return RIPPLE_EINVAL;
  c->sync_full = strcmp(v, "full") == 0;
  return RIPPLE_OK;
}

/* A header for OTLP requests: "Name: value", nothing that could split it. */
static int header_option(options_t *o, const char *v) {
  const char *colon = strchr(v, ':');
  if (!colon || colon == v || strpbrk(v, "\r\n")) {
    fprintf(stderr, "ripple-server: an OTLP header is 'Name: value', got '%s'\n", v);
    return RIPPLE_EINVAL;
  }
  char **h = realloc(o->otlp_headers, (o->notlp_headers + 2) * sizeof *h);
  if (!h) return RIPPLE_ENOMEM;
  o->otlp_headers = h;
  h[o->notlp_headers] = strdup(v);
  h[++o->notlp_headers] = NULL;
  o->ec.headers = h;
  return h[o->notlp_headers - 1] ? RIPPLE_OK : RIPPLE_ENOMEM;
}

static int headers_file_option(options_t *o, const char *path) {
  char **lines = read_tokens(path);
  int rc = lines ? RIPPLE_OK : RIPPLE_EINVAL;
  for (size_t i = 0; lines && lines[i] && rc == RIPPLE_OK; i++) rc = header_option(o, lines[i]);
  free_tokens(lines);
  return rc;
}

/* The exporter's options (--otlp-*); RIPPLE_ENOENT when a is not one. */
static int otlp_option(options_t *o, const char *a, const char *v) {
  exp_config_t *e = &o->ec;
  if (!strcmp(a, "--otlp-endpoint")) {
    if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) return RIPPLE_EINVAL;
    return e->url = v, RIPPLE_OK;
  }
  if (!strcmp(a, "--otlp-header")) return header_option(o, v);
  if (!strcmp(a, "--otlp-headers-file")) return headers_file_option(o, v);
  if (!strcmp(a, "--otlp-ca-file")) return e->ca_file = v, RIPPLE_OK;
  if (!strcmp(a, "--otlp-client-cert")) return e->client_cert = v, RIPPLE_OK;
  if (!strcmp(a, "--otlp-client-key")) return e->client_key = v, RIPPLE_OK;
  if (!strcmp(a, "--otlp-cursor-file")) return e->cursor_path = v, RIPPLE_OK;
  if (!strcmp(a, "--otlp-compression")) {
    if (strcmp(v, "gzip") != 0 && strcmp(v, "none") != 0) return RIPPLE_EINVAL;
    return e->gzip = !strcmp(v, "gzip"), RIPPLE_OK;
  }
  if (!strcmp(a, "--otlp-batch"))
    return opt_size(v, &e->batch) || !e->batch ? RIPPLE_EINVAL : RIPPLE_OK;
  if (!strcmp(a, "--otlp-max-backlog"))
    return opt_size(v, &e->max_backlog) || !e->max_backlog ? RIPPLE_EINVAL : RIPPLE_OK;
  if (!strcmp(a, "--otlp-timeout")) {
    int64_t ns;
    if (opt_duration(v, &ns) != RIPPLE_OK || ns < 1000000) return RIPPLE_EINVAL;
    return e->timeout_ms = ns / 1000000, RIPPLE_OK;
  }
  return RIPPLE_ENOENT;
}

static int ratio_option(const char *v, double lo, double hi, double *out) {
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= lo && x <= hi)) return RIPPLE_EINVAL;
  *out = x;
  return RIPPLE_OK;
}

/* Details and stalled cascades (--details-*, --stall-*); RIPPLE_ENOENT when
 * a is not one. */
static int details_option(options_t *o, const char *a, const char *v) {
  srv_config_t *c = &o->cfg;
  stall_opts_t *st = &c->stall;
  unsigned long n;
  if (!strcmp(a, "--details-db")) return c->details_path = v, RIPPLE_OK;
  if (!strcmp(a, "--details-queue"))
    return opt_size(v, &c->details_queue) || !c->details_queue ? RIPPLE_EINVAL : RIPPLE_OK;
  if (!strcmp(a, "--details-max-rows")) return opt_size(v, &c->details_max_rows);
  if (!strcmp(a, "--max-audit-body")) return opt_size(v, &o->ho.max_audit_body);
  if (!strcmp(a, "--stall-multiple")) return ratio_option(v, 1, 1000, &st->multiple);
  if (!strcmp(a, "--stall-min-share")) return ratio_option(v, 0.5, 1, &st->min_share);
  if (!strcmp(a, "--stall-min-wait")) return opt_duration(v, &st->min_wait_ns);
  if (!strcmp(a, "--stall-horizon")) return opt_duration(v, &st->horizon_ns);
  if (!strcmp(a, "--stall-min-samples")) {
    if (opt_ulong(v, 1, 1000000, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    return st->min_samples = (uint32_t)n, RIPPLE_OK;
  }
  if (!strcmp(a, "--no-stalls")) return c->stall_off = 1, RIPPLE_OK;
  if (!strcmp(a, "--fight-window"))
    return opt_duration(v, &c->fights.window_ns) || c->fights.window_ns <= 0 ? RIPPLE_EINVAL
                                                                             : RIPPLE_OK;
  if (!strcmp(a, "--no-fights")) return c->fights_off = 1, RIPPLE_OK;
  return otlp_option(o, a, v);
}

/* A count (seconds 0) or a duration in whole seconds (seconds 1: "30s",
 * "2m"; 0 only for --request-deadline, where it means none), into an
 * unsigned for libmicrohttpd. */
static int seconds_or_count(const char *v, int seconds, unsigned *out) {
  unsigned long n;
  int64_t ns;
  if (!seconds) {
    if (opt_ulong(v, 0, 1000000, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    return *out = (unsigned)n, RIPPLE_OK;
  }
  if (opt_duration(v, &ns) != RIPPLE_OK || ns < 0 || ns > 86400LL * 1000000000 || ns % 1000000000)
    return RIPPLE_EINVAL;
  return *out = (unsigned)(ns / 1000000000), RIPPLE_OK;
}

/* One option with its value (opt_cli_t.option). */
static int parse_option(void *ud, const char *a, const char *v) {
  options_t *o = ud;
  srv_config_t *c = &o->cfg;
  http_opts_t *ho = &o->ho;
  if (!strcmp(a, "--listen")) return opt_listen(v, o->host, sizeof o->host, &ho->port);
  if (!strcmp(a, "--db")) return c->db_path = v, RIPPLE_OK;
  if (!strcmp(a, "--sync")) return sync_option(c, v);
  if (!strcmp(a, "--max-cpids")) return opt_size(v, &c->max_vertices);
  if (!strcmp(a, "--max-age")) return opt_duration(v, &c->max_age_ns);
  if (!strcmp(a, "--max-body")) return opt_size(v, &ho->max_body);
  if (!strcmp(a, "--max-batch")) return opt_size(v, &c->limits.max_records);
  if (!strcmp(a, "--max-connections")) return opt_size(v, &ho->max_connections);
  if (!strcmp(a, "--max-connections-per-ip"))
    return seconds_or_count(v, 0, &ho->max_connections_per_ip);
  if (!strcmp(a, "--max-body-in-flight")) return opt_size(v, &ho->max_body_in_flight);
  if (!strcmp(a, "--idle-timeout")) return seconds_or_count(v, 1, &ho->idle_timeout_s);
  if (!strcmp(a, "--request-deadline")) return seconds_or_count(v, 1, &ho->request_deadline_s);
  if (!strcmp(a, "--query-limit"))
    return opt_size(v, &c->query_limit) || !c->query_limit ? RIPPLE_EINVAL : RIPPLE_OK;
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level);
  if (!strcmp(a, "--writer-token-file")) return tokens_option(&ho->writer_tokens, v);
  if (!strcmp(a, "--reader-token-file")) return tokens_option(&ho->reader_tokens, v);
  if (!strcmp(a, "--tls-cert")) return file_option(&o->cert, v);
  if (!strcmp(a, "--tls-key")) return file_option(&o->key, v);
  if (!strcmp(a, "--web")) return o->web_dir = v, o->no_web = 0, RIPPLE_OK;
  if (!strcmp(a, "--no-web")) return o->web_dir = NULL, o->no_web = 1, RIPPLE_OK;
  if (!strcmp(a, "--insecure")) return o->insecure = 1, RIPPLE_OK;
  return details_option(o, a, v);
}

/* Open by accident no more: an address other than loopback takes writer
 * and reader tokens, or --insecure saying that anyone who reaches it may
 * write and read. */
static int check_open(const options_t *o) {
  int loopback = !strncmp(o->host, "127.", 4);
  if (loopback || o->insecure || (o->ho.writer_tokens && o->ho.reader_tokens)) return RIPPLE_OK;
  fprintf(stderr,
          "ripple-server: --listen %s is not loopback: give --writer-token-file and "
          "--reader-token-file, or --insecure to let anyone who reaches it write and read\n",
          o->host);
  return RIPPLE_EINVAL;
}

/* The one line that says who may do what, at start; a warning when anyone
 * who reaches a non-loopback address may write. */
static void log_auth(const options_t *o) {
  int w = o->ho.writer_tokens != NULL, r = o->ho.reader_tokens != NULL;
  int loopback = !strncmp(o->host, "127.", 4);
  ripple_log(!w && !loopback ? RIPPLE_LOG_WARN : RIPPLE_LOG_INFO, "auth",
             "mode=%s writers=%s readers=%s listen=%s insecure=%s",
             w && r   ? "tokens"
             : w || r ? "partial"
                      : "open",
             w ? "token" : "open", r ? "token" : "open", o->host, o->insecure ? "yes" : "no");
}

/* A budget that cannot hold the largest body would refuse it for ever. */
static int check_budget(const http_opts_t *ho) {
  size_t need = ho->max_audit_body > ho->max_body ? ho->max_audit_body : ho->max_body;
  if (!ho->max_body_in_flight || ho->max_body_in_flight >= need) return RIPPLE_OK;
  fprintf(stderr,
          "ripple-server: --max-body-in-flight %zu is smaller than the largest body allowed "
          "(%zu, --max-body or --max-audit-body)\n",
          ho->max_body_in_flight, need);
  return RIPPLE_EINVAL;
}

/* RIPPLE_OK to go on and serve, or RIPPLE_ESTATE with the exit status. */
static int parse_args(int argc, char **argv, options_t *o, int *status) {
  static const char *const flags[] = {"--no-web", "--no-stalls", "--no-fights", "--insecure", NULL};
  opt_cli_t cli = {
      .prog = "ripple-server", .flags = flags, .option = parse_option, .usage = usage, .ud = o};
  if (opt_parse(argc, argv, &cli, status) != RIPPLE_OK) return RIPPLE_ESTATE;
  if (!o->cert != !o->key) {
    fprintf(stderr, "ripple-server: --tls-cert and --tls-key go together\n");
    *status = 2;
    return RIPPLE_ESTATE;
  }
  if (!o->ec.client_cert != !o->ec.client_key) {
    fprintf(stderr, "ripple-server: --otlp-client-cert and --otlp-client-key go together\n");
    *status = 2;
    return RIPPLE_ESTATE;
  }
  if (check_open(o) != RIPPLE_OK || check_budget(&o->ho) != RIPPLE_OK) {
    *status = 2;
    return RIPPLE_ESTATE;
  }
  if (o->ec.url && !o->ec.cursor_path) {
    size_t n = strlen(o->cfg.db_path) + sizeof ".otlp-cursor";
    o->cursor = malloc(n);
    if (!o->cursor) return *status = 1, RIPPLE_ESTATE;
    snprintf(o->cursor, n, "%s.otlp-cursor", o->cfg.db_path);
    o->ec.cursor_path = o->cursor;
  }
  o->ho.host = o->host;
  o->ho.tls_cert = o->cert;
  o->ho.tls_key = o->key;
  return RIPPLE_OK;
}

/* share/ripple/web beside the program's bin/: where an installed prefix has
 * the dashboard, and the build tree too (the bundle is built into
 * <build>/share/ripple/web, the program into <build>/bin). */
static int default_web_dir(char *out, size_t cap) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';
  return snprintf(out, cap, "%s/../share/ripple/web", exe) < (int)cap;
}

static void log_missing(ripple_log_level_t level, const char *dir, const char *why) {
  char qd[600], qw[600];
  ripple_log_quote(dir, qd, sizeof qd);
  ripple_log_quote(why, qw, sizeof qw);
  ripple_log(level, "dashboard_missing", "dir=%s reason=%s", qd, qw);
}

/* The dashboard's files: --web DIR (a failure stops the server), else the
 * default directory when it exists (a failure is logged, the API served).
 * One log line either way. RIPPLE_OK to go on. */
static int load_web(options_t *o) {
  char dflt[4200], real[PATH_MAX], err[512], qd[PATH_MAX + 8];
  const char *dir = o->web_dir;
  if (o->no_web) {
    log_missing(RIPPLE_LOG_INFO, "", "--no-web");
    return RIPPLE_OK;
  }
  if (!dir) {
    if (!default_web_dir(dflt, sizeof dflt)) {
      log_missing(RIPPLE_LOG_INFO, "", "cannot read /proc/self/exe; pass --web DIR");
      return RIPPLE_OK;
    }
    if (!realpath(dflt, real)) {
      log_missing(RIPPLE_LOG_INFO, dflt, "not installed: build it with make, or pass --web DIR");
      return RIPPLE_OK;
    }
    dir = real;
  }
  int rc = web_open(dir, &o->web, err, sizeof err);
  if (rc != RIPPLE_OK && o->web_dir) {
    fprintf(stderr, "ripple-server: --web: %s\n", err);
    return rc;
  }
  if (rc != RIPPLE_OK) {
    log_missing(RIPPLE_LOG_WARN, dir, err);
    return RIPPLE_OK;
  }
  o->ho.web = o->web;
  ripple_log_quote(dir, qd, sizeof qd);
  ripple_log(RIPPLE_LOG_INFO, "dashboard", "dir=%s files=%zu bytes=%zu", qd, web_files(o->web),
             web_bytes(o->web));
  return RIPPLE_OK;
}

int main(int argc, char **argv) {
  options_t o = {.cfg = {.db_path = "ripple.db",
                         .max_vertices = 10000000,
                         .query_limit = 100000,
                         .limits = {.max_records = 10000,
                                    .max_sources = 4096,
                                    .max_attrs = 64,
                                    .max_string = 4096}},
                 .ho = {.host = "127.0.0.1",
                        .port = 7480,
                        .max_body = 16 << 20,
                        .max_audit_body = 64 << 20,
                        .max_connections = 256,
                        .max_connections_per_ip = 64,
                        .max_body_in_flight = 256u << 20,
                        .idle_timeout_s = 15,
                        .request_deadline_s = 30},
                 .ec = {.gzip = 1,
                        .batch = 1000,
                        .max_backlog = 1000000,
                        .timeout_ms = 10000,
                        .backoff_min_ms = 500,
                        .backoff_max_ms = 30000},
                 .level = RIPPLE_LOG_INFO,
                 .host = "127.0.0.1"};
  int rc;
  if (parse_args(argc, argv, &o, &rc) == RIPPLE_OK) {
    ripple_log_setup("ripple-server", o.level, NULL, NULL);
    log_auth(&o);
    /* Signals are taken by sigwait in serve(); every other thread blocks them. */
    sigset_t sigs;
    httpd_signals(&sigs);
    rc = load_web(&o) == RIPPLE_OK ? serve(&o.cfg, &o.ho, &o.ec, &sigs) : 1;
  }
  options_free(&o);
  return rc;
}
