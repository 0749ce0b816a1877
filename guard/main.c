/*
 * main.c - ripple-guard: takes ripple-webhook out of the API server's write
 * path when it stops answering, and puts it back when it answers again
 * (docs/guard.md).
 *
 *   ripple-guard --name MWC [--listen 127.0.0.1:8090] [--interval MS]
 *                [--probe-timeout MS] [--fail-after N] [--recover-after N] ...
 *
 * failurePolicy Ignore protects the cluster from a webhook that refuses
 * connections, not from one that accepts them and never answers: then every
 * write waits for timeoutSeconds. The guard probes the webhook as the API
 * server calls it and, while it does not answer, keeps the API server from
 * calling it at all (a matchCondition "false" on the registration). Serves
 * GET /healthz and /metrics over HTTP; stops on SIGINT/SIGTERM.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"
#include "ripplex/httpd.h"
#include "ripplex/opt.h"
#include "ripplex/sbuf.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-guard --name MWC [options]\n"
          "  --name MWC              the MutatingWebhookConfiguration to guard (required)\n"
          "  --listen ADDR:PORT      /healthz and /metrics over HTTP (default 127.0.0.1:8090;\n"
          "                          port 0 = any)\n"
          "  --kubeconfig F          (default: $KUBECONFIG, ~/.kube/config, in-cluster)\n"
          "  --context NAME          kubeconfig context\n"
          "  --url URL --ca F        probe URL with CA file F instead of each webhook's\n"
          "                          clientConfig and caBundle\n"
          "  --ca-bundle F           keep every webhook's caBundle equal to this PEM file (the\n"
          "                          webhook's CA; re-read every --resync) and probe with it;\n"
          "                          the condition comes off only once the caBundle is set\n"
          "  --client-cert F --client-key F  the probes' client certificate and key (PEM),\n"
          "                          for a webhook that takes /mutate only from clients of\n"
          "                          its CA (ripple-webhook --client-ca)\n"
          "  --interval MS           between probes (default 250)\n"
          "  --probe-timeout MS      a probe's whole time, connect to answer (default 250)\n"
          "  --fail-after N          consecutive failures that disable (default 2)\n"
          "  --recover-after N       consecutive successes that restore (default 3)\n"
          "  --resync MS             re-read the registration this often (default 10000)\n"
          "  --endpoints H:P[,H:P]   probe these as the Service's endpoints, each on its\n"
          "                          own, TLS for the webhook's URL (tests; a webhook\n"
          "                          registered by Service has its EndpointSlices read)\n"
          "  --allow-remote          probe URLs and endpoints that are not on loopback (a\n"
          "                          Service in a real cluster)\n"
          "  --log-level LEVEL       debug, info, warn, error\n");
}

typedef struct options {
  guard_opts_t g;
  char host[64];
  uint16_t port;
  const char *kubeconfig, *context;
  char *ca;
  const char *client_cert, *client_key; /* --client-cert, --client-key */
  ripple_log_level_t level;
  guard_eps_t endpoints; /* --endpoints */
} options_t;

/* A number option into a uint32_t field. */
static int u32_option(const char *v, unsigned long min, unsigned long max, uint32_t *out) {
  unsigned long n;
  if (opt_ulong(v, min, max, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
  *out = (uint32_t)n;
  return RIPPLE_OK;
}

static int endpoints_option(options_t *o, const char *v) {
  char why[200];
  if (guard_eps_parse_list(v, &o->endpoints, why, sizeof why) != RIPPLE_OK) {
    fprintf(stderr, "ripple-guard: --endpoints: %s\n", why);
    return RIPPLE_EINVAL;
  }
  o->g.endpoints = &o->endpoints;
  return RIPPLE_OK;
}

/* Like --url: the lab never dials out. */
static int endpoints_loopback(const options_t *o) {
  for (size_t i = 0; o->g.endpoints && !o->g.allow_remote && i < o->endpoints.n; i++)
    if (!guard_addr_loopback(o->endpoints.e[i].addr)) {
      fprintf(stderr, "ripple-guard: --endpoints %s is not on loopback (--allow-remote)\n",
              o->endpoints.e[i].addr);
      return 0;
    }
  return 1;
}

/* One option with its value, or a flag (v NULL) (opt_cli_t.option). */
static int parse_option(void *ud, const char *a, const char *v) {
  options_t *o = ud;
  if (!strcmp(a, "--allow-remote")) return o->g.allow_remote = 1, RIPPLE_OK;
  if (!strcmp(a, "--name")) return o->g.name = v, RIPPLE_OK;
  if (!strcmp(a, "--listen")) return opt_listen(v, o->host, sizeof o->host, &o->port);
  if (!strcmp(a, "--kubeconfig")) return o->kubeconfig = v, RIPPLE_OK;
  if (!strcmp(a, "--context")) return o->context = v, RIPPLE_OK;
  if (!strcmp(a, "--url")) return o->g.url = v, RIPPLE_OK;
  if (!strcmp(a, "--endpoints")) return endpoints_option(o, v);
  /* Not read here: a missing or bad file is waited for, never fatal. */
  if (!strcmp(a, "--ca-bundle")) return o->g.ca_bundle = v, RIPPLE_OK;
  if (!strcmp(a, "--ca")) {
    free(o->ca);
    o->ca = NULL;
    return opt_file("ripple-guard", v, &o->ca);
  }
  if (!strcmp(a, "--client-cert"))
    return opt_ca_file("ripple-guard", a, v) == RIPPLE_OK ? (o->client_cert = v, RIPPLE_OK)
                                                          : RIPPLE_EINVAL;
  if (!strcmp(a, "--client-key")) {
    if (access(v, R_OK) != 0) {
      fprintf(stderr, "ripple-guard: %s %s: cannot read it\n", a, v);
      return RIPPLE_EINVAL;
    }
    return o->client_key = v, RIPPLE_OK;
  }
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level);
  if (!strcmp(a, "--interval")) return u32_option(v, 10, 600000, &o->g.interval_ms);
  if (!strcmp(a, "--probe-timeout")) return u32_option(v, 10, 60000, &o->g.probe_timeout_ms);
  if (!strcmp(a, "--resync")) return u32_option(v, 100, 3600000, &o->g.resync_ms);
  if (!strcmp(a, "--fail-after")) return u32_option(v, 1, 1000, &o->g.fail_after);
  if (!strcmp(a, "--recover-after")) return u32_option(v, 1, 1000, &o->g.recover_after);
  return RIPPLE_ENOENT;
}

/* RIPPLE_OK to go on, or RIPPLE_ESTATE with the exit status. */
static int parse_args(int argc, char **argv, options_t *o, int *status) {
  static const char *const flags[] = {"--allow-remote", NULL};
  opt_cli_t cli = {
      .prog = "ripple-guard", .flags = flags, .option = parse_option, .usage = usage, .ud = o};
  if (opt_parse(argc, argv, &cli, status) != RIPPLE_OK) return RIPPLE_ESTATE;
  *status = 2;
  if (!o->g.name) {
    fprintf(stderr, "ripple-guard: --name MWC is required\n");
    return RIPPLE_ESTATE;
  }
  if (o->ca && !o->g.url) {
    fprintf(stderr, "ripple-guard: --ca goes with --url\n");
    return RIPPLE_ESTATE;
  }
  if (o->ca && o->g.ca_bundle) {
    fprintf(stderr,
            "ripple-guard: --ca and --ca-bundle exclude each other (the probes trust "
            "--ca-bundle's CA)\n");
    return RIPPLE_ESTATE;
  }
  if (!o->client_cert != !o->client_key) {
    fprintf(stderr, "ripple-guard: --client-cert and --client-key go together\n");
    return RIPPLE_ESTATE;
  }
  if (!endpoints_loopback(o)) return RIPPLE_ESTATE;
  o->g.ca = o->ca;
  guard_probe_client(o->client_cert, o->client_key);
  return RIPPLE_OK;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type,
                                 const char *p, size_t len) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)p, MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls) {
  (void)version, (void)data;
  if (!*con_cls) { /* headers only so far */
    *con_cls = c;
    return MHD_YES;
  }
  if (*size) { /* no endpoint takes a body */
    *size = 0;
    return MHD_YES;
  }
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return send_text(c, 405, "text/plain", "GET /healthz or /metrics\n", 25);
  if (!strcmp(url, "/healthz")) return send_text(c, 200, "text/plain", "ok\n", 3);
  if (strcmp(url, "/metrics") != 0)
    return send_text(c, 404, "text/plain", "try /healthz, /metrics\n", 23);
  sbuf_t b;
  sbuf_init(&b);
  guard_metrics_write(cls, &b);
  enum MHD_Result rc = b.oom ? send_text(c, 500, "text/plain", "out of memory\n", 14)
                             : send_text(c, 200, "text/plain; version=0.0.4", b.p, b.len);
  sbuf_free(&b);
  return rc;
}

static int client_new(const options_t *o, ripple_kube_client_t **kc) {
  ripple_kube_config_opts_t co = {.kubeconfig = o->kubeconfig, .context = o->context};
  ripple_kube_config_t *cfg;
  char err[512];
  if (ripple_kube_config_load(&co, &cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-guard: %s\n", err);
    return -1;
  }
  /* Short requests: a slow API server must not hold the probes up for long. */
  ripple_kube_client_opts_t ko = {.timeout_ms = 5000, .user_agent = "ripple-guard"};
  int rc = ripple_kube_client_new(cfg, &ko, kc);
  ripple_kube_config_free(cfg);
  if (rc != RIPPLE_OK) fprintf(stderr, "ripple-guard: %s\n", ripple_kube_strerror(rc));
  return rc == RIPPLE_OK ? 0 : -1;
}

static int serve(options_t *o, const sigset_t *sigs) {
  static guard_metrics_t m;
  ripple_kube_client_t *kc = NULL;
  if (client_new(o, &kc)) return 1;
  httpd_opts_t ho = {.host = o->host,
                     .port = o->port,
                     .max_connections = 32,
                     .timeout_s = 10,
                     .on_request = on_request,
                     .cls = &m};
  struct MHD_Daemon *d;
  uint16_t port;
  char err[512];
  if (httpd_start(&ho, &d, &port, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-guard: %s\n", err);
    ripple_kube_client_free(kc);
    return 1;
  }
  char qb[600];
  ripple_log_quote(o->g.ca_bundle ? o->g.ca_bundle : "none", qb, sizeof qb);
  ripple_log(RIPPLE_LOG_INFO, "listening",
             "addr=%s:%u name=%s interval_ms=%u probe_timeout_ms=%u fail_after=%u "
             "recover_after=%u ca_bundle=%s",
             o->host, port, o->g.name, o->g.interval_ms, o->g.probe_timeout_ms, o->g.fail_after,
             o->g.recover_after, qb);
  guard_loop(&o->g, kc, &m, sigs);
  MHD_stop_daemon(d);
  ripple_kube_client_free(kc);
  return 0;
}

int main(int argc, char **argv) {
  options_t o;
  memset(&o, 0, sizeof o);
  snprintf(o.host, sizeof o.host, "127.0.0.1");
  o.port = 8090;
  o.level = RIPPLE_LOG_INFO;
  o.g = (guard_opts_t){.interval_ms = 250,
                       .probe_timeout_ms = 250,
                       .resync_ms = 10000,
                       .fail_after = 2,
                       .recover_after = 3};
  int rc;
  if (parse_args(argc, argv, &o, &rc) == RIPPLE_OK) {
    ripple_log_setup("guard", o.level, NULL, NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* Signals are taken by sigtimedwait in the main thread only. */
    sigset_t sigs;
    httpd_signals(&sigs);
    rc = serve(&o, &sigs);
    curl_global_cleanup();
  }
  free(o.ca);
  return rc;
}
