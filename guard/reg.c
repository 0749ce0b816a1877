/*
 * reg.c - a MutatingWebhookConfiguration as ripple-guard sees it (guard.h):
 * each webhook's address and CA, whether the guard's condition is on it, and
 * the patch that adds or removes that condition. Pure logic over JSON; the
 * API calls are in reg_kube.c.
 *
 * The patch is a strategic merge patch: webhooks and their matchConditions
 * are lists merged by name in the API's own types, so one patch adds the
 * condition to every webhook (or deletes it with "$patch": "delete") whatever
 * the lists hold, concurrent edits of other fields are kept, and a repeated
 * patch changes nothing.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"

int guard_url_loopback(const char *url) {
  static const char *const ok[] = {"https://127.", "https://localhost:", "https://localhost/",
                                   "https://[::1]:", "https://[::1]/"};
  if (!url) return 0;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    size_t n = strlen(ok[i]);
    if (strncmp(url, ok[i], n) != 0) continue;
    if (i > 0) return 1;
    /* 127.a.b.c then ':' or '/' or the end: digits and dots only. */
    const char *p = url + n;
    while (*p && (isdigit((unsigned char)*p) || *p == '.')) p++;
    return *p == ':' || *p == '/' || *p == '\0';
  }
  return !strcmp(url, "https://localhost") || !strcmp(url, "https://[::1]");
}

static char *service_url(const json_t *svc) {
  const char *ns = json_string_value(json_object_get(svc, "namespace"));
  const char *name = json_string_value(json_object_get(svc, "name"));
  const char *path = json_string_value(json_object_get(svc, "path"));
  const json_t *port = json_object_get(svc, "port");
  if (!ns || !name) return NULL;
  if (port && !json_is_integer(port)) return NULL;
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "https://%s.%s.svc:%lld%s", name, ns,
              port ? (long long)json_integer_value(port) : 443LL, path ? path : "");
  char *s = NULL;
  size_t len;
  if (sbuf_take(&b, &s, &len) != RIPPLE_OK) return NULL;
  return s;
}

/* Where the Service's endpoints are read (service_url checked its shape). */
static int service_ref(const json_t *svc, guard_target_t *t) {
  const json_t *port = json_object_get(svc, "port");
  t->svc_ns = strdup(json_string_value(json_object_get(svc, "namespace")));
  t->svc_name = strdup(json_string_value(json_object_get(svc, "name")));
  t->svc_port = port ? (long)json_integer_value(port) : 443;
  return t->svc_ns && t->svc_name ? RIPPLE_OK : RIPPLE_ENOMEM;
}

static int has_off(const json_t *wh) {
  const json_t *conds = json_object_get(wh, "matchConditions"), *c;
  size_t i;
  json_array_foreach(conds, i, c) {
    const char *n = json_string_value(json_object_get(c, "name"));
    if (n && !strcmp(n, GUARD_OFF_NAME)) return 1;
  }
  return 0;
}

static int parse_one(const json_t *wh, guard_target_t *t, char *why, size_t cap) {
  const char *name = json_string_value(json_object_get(wh, "name"));
  const json_t *cc = json_object_get(wh, "clientConfig");
  const char *url = json_string_value(json_object_get(cc, "url"));
  const json_t *ca = json_object_get(cc, "caBundle");
  if (!name || !json_is_object(cc)) {
    snprintf(why, cap, "a webhook without a name or clientConfig");
    return RIPPLE_EJSON;
  }
  t->name = strdup(name);
  t->url = url ? strdup(url) : service_url(json_object_get(cc, "service"));
  if (!url && t->url && service_ref(json_object_get(cc, "service"), t) != RIPPLE_OK)
    return snprintf(why, cap, "out of memory"), RIPPLE_ENOMEM;
  size_t calen = json_string_length(ca); /* 0 when absent or not a string: no CA */
  char *pem = NULL;
  size_t len = 0;
  int rc = calen ? b64_decode(json_string_value(ca), calen, &pem, &len) : RIPPLE_OK;
  t->ca = pem;
  t->ca_len = len;
  if (rc == RIPPLE_ENOMEM) return snprintf(why, cap, "out of memory"), rc;
  if (rc != RIPPLE_OK) {
    snprintf(why, cap, "webhook %.200s: caBundle is not base64", name);
    return RIPPLE_EJSON;
  }
  if (!t->name || !t->url) {
    snprintf(why, cap, "webhook %.200s: clientConfig has neither url nor service", name);
    return RIPPLE_EJSON;
  }
  return RIPPLE_OK;
}

int guard_reg_parse(const json_t *cfg, guard_reg_t *out, char *why, size_t cap) {
  guard_reg_t r;
  memset(&r, 0, sizeof r);
  const json_t *whs = json_object_get(cfg, "webhooks"), *wh;
  if (!json_is_array(whs) || !json_array_size(whs)) {
    snprintf(why, cap, "the configuration has no webhooks");
    return RIPPLE_EJSON;
  }
  size_t i, noff = 0;
  json_array_foreach(whs, i, wh) {
    if (r.n == GUARD_MAX_WEBHOOKS) {
      snprintf(why, cap, "more than %d webhooks", GUARD_MAX_WEBHOOKS);
      guard_reg_free(&r);
      return RIPPLE_ERANGE;
    }
    int rc = parse_one(wh, &r.t[r.n++], why, cap);
    if (rc != RIPPLE_OK) {
      guard_reg_free(&r);
      return rc;
    }
    noff += (size_t)has_off(wh);
  }
  r.off = noff == r.n ? 1 : noff == 0 ? 0 : -1;
  *out = r;
  return RIPPLE_OK;
}

void guard_reg_free(guard_reg_t *r) {
  for (size_t i = 0; i < r->n; i++) {
    free(r->t[i].name);
    free(r->t[i].url);
    free(r->t[i].ca);
    free(r->t[i].svc_ns);
    free(r->t[i].svc_name);
  }
  memset(r, 0, sizeof *r);
}

void guard_reg_patch(const guard_reg_t *r, int off, sbuf_t *out) {
  sbuf_puts(out, "{\"webhooks\":[");
  for (size_t i = 0; i < r->n; i++) {
    sbuf_puts(out, i ? ",{\"name\":" : "{\"name\":");
    sbuf_json_str(out, r->t[i].name);
    sbuf_puts(out, ",\"matchConditions\":[{\"name\":\"" GUARD_OFF_NAME "\",");
    sbuf_puts(out, off ? "\"expression\":\"" GUARD_OFF_EXPR "\"}]}" : "\"$patch\":\"delete\"}]}");
  }
  sbuf_puts(out, "]}");
}
