/*
 * main.c - ripple-webhook: a mutating admission webhook that propagates CPIDs
 * for controllers that were never instrumented (docs/webhook.md).
 *
 *   ripple-webhook --tls-cert F --tls-key F [--listen 127.0.0.1:8443]
 *                  [--kubeconfig F] [--context C] [--trace-server URL] ...
 *
 * Serves POST /mutate over HTTPS, keeps informers of the objects the relation
 * rules need, and ships mergelogs and spans to the trace server in the
 * background. Stops cleanly on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "ctxmac.h"
#include "forward.h"
#include "handover.h"
#include "http.h"
#include "lease.h"
#include "ripple/kube.h"
#include "ripplex/httpd.h"
#include "ripplex/opt.h"
#include "ripplex/sbuf.h"
#include "ripplex/tlspeer.h"
#include "route.h"
#include "wh.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-webhook [options]\n"
          "  --listen ADDR:PORT        where to listen (default 127.0.0.1:8443; port 0 = any)\n"
          "  --tls-cert F --tls-key F  serving certificate and key (PEM); without them plain\n"
          "                            HTTP, which an API server will not call\n"
          "  --client-ca F             POST /mutate only from clients with a certificate of\n"
          "                            this CA (PEM): kube-apiserver's admission kubeconfig\n"
          "                            (docs/webhook.md \"Client authentication\"); the\n"
          "                            other replicas show their token instead\n"
          "  --client-name NAME        ... and only a certificate for NAME (its subject CN or\n"
          "                            a DNS name; repeatable)\n"
          "  --metrics-listen ADDR:PORT  serve /metrics (and /healthz) there, plain HTTP, and\n"
          "                            not on --listen's port (404 there)\n"
          "  --kubeconfig F            for the informers (default: $KUBECONFIG, ~/.kube/config,\n"
          "                            in-cluster)\n"
          "  --context NAME            kubeconfig context\n"
          "  --no-informers            run without a cluster: related objects are unknown\n"
          "  --trace-server URL        where mergelogs and spans go (default: nowhere)\n"
          "  --trace-server-token-file F  the trace server's writer token: F's first line\n"
          "                            (a server started with --writer-token-file needs it)\n"
          "  --trace-server-ca F       CA (PEM) to trust for an https:// trace server\n"
          "  --namespace-exclude LIST  namespaces left alone, comma-separated\n"
          "                            (default ripple-system)\n"
          "  --controller-user PAT     also a controller: a user name, or a prefix ending in *\n"
          "                            (repeatable; every ServiceAccount already is one)\n"
          "  --root-user PAT           a person after all: its writes start traces, e.g. a CI\n"
          "                            system's ServiceAccount (repeatable)\n"
          "  --trusted-writer PAT      a controller whose own contexts are taken (an\n"
          "                            instrumented one; repeatable); others' are ignored\n"
          "  --context-key-file F      key of the contexts' MACs (at least 32 bytes, the same\n"
          "                            for every replica); without it contexts are unsigned\n"
          "  --owner-kind GROUP/KIND   a custom resource followed as a controlling owner (its\n"
          "                            informer started when first met), e.g.\n"
          "                            lab.ripple.dev/RippleApp (repeatable; built in: the\n"
          "                            workload kinds, docs/webhook.md \"Owner kinds\")\n"
          "  --max-ancestors N         ancestors per context (default 10, at most 32)\n"
          "  --deployment-status-ctx   let deployments/status writes change the context (costs\n"
          "                            a ReplicaSet write each: see docs/webhook.md)\n"
          "  --traceparent             also write W3C trace context (KEP-5915's annotation\n"
          "                            tracing.k8s.io/traceparent) and take a person's as the\n"
          "                            root CPID (docs/format.md)\n"
          "  --max-body BYTES          largest AdmissionReview (default 8388608)\n"
          "  --max-connections-per-ip N  from one client address (default 128)\n"
          "  --request-deadline D      a request's headers and body must arrive within D\n"
          "                            (default 15s)\n"
          "  --decider-lease NS/NAME   several replicas: the one holding this Lease decides\n"
          "                            every write, the others forward to it (docs/webhook.md)\n"
          "  --peer-address HOST[:PORT]  this replica's address for the others (default\n"
          "                            $POD_IP; the port: the one listened on)\n"
          "  --peer-tls-name NAME      the name the replicas' certificate is valid for (the\n"
          "                            webhook Service's DNS name; default: the address)\n"
          "  --peer-ca F               CA (PEM) of the replicas' certificate (default: the\n"
          "                            system's)\n"
          "  --forward-timeout-ms N    a forward to the decider, at most (default 300)\n"
          "  --shutdown-delay-ms N     on SIGTERM, answer on for N ms while /readyz says 503,\n"
          "                            so that writes stop coming before the port closes\n"
          "                            (default 0)\n"
          "  --log-level LEVEL         debug (a line per request), info, warn, error\n");
}

#define WH_CLIENT_NAMES_MAX 16

typedef struct options {
  char host[64];
  uint16_t port;
  char *cert, *key;
  char *client_ca;                               /* --client-ca: PEM text */
  const char *client_names[WH_CLIENT_NAMES_MAX]; /* --client-name */
  size_t nclient_names;
  char metrics_host[64]; /* --metrics-listen; "" none */
  uint16_t metrics_port;
  const char *kubeconfig, *context, *trace_server;
  char *trace_token;    /* --trace-server-token-file's token; never logged */
  char *context_key;    /* --context-key-file's text; never logged */
  const char *trace_ca; /* --trace-server-ca */
  int no_informers;
  char *exclude; /* the list's copy, cut at commas */
  wh_users_t users;
  wh_owner_kinds_t owner_kinds; /* --owner-kind */
  wh_opts_t wo;
  size_t max_body;
  unsigned per_ip, deadline_s; /* --max-connections-per-ip, --request-deadline */
  ripple_log_level_t level;
  /* Several replicas (route.h): the Lease, this replica's address, how the
   * others' certificate is checked, how long a forward may take. */
  char lease_ns[64], lease_name[254];
  const char *peer_address, *peer_tls_name, *peer_ca;
  uint32_t forward_timeout_ms;
  uint32_t shutdown_delay_ms; /* --shutdown-delay-ms */
} options_t;

static int parse_exclude(const char *v, options_t *o) {
  free(o->exclude);
  if (!(o->exclude = strdup(v))) return RIPPLE_ENOMEM;
  o->wo.nexclude_ns = 0;
  for (char *save = NULL, *t = strtok_r(o->exclude, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (o->wo.nexclude_ns == WH_EXCLUDE_MAX) return RIPPLE_ERANGE;
    o->wo.exclude_ns[o->wo.nexclude_ns++] = t;
  }
  return RIPPLE_OK;
}

/* --decider-lease NS/NAME: a namespace and a Lease name, plain DNS labels. */
static int parse_lease(const char *v, options_t *o) {
  const char *slash = strchr(v, '/');
  if (!slash || slash == v || !slash[1] || (size_t)(slash - v) >= sizeof o->lease_ns ||
      strlen(slash + 1) >= sizeof o->lease_name)
    return RIPPLE_EINVAL;
  for (const char *c = v; *c; c++)
    if (c != slash &&
        !((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.'))
      return RIPPLE_EINVAL;
  snprintf(o->lease_ns, sizeof o->lease_ns, "%.*s", (int)(slash - v), v);
  snprintf(o->lease_name, sizeof o->lease_name, "%s", slash + 1);
  return RIPPLE_OK;
}

/* A file option: a repeated option replaces the earlier value. */
static int file_option(char **slot, const char *path) {
  free(*slot);
  *slot = NULL;
  return opt_file("ripple-webhook", path, slot);
}

/* --context-key-file: refused unless it holds a key ctxmac.h takes. */
static int context_key_option(options_t *o, const char *path) {
  if (o->context_key) memset(o->context_key, 0, strlen(o->context_key));
  int rc = file_option(&o->context_key, path);
  if (rc != RIPPLE_OK) return rc;
  wh_ctxmac_t m = {0};
  if (wh_ctxmac_set(&m, o->context_key, strlen(o->context_key)) != RIPPLE_OK) {
    fprintf(stderr,
            "ripple-webhook: --context-key-file %s: the key must be %d to %d bytes (white space "
            "around it ignored)\n",
            path, WH_CTXMAC_KEY_MIN, WH_CTXMAC_KEY_MAX);
    return RIPPLE_EINVAL;
  }
  wh_ctxmac_clear(&m);
  o->wo.context_key = o->context_key;
  o->wo.context_key_len = strlen(o->context_key);
  return RIPPLE_OK;
}

/* One option with its value, or a flag (v NULL) (opt_cli_t.option). */
static int parse_option(void *ud, const char *a, const char *v) {
  options_t *o = ud;
  unsigned long n;
  if (!strcmp(a, "--no-informers")) return o->no_informers = 1, RIPPLE_OK;
  if (!strcmp(a, "--deployment-status-ctx")) return o->wo.deployment_status_ctx = 1, RIPPLE_OK;
  if (!strcmp(a, "--traceparent")) return o->wo.traceparent = 1, RIPPLE_OK;
  if (!strcmp(a, "--listen")) return opt_listen(v, o->host, sizeof o->host, &o->port);
  if (!strcmp(a, "--tls-cert")) return file_option(&o->cert, v);
  if (!strcmp(a, "--tls-key")) return file_option(&o->key, v);
  if (!strcmp(a, "--client-ca"))
    return opt_ca_file("ripple-webhook", a, v) == RIPPLE_OK ? file_option(&o->client_ca, v)
                                                            : RIPPLE_EINVAL;
  if (!strcmp(a, "--client-name")) {
    if (!tlspeer_name_valid(v)) return RIPPLE_EINVAL;
    if (o->nclient_names == WH_CLIENT_NAMES_MAX) return RIPPLE_ERANGE;
    return o->client_names[o->nclient_names++] = v, RIPPLE_OK;
  }
  if (!strcmp(a, "--metrics-listen"))
    return opt_listen(v, o->metrics_host, sizeof o->metrics_host, &o->metrics_port);
  if (!strcmp(a, "--kubeconfig")) return o->kubeconfig = v, RIPPLE_OK;
  if (!strcmp(a, "--context")) return o->context = v, RIPPLE_OK;
  if (!strcmp(a, "--trace-server")) return o->trace_server = v, RIPPLE_OK;
  if (!strcmp(a, "--trace-server-token-file")) {
    free(o->trace_token);
    o->trace_token = NULL;
    return opt_token_file("ripple-webhook", a, v, &o->trace_token);
  }
  if (!strcmp(a, "--trace-server-ca"))
    return opt_ca_file("ripple-webhook", a, v) == RIPPLE_OK ? (o->trace_ca = v, RIPPLE_OK)
                                                            : RIPPLE_EINVAL;
  if (!strcmp(a, "--namespace-exclude")) return parse_exclude(v, o);
  if (!strcmp(a, "--controller-user")) return wh_users_add(&o->users, v);
  if (!strcmp(a, "--root-user")) return wh_users_add_root(&o->users, v);
  if (!strcmp(a, "--trusted-writer")) return wh_users_add_trusted(&o->users, v);
  if (!strcmp(a, "--context-key-file")) return context_key_option(o, v);
  if (!strcmp(a, "--owner-kind")) return wh_owner_kinds_add(&o->owner_kinds, v);
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level);
  if (!strcmp(a, "--max-ancestors")) {
    if (opt_ulong(v, 0, RIPPLE_ANC_MAX, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    o->wo.max_ancestors = (uint32_t)n;
    return RIPPLE_OK;
  }
  if (!strcmp(a, "--decider-lease")) return parse_lease(v, o);
  if (!strcmp(a, "--peer-address")) return o->peer_address = v, RIPPLE_OK;
  if (!strcmp(a, "--peer-tls-name")) return o->peer_tls_name = v, RIPPLE_OK;
  if (!strcmp(a, "--peer-ca"))
    return opt_ca_file("ripple-webhook", a, v) == RIPPLE_OK ? (o->peer_ca = v, RIPPLE_OK)
                                                            : RIPPLE_EINVAL;
  if (!strcmp(a, "--forward-timeout-ms")) {
    if (opt_ulong(v, 10, 10000, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    o->forward_timeout_ms = (uint32_t)n;
    return RIPPLE_OK;
  }
  if (!strcmp(a, "--shutdown-delay-ms")) {
    if (opt_ulong(v, 0, 600000, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    o->shutdown_delay_ms = (uint32_t)n;
    return RIPPLE_OK;
  }
  if (!strcmp(a, "--max-body")) {
    if (opt_ulong(v, 4096, 1ul << 30, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    o->max_body = n;
    return RIPPLE_OK;
  }
  if (!strcmp(a, "--max-connections-per-ip")) {
    if (opt_ulong(v, 1, 100000, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
    return o->per_ip = (unsigned)n, RIPPLE_OK;
  }
  if (!strcmp(a, "--request-deadline")) {
    int64_t ns;
    if (opt_duration(v, &ns) != RIPPLE_OK || ns < 1000000000 || ns > 3600LL * 1000000000)
      return RIPPLE_EINVAL;
    return o->deadline_s = (unsigned)(ns / 1000000000), RIPPLE_OK;
  }
  return RIPPLE_ENOENT;
}

/* RIPPLE_OK to go on, or RIPPLE_ESTATE with the exit status. */
static int parse_args(int argc, char **argv, options_t *o, int *status) {
  static const char *const flags[] = {"--no-informers", "--deployment-status-ctx", "--traceparent",
                                      NULL};
  opt_cli_t cli = {
      .prog = "ripple-webhook", .flags = flags, .option = parse_option, .usage = usage, .ud = o};
  if (opt_parse(argc, argv, &cli, status) != RIPPLE_OK) return RIPPLE_ESTATE;
  *status = 2;
  if (!o->cert != !o->key) {
    fprintf(stderr, "ripple-webhook: --tls-cert and --tls-key go together\n");
    return RIPPLE_ESTATE;
  }
  if (o->client_ca && !o->cert) {
    fprintf(stderr,
            "ripple-webhook: --client-ca needs --tls-cert/--tls-key (client "
            "certificates come over TLS)\n");
    return RIPPLE_ESTATE;
  }
  if (o->nclient_names && !o->client_ca) {
    fprintf(stderr, "ripple-webhook: --client-name goes with --client-ca\n");
    return RIPPLE_ESTATE;
  }
  if (*o->lease_ns && o->no_informers) {
    fprintf(stderr, "ripple-webhook: --decider-lease needs the cluster (not --no-informers)\n");
    return RIPPLE_ESTATE;
  }
  if (!*o->lease_ns && (o->peer_address || o->peer_tls_name || o->peer_ca)) {
    fprintf(stderr, "ripple-webhook: --peer-* options go with --decider-lease\n");
    return RIPPLE_ESTATE;
  }
  if ((o->trace_token || o->trace_ca) && !o->trace_server) {
    fprintf(stderr,
            "ripple-webhook: --trace-server-token-file and --trace-server-ca go with "
            "--trace-server\n");
    return RIPPLE_ESTATE;
  }
  return RIPPLE_OK;
}

typedef struct run {
  wh_route_t route; /* who decides (route.h) */
  wh_handover_t ho; /* the previous decider's memory (handover.h) */
  char peer_token[WH_PEER_TOKEN_LEN + 1];
  ripple_kube_client_t *lease_kc; /* the Lease's own client: short timeouts */
  wh_cache_t *cache;
  ripple_shipper_t *shipper;
  wh_t *engine;
  pthread_t ticker;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  atomic_int draining; /* stopping: /readyz says 503, answers go on */
} run_t;

/* What waits for the informers is resolved every WH_TICK_MS (wh.h). */
static void *tick(void *ud) {
  run_t *r = ud;
  pthread_mutex_lock(&r->mu);
  while (!r->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += WH_TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    if (r->stop) break;
    pthread_mutex_unlock(&r->mu);
    wh_tick(r->engine);
    /* The Lease outlives the ticker (serve stops the ticker first). */
    if ((r->ho.lease = atomic_load(&r->route.lease))) wh_handover_tick(&r->ho);
    pthread_mutex_lock(&r->mu);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

static void stop_ticker(run_t *r) {
  pthread_mutex_lock(&r->mu);
  r->stop = 1;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->ticker, NULL);
}

static int ready(void *ud) {
  run_t *r = ud;
  if (atomic_load(&r->draining)) return 0;
  return r->cache ? wh_cache_ready(r->cache) : 1;
}

static void gauges(void *ud, wh_gauges_t *g) {
  run_t *r = ud;
  if (r->shipper) {
    ripple_shipper_stats_t s;
    ripple_shipper_stats(r->shipper, &s);
    g->shipper_enqueued = s.enqueued, g->shipper_sent = s.sent, g->shipper_dropped = s.dropped;
    g->shipper_rejected = s.rejected, g->shipper_queued = s.queued;
  }
  ripple_tracer_stats_t ts;
  ripple_tracer_stats(wh_tracer(r->engine), &ts);
  g->tracer_bad_ctx = ts.bad_ctx;
  g->ready = ready(ud);
  g->decider = wh_route_deciding(&r->route);
  wh_cache_stats(r->cache, &g->informers, &g->informer_objects);
}

static int start_cache(const options_t *o, ripple_kube_client_t **client, run_t *r) {
  ripple_kube_config_opts_t co = {.kubeconfig = o->kubeconfig, .context = o->context};
  ripple_kube_config_t *cfg;
  char err[512];
  if (ripple_kube_config_load(&co, &cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-webhook: %s\n", err);
    return RIPPLE_EINVAL;
  }
  /* The Lease's requests must end well within its renew deadline. */
  ripple_kube_client_opts_t lo = {.timeout_ms = 1000};
  int rc = *o->lease_ns ? ripple_kube_client_new(cfg, &lo, &r->lease_kc) : RIPPLE_OK;
  if (rc == RIPPLE_OK) rc = ripple_kube_client_new(cfg, NULL, client);
  ripple_kube_config_free(cfg);
  if (rc == RIPPLE_OK)
    rc = wh_cache_start(*client, &r->cache, err, sizeof err);
  else
    snprintf(err, sizeof err, "%s", ripple_kube_strerror(rc));
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-webhook: %s\n", err);
    return rc;
  }
  return RIPPLE_OK;
}

/* Several replicas: forward to the decider, and take part in the Lease
 * under this replica's address (known once the listener has its port). */
static int start_fwd(const options_t *o, run_t *r) {
  /* Without a serving key (plain HTTP, tests) there is no token, and no
   * handover: a new decider then starts from its own memory. With
   * --client-ca a replica's forward shows the token for a certificate. */
  int token = o->key && (*o->lease_ns || o->client_ca);
  if (token && wh_peer_token(o->key, r->peer_token) != RIPPLE_OK) return RIPPLE_ESYS;
  r->ho.token = token ? r->peer_token : NULL;
  if (!*o->lease_ns) return RIPPLE_OK;
  r->route.several = 1;
  r->ho = (wh_handover_t){
      .engine = r->engine, .self = r->route.self, .token = token ? r->peer_token : NULL};
  wh_fwd_opts_t fo = {.ca_file = o->peer_ca,
                      .tls_name = o->peer_tls_name,
                      .plain_http = !o->cert,
                      .timeout_ms = o->forward_timeout_ms,
                      .peer_token = o->key ? r->peer_token : NULL};
  int rc = wh_fwd_new(&fo, &r->route.fwd);
  r->ho.fwd = r->route.fwd;
  return rc;
}

static int start_lease(const options_t *o, run_t *r, uint16_t port) {
  if (!*o->lease_ns) return RIPPLE_OK;
  /* HOST, HOST:0 or HOST:PORT; without a port (or 0) the one listened on. */
  const char *host = o->peer_address ? o->peer_address : getenv("POD_IP");
  if (!host || !*host) {
    fprintf(stderr, "ripple-webhook: --decider-lease needs --peer-address or $POD_IP\n");
    return RIPPLE_EINVAL;
  }
  const char *colon = strrchr(host, ':');
  int own_port = !colon || !strcmp(colon, ":0");
  int hlen = (int)(own_port && colon ? (size_t)(colon - host) : strlen(host));
  if (own_port)
    snprintf(r->route.self, sizeof r->route.self, "%.*s:%u", hlen, host, port);
  else
    snprintf(r->route.self, sizeof r->route.self, "%s", host);
  wh_lease_opts_t lo = {
      .kc = r->lease_kc, .ns = o->lease_ns, .name = o->lease_name, .identity = r->route.self};
  wh_lease_t *l;
  int rc = wh_lease_start(&lo, &l);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "ripple-webhook: the decider Lease: %s\n", ripple_strerror(rc));
    return rc;
  }
  atomic_store(&r->route.lease, l);
  return RIPPLE_OK;
}

/* Stopping: unready at once, so that the Service (and the API servers that
 * reach replicas through it) stop sending here, but still answering for
 * delay_ms. A write the API server sent to a replica that has already gone
 * is admitted unannotated (failurePolicy Ignore) and keeps its object's older
 * context, which the writes it causes would then inherit. A second signal
 * ends the wait. */
static void drain(run_t *r, uint32_t delay_ms, const sigset_t *sigs) {
  atomic_store(&r->draining, 1);
  if (!delay_ms) return;
  struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
  while (sigtimedwait(sigs, NULL, &ts) < 0 && errno == EINTR) {
  }
}

/* After the Lease is released: the next decider takes it within a retry
 * period (0.5 s) and asks for this one's memory at once. */
#define WH_HANDOVER_MS 2000
static void handover_window(const sigset_t *sigs) {
  struct timespec ts = {WH_HANDOVER_MS / 1000, (long)(WH_HANDOVER_MS % 1000) * 1000000L};
  while (sigtimedwait(sigs, NULL, &ts) < 0 && errno == EINTR) {
  }
}

/* The listener of /mutate and, with --metrics-listen, the one of /metrics. */
static int start_listeners(const options_t *o, run_t *r, wh_http_t **h, wh_http_t **mh) {
  char err[512];
  wh_http_opts_t ho = {.host = o->host,
                       .port = o->port,
                       .tls_cert = o->cert,
                       .tls_key = o->key,
                       .max_body = o->max_body,
                       .max_connections_per_ip = o->per_ip,
                       .request_deadline_s = o->deadline_s,
                       .engine = r->engine,
                       .route = &r->route,
                       .peer_token = r->ho.token,
                       .client_ca = o->client_ca,
                       .client_names = o->client_names,
                       .nclient_names = o->nclient_names,
                       .metrics = *o->metrics_host ? WH_METRICS_ELSEWHERE : WH_METRICS_HERE,
                       .ready = ready,
                       .gauges = gauges,
                       .ud = r};
  if (wh_http_start(&ho, h, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-webhook: %s\n", err);
    return RIPPLE_ESYS;
  }
  if (!*o->metrics_host) return RIPPLE_OK;
  wh_http_opts_t mo = {.host = o->metrics_host,
                       .port = o->metrics_port,
                       .max_body = 4096,
                       .max_connections = 16,
                       .engine = r->engine,
                       .metrics = WH_METRICS_ONLY,
                       .gauges = gauges,
                       .ud = r};
  if (wh_http_start(&mo, mh, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "ripple-webhook: --metrics-listen: %s\n", err);
    wh_http_stop(*h);
    return RIPPLE_ESYS;
  }
  ripple_log(RIPPLE_LOG_INFO, "metrics_listening", "addr=%s:%u", o->metrics_host,
             wh_http_port(*mh));
  return RIPPLE_OK;
}

static int serve(options_t *o, const sigset_t *sigs) {
  run_t r = {0};
  int ticking = 0;
  pthread_mutex_init(&r.mu, NULL);
  pthread_cond_init(&r.cv, NULL);
  ripple_kube_client_t *client = NULL;
  int status = 1;
  if (!o->no_informers && start_cache(o, &client, &r) != RIPPLE_OK) goto done;
  if (o->trace_server) {
    ripple_shipper_opts_t so = {
        .url = o->trace_server, .bearer_token = o->trace_token, .ca_file = o->trace_ca};
    if (ripple_shipper_new(&so, &r.shipper) != RIPPLE_OK) {
      fprintf(stderr, "ripple-webhook: --trace-server '%s' is not usable\n", o->trace_server);
      goto done;
    }
    o->wo.sink = ripple_shipper_sink(r.shipper);
  }
  o->wo.users = &o->users;
  o->wo.owner_kinds = &o->owner_kinds;
  o->wo.text_lookup = r.cache ? wh_cache_text_lookup(r.cache) : (wh_text_lookup_t){0};
  o->wo.log_requests = o->level == RIPPLE_LOG_DEBUG;
  if (wh_new(&o->wo, &r.engine) != RIPPLE_OK) goto done;
  if (!o->context_key)
    ripple_log(
        RIPPLE_LOG_WARN, "contexts_unsigned", "hint=%s",
        "give --context-key-file: unsigned contexts on objects cannot be told from forged ones");
  r.route.engine = r.engine;
  if (start_fwd(o, &r) != RIPPLE_OK) goto done;
  if (pthread_create(&r.ticker, NULL, tick, &r) != 0) goto done;
  ticking = 1;
  wh_http_t *h, *mh = NULL;
  if (start_listeners(o, &r, &h, &mh) != RIPPLE_OK) goto done;
  if (start_lease(o, &r, wh_http_port(h)) != RIPPLE_OK) {
    wh_http_stop(h);
    wh_http_stop(mh);
    goto done;
  }
  ripple_log(RIPPLE_LOG_INFO, "listening",
             "addr=%s:%u tls=%s client_auth=%s informers=%s trace_server=%s trace_token=%s "
             "traceparent=%s decider_lease=%s%s%s peer=%s",
             o->host, wh_http_port(h), o->cert ? "on" : "off",
             o->client_ca ? (o->nclient_names ? "ca+names" : "ca") : "off", r.cache ? "on" : "off",
             o->trace_server ? o->trace_server : "none", o->trace_token ? "set" : "none",
             o->wo.traceparent ? "on" : "off", *o->lease_ns ? o->lease_ns : "none",
             *o->lease_ns ? "/" : "", o->lease_name, *r.route.self ? r.route.self : "none");
  int sig;
  sigwait(sigs, &sig);
  ripple_log(RIPPLE_LOG_INFO, "stopping", "signal=%d shutdown_delay_ms=%u", sig,
             o->shutdown_delay_ms);
  drain(&r, o->shutdown_delay_ms, sigs);
  /* The Lease given up, then a while longer answering the next decider's
   * request for this one's memory (handover.h); what still comes here is
   * decided as uncertain. Then no more answers. */
  stop_ticker(&r);
  ticking = 0;
  wh_lease_t *l = atomic_load(&r.route.lease);
  if (l) {
    wh_lease_release(l);
    if (r.ho.token) handover_window(sigs);
  }
  wh_http_stop(h);
  wh_http_stop(mh);
  wh_lease_stop(atomic_exchange(&r.route.lease, NULL));
  status = 0;
done:
  if (ticking) stop_ticker(&r);
  pthread_cond_destroy(&r.cv);
  pthread_mutex_destroy(&r.mu);
  wh_free(r.engine);
  ripple_shipper_free(r.shipper, 2000);
  wh_lease_stop(atomic_exchange(&r.route.lease, NULL));
  wh_fwd_free(r.route.fwd);
  wh_cache_free(r.cache);
  ripple_kube_client_free(client);
  ripple_kube_client_free(r.lease_kc);
  return status;
}

int main(int argc, char **argv) {
  options_t o;
  memset(&o, 0, sizeof o);
  snprintf(o.host, sizeof o.host, "127.0.0.1");
  o.port = 8443;
  o.level = RIPPLE_LOG_INFO;
  int rc = 1;
  if (parse_exclude("ripple-system", &o) == RIPPLE_OK &&
      parse_args(argc, argv, &o, &rc) == RIPPLE_OK) {
    ripple_log_setup("webhook", o.level, NULL, NULL);
    if (!o.cert) ripple_log(RIPPLE_LOG_WARN, "plain_http", "hint=%s", "give --tls-cert/--tls-key");
    /* Signals are taken by sigwait in the main thread only. */
    sigset_t sigs;
    httpd_signals(&sigs);
    rc = serve(&o, &sigs);
  }
  free(o.cert);
  free(o.key);
  free(o.client_ca);
  free(o.exclude);
  if (o.trace_token) memset(o.trace_token, 0, strlen(o.trace_token));
  free(o.trace_token);
  if (o.context_key) memset(o.context_key, 0, strlen(o.context_key));
  free(o.context_key);
  return rc;
}
