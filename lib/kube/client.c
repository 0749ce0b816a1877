/*
 * client.c - the Kubernetes client's transport: one libcurl easy handle per
 * request over a shared connection cache, TLS and credentials from the
 * config, and the mapping of answers to error codes and readable messages.
 *
 * Credentials that can change while a program runs (a rotated tokenFile, an
 * exec plugin's token that expires) are fetched under a lock and refreshed
 * before they expire, and once more when the server answers 401: a long-lived
 * watch agent must not die because its token rotated.
 */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube_internal.h"
#include "ripplex/sbuf.h"

#define CRED_MARGIN_NS (10 * 1000000000LL) /* refresh this long before expiry */

/* ---- client lifecycle ------------------------------------------------------ */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access a, void *ud) {
  (void)h, (void)a;
  ripple_kube_client_t *c = ud;
  pthread_mutex_lock(&c->share_lock[(unsigned)data % 4]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud) {
  (void)h;
  ripple_kube_client_t *c = ud;
  pthread_mutex_unlock(&c->share_lock[(unsigned)data % 4]);
}

/* curl_global_init is not thread-safe on old libcurls: run it once. */
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int ripple_kube_client_new(const ripple_kube_config_t *cfg, const ripple_kube_client_opts_t *o,
                           ripple_kube_client_t **out) {
  if (!cfg || !out) return RIPPLE_EINVAL;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, global_init);
  ripple_kube_client_t *c = calloc(1, sizeof *c);
  if (!c || kube_config_dup(cfg, &c->cfg) != RIPPLE_OK) {
    free(c);
    return RIPPLE_ENOMEM;
  }
  if (o) c->opts = *o;
  if (!c->opts.timeout_ms) c->opts.timeout_ms = 30000;
  snprintf(c->user_agent, sizeof c->user_agent, "%s",
           c->opts.user_agent ? c->opts.user_agent : "ripple/0.1");
  c->opts.user_agent = c->user_agent;
  for (int i = 0; i < 4; i++) pthread_mutex_init(&c->share_lock[i], NULL);
  pthread_mutex_init(&c->cred_lock, NULL);
  pthread_mutex_init(&c->disc_lock, NULL);
  CURLSH *sh = curl_share_init();
  if (!sh) {
    ripple_kube_client_free(c);
    return RIPPLE_ENOMEM;
  }
  curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt(sh, CURLSHOPT_USERDATA, c);
  curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  c->share = sh;
  *out = c;
  return RIPPLE_OK;
}

void ripple_kube_client_free(ripple_kube_client_t *c) {
  if (!c) return;
  if (c->share) curl_share_cleanup(c->share);
  if (c->disc_free) c->disc_free(c->disc);
  ripple_kube_config_free(c->cfg);
  free(c->cred_token);
  free(c->cred_cert);
  free(c->cred_key);
  for (int i = 0; i < 4; i++) pthread_mutex_destroy(&c->share_lock[i]);
  pthread_mutex_destroy(&c->cred_lock);
  pthread_mutex_destroy(&c->disc_lock);
  free(c);
}

/* ---- credentials -------------------------------------------------------------- */

typedef struct cred {
  char *token, *cert, *key; /* copies for one request */
} cred_t;

static void cred_free(cred_t *k) {
  free(k->token);
  free(k->cert);
  free(k->key);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Re-read tokenFile when it changed (or when forced after a 401). */
static int refresh_token_file(ripple_kube_client_t *c, int force, ripple_kube_status_t *st) {
  struct stat sb;
  if (stat(c->cfg->token_file, &sb) != 0)
    return kube_fail(st, RIPPLE_KUBE_ECONFIG, "cannot read tokenFile %s", c->cfg->token_file);
  int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
  if (c->cred_token && mtime == c->token_file_mtime && !force) return RIPPLE_OK;
  FILE *f = fopen(c->cfg->token_file, "r");
  char buf[8192];
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
  buf[n] = '\0';
  if (!n) return kube_fail(st, RIPPLE_KUBE_ECONFIG, "tokenFile %s is empty", c->cfg->token_file);
  free(c->cred_token);
  c->cred_token = strdup(buf);
  c->token_file_mtime = mtime;
  return c->cred_token ? RIPPLE_OK : RIPPLE_ENOMEM;
}

static int refresh_exec(ripple_kube_client_t *c, int force, ripple_kube_status_t *st) {
  int have = c->cred_token || c->cred_cert;
  int64_t now = ripple_now_ns();
  if (have && !force && (!c->cred_expiry || now < c->cred_expiry - CRED_MARGIN_NS))
    return RIPPLE_OK;
  char *token = NULL, *cert = NULL, *key = NULL;
  int64_t expiry = 0;
  int rc = kube_exec_run(c->cfg->exec, c->cfg->server, &token, &cert, &key, &expiry, st);
  if (rc != RIPPLE_OK) return rc;
  free(c->cred_token), free(c->cred_cert), free(c->cred_key);
  c->cred_token = token, c->cred_cert = cert, c->cred_key = key;
  c->cred_expiry = expiry;
  return RIPPLE_OK;
}

/* The credential for one request: copies, so a refresh by another thread
 * cannot free them under this request. */
static int cred_get(ripple_kube_client_t *c, int force, cred_t *k, ripple_kube_status_t *st) {
  memset(k, 0, sizeof *k);
  const ripple_kube_config_t *cfg = c->cfg;
  int rc = RIPPLE_OK;
  pthread_mutex_lock(&c->cred_lock);
  if (cfg->exec)
    rc = refresh_exec(c, force, st);
  else if (cfg->token_file && !cfg->token)
    rc = refresh_token_file(c, force, st);
  if (rc == RIPPLE_OK) {
    k->token = dup_or_null(c->cred_token ? c->cred_token : cfg->token);
    k->cert = dup_or_null(c->cred_cert ? c->cred_cert : cfg->cert_pem);
    k->key = dup_or_null(c->cred_key ? c->cred_key : cfg->key_pem);
  }
  pthread_mutex_unlock(&c->cred_lock);
  return rc;
}

/* ---- one request --------------------------------------------------------------- */

typedef struct xfer {
  const kube_req_t *rq;
  sbuf_t *resp;
  int aborted;
} xfer_t;

static size_t on_data(char *p, size_t size, size_t n, void *ud) {
  xfer_t *x = ud;
  size_t len = size * n;
  if (x->rq->stream) {
    if (x->rq->stream->data(x->rq->stream->ud, p, len) != 0) {
      x->aborted = 1;
      return 0;
    }
  } else if (x->resp) {
    sbuf_put(x->resp, p, len);
    if (x->resp->oom) return 0;
  }
  return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
  (void)dt, (void)dn, (void)ut, (void)un;
  xfer_t *x = ud;
  const kube_stream_t *s = x->rq->stream;
  if (s && s->cancelled && s->cancelled(s->ud)) x->aborted = 1;
  return x->aborted;
}

static void set_blob(CURL *h, CURLoption opt, const char *pem) {
  struct curl_blob b = {(void *)pem, strlen(pem), CURL_BLOB_COPY};
  curl_easy_setopt(h, opt, &b);
}

/* tls-server-name: connect to the configured server but verify (and send SNI
 * for) another name. curl has no separate SNI option, so the URL names the
 * TLS name and CONNECT_TO routes it to the real host. */
static struct curl_slist *tls_name_route(const ripple_kube_config_t *cfg, sbuf_t *url) {
  const char *hostp = strstr(cfg->server, "://");
  hostp = hostp ? hostp + 3 : cfg->server;
  const char *end = hostp + strcspn(hostp, "/");
  const char *colon = memchr(hostp, ':', (size_t)(end - hostp));
  if (hostp[0] == '[') colon = strstr(hostp, "]:") ? strstr(hostp, "]:") + 1 : NULL;
  const char *port = colon ? colon + 1 : "443";
  size_t portlen = colon ? (size_t)(end - port) : 3;
  size_t hostlen = (size_t)((colon ? colon : end) - hostp);
  sbuf_t route;
  sbuf_init(&route);
  sbuf_printf(&route, "%s:%.*s:%.*s:%.*s", cfg->tls_server_name, (int)portlen, port, (int)hostlen,
              hostp, (int)portlen, port);
  sbuf_printf(url, "https://%s:%.*s%s", cfg->tls_server_name, (int)portlen, port, end);
  struct curl_slist *l = route.p ? curl_slist_append(NULL, route.p) : NULL;
  sbuf_free(&route);
  return l;
}

static void setup_tls(CURL *h, const ripple_kube_config_t *cfg, const cred_t *k) {
  if (cfg->insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (cfg->ca_pem) {
    set_blob(h, CURLOPT_CAINFO_BLOB, cfg->ca_pem);
  }
  if (k->cert && k->key) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, k->cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(h, CURLOPT_SSLKEY_BLOB, k->key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
}

static long perform(ripple_kube_client_t *c, const kube_req_t *rq, const char *const *extra,
                    const cred_t *k, sbuf_t *resp, int *aborted, ripple_kube_status_t *st) {
  const ripple_kube_config_t *cfg = c->cfg;
  CURL *h = curl_easy_init();
  if (!h) return kube_fail(st, RIPPLE_ENOMEM, "out of memory"), -1;
  sbuf_t url;
  sbuf_init(&url);
  struct curl_slist *route = NULL, *hdr = NULL;
  if (cfg->tls_server_name && *cfg->tls_server_name) {
    route = tls_name_route(cfg, &url);
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, route);
  } else {
    sbuf_puts(&url, cfg->server);
  }
  sbuf_puts(&url, rq->path);
  char line[8300];
  if (k->token) {
    snprintf(line, sizeof line, "Authorization: Bearer %s", k->token);
    hdr = curl_slist_append(hdr, line);
  }
  if (rq->content_type) {
    snprintf(line, sizeof line, "Content-Type: %s", rq->content_type);
    hdr = curl_slist_append(hdr, line);
  }
  hdr = curl_slist_append(hdr, "Accept: application/json");
  for (; extra && *extra; extra++) hdr = curl_slist_append(hdr, *extra);
  xfer_t x = {rq, resp, 0};
  curl_easy_setopt(h, CURLOPT_URL, url.p ? url.p : "");
  curl_easy_setopt(h, CURLOPT_SHARE, (CURLSH *)c->share);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  uint32_t t = rq->timeout_ms ? rq->timeout_ms : c->opts.timeout_ms;
  if (t != UINT32_MAX) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)t);
  if (rq->body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
  }
  if (cfg->proxy_url) curl_easy_setopt(h, CURLOPT_PROXY, cfg->proxy_url);
  if (cfg->username) {
    curl_easy_setopt(h, CURLOPT_USERNAME, cfg->username);
    curl_easy_setopt(h, CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
  }
  setup_tls(h, cfg, k);
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && x.aborted))
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  else
    kube_fail(st, RIPPLE_KUBE_ECONNECT, "%s %s: %s", rq->method, cfg->server,
              curl_easy_strerror(rc));
  *aborted = x.aborted;
  curl_slist_free_all(hdr);
  curl_slist_free_all(route);
  sbuf_free(&url);
  curl_easy_cleanup(h);
  return status;
}

/* kube_do with extra header lines (NULL: none). */
static int do_request(ripple_kube_client_t *c, const kube_req_t *rq, const char *const *extra,
                      long *status, sbuf_t *resp, ripple_kube_status_t *st) {
  if (st) memset(st, 0, sizeof *st);
  *status = 0;
  int refreshable = c->cfg->exec || (c->cfg->token_file && !c->cfg->token);
  for (int attempt = 0; attempt < 2; attempt++) {
    cred_t k;
    int rc = cred_get(c, attempt > 0, &k, st);
    if (rc != RIPPLE_OK) return rc;
    if (resp) resp->len = 0;
    int aborted = 0;
    *status = perform(c, rq, extra, &k, resp, &aborted, st);
    cred_free(&k);
    if (*status < 0) return RIPPLE_ENOMEM;
    if (aborted) return RIPPLE_ESTATE;
    if (*status == 0) return RIPPLE_KUBE_ECONNECT;
    if (*status != 401 || !refreshable || rq->stream) break;
  }
  if (st) st->http = *status;
  return RIPPLE_OK;
}

int kube_do(ripple_kube_client_t *c, const kube_req_t *rq, long *status, sbuf_t *resp,
            ripple_kube_status_t *st) {
  return do_request(c, rq, NULL, status, resp, st);
}

/* ---- answers -------------------------------------------------------------------- */

/* Refusals (422 Invalid, 409 apply conflicts) list the fields at fault in
 * Status.details.causes. The API server's own messages repeat them, but an
 * admission webhook's or an aggregated API's may not, and the field is what
 * a person has to fix: add those the message does not name. */
static void add_causes(ripple_kube_status_t *st, const json_t *j) {
  const json_t *causes = json_object_get(json_object_get(j, "details"), "causes"), *cause;
  size_t i;
  json_array_foreach(causes, i, cause) {
    const char *field = json_string_value(json_object_get(cause, "field"));
    const char *cmsg = json_string_value(json_object_get(cause, "message"));
    if (!field || !*field || strstr(st->message, field)) continue;
    size_t len = strlen(st->message);
    snprintf(st->message + len, sizeof st->message - len, "; %s: %s", field,
             cmsg && *cmsg ? cmsg : "refused");
  }
}

int kube_check(long status, const char *body, size_t len, ripple_kube_status_t *st) {
  if (status >= 200 && status < 300) return RIPPLE_OK;
  int err = status == 404                    ? RIPPLE_KUBE_ENOTFOUND
            : status == 409                  ? RIPPLE_KUBE_ECONFLICT
            : status == 410                  ? RIPPLE_KUBE_EGONE
            : status == 401 || status == 403 ? RIPPLE_KUBE_EFORBIDDEN
            : status == 422                  ? RIPPLE_KUBE_EINVALID
                                             : RIPPLE_KUBE_EHTTP;
  if (!st) return err;
  st->http = status;
  json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
  const char *reason = j ? json_string_value(json_object_get(j, "reason")) : NULL;
  const char *msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
  snprintf(st->reason, sizeof st->reason, "%s", reason ? reason : "");
  if (msg && *msg)
    snprintf(st->message, sizeof st->message, "%s", msg);
  else if (reason && *reason)
    snprintf(st->message, sizeof st->message, "HTTP %ld %s from the API server", status, reason);
  else
    snprintf(st->message, sizeof st->message, "HTTP %ld from the API server%s%.*s", status,
             len ? ": " : "", (int)(len > 200 ? 200 : len), body ? body : "");
  add_causes(st, j);
  json_decref(j);
  return err;
}

int kube_call(ripple_kube_client_t *c, const kube_req_t *rq, json_t **out,
              ripple_kube_status_t *st) {
  sbuf_t resp;
  sbuf_init(&resp);
  long status;
  int rc = kube_do(c, rq, &status, &resp, st);
  if (rc == RIPPLE_OK) rc = kube_check(status, resp.p, resp.len, st);
  if (rc == RIPPLE_OK && resp.oom) rc = RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK && out) {
    json_error_t je;
    *out = json_loadb(resp.p ? resp.p : "", resp.len, 0, &je);
    if (!*out)
      rc = kube_fail(st, RIPPLE_EJSON, "%s %s: the answer is not JSON: %s", rq->method, rq->path,
                     je.text);
  }
  sbuf_free(&resp);
  return rc;
}

int kube_fetch_client(void *ud, const char *path, json_t **out, ripple_kube_status_t *st) {
  kube_req_t rq = {"GET", path, NULL, NULL, 0, 0, NULL};
  return kube_call(ud, &rq, out, st);
}

int ripple_kube_request(ripple_kube_client_t *c, const char *method, const char *path,
                        const char *content_type, const char *body, size_t len, json_t **out,
                        ripple_kube_status_t *st) {
  if (!c || !method || !path || path[0] != '/') return RIPPLE_EINVAL;
  kube_req_t rq = {method, path, content_type, body, len, 0, NULL};
  return kube_call(c, &rq, out, st);
}

int ripple_kube_request_raw(ripple_kube_client_t *c, const char *method, const char *path,
                            const char *const *headers, long *status, char **body, size_t *len,
                            ripple_kube_status_t *st) {
  if (!c || !method || !path || path[0] != '/' || !status || !body) return RIPPLE_EINVAL;
  for (const char *const *h = headers; h && *h; h++)
    if (strpbrk(*h, "\r\n") || !strchr(*h, ':')) return RIPPLE_EINVAL;
  kube_req_t rq = {method, path, NULL, NULL, 0, 0, NULL};
  sbuf_t resp;
  sbuf_init(&resp);
  long code;
  int rc = do_request(c, &rq, headers, &code, &resp, st);
  if (rc == RIPPLE_OK) rc = sbuf_take(&resp, body, len);
  sbuf_free(&resp);
  if (rc == RIPPLE_OK) *status = code;
  return rc;
}

/* ---- paths ------------------------------------------------------------------------ */

void kube_escape(sbuf_t *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      sbuf_putc(b, (char)ch);
    } else {
      sbuf_putc(b, '%');
      sbuf_putc(b, hex[ch >> 4]);
      sbuf_putc(b, hex[ch & 15]);
    }
  }
}

void kube_path(sbuf_t *b, const ripple_kube_resource_t *r, const char *ns, const char *name,
               const char *subresource) {
  if (r->group && *r->group)
    sbuf_printf(b, "/apis/%s/%s", r->group, r->version);
  else
    sbuf_printf(b, "/api/%s", r->version);
  if (r->namespaced && ns && *ns) {
    sbuf_puts(b, "/namespaces/");
    kube_escape(b, ns);
  }
  sbuf_putc(b, '/');
  sbuf_puts(b, r->resource);
  if (name && *name) {
    sbuf_putc(b, '/');
    kube_escape(b, name);
    if (subresource && *subresource) {
      sbuf_putc(b, '/');
      sbuf_puts(b, subresource);
    }
  }
}
