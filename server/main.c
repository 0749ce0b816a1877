/*
 * main.c - ripple-server: the trace server of CPID tracing.
 *
 *   ripple-server [--listen 127.0.0.1:7480] [--db ripple.db] ...
 *
 * Receives mergelogs and spans from instrumented components (libripple's
 * shipper), keeps them durably, and answers "what did this change cause?"
 * (docs/api.md). Stops cleanly on SIGINT/SIGTERM: in-flight commits finish,
 * and everything acknowledged is on disk.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "server.h"
#include "ripplex/sbuf.h"

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
      "  --query-limit N          most CPIDs one query walks (default 100000)\n"
      "  --writer-token-file F    bearer tokens allowed to POST, one per line\n"
      "  --reader-token-file F    bearer tokens allowed to GET /v1 and /metrics\n"
      "  --tls-cert F --tls-key F serve HTTPS\n"
      "  --log-level LEVEL        debug, info, warn, error (default info)\n");
}

static char *slurp(const char *path, const char *what) {
  char *s = NULL;
  if (sbuf_read_file(path, &s) != RIPPLE_OK)
    fprintf(stderr, "ripple-server: cannot read %s %s: %s\n", what, path, strerror(errno));
  return s;
}

/* One token per line; blank lines and lines starting with # are skipped. */
static char **read_tokens(const char *path) {
  char *text = slurp(path, "token file");
  if (!text) return NULL;
  size_t n = 0;
  char **t = calloc(strlen(text) / 2 + 2, sizeof *t);
  for (char *save = NULL, *line = strtok_r(text, "\r\n", &save); t && line;
       line = strtok_r(NULL, "\r\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    if (*line && *line != '#') t[n++] = strdup(line);
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

static int parse_duration(const char *s, int64_t *ns) {
  char *end;
  double v = strtod(s, &end);
  int64_t unit = !strcmp(end, "s")   ? 1
                 : !strcmp(end, "m") ? 60
                 : !strcmp(end, "h") ? 3600
                 : !strcmp(end, "d") ? 86400
                                     : 0;
  if (end == s || unit == 0 || v <= 0) return -1;
  *ns = (int64_t)(v * (double)unit * 1e9);
  return 0;
}

static int parse_size(const char *s, size_t *out) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end || s[0] == '-') return -1;
  *out = (size_t)v;
  return 0;
}

/* Open, serve until SIGINT or SIGTERM, close. Returns the exit status. */
static int serve(const srv_config_t *cfg, const http_opts_t *ho, const sigset_t *sigs) {
  static srv_t srv;
  char err[512];
  if (srv_open(&srv, cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-server: %s\n", err);
    return 1;
  }
  http_t *h;
  if (http_start(&srv, ho, &h, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-server: %s\n", err);
    srv_close(&srv);
    return 1;
  }
  ripple_log(RIPPLE_LOG_INFO, "listening", "addr=%s:%u tls=%s db=%s", ho->host, http_port(h),
             ho->tls_cert ? "on" : "off", cfg->db_path);
  int sig;
  sigwait(sigs, &sig);
  ripple_log(RIPPLE_LOG_INFO, "stopping", "signal=%d", sig);
  http_stop(h);
  srv_close(&srv);
  ripple_log(RIPPLE_LOG_INFO, "stopped", NULL);
  return 0;
}

typedef struct options {
  srv_config_t cfg;
  http_opts_t ho;
  ripple_log_level_t level;
  char *cert, *key;
} options_t;

static void options_free(options_t *o) {
  free_tokens(o->ho.writer_tokens);
  free_tokens(o->ho.reader_tokens);
  free(o->cert);
  free(o->key);
}

static int parse_listen(const char *v, http_opts_t *ho) {
  static char host[64];
  const char *colon = strrchr(v, ':');
  char *end = NULL;
  unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (!colon || (size_t)(colon - v) >= sizeof host || *end || end == colon + 1 || port > 65535)
    return -1;
  memcpy(host, v, (size_t)(colon - v));
  host[colon - v] = '\0';
  ho->host = host;
  ho->port = (uint16_t)port;
  return 0;
}

/* One option with its value. 0 when taken, -1 for a bad value, -2 unknown. */
static int parse_option(options_t *o, const char *a, const char *v) {
  srv_config_t *c = &o->cfg;
  http_opts_t *ho = &o->ho;
  if (!strcmp(a, "--listen")) return parse_listen(v, ho);
  if (!strcmp(a, "--db")) return c->db_path = v, 0;
  if (!strcmp(a, "--sync")) {
    c->sync_full = strcmp(v, "full") == 0;
    return strcmp(v, "normal") != 0 && !c->sync_full ? -1 : 0;
  }
  if (!strcmp(a, "--max-cpids")) return parse_size(v, &c->max_vertices);
  if (!strcmp(a, "--max-age")) return parse_duration(v, &c->max_age_ns);
  if (!strcmp(a, "--max-body")) return parse_size(v, &ho->max_body);
  if (!strcmp(a, "--max-batch")) return parse_size(v, &c->limits.max_records);
  if (!strcmp(a, "--max-connections")) return parse_size(v, &ho->max_connections);
  if (!strcmp(a, "--query-limit"))
    return parse_size(v, &c->query_limit) || !c->query_limit ? -1 : 0;
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level) ? -1 : 0;
  /* Files: a repeated option replaces the earlier value. */
  if (!strcmp(a, "--writer-token-file"))
    return free_tokens(ho->writer_tokens), (ho->writer_tokens = read_tokens(v)) ? 0 : -1;
  if (!strcmp(a, "--reader-token-file"))
    return free_tokens(ho->reader_tokens), (ho->reader_tokens = read_tokens(v)) ? 0 : -1;
  if (!strcmp(a, "--tls-cert")) return free(o->cert), (o->cert = slurp(v, "certificate")) ? 0 : -1;
  if (!strcmp(a, "--tls-key")) return free(o->key), (o->key = slurp(v, "key")) ? 0 : -1;
  return -2;
}

/* -1 to go on and serve, or the exit status. */
static int parse_args(int argc, char **argv, options_t *o) {
  for (int i = 1; i < argc; i += 2) { /* every option takes a value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    int rc = v ? parse_option(o, a, v) : -2;
    if (rc == -2) {
      fprintf(stderr, "ripple-server: unknown option or missing value: %s\n", a);
      usage(stderr);
      return 2;
    }
    if (rc != 0) {
      fprintf(stderr, "ripple-server: bad value for %s: '%s'\n", a, v);
      return 2;
    }
  }
  if (!o->cert != !o->key) {
    fprintf(stderr, "ripple-server: --tls-cert and --tls-key go together\n");
    return 2;
  }
  o->ho.tls_cert = o->cert;
  o->ho.tls_key = o->key;
  return -1;
}

int main(int argc, char **argv) {
  options_t o = {
      .cfg = {.db_path = "ripple.db",
              .max_vertices = 10000000,
              .query_limit = 100000,
              .limits =
                  {.max_records = 10000, .max_sources = 4096, .max_attrs = 64, .max_string = 4096}},
      .ho = {.host = "127.0.0.1", .port = 7480, .max_body = 16 << 20, .max_connections = 256},
      .level = RIPPLE_LOG_INFO};
  int rc = parse_args(argc, argv, &o);
  if (rc < 0) {
    ripple_log_setup("ripple-server", o.level, NULL, NULL);
    /* Signals are taken by sigwait in serve(); every other thread blocks them. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = serve(&o.cfg, &o.ho, &sigs);
  }
  options_free(&o);
  return rc;
}
