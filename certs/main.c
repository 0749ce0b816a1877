/*
 * main.c - ripple-certs: creates the Secrets ripple needs, in the cluster,
 * so that no key or token is ever in a chart or a rendered manifest
 * (docs/certs.md). A Helm chart runs it as an install/upgrade hook Job.
 *
 *   ripple-certs [--namespace NS] [--tls-secret NAME --dns NAME...]...
 *                [--days N] [--renew-before D] [--token-secret NAME...]
 *                [--timeout D] [--dry-run]
 *
 * --tls-secret: Secret NAME (kubernetes.io/tls: ca.crt, tls.crt, tls.key)
 * holds a certificate for every --dns name that follows it, signed by the CA
 * in ca.crt; kept while it is valid, else made anew. Several --tls-secret
 * Secrets share one CA (the webhook's and the trace server's: a client of
 * one trusts the other without holding its key), and are renewed together. --token-secret: Secret
 * NAME (Opaque, key token) holds 64 random hex digits; created if absent, never changed. Exit
 * status: 0 when every Secret is as asked, 1 when one is not (the log says what failed), 2 for a
 * usage error.
 *
 * RBAC (docs/certs.md): in its namespace, verbs get, create and update on
 * secrets. create cannot be limited by resourceNames (the name is not known
 * to the authorizer before the object exists); get and update can be, to the
 * names given (the chart's, release ripple):
 *
 *   rules:
 *   - apiGroups: [""]
 *     resources: [secrets]
 *     verbs: [create]
 *   - apiGroups: [""]
 *     resources: [secrets]
 *     resourceNames: [ripple-webhook-tls, ripple-server-tls, ripple-server-writer-token,
 *                     ripple-server-reader-token, ripple-context-key]
 *     verbs: [get, update]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs.h"
#include "ripplex/opt.h"

#define NS_PER_S 1000000000LL

static void usage(FILE *f) {
  fprintf(f,
          "usage: ripple-certs [options]\n"
          "  --namespace NS          where the Secrets are (default ripple-system)\n"
          "  --kubeconfig F          (default: $KUBECONFIG, ~/.kube/config, in-cluster)\n"
          "  --context NAME          kubeconfig context\n"
          "  --tls-secret NAME       a kubernetes.io/tls Secret (ca.crt, tls.crt, tls.key) with a\n"
          "                          certificate for every --dns name after it, signed by ca.crt;\n"
          "                          up to 4, all under one CA, renewed together\n"
          "  --dns NAME              a DNS name the last --tls-secret's certificate serves\n"
          "                          (repeatable; at least one per --tls-secret), e.g.\n"
          "                          ripple-webhook.ripple-system.svc\n"
          "  --days N                a new CA's and certificate's validity (default 365)\n"
          "  --renew-before D        make a new one when the old expires within D (default 30d)\n"
          "  --token-secret NAME     an Opaque Secret with key token: 64 random hex digits,\n"
          "                          created if absent, never changed (repeatable)\n"
          "  --timeout D             retry each API call for up to D (default 60s)\n"
          "  --dry-run               say what would be done; writes go as dryRun=All, so RBAC\n"
          "                          and admission are checked and nothing is stored\n"
          "  --log-level LEVEL       debug, info, warn, error\n");
}

typedef struct tls_arg {
  const char *name;
  const char *dns[CERTS_MAX_DNS];
  size_t ndns;
} tls_arg_t;

typedef struct options {
  const char *ns, *kubeconfig, *context;
  tls_arg_t tls[CERTS_MAX_TLS];
  size_t ntls;
  /* --dns before any --tls-secret: the first one's */
  const char *early[CERTS_MAX_DNS];
  size_t nearly;
  const char *tokens[CERTS_MAX_TOKENS];
  size_t ntokens;
  unsigned long days;
  int64_t renew_before_ns, timeout_ns;
  int dry_run;
  ripple_log_level_t level;
} options_t;

/* A name into a list of at most max; RIPPLE_EINVAL when full or malformed. */
static int add_name(const char **list, size_t *n, size_t max, const char *v) {
  if (*n >= max || !certs_name_ok(v)) return RIPPLE_EINVAL;
  for (size_t i = 0; i < *n; i++)
    if (!strcmp(list[i], v)) return RIPPLE_OK;
  list[(*n)++] = v;
  return RIPPLE_OK;
}

/* One option with its value, or a flag (v NULL) (opt_cli_t.option). */
static int parse_option(void *ud, const char *a, const char *v) {
  options_t *o = ud;
  if (!strcmp(a, "--dry-run")) return o->dry_run = 1, RIPPLE_OK;
  if (!strcmp(a, "--namespace")) return certs_name_ok(v) ? (o->ns = v, RIPPLE_OK) : RIPPLE_EINVAL;
  if (!strcmp(a, "--kubeconfig")) return o->kubeconfig = v, RIPPLE_OK;
  if (!strcmp(a, "--context")) return o->context = v, RIPPLE_OK;
  if (!strcmp(a, "--tls-secret")) {
    if (!certs_name_ok(v) || o->ntls == CERTS_MAX_TLS) return RIPPLE_EINVAL;
    o->tls[o->ntls++].name = v;
    return RIPPLE_OK;
  }
  if (!strcmp(a, "--dns")) {
    if (!o->ntls) return add_name(o->early, &o->nearly, CERTS_MAX_DNS, v);
    tls_arg_t *t = &o->tls[o->ntls - 1];
    return add_name(t->dns, &t->ndns, CERTS_MAX_DNS, v);
  }
  if (!strcmp(a, "--token-secret")) return add_name(o->tokens, &o->ntokens, CERTS_MAX_TOKENS, v);
  if (!strcmp(a, "--days")) return opt_ulong(v, 1, 36500, &o->days);
  if (!strcmp(a, "--renew-before")) return opt_duration(v, &o->renew_before_ns);
  if (!strcmp(a, "--timeout")) return opt_duration(v, &o->timeout_ns);
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level);
  return RIPPLE_ENOENT;
}

/* Every name given once: no --tls-secret twice, none also a --token-secret. */
static const char *names_clash(const options_t *o) {
  for (size_t i = 0; i < o->ntls; i++) {
    for (size_t j = i + 1; j < o->ntls; j++)
      if (!strcmp(o->tls[i].name, o->tls[j].name)) return "a --tls-secret is named twice";
    for (size_t k = 0; k < o->ntokens; k++)
      if (!strcmp(o->tokens[k], o->tls[i].name))
        return "a --token-secret cannot also be a --tls-secret";
  }
  return NULL;
}

/* What the options say together, NULL when they make sense. */
static const char *args_wrong(options_t *o) {
  for (size_t i = 0; o->ntls && i < o->nearly; i++)
    if (add_name(o->tls[0].dns, &o->tls[0].ndns, CERTS_MAX_DNS, o->early[i]) != RIPPLE_OK)
      return "too many --dns names";
  for (size_t i = 0; i < o->ntls; i++)
    if (o->tls[i].ndns == 0) return "every --tls-secret needs at least one --dns NAME after it";
  if (!o->ntls && o->ntokens == 0)
    return "nothing to do: give --tls-secret NAME --dns NAME and/or --token-secret NAME";
  if (!o->ntls && o->nearly > 0) return "--dns goes with --tls-secret";
  if (o->renew_before_ns >= (int64_t)o->days * 86400 * NS_PER_S)
    return "--renew-before must be shorter than --days (else every run would replace it)";
  return names_clash(o);
}

/* 1 when the options make sense, else 0 (and what is wrong is printed). --dns
 * names given before the first --tls-secret become its names. */
static int check_args(options_t *o) {
  const char *msg = args_wrong(o);
  if (!msg) return 1;
  fprintf(stderr, "ripple-certs: %s\n", msg);
  return 0;
}

/* RIPPLE_OK to go on, or RIPPLE_ESTATE with the exit status. */
static int parse_args(int argc, char **argv, options_t *o, int *status) {
  static const char *const flags[] = {"--dry-run", NULL};
  opt_cli_t cli = {
      .prog = "ripple-certs", .flags = flags, .option = parse_option, .usage = usage, .ud = o};
  if (opt_parse(argc, argv, &cli, status) != RIPPLE_OK) return RIPPLE_ESTATE;
  *status = 2;
  return check_args(o) ? RIPPLE_OK : RIPPLE_ESTATE;
}

static int ensure_all(const options_t *o, certs_run_t *r) {
  int rc = RIPPLE_OK;
  if (o->ntls) {
    certs_tls_opts_t to[CERTS_MAX_TLS];
    for (size_t i = 0; i < o->ntls; i++)
      to[i] = (certs_tls_opts_t){.name = o->tls[i].name,
                                 .dns = o->tls[i].dns,
                                 .ndns = o->tls[i].ndns,
                                 .days = (int)o->days,
                                 .renew_before_s = o->renew_before_ns / NS_PER_S};
    rc = certs_ensure_tls_set(r, to, o->ntls);
  }
  for (size_t i = 0; rc == RIPPLE_OK && i < o->ntokens; i++)
    rc = certs_ensure_token(r, o->tokens[i]);
  return rc;
}

static int run(const options_t *o) {
  ripple_kube_config_opts_t co = {.kubeconfig = o->kubeconfig, .context = o->context};
  ripple_kube_config_t *cfg = NULL;
  certs_run_t r = {.ns = o->ns, .timeout_ns = o->timeout_ns, .dry_run = o->dry_run};
  if (ripple_kube_config_load(&co, &cfg, r.err, sizeof r.err) != RIPPLE_OK) {
    char msg[2200];
    ripple_log_quote(r.err, msg, sizeof msg);
    ripple_log(RIPPLE_LOG_ERROR, "failed", "msg=%s", msg);
    return 1;
  }
  /* A request that hangs must not use up all of --timeout by itself. */
  int64_t per = o->timeout_ns / 1000000 / 4;
  ripple_kube_client_opts_t ko = {.timeout_ms = (uint32_t)(per < 1000    ? 1000
                                                           : per > 10000 ? 10000
                                                                         : per),
                                  .user_agent = "ripple-certs"};
  int rc = ripple_kube_client_new(cfg, &ko, &r.kc);
  if (rc != RIPPLE_OK) snprintf(r.err, sizeof r.err, "kube client: %s", ripple_kube_strerror(rc));
  r.server = ripple_kube_config_server(cfg);
  ripple_log(RIPPLE_LOG_INFO, "start",
             "server=%s namespace=%s tls_secret=%s tls_secrets=%zu token_secrets=%zu%s", r.server,
             r.ns, o->ntls ? o->tls[0].name : "-", o->ntls, o->ntokens,
             o->dry_run ? " dry_run=true" : "");
  if (rc == RIPPLE_OK) rc = ensure_all(o, &r);
  if (rc != RIPPLE_OK) {
    char msg[2200];
    ripple_log_quote(r.err, msg, sizeof msg);
    ripple_log(RIPPLE_LOG_ERROR, "failed", "msg=%s", msg);
  } else {
    ripple_log(RIPPLE_LOG_INFO, "done", "namespace=%s%s", r.ns, o->dry_run ? " dry_run=true" : "");
  }
  ripple_kube_client_free(r.kc);
  ripple_kube_config_free(cfg);
  return rc == RIPPLE_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  options_t o = {.ns = "ripple-system",
                 .days = 365,
                 .renew_before_ns = 30LL * 86400 * NS_PER_S,
                 .timeout_ns = 60 * NS_PER_S,
                 .level = RIPPLE_LOG_INFO};
  int rc;
  if (parse_args(argc, argv, &o, &rc) != RIPPLE_OK) return rc;
  ripple_log_setup("ripple-certs", o.level, NULL, NULL);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  rc = run(&o);
  curl_global_cleanup();
  return rc;
}
