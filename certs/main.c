/*
 * main.c - ripple-certs: creates the Secrets ripple needs, in the cluster,
 * so that no key or token is ever in a chart or a rendered manifest
 * (docs/certs.md). A Helm chart runs it as an install/upgrade hook Job.
 *
 *   ripple-certs [--namespace NS] [--tls-secret NAME --dns NAME...
 *                [--days N] [--renew-before D]] [--token-secret NAME...]
 *                [--timeout D] [--dry-run]
 *
 * --tls-secret: Secret NAME (kubernetes.io/tls: ca.crt, tls.crt, tls.key)
 * holds a certificate for every --dns name signed by the CA in ca.crt; kept
 * while it is valid, else made anew. --token-secret: Secret NAME (Opaque,
 * key token) holds 64 random hex digits; created if absent, never changed.
 * Exit status: 0 when every Secret is as asked, 1 when one is not (the log
 * says what failed), 2 for a usage error.
 *
 * RBAC (docs/certs.md): in its namespace, verbs get, create and update on
 * secrets. create cannot be limited by resourceNames (the name is not known
 * to the authorizer before the object exists); get and update can be, to the
 * names given:
 *
 *   rules:
 *   - apiGroups: [""]
 *     resources: [secrets]
 *     verbs: [create]
 *   - apiGroups: [""]
 *     resources: [secrets]
 *     resourceNames: [ripple-webhook-tls, ripple-writer-token, ripple-reader-token]
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
          "                          certificate for every --dns name, signed by ca.crt\n"
          "  --dns NAME              a DNS name the certificate serves (repeatable; at least one\n"
          "                          with --tls-secret), e.g. ripple-webhook.ripple-system.svc\n"
          "  --days N                a new certificate's validity (default 3650)\n"
          "  --renew-before D        make a new one when the old expires within D (default 30d)\n"
          "  --token-secret NAME     an Opaque Secret with key token: 64 random hex digits,\n"
          "                          created if absent, never changed (repeatable)\n"
          "  --timeout D             retry each API call for up to D (default 60s)\n"
          "  --dry-run               say what would be done; writes go as dryRun=All, so RBAC\n"
          "                          and admission are checked and nothing is stored\n"
          "  --log-level LEVEL       debug, info, warn, error\n");
}

typedef struct options {
  const char *ns, *kubeconfig, *context, *tls;
  const char *dns[CERTS_MAX_DNS];
  size_t ndns;
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
  if (!strcmp(a, "--tls-secret")) return certs_name_ok(v) ? (o->tls = v, RIPPLE_OK) : RIPPLE_EINVAL;
  if (!strcmp(a, "--dns")) return add_name(o->dns, &o->ndns, CERTS_MAX_DNS, v);
  if (!strcmp(a, "--token-secret")) return add_name(o->tokens, &o->ntokens, CERTS_MAX_TOKENS, v);
  if (!strcmp(a, "--days")) return opt_ulong(v, 1, 36500, &o->days);
  if (!strcmp(a, "--renew-before")) return opt_duration(v, &o->renew_before_ns);
  if (!strcmp(a, "--timeout")) return opt_duration(v, &o->timeout_ns);
  if (!strcmp(a, "--log-level")) return ripple_log_level_parse(v, &o->level);
  return RIPPLE_ENOENT;
}

/* What the options say together; 1 when they make sense (else printed). */
static int check_args(const options_t *o) {
  const char *msg = NULL;
  if (!o->tls && o->ntokens == 0)
    msg = "nothing to do: give --tls-secret NAME --dns NAME and/or --token-secret NAME";
  else if (o->tls && o->ndns == 0)
    msg = "--tls-secret needs at least one --dns NAME";
  else if (!o->tls && o->ndns > 0)
    msg = "--dns goes with --tls-secret";
  else if (o->renew_before_ns >= (int64_t)o->days * 86400 * NS_PER_S)
    msg = "--renew-before must be shorter than --days (else every run would replace it)";
  for (size_t i = 0; !msg && o->tls && i < o->ntokens; i++)
    if (!strcmp(o->tokens[i], o->tls)) msg = "a --token-secret cannot also be the --tls-secret";
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
  if (o->tls) {
    certs_tls_opts_t to = {.name = o->tls,
                           .dns = o->dns,
                           .ndns = o->ndns,
                           .days = (int)o->days,
                           .renew_before_s = o->renew_before_ns / NS_PER_S};
    rc = certs_ensure_tls(r, &to);
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
  ripple_log(RIPPLE_LOG_INFO, "start", "server=%s namespace=%s tls_secret=%s token_secrets=%zu%s",
             r.server, r.ns, o->tls ? o->tls : "-", o->ntokens, o->dry_run ? " dry_run=true" : "");
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
                 .days = 3650,
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
