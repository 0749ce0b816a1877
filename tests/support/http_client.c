/*
 * http_client.c - see http_client.h.
 */
#include "http_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  hc_resp_t *r = ud;
  size_t add = size * n;
  char *grown = realloc(r->body, r->len + add + 1);
  if (!grown) return 0; /* curl reports a write error */
  memcpy(grown + r->len, p, add);
  r->len += add;
  grown[r->len] = '\0';
  r->body = grown;
  return add;
}

int hc_request(const char *method, const char *url, const char *body, size_t len, const char *token,
               hc_resp_t *out) {
  memset(out, 0, sizeof *out);
  CURL *c = curl_easy_init();
  if (!c) return -1;
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  char auth[512];
  if (token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
  if (body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return rc == CURLE_OK ? 0 : -1;
}

void hc_resp_free(hc_resp_t *r) {
  free(r->body);
  memset(r, 0, sizeof *r);
}

int hc_post_ok(const char *base, const char *path, const char *body) {
  char url[1024];
  snprintf(url, sizeof url, "%s%s", base, path);
  hc_resp_t r;
  int ok = hc_request("POST", url, body, strlen(body), NULL, &r) == 0 && r.status == 200;
  if (!ok) fprintf(stderr, "POST %s: status %ld, body %s\n", url, r.status, r.body ? r.body : "");
  hc_resp_free(&r);
  return ok;
}

json_t *hc_get_json(const char *base, const char *path, long want) {
  char url[1024];
  snprintf(url, sizeof url, "%s%s", base, path);
  hc_resp_t r;
  if (hc_request("GET", url, NULL, 0, NULL, &r) != 0 || r.status != want) {
    fprintf(stderr, "GET %s: status %ld, body %s\n", url, r.status, r.body ? r.body : "");
    hc_resp_free(&r);
    return NULL;
  }
  json_t *j = json_loadb(r.body ? r.body : "", r.len, 0, NULL);
  hc_resp_free(&r);
  return j;
}

double hc_metric_value(const char *text, const char *name) {
  size_t n = strlen(name);
  double v = -1;
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (!strncmp(l, name, n) && l[n] == ' ') v = strtod(l + n, NULL);
  return v;
}

int hc_array_has(const json_t *arr, const char *s) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    if (json_is_string(v) && !strcmp(json_string_value(v), s)) return 1;
  }
  return 0;
}
