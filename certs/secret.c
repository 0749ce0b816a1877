/*
 * secret.c - ripple-certs' Secrets (certs.h): read each one, decide, write,
 * over libripple-kube.
 *
 * A TLS Secret that still serves (certs_tls_check) is kept; otherwise a new
 * CA and certificate are created into it, or replace its keys by an update
 * carrying the resourceVersion read, so two runs at once cannot both win: a
 * conflict means "read again and decide again". A token Secret is created
 * once and then never written: other components already hold its token.
 *
 * Every API call is retried with a doubling backoff (250 ms to 10 s) for
 * up to --timeout: in a new cluster the Job may start before the API server
 * answers, or before its Role is in the authorizer's cache, so connection
 * failures, 5xx, 429, 401 and 403 are retried. What still fails is said
 * for a person: which verb on which Secret, and the RBAC that gives it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "certs.h"
#include "ripplex/b64.h"
#include "ripplex/clock.h"
#include "ripplex/sbuf.h"

#define NS_PER_MS 1000000LL
#define BACKOFF_FIRST_NS (250 * NS_PER_MS)
#define BACKOFF_MAX_NS (10000 * NS_PER_MS)
/* Conflicts in a row before giving up (another writer that never stops). */
#define MAX_ROUNDS 8

static const ripple_kube_resource_t secrets = {"", "v1", "secrets", "Secret", 1};

typedef enum op { OP_GET, OP_CREATE, OP_UPDATE } op_t;
static const char *const verbs[] = {"get", "create", "update"};

/* Worth another try: no answer, an overloaded or restarting server, or
 * credentials and RBAC that may not have reached the authorizer yet. */
static int retryable(int rc, const ripple_kube_status_t *st) {
  if (rc == RIPPLE_KUBE_ECONNECT || rc == RIPPLE_KUBE_EFORBIDDEN || rc == RIPPLE_ETIMEDOUT)
    return 1;
  return rc == RIPPLE_KUBE_EHTTP && (st->http >= 500 || st->http == 429);
}

static void sleep_ns(int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* r->err for a call that failed for good; returns rc. */
static int explain(certs_run_t *r, op_t op, const char *name, int rc,
                   const ripple_kube_status_t *st, unsigned attempts, int64_t spent_ns) {
  const char *v = verbs[op];
  if (rc == RIPPLE_KUBE_EFORBIDDEN && st->http == 401)
    snprintf(r->err, sizeof r->err,
             "%s Secret %s/%s: unauthorized: the API server at %s does not accept ripple-certs' "
             "credentials (%s)",
             v, r->ns, name, r->server, st->message);
  else if (rc == RIPPLE_KUBE_EFORBIDDEN)
    snprintf(r->err, sizeof r->err,
             "forbidden to %s Secret %s/%s: ripple-certs' service account needs RBAC verb '%s' on "
             "secrets in namespace %s (a Role with apiGroups [\"\"], resources [secrets], verbs "
             "[get, create, update], and a RoleBinding to it; server: %s)",
             v, r->ns, name, v, r->ns, st->message);
  else if (retryable(rc, st))
    snprintf(r->err, sizeof r->err,
             "%s Secret %s/%s: the API server at %s did not answer in %.0f s (%u attempts): %s", v,
             r->ns, name, r->server, (double)spent_ns / 1e9, attempts,
             st->message[0] ? st->message : ripple_kube_strerror(rc));
  else
    snprintf(r->err, sizeof r->err, "%s Secret %s/%s: %s (HTTP %ld %s: %s)", v, r->ns, name,
             ripple_kube_strerror(rc), st->http, st->reason, st->message);
  return rc;
}

static int call_once(certs_run_t *r, op_t op, const char *name, const json_t *obj, json_t **out,
                     ripple_kube_status_t *st) {
  ripple_kube_write_opts_t wo = {.field_manager = "ripple-certs", .dry_run = r->dry_run};
  memset(st, 0, sizeof *st);
  if (op == OP_GET) return ripple_kube_get(r->kc, &secrets, r->ns, name, out, st);
  if (op == OP_CREATE) return ripple_kube_create(r->kc, &secrets, r->ns, obj, &wo, out, st);
  return ripple_kube_update(r->kc, &secrets, r->ns, obj, &wo, out, st);
}

/* One API call, retried: RIPPLE_OK; RIPPLE_KUBE_ENOTFOUND for a GET of a
 * Secret that is not there or an update of one deleted meanwhile;
 * RIPPLE_KUBE_ECONFLICT when a write lost a race; else a failure with
 * r->err. */
static int api(certs_run_t *r, op_t op, const char *name, const json_t *obj, json_t **out) {
  int64_t start = mono_ns(), delay = BACKOFF_FIRST_NS;
  for (unsigned attempt = 1;; attempt++) {
    ripple_kube_status_t st;
    int rc = call_once(r, op, name, obj, out, &st);
    if (rc == RIPPLE_OK || (rc == RIPPLE_KUBE_ENOTFOUND && op != OP_CREATE) ||
        (rc == RIPPLE_KUBE_ECONFLICT && op != OP_GET))
      return rc;
    int64_t spent = mono_ns() - start, left = r->timeout_ns - spent;
    if (!retryable(rc, &st) || left <= 0) return explain(r, op, name, rc, &st, attempt, spent);
    if (delay > left) delay = left;
    char msg[600];
    ripple_log_quote(st.message[0] ? st.message : ripple_kube_strerror(rc), msg, sizeof msg);
    ripple_log(RIPPLE_LOG_WARN, "api_retry",
               "verb=%s secret=%s/%s attempt=%u http=%ld error=%s retry_in_ms=%lld", verbs[op],
               r->ns, name, attempt, st.http, msg, (long long)(delay / NS_PER_MS));
    sleep_ns(delay);
    delay = delay * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : delay * 2;
  }
}

/* metadata.labels of what ripple-certs writes. */
static int set_labels(json_t *obj) {
  json_t *meta = json_object_get(obj, "metadata"), *labels = json_object_get(meta, "labels");
  if (!json_is_object(labels)) {
    labels = json_object();
    if (json_object_set_new(meta, "labels", labels)) return 0;
  }
  return !json_object_set_new(labels, "app.kubernetes.io/name", json_string("ripple")) &&
         !json_object_set_new(labels, "app.kubernetes.io/managed-by", json_string("ripple-certs"));
}

/* A new Secret of type with empty data, labelled. */
static json_t *secret_new(const certs_run_t *r, const char *name, const char *type) {
  json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:{}}", "apiVersion", "v1", "kind", "Secret",
                        "metadata", "name", name, "namespace", r->ns, "type", type, "data");
  if (o && !set_labels(o)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* data[key] = base64(text); data is made when the Secret has none. */
static int set_data(json_t *obj, const char *key, const char *text) {
  json_t *data = json_object_get(obj, "data");
  if (!json_is_object(data) && json_object_set_new(obj, "data", data = json_object())) return 0;
  char *b = b64_encode_str(text, strlen(text));
  int ok = b && !json_object_set_new(data, key, json_string(b));
  if (b) explicit_bzero(b, strlen(b)); /* a key or a token */
  free(b);
  return ok;
}

static const char *rv_of(const json_t *obj) {
  const char *rv =
      json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
  return rv ? rv : "";
}

/* ---- TLS --------------------------------------------------------------------- */

/* The dns names as one logfmt value: a,b,c. */
static void dns_list(const certs_tls_opts_t *o, char *out, size_t cap) {
  sbuf_t b;
  sbuf_init(&b);
  for (size_t i = 0; i < o->ndns; i++) sbuf_printf(&b, "%s%s", i ? "," : "", o->dns[i]);
  snprintf(out, cap, "%s", b.oom ? "?" : b.p);
  sbuf_free(&b);
}

static void tls_log(const certs_run_t *r, const certs_tls_opts_t *o, const char *event,
                    const json_t *obj, const char *why) {
  char dns[2048], na[40] = "?";
  dns_list(o, dns, sizeof dns);
  certs_tls_not_after(obj, na, sizeof na);
  ripple_log(RIPPLE_LOG_INFO, event, "secret=%s/%s%s%s dns=%s not_after=%s resource_version=%s%s",
             r->ns, o->name, why ? " why=" : "", why ? why : "", dns, na, rv_of(obj),
             r->dry_run ? " dry_run=true" : "");
}

/* The Secret to write: cur (NULL: a new one) with the CA and certificate t. */
static json_t *tls_object(certs_run_t *r, const certs_tls_opts_t *o, const json_t *cur,
                          const certs_tls_t *t) {
  json_t *obj = cur ? json_deep_copy(cur) : secret_new(r, o->name, "kubernetes.io/tls");
  if (obj) json_object_del(json_object_get(obj, "metadata"), "managedFields");
  int ok = obj && set_labels(obj) && set_data(obj, CERTS_KEY_CA, t->ca_crt) &&
           set_data(obj, CERTS_KEY_CRT, t->tls_crt) && set_data(obj, CERTS_KEY_KEY, t->tls_key);
  if (!ok) {
    json_decref(obj);
    snprintf(r->err, sizeof r->err, "Secret %s/%s: out of memory", r->ns, o->name);
    return NULL;
  }
  return obj;
}

/* Create (cur NULL) or replace cur with t: RIPPLE_OK, RIPPLE_KUBE_ECONFLICT
 * to decide again, or a failure. */
static int tls_write(certs_run_t *r, const certs_tls_opts_t *o, const json_t *cur,
                     const certs_tls_t *t, const char *why) {
  json_t *obj = tls_object(r, o, cur, t), *got = NULL;
  if (!obj) return RIPPLE_ENOMEM;
  int rc = api(r, cur ? OP_UPDATE : OP_CREATE, o->name, obj, &got);
  json_decref(obj);
  if (rc == RIPPLE_KUBE_ENOTFOUND && cur) rc = RIPPLE_KUBE_ECONFLICT; /* deleted meanwhile */
  if (rc != RIPPLE_OK) return rc;
  const char *event = cur ? (r->dry_run ? "tls_secret_would_replace" : "tls_secret_replaced")
                          : (r->dry_run ? "tls_secret_would_create" : "tls_secret_created");
  tls_log(r, o, event, got, why);
  if (r->dry_run)
    printf("dry run: would %s Secret %s/%s (kubernetes.io/tls%s%s)\n", cur ? "replace" : "create",
           r->ns, o->name, why ? ": " : "", why ? why : "");
  json_decref(got);
  return RIPPLE_OK;
}

/* Why cur cannot be kept (a word into why), 0 when it can; RIPPLE_EINVAL
 * (r->err set) for a Secret of another type, which cannot be replaced. */
static int tls_judge(certs_run_t *r, const certs_tls_opts_t *o, const json_t *cur, char *why,
                     size_t cap) {
  if (!cur) return 1; /* why stays empty: created, not replaced */
  const char *type = json_string_value(json_object_get(cur, "type"));
  if (!type || strcmp(type, "kubernetes.io/tls") != 0) {
    snprintf(r->err, sizeof r->err,
             "Secret %s/%s has type %s, not kubernetes.io/tls, and a Secret's type cannot be "
             "changed: delete it (kubectl -n %s delete secret %s) and run ripple-certs again",
             r->ns, o->name, type ? type : "(none)", r->ns, o->name);
    return RIPPLE_EINVAL;
  }
  return !certs_tls_check(cur, o->dns, o->ndns, time(NULL), o->renew_before_s, why, cap);
}

static const char *ca_of(const json_t *secret) {
  return json_string_value(json_object_get(json_object_get(secret, "data"), CERTS_KEY_CA));
}

/* Read every Secret of the set into cur[] (NULL: absent) and decide. 1 when
 * one must be made anew (why[] says which and why; a Secret whose CA is not
 * the others' is one), 0 when all are kept, or a failure. */
static int tls_read_all(certs_run_t *r, const certs_tls_opts_t *o, size_t n, json_t **cur,
                        char why[][64]) {
  int renew = 0;
  for (size_t i = 0; i < n; i++) {
    int rc = api(r, OP_GET, o[i].name, NULL, &cur[i]);
    if (rc == RIPPLE_KUBE_ENOTFOUND)
      cur[i] = NULL;
    else if (rc != RIPPLE_OK)
      return rc;
    why[i][0] = '\0';
    int bad = tls_judge(r, &o[i], cur[i], why[i], 64);
    if (bad < 0) return bad;
    if (!bad) why[i][0] = '\0'; /* the check says "valid": this one could stay */
    if (!bad && i > 0 && cur[0] && (!ca_of(cur[0]) || strcmp(ca_of(cur[0]), ca_of(cur[i])) != 0))
      bad = 1, snprintf(why[i], 64, "ca_differs");
    renew |= bad;
  }
  return renew;
}

/* One round: keep every Secret, or make one CA and every certificate anew
 * and write them all. RIPPLE_KUBE_ECONFLICT when a write lost a race. */
static int tls_round(certs_run_t *r, const certs_tls_opts_t *o, size_t n) {
  json_t *cur[CERTS_MAX_TLS] = {0};
  char why[CERTS_MAX_TLS][64] = {{0}};
  int rc = tls_read_all(r, o, n, cur, why);
  if (rc == 0) {
    for (size_t i = 0; i < n; i++) {
      tls_log(r, &o[i], "tls_secret_kept", cur[i], NULL);
      if (r->dry_run) printf("dry run: would keep Secret %s/%s\n", r->ns, o[i].name);
    }
  } else if (rc > 0) {
    certs_leaf_req_t req[CERTS_MAX_TLS];
    certs_tls_t t[CERTS_MAX_TLS];
    char err[512];
    for (size_t i = 0; i < n; i++) req[i] = (certs_leaf_req_t){o[i].dns, o[i].ndns};
    rc = certs_tls_generate_set(req, n, o[0].days, time(NULL), t, err, sizeof err);
    int made = rc == RIPPLE_OK;
    if (!made) snprintf(r->err, sizeof r->err, "Secret %s/%s: %s", r->ns, o->name, err);
    for (size_t i = 0; rc == RIPPLE_OK && i < n; i++)
      rc = tls_write(r, &o[i], cur[i], &t[i], why[i][0] ? why[i] : cur[i] ? "new_ca" : NULL);
    for (size_t i = 0; made && i < n; i++) certs_tls_free(&t[i]);
  }
  for (size_t i = 0; i < n; i++) json_decref(cur[i]);
  return rc;
}

int certs_ensure_tls_set(certs_run_t *r, const certs_tls_opts_t *o, size_t n) {
  if (n == 0 || n > CERTS_MAX_TLS) {
    snprintf(r->err, sizeof r->err, "1 to %d TLS Secrets", CERTS_MAX_TLS);
    return RIPPLE_EINVAL;
  }
  for (int round = 0; round < MAX_ROUNDS; round++) {
    int rc = tls_round(r, o, n);
    if (rc != RIPPLE_KUBE_ECONFLICT) return rc;
    ripple_log(RIPPLE_LOG_INFO, "secret_conflict", "secret=%s/%s round=%d", r->ns, o->name,
               round + 1);
  }
  snprintf(r->err, sizeof r->err,
           "Secret %s/%s: changed by another writer %d times in a row while ripple-certs wrote "
           "it; is another ripple-certs running?",
           r->ns, o->name, MAX_ROUNDS);
  return RIPPLE_KUBE_ECONFLICT;
}

int certs_ensure_tls(certs_run_t *r, const certs_tls_opts_t *o) {
  return certs_ensure_tls_set(r, o, 1);
}

/* ---- tokens ------------------------------------------------------------------ */

static int token_kept(certs_run_t *r, const char *name, const json_t *cur) {
  const char *tok =
      json_string_value(json_object_get(json_object_get(cur, "data"), CERTS_KEY_TOKEN));
  if (!tok || !*tok) {
    snprintf(r->err, sizeof r->err,
             "Secret %s/%s exists without a '%s' key, and ripple-certs never changes an existing "
             "token Secret: delete it (kubectl -n %s delete secret %s) to have it created",
             r->ns, name, CERTS_KEY_TOKEN, r->ns, name);
    return RIPPLE_EINVAL;
  }
  ripple_log(RIPPLE_LOG_INFO, "token_secret_kept", "secret=%s/%s resource_version=%s%s", r->ns,
             name, rv_of(cur), r->dry_run ? " dry_run=true" : "");
  if (r->dry_run) printf("dry run: would keep Secret %s/%s\n", r->ns, name);
  return RIPPLE_OK;
}

static int token_create(certs_run_t *r, const char *name) {
  char tok[CERTS_TOKEN_LEN + 1];
  if (certs_token_new(tok) != RIPPLE_OK) {
    snprintf(r->err, sizeof r->err, "Secret %s/%s: no random bytes from the kernel", r->ns, name);
    return RIPPLE_ESYS;
  }
  json_t *obj = secret_new(r, name, "Opaque"), *got = NULL;
  int ok = obj && set_data(obj, CERTS_KEY_TOKEN, tok);
  memset(tok, 0, sizeof tok);
  int rc = ok ? api(r, OP_CREATE, name, obj, &got) : RIPPLE_ENOMEM;
  json_decref(obj);
  if (!ok) snprintf(r->err, sizeof r->err, "Secret %s/%s: out of memory", r->ns, name);
  if (rc == RIPPLE_OK) {
    ripple_log(RIPPLE_LOG_INFO, r->dry_run ? "token_secret_would_create" : "token_secret_created",
               "secret=%s/%s resource_version=%s%s", r->ns, name, rv_of(got),
               r->dry_run ? " dry_run=true" : "");
    if (r->dry_run) printf("dry run: would create Secret %s/%s (Opaque, key token)\n", r->ns, name);
  }
  json_decref(got);
  return rc;
}

int certs_ensure_token(certs_run_t *r, const char *name) {
  for (int round = 0; round < MAX_ROUNDS; round++) {
    json_t *cur = NULL;
    int rc = api(r, OP_GET, name, NULL, &cur);
    if (rc == RIPPLE_OK)
      rc = token_kept(r, name, cur);
    else if (rc == RIPPLE_KUBE_ENOTFOUND)
      rc = token_create(r, name);
    json_decref(cur);
    /* Created by someone else meanwhile: read it again, and keep it. */
    if (rc != RIPPLE_KUBE_ECONFLICT) return rc;
  }
  snprintf(r->err, sizeof r->err,
           "Secret %s/%s: create kept conflicting yet the Secret is not there", r->ns, name);
  return RIPPLE_KUBE_ECONFLICT;
}
