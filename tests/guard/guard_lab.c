/*
 * guard_lab.c - ripple-guard as a real process beside the webhook in lab
 * tests (guard_lab.h).
 */
#include "guard_lab.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ripplex/sbuf.h"
#include "ripplex/yjson.h"
#include "rw_lab.h"
#include "testutil.h"

void glab_start(whlab_proc_t *g, const whlab_t *l, const char *name, char *const extra[]) {
  const char *bin = getenv("RIPPLE_GUARD_BIN");
  if (!bin) fail_msg("RIPPLE_GUARD_BIN is needed (ctest sets it)");
  snprintf(g->log, sizeof g->log, "%s/guard.log", l->dir);
  char *argv[32] = {(char *)bin,   "--name",       (char *)name,        "--listen",
                    "127.0.0.1:0", "--kubeconfig", getenv("KUBECONFIG")};
  size_t n = 7;
  /* The webhook takes /mutate only from the API servers' certificate
   * (wh_lab.c, --client-ca): the guard's probe shows the same one. */
  const char *crt = getenv("RIPPLE_LAB_WEBHOOK_CLIENT_CERT");
  const char *key = getenv("RIPPLE_LAB_WEBHOOK_CLIENT_KEY");
  if (crt && key && access(crt, R_OK) == 0) {
    argv[n++] = "--client-cert", argv[n++] = (char *)crt;
    argv[n++] = "--client-key", argv[n++] = (char *)key;
  }
  for (size_t i = 0; extra && extra[i] && n < 31; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  whlab_spawn(g, argv);
  fprintf(stderr, "# guard log: %s\n", g->log);
}

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
  sbuf_put(ud, p, sz * n);
  return sz * n;
}

/* GET url (the API server's with the lab's admin certificate when tls). */
static char *get_text(const char *url, int tls) {
  sbuf_t b;
  sbuf_init(&b);
  CURL *c = curl_easy_init();
  assert_non_null(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (tls) {
    curl_easy_setopt(c, CURLOPT_CAINFO, getenv("RIPPLE_LAB_CA"));
    curl_easy_setopt(c, CURLOPT_SSLCERT, getenv("RIPPLE_LAB_ADMIN_CERT"));
    curl_easy_setopt(c, CURLOPT_SSLKEY, getenv("RIPPLE_LAB_ADMIN_KEY"));
  }
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  sbuf_putc(&b, '\0');
  if (status != 200 || b.oom) {
    sbuf_free(&b);
    return NULL;
  }
  return b.p;
}

double glab_metric(const whlab_proc_t *g, const char *name) {
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", g->port);
  char *body = get_text(url, 0);
  double v = -1;
  size_t n = strlen(name);
  for (char *save = NULL, *l = body ? strtok_r(body, "\n", &save) : NULL; l;
       l = strtok_r(NULL, "\n", &save))
    if (!strncmp(l, name, n) && l[n] == ' ') v = strtod(l + n, NULL);
  free(body);
  return v;
}

double glab_apiserver_metric(const char *metric, const char *webhook) {
  const char *server = getenv("RIPPLE_LAB_SERVER");
  char url[256], label[200];
  snprintf(url, sizeof url, "%s/metrics", server ? server : "https://127.0.0.1:16443");
  snprintf(label, sizeof label, "name=\"%s\"", webhook);
  char *body = get_text(url, 1);
  if (!body) fail_msg("cannot read the API server's /metrics at %s", url);
  double sum = 0;
  size_t n = strlen(metric);
  for (char *save = NULL, *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (strncmp(l, metric, n) != 0 || l[n] != '{' || !strstr(l, label)) continue;
    const char *sp = strrchr(l, ' ');
    if (sp) sum += strtod(sp + 1, NULL);
  }
  free(body);
  return sum;
}

int glab_reg_off(ripple_kube_client_t *kc, const char *name) {
  json_t *cfg = NULL;
  ripple_kube_status_t st;
  if (ripple_kube_get(kc, lab_resolve(kc, "mutatingwebhookconfigurations"), NULL, name, &cfg,
                      &st) != RIPPLE_OK)
    return -1;
  size_t i, j, n = 0, off = 0;
  json_t *wh, *c;
  json_array_foreach(json_object_get(cfg, "webhooks"), i, wh) {
    n++;
    json_array_foreach(json_object_get(wh, "matchConditions"), j, c) {
      const char *cn = json_string_value(json_object_get(c, "name"));
      if (cn && !strcmp(cn, "ripple-guard-off")) off++;
    }
  }
  json_decref(cfg);
  return n && off == n ? 1 : off == 0 ? 0 : -1;
}

char *glab_reg_ca(ripple_kube_client_t *kc, const char *name) {
  json_t *cfg = NULL;
  ripple_kube_status_t st;
  if (ripple_kube_get(kc, lab_resolve(kc, "mutatingwebhookconfigurations"), NULL, name, &cfg,
                      &st) != RIPPLE_OK)
    return NULL;
  const char *ca = json_string_value(json_object_get(
      json_object_get(json_array_get(json_object_get(cfg, "webhooks"), 0), "clientConfig"),
      "caBundle"));
  char *out = strdup(ca ? ca : "");
  json_decref(cfg);
  return out;
}

void glab_register_disabled(whlab_t *l, const char *name, const char *ca_file) {
  const char *src = getenv("RIPPLE_SOURCE_DIR");
  if (!src) fail_msg("RIPPLE_SOURCE_DIR is needed (ctest sets it)");
  char script[512], url[64];
  snprintf(script, sizeof script, "%s/webhook/deploy/registration.sh", src);
  snprintf(url, sizeof url, "https://127.0.0.1:%u/mutate", l->webhook.port);
  /* The generator needs a CA; without ca_file it is dropped below. */
  char *argv[] = {script,
                  "--name",
                  (char *)name,
                  "--url",
                  url,
                  ca_file ? "--ca-file" : "--ca-bundle",
                  ca_file ? (char *)ca_file : "Cg==",
                  "--namespaces",
                  (char *)l->ns,
                  NULL};
  sbuf_t y;
  sbuf_init(&y);
  whlab_capture(argv, &y);
  json_t *docs = NULL;
  char err[256];
  if (yjson_parse(y.p, y.len, &docs, err, sizeof err) != RIPPLE_OK)
    fail_msg("registration.sh's YAML: %s", err);
  sbuf_free(&y);
  json_t *cfg = json_array_get(docs, 0), *wh;
  size_t i;
  json_array_foreach(json_object_get(cfg, "webhooks"), i, wh) {
    if (!ca_file) json_object_del(json_object_get(wh, "clientConfig"), "caBundle");
    json_array_append_new(
        json_object_get(wh, "matchConditions"),
        json_pack("{s:s,s:s}", "name", "ripple-guard-off", "expression", "false"));
  }
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(l->kc, lab_resolve(l->kc, "mutatingwebhookconfigurations"), NULL,
                                cfg, NULL, NULL, &st));
  json_decref(docs);
  snprintf(l->name, sizeof l->name, "%s", name);
}

int glab_log_count(const whlab_proc_t *g, const char *event, int *first) {
  FILE *f = fopen(g->log, "r");
  char line[2048];
  int n = 0, i = 0;
  *first = -1;
  size_t el = strlen(event);
  while (f && fgets(line, sizeof line, f)) {
    /* "event=NAME" then a space or the end: not a longer event's name. */
    for (const char *p = strstr(line, "event="); p; p = strstr(p + 1, "event=")) {
      if (!strncmp(p + 6, event, el) && (p[6 + el] == ' ' || p[6 + el] == '\n' || !p[6 + el])) {
        if (*first < 0) *first = i;
        n++;
        break;
      }
    }
    i++;
  }
  if (f) fclose(f);
  return n;
}

char *glab_b64_file(const char *path) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *text = NULL;
  size_t n = 0;
  if (sbuf_read_file_max(path, 1u << 20, &text, &n) != RIPPLE_OK) fail_msg("cannot read %s", path);
  const unsigned char *s = (const unsigned char *)text;
  sbuf_t b;
  sbuf_init(&b);
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                 (i + 2 < n ? s[i + 2] : 0);
    sbuf_putc(&b, tab[v >> 18 & 63]);
    sbuf_putc(&b, tab[v >> 12 & 63]);
    sbuf_putc(&b, i + 1 < n ? tab[v >> 6 & 63] : '=');
    sbuf_putc(&b, i + 2 < n ? tab[v & 63] : '=');
  }
  sbuf_putc(&b, '\0');
  free(text);
  assert_false(b.oom);
  return b.p;
}
