/*
 * tserver.c - reading a trace from ripple-server (docs/api.md): the related
 * CPIDs, their mergelogs (the merge graph's edges) and their spans, a CPID's
 * origins, details and stalls, and an object's root mergelogs (its people's
 * changes).
 *
 * Two ways there, chosen once when the handle is opened (where.c says
 * which): directly over libcurl, or through the Kubernetes API server's
 * service proxy with the user's kubeconfig credentials (libripple-kube).
 * Either gives one answer's status and body; what the answer means is
 * decided in one place, except that through the proxy an answer may be the
 * API server's own (a Status: no such Service, no endpoints, forbidden),
 * which is told apart and explained.
 *
 * The reader token never appears in a message, and its header line is wiped
 * after each request.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "ripplex/b64.h"
#include "ripplex/tsclient.h"

#define KR_ANSWER_MAX (512u << 20)
#define TOKEN_MAX 4096

/* Where the reader token came from, for the message of a 401. */
typedef enum token_src {
  TOKEN_NONE,      /* directly, without $RIPPLE_READER_TOKEN */
  TOKEN_ENV,       /* $RIPPLE_READER_TOKEN */
  TOKEN_SECRET,    /* the Service's Secret */
  TOKEN_FORBIDDEN, /* the Secret may not be read (403) */
  TOKEN_MISSING,   /* there is no such Secret (404) */
} token_src_t;

typedef struct answer {
  long status;
  char *body; /* NUL-terminated */
  size_t len;
} answer_t;

/* One GET of path (from "/v1/..."): RIPPLE_OK when an answer came. */
typedef int (*send_fn)(kr_ts_t *ts, const char *path, answer_t *an, char *err, size_t cap);

struct kr_ts {
  kr_where_t w;
  ripple_kube_client_t *kc; /* borrowed; NULL: directly */
  char *url;                /* the server's URL, or the API server's */
  char *token;              /* NULL: none */
  token_src_t token_src;
  send_fn send;
  char where[600]; /* how messages name it (kr_ts_where) */
};

/* ---- directly, over libcurl ---------------------------------------------------------- */

typedef struct body {
  char *p;
  size_t len;
  int too_big;
} body_t;

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  body_t *b = ud;
  size_t add = size * n;
  if (b->len + add > KR_ANSWER_MAX) {
    b->too_big = 1;
    return 0;
  }
  char *grown = realloc(b->p, b->len + add + 1);
  if (!grown) return 0;
  memcpy(grown + b->len, p, add);
  b->len += add;
  grown[b->len] = '\0';
  b->p = grown;
  return add;
}

static void curl_init_once(void) {
  static int once;
  if (!once++) curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int send_direct(kr_ts_t *ts, const char *path, answer_t *an, char *err, size_t cap) {
  char url[2048];
  if ((size_t)snprintf(url, sizeof url, "%s%s", ts->url, path) >= sizeof url) {
    snprintf(err, cap, "the trace server's URL and path are too long");
    return RIPPLE_EINVAL;
  }
  CURL *c = curl_easy_init();
  if (!c) return RIPPLE_ENOMEM;
  body_t b = {0};
  struct curl_slist *h = NULL;
  char auth[TOKEN_MAX + 32];
  if (ts->token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", ts->token);
    h = curl_slist_append(h, auth);
    explicit_bzero(auth, sizeof auth);
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  /* The chart's trace server serves HTTPS under its own CA (docs/install.md). */
  const char *ca = getenv("RIPPLE_SERVER_CA");
  tsc_apply(
      c, &(tsc_policy_t){
             .timeout_ms = 60000, .connect_timeout_ms = 10000, .ca_file = ca && *ca ? ca : NULL});
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  CURLcode cc = curl_easy_perform(c);
  long status = 0;
  if (cc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (cc != CURLE_OK) {
    snprintf(err, cap,
             "cannot reach the trace server at %s (%s): %s (is it running? or leave --server "
             "and $RIPPLE_SERVER out to go through the API server)",
             ts->url, ts->w.from, b.too_big ? "the answer is too large" : curl_easy_strerror(cc));
    free(b.p);
    return RIPPLE_ESYS;
  }
  *an = (answer_t){status, b.p, b.len};
  return RIPPLE_OK;
}

/* ---- through the API server's service proxy --------------------------------------------- */

static int send_proxy(kr_ts_t *ts, const char *path, answer_t *an, char *err, size_t cap) {
  char *p = kr_proxy_path(&ts->w, path);
  if (!p) return RIPPLE_ENOMEM;
  char line[TOKEN_MAX + 32];
  const char *hdrs[2] = {NULL, NULL};
  if (ts->token) {
    snprintf(line, sizeof line, "X-Ripple-Token: %s", ts->token);
    hdrs[0] = line;
  }
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  answer_t a = {0};
  int rc = ripple_kube_request_raw(ts->kc, "GET", p, hdrs, &a.status, &a.body, &a.len, &st);
  explicit_bzero(line, sizeof line);
  free(p);
  if (rc == RIPPLE_KUBE_ECONNECT)
    snprintf(err, cap,
             "cannot reach the API server at %s: %s (check the kubeconfig: kubectl cluster-info; "
             "or give the trace server's URL with --server)",
             ts->url, st.message);
  else if (rc == RIPPLE_KUBE_ECRED)
    snprintf(err, cap, "the kubeconfig's credential plugin failed: %s", st.message);
  else if (rc != RIPPLE_OK)
    snprintf(err, cap, "GET %s through the API server: %s", path,
             st.message[0] ? st.message : ripple_kube_strerror(rc));
  if (rc == RIPPLE_OK) *an = a;
  return rc;
}

/* The chart's Role for readers of the trace server behind Service name: the
 * release's ("<release>-server" -> "<release>-reader"), else ripple-reader. */
static void reader_role(const char *name, char *out, size_t cap) {
  size_t n = strlen(name), k = strlen("-server");
  if (n > k && !strcmp(name + n - k, "-server"))
    snprintf(out, cap, "%.*s-reader", (int)(n - k), name);
  else
    snprintf(out, cap, "ripple-reader");
}

/* The API server's own refusal (a Status), said so that the user can act. */
static int api_refusal(const kr_ts_t *ts, long status, const json_t *j, char *err, size_t cap) {
  const char *m = json_string_value(json_object_get(j, "message"));
  const char *ns = ts->w.ns, *name = ts->w.name, *from = ts->w.from;
  char role[160];
  reader_role(name, role, sizeof role);
  m = m ? m : "";
  if (status == 404)
    snprintf(err, cap,
             "the API server has no Service %s/%s (%s) with endpoints to reach the trace server "
             "through (\"%.200s\"): is ripple installed in this cluster? Name its Service with "
             "--server-service NAMESPACE/SERVICE[:PORT], or its URL with --server URL",
             ns, name, from, m);
  else if (status == 503 && strstr(m, "no endpoints available"))
    snprintf(err, cap,
             "the trace server behind Service %s/%s (%s) is not running or not ready "
             "(\"%.200s\"): see kubectl -n %s get pods,endpoints",
             ns, name, from, m, ns);
  else if (status == 503)
    snprintf(err, cap,
             "the API server cannot reach the trace server behind Service %s/%s (%s): \"%.200s\"; "
             "is it running and ready? see kubectl -n %s get pods,endpoints",
             ns, name, from, m, ns);
  else if (status == 403)
    snprintf(err, cap,
             "you may not reach the trace server through the API server (\"%.200s\"): that needs "
             "get on services/proxy, resourceName https:%s:%s, in namespace %s. Ask for the Role "
             "%s there to be bound to you (kubectl -n %s create rolebinding NAME "
             "--role=%s --user=YOU), or give the trace server's URL with --server",
             m, name, ts->w.port, ns, role, ns, role);
  else if (status == 401)
    snprintf(err, cap,
             "the API server at %s refused the kubeconfig's credentials (\"%.200s\"): log in "
             "again (kubectl auth whoami says who you are)",
             ts->url, m);
  else
    snprintf(err, cap, "the API server answered HTTP %ld on the way to Service %s/%s (%s): %.200s",
             status, ns, name, from, m);
  return RIPPLE_ESYS;
}

/* ---- answers ------------------------------------------------------------------------- */

/* A Kubernetes Status: the API server answered, not the trace server. */
static int is_status(const json_t *j) {
  const char *kind = json_string_value(json_object_get(j, "kind"));
  return kind && !strcmp(kind, "Status") && json_object_get(j, "apiVersion");
}

static void token_hint(const kr_ts_t *ts, char *out, size_t cap) {
  const char *ns = ts->w.ns, *name = ts->w.name;
  char role[160];
  reader_role(name, role, sizeof role);
  switch (ts->token_src) {
    case TOKEN_ENV: snprintf(out, cap, "the one in $RIPPLE_READER_TOKEN was refused"); break;
    case TOKEN_SECRET:
      snprintf(out, cap,
               "the one in Secret %s/%s" KR_TOKEN_SECRET_SUFFIX
               " was refused (does the "
               "server's --reader-token-file still hold it?); or set $RIPPLE_READER_TOKEN",
               ns, name);
      break;
    case TOKEN_FORBIDDEN:
      snprintf(out, cap,
               "kubectl ripple takes it from Secret %s/%s" KR_TOKEN_SECRET_SUFFIX
               ", which you may "
               "not read: ask for the Role %s in %s to be bound to you, or set "
               "$RIPPLE_READER_TOKEN",
               ns, name, role, ns);
      break;
    case TOKEN_MISSING:
      snprintf(out, cap,
               "there is no Secret %s/%s" KR_TOKEN_SECRET_SUFFIX
               " to take it from: set "
               "$RIPPLE_READER_TOKEN",
               ns, name);
      break;
    case TOKEN_NONE:
      snprintf(out, cap, "set $RIPPLE_READER_TOKEN (a line of its --reader-token-file)");
      break;
  }
}

/* What one answer means: RIPPLE_OK with *out the JSON, RIPPLE_ENOENT for the
 * trace server's 404, RIPPLE_ESYS (or RIPPLE_EJSON) otherwise. */
static int interpret(const kr_ts_t *ts, const char *path, const answer_t *an, json_t **out,
                     char *err, size_t cap) {
  json_error_t je;
  json_t *j = json_loadb(an->body ? an->body : "", an->len, 0, &je);
  if (an->status == 200) {
    if (!j) snprintf(err, cap, "GET %s: the answer is not JSON: %s", path, je.text);
    *out = j;
    return j ? RIPPLE_OK : RIPPLE_EJSON;
  }
  int rc = RIPPLE_ESYS;
  const char *e = json_string_value(json_object_get(j, "error"));
  /* hint: token_hint's longest message is about 190 bytes of words plus a
   * namespace and a name (63 each, a DNS label), the Role (at most 69) and the
   * namespace again: 1024 holds it whole, so no hint is cut short. */
  char said[256], hint[1024];
  snprintf(said, sizeof said, "%.200s", e ? e : an->body ? an->body : "");
  for (char *c = said; *c; c++) /* the server's words, or a proxy's page */
    if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
  if (ts->kc && is_status(j)) {
    rc = api_refusal(ts, an->status, j, err, cap);
  } else if (an->status == 404) {
    snprintf(err, cap, "GET %s: HTTP 404: %s", path, said);
    rc = RIPPLE_ENOENT;
  } else if (an->status == 401) {
    token_hint(ts, hint, sizeof hint);
    snprintf(err, cap, "the trace server %s wants a reader token (HTTP 401: %s): %s", ts->where,
             said, hint);
  } else {
    snprintf(err, cap, "GET %s: HTTP %ld: %s", path, an->status, said);
  }
  json_decref(j);
  return rc;
}

/* GET path (from "/v1/...") and decide what the answer means. */
static int get(kr_ts_t *ts, const char *path, json_t **out, char *err, size_t cap) {
  answer_t an = {0};
  int rc = ts->send(ts, path, &an, err, cap);
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory");
  if (rc != RIPPLE_OK) return rc;
  rc = interpret(ts, path, &an, out, err, cap);
  free(an.body);
  return rc;
}

/* ---- the reader token ----------------------------------------------------------------- */

/* A token fit for a header line: printable ASCII, trailing whitespace (a
 * file's newline) dropped. 0 when it is not. */
static int token_clean(char *t) {
  size_t n = strlen(t);
  while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ')) t[--n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (t[i] < 0x21 || t[i] > 0x7e) return 0;
  return n > 0;
}

/* Reading the Secret failed otherwise than 403 or 404: the first request
 * through the API server, so this is where a kubeconfig that does not work
 * shows. */
static int secret_error(const kr_ts_t *ts, int rc, const ripple_kube_status_t *st, char *err,
                        size_t cap) {
  if (rc == RIPPLE_KUBE_ECONNECT)
    snprintf(err, cap,
             "cannot reach the API server at %s: %s (check the kubeconfig: kubectl cluster-info; "
             "or give the trace server's URL with --server)",
             ts->url, st->message);
  else if (rc == RIPPLE_KUBE_EFORBIDDEN)
    snprintf(err, cap,
             "the API server at %s refused the kubeconfig's credentials (\"%.200s\"): log in "
             "again (kubectl auth whoami says who you are)",
             ts->url, st->message);
  else
    snprintf(err, cap,
             "reading the trace server's reader token (Secret %s/%s" KR_TOKEN_SECRET_SUFFIX "): %s",
             ts->w.ns, ts->w.name, st->message[0] ? st->message : ripple_kube_strerror(rc));
  return rc;
}

/* The Secret <service>-reader-token's "token", read with the user's
 * credentials. 403 and 404 are no token (token_src says which). */
static int token_from_secret(kr_ts_t *ts, char *err, size_t cap) {
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s" KR_TOKEN_SECRET_SUFFIX, ts->w.ns,
           ts->w.name);
  ripple_kube_status_t st;
  memset(&st, 0, sizeof st);
  json_t *s = NULL;
  int rc = ripple_kube_request(ts->kc, "GET", path, NULL, NULL, 0, &s, &st);
  if (rc == RIPPLE_KUBE_ENOTFOUND || (rc == RIPPLE_KUBE_EFORBIDDEN && st.http == 403)) {
    ts->token_src = rc == RIPPLE_KUBE_ENOTFOUND ? TOKEN_MISSING : TOKEN_FORBIDDEN;
    return RIPPLE_OK;
  }
  if (rc != RIPPLE_OK) return secret_error(ts, rc, &st, err, cap);
  const json_t *v = json_object_get(json_object_get(s, "data"), "token");
  char *t = NULL;
  size_t n = 0;
  rc = json_is_string(v) ? b64_decode(json_string_value(v), json_string_length(v), &t, &n)
                         : RIPPLE_EINVAL;
  /* a NUL inside would cut the token short where it is used as a string */
  if (rc == RIPPLE_OK && (n >= TOKEN_MAX || strlen(t) != n || !token_clean(t))) rc = RIPPLE_EINVAL;
  if (rc == RIPPLE_EINVAL) {
    snprintf(err, cap,
             "Secret %s/%s" KR_TOKEN_SECRET_SUFFIX
             " has no usable \"token\" (one line of "
             "printable ASCII, at most %d bytes)",
             ts->w.ns, ts->w.name, TOKEN_MAX - 1);
  }
  json_decref(s); /* jansson frees the encoded copy; it is not a secret for long */
  if (rc != RIPPLE_OK) {
    if (t) explicit_bzero(t, n);
    free(t);
    return rc;
  }
  ts->token = t;
  ts->token_src = TOKEN_SECRET;
  return RIPPLE_OK;
}

static int token_load(kr_ts_t *ts, char *err, size_t cap) {
  const char *env = getenv("RIPPLE_READER_TOKEN");
  if (env && *env) {
    if (strlen(env) >= TOKEN_MAX || !(ts->token = strdup(env))) return RIPPLE_ENOMEM;
    if (!token_clean(ts->token)) {
      snprintf(err, cap, "$RIPPLE_READER_TOKEN is not a token (one line of printable ASCII)");
      return RIPPLE_EINVAL;
    }
    ts->token_src = TOKEN_ENV;
    return RIPPLE_OK;
  }
  return ts->kc ? token_from_secret(ts, err, cap) : RIPPLE_OK;
}

/* ---- the handle ------------------------------------------------------------------------ */

int kr_ts_open(const kr_where_t *w, ripple_kube_client_t *kc, const char *api, kr_ts_t **out,
               char *err, size_t cap) {
  if (!w->url && (!kc || !api)) {
    snprintf(err, cap, "the trace server's Service is reached through the API server: no client");
    return RIPPLE_EINVAL;
  }
  kr_ts_t *ts = calloc(1, sizeof *ts);
  const char *base = w->url ? w->url : api;
  size_t blen = strlen(base);
  while (blen && base[blen - 1] == '/') blen--;
  if (!ts || !(ts->url = strndup(base, blen))) {
    free(ts);
    snprintf(err, cap, "out of memory");
    return RIPPLE_ENOMEM;
  }
  ts->w = *w;
  ts->kc = w->url ? NULL : kc;
  ts->send = ts->kc ? send_proxy : send_direct;
  if (ts->kc)
    snprintf(ts->where, sizeof ts->where, "behind Service %s/%s (%s, through the API server at %s)",
             w->ns, w->name, w->from, ts->url);
  else
    snprintf(ts->where, sizeof ts->where, "at %.500s (%s)", ts->url, w->from);
  if (!ts->kc) curl_init_once();
  int rc = token_load(ts, err, cap);
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory (or $RIPPLE_READER_TOKEN too long)");
  if (rc != RIPPLE_OK) {
    kr_ts_free(ts);
    return rc;
  }
  *out = ts;
  return RIPPLE_OK;
}

void kr_ts_free(kr_ts_t *ts) {
  if (!ts) return;
  if (ts->token) explicit_bzero(ts->token, strlen(ts->token));
  free(ts->token);
  free(ts->url);
  free(ts);
}

const char *kr_ts_where(const kr_ts_t *ts) { return ts->where; }

char *kr_ts_dashboard_url(const kr_ts_t *ts, const char *cpid) {
  if (!ts->kc) return kr_dashboard_url(ts->url, cpid);
  char *p = kr_proxy_path(&ts->w, "/");
  size_t cap = strlen(ts->url) + (p ? strlen(p) : 0) + 1;
  char *base = p ? malloc(cap) : NULL;
  if (base) snprintf(base, cap, "%s%s", ts->url, p);
  char *url = base ? kr_dashboard_url(base, cpid) : NULL;
  free(base);
  free(p);
  return url;
}

void kr_ts_put_dashboard(FILE *f, const kr_ts_t *ts, const char *url, const char *cpid,
                         int reachable) {
  if (!ts->kc) {
    /* The dashboard keeps its scope in the deep link (docs/dashboard.md). */
    fprintf(f, "\ndashboard: %s%s\n", url, reachable ? "?scope=reachable" : "");
    return;
  }
  /* The proxy's URL wants the user's cluster credentials, which a browser
   * does not have: the relay (kubectl ripple dashboard) brings them. */
  fprintf(f, "\ndashboard: kubectl ripple dashboard %s", cpid);
  if (ts->w.from && !strcmp(ts->w.from, "--server-service"))
    fprintf(f, " --server-service %s/%s:%s", ts->w.ns, ts->w.name, ts->w.port);
  if (reachable) fputs(" --reachable", f);
  fputc('\n', f);
}

int kr_ts_proxied(const kr_ts_t *ts) { return ts->kc != NULL; }

int kr_ts_get_raw(kr_ts_t *ts, const char *path, long *status, char **body, size_t *len, char *err,
                  size_t cap) {
  answer_t an = {0};
  int rc = ts->send(ts, path, &an, err, cap);
  if (rc == RIPPLE_ENOMEM) snprintf(err, cap, "out of memory");
  if (rc != RIPPLE_OK) return rc;
  *status = an.status;
  *body = an.body ? an.body : strdup("");
  *len = an.body ? an.len : 0;
  if (!*body) {
    snprintf(err, cap, "out of memory");
    return RIPPLE_ENOMEM;
  }
  return RIPPLE_OK;
}

/* ---- what kubectl ripple asks ---------------------------------------------------------- */

int kr_tserver_fetch(kr_ts_t *ts, const char *cpid, int reachable, kr_answers_t *out, char *err,
                     size_t cap) {
  ripple_cpid_t id;
  if (ripple_cpid_parse(cpid, strlen(cpid), &id) != RIPPLE_OK) {
    snprintf(err, cap, "\"%s\" is not a CPID (a UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)",
             cpid);
    return RIPPLE_EINVAL;
  }
  char canon[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&id, canon);
  kr_answers_t a = {0};
  static const char *what[3] = {"related", "mergelogs", "spans"};
  json_t **dst[3] = {&a.related, &a.mergelogs, &a.spans};
  int rc = RIPPLE_OK;
  for (int i = 0; i < 3 && rc == RIPPLE_OK; i++) {
    char path[128];
    snprintf(path, sizeof path, "/v1/cpids/%s/%s?scope=%s", canon, what[i],
             reachable ? "reachable" : "own");
    rc = get(ts, path, dst[i], err, cap);
  }
  if (rc == RIPPLE_ENOENT)
    snprintf(err, cap,
             "the trace server %s does not know cpid %s (yet: the webhook ships within a "
             "second; or the change was not traced)",
             ts->where, canon);
  if (rc != RIPPLE_OK) {
    kr_answers_free(&a);
    return rc;
  }
  *out = a;
  return RIPPLE_OK;
}

int kr_tserver_cpid_get(kr_ts_t *ts, const char *cpid, const char *what, json_t **out, char *err,
                        size_t cap) {
  ripple_cpid_t id;
  if (ripple_cpid_parse(cpid, strlen(cpid), &id) != RIPPLE_OK) {
    snprintf(err, cap, "\"%.60s\" is not a CPID", cpid);
    return RIPPLE_EINVAL;
  }
  char canon[RIPPLE_CPID_STRLEN + 1], path[160];
  ripple_cpid_format(&id, canon);
  snprintf(path, sizeof path, "/v1/cpids/%s/%.40s", canon, what);
  return get(ts, path, out, err, cap);
}

int kr_tserver_roots(kr_ts_t *ts, const char *uid, size_t limit, json_t **out, char *err,
                     size_t cap) {
  char path[256];
  size_t n = strlen(uid);
  /* What the server indexes (docs/api.md); it would answer 400 otherwise. */
  if (n == 0 || n > 128 ||
      strspn(uid,
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
             "0123456789-") != n) {
    snprintf(err, cap, "\"%.140s\" is not an object uid the trace server indexes", uid);
    return RIPPLE_EINVAL;
  }
  snprintf(path, sizeof path, "/v1/objects/%s/roots?limit=%zu", uid, limit);
  return get(ts, path, out, err, cap);
}

void kr_answers_free(kr_answers_t *a) {
  if (!a) return;
  json_decref(a->related);
  json_decref(a->mergelogs);
  json_decref(a->spans);
  json_decref(a->details);
  json_decref(a->stalls);
  memset(a, 0, sizeof *a);
}
