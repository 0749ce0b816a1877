/*
 * tserver.c - reading a trace from ripple-server (docs/api.md): the related
 * CPIDs, their mergelogs (the merge graph's edges) and their spans, a CPID's
 * origins, details and stalls, and an object's root mergelogs (its people's
 * changes), over libcurl. A reader token, when the server wants one, comes
 * from $RIPPLE_READER_TOKEN.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "ripplex/tsclient.h"

#define KR_ANSWER_MAX (512u << 20)

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

/* The "error" of an error answer, or the start of the body. */
static void answer_error(const body_t *b, char *out, size_t cap) {
  json_t *j = b->p ? json_loadb(b->p, b->len, 0, NULL) : NULL;
  const char *e = json_string_value(json_object_get(j, "error"));
  snprintf(out, cap, "%.200s", e ? e : b->p ? b->p : "");
  json_decref(j);
}

/* GET base + path, a JSON answer. RIPPLE_ENOENT for a 404 (err says which
 * path), RIPPLE_ESYS for no answer or another status. */
static int get(const char *base, const char *path, json_t **out, char *err, size_t cap) {
  char url[1024];
  size_t blen = strlen(base);
  while (blen && base[blen - 1] == '/') blen--;
  snprintf(url, sizeof url, "%.*s%s", (int)blen, base, path);
  CURL *c = curl_easy_init();
  if (!c) return RIPPLE_ENOMEM;
  body_t b = {0};
  struct curl_slist *h = NULL;
  const char *token = getenv("RIPPLE_READER_TOKEN");
  char auth[1100];
  if (token && *token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %.1000s", token);
    h = curl_slist_append(h, auth);
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  tsc_apply(c, &(tsc_policy_t){.timeout_ms = 60000, .connect_timeout_ms = 10000});
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  CURLcode cc = curl_easy_perform(c);
  long status = 0;
  if (cc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  int rc = RIPPLE_OK;
  char msg[256];
  if (cc != CURLE_OK) {
    snprintf(err, cap, "cannot reach the trace server at %s: %s (set --server or $RIPPLE_SERVER)",
             base, b.too_big ? "the answer is too large" : curl_easy_strerror(cc));
    rc = RIPPLE_ESYS;
  } else if (status == 404) {
    answer_error(&b, msg, sizeof msg);
    snprintf(err, cap, "GET %s: HTTP 404: %s", url, msg);
    rc = RIPPLE_ENOENT;
  } else if (status != 200) {
    answer_error(&b, msg, sizeof msg);
    snprintf(err, cap, "GET %s: HTTP %ld: %s", url, status, msg);
    rc = RIPPLE_ESYS;
  } else {
    json_error_t je;
    *out = json_loadb(b.p ? b.p : "", b.len, 0, &je);
    if (!*out) {
      snprintf(err, cap, "GET %s: the answer is not JSON: %s", url, je.text);
      rc = RIPPLE_EJSON;
    }
  }
  free(b.p);
  return rc;
}

int kr_tserver_fetch(const char *base, const char *cpid, kr_answers_t *out, char *err, size_t cap) {
  ripple_cpid_t id;
  if (ripple_cpid_parse(cpid, strlen(cpid), &id) != RIPPLE_OK) {
    snprintf(err, cap, "\"%s\" is not a CPID (a UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)",
             cpid);
    return RIPPLE_EINVAL;
  }
  char canon[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&id, canon);
  curl_init_once();
  kr_answers_t a = {0};
  static const char *what[3] = {"related", "mergelogs", "spans"};
  json_t **dst[3] = {&a.related, &a.mergelogs, &a.spans};
  int rc = RIPPLE_OK;
  for (int i = 0; i < 3 && rc == RIPPLE_OK; i++) {
    char path[128];
    snprintf(path, sizeof path, "/v1/cpids/%s/%s", canon, what[i]);
    rc = get(base, path, dst[i], err, cap);
  }
  if (rc == RIPPLE_ENOENT)
    snprintf(err, cap,
             "the trace server at %s does not know cpid %s (yet: the webhook ships within a "
             "second; or the change was not traced)",
             base, canon);
  if (rc != RIPPLE_OK) {
    kr_answers_free(&a);
    return rc;
  }
  *out = a;
  return RIPPLE_OK;
}

int kr_tserver_cpid_get(const char *base, const char *cpid, const char *what, json_t **out,
                        char *err, size_t cap) {
  ripple_cpid_t id;
  if (ripple_cpid_parse(cpid, strlen(cpid), &id) != RIPPLE_OK) {
    snprintf(err, cap, "\"%.60s\" is not a CPID", cpid);
    return RIPPLE_EINVAL;
  }
  char canon[RIPPLE_CPID_STRLEN + 1], path[160];
  ripple_cpid_format(&id, canon);
  snprintf(path, sizeof path, "/v1/cpids/%s/%.40s", canon, what);
  curl_init_once();
  return get(base, path, out, err, cap);
}

int kr_tserver_roots(const char *base, const char *uid, size_t limit, json_t **out, char *err,
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
  curl_init_once();
  return get(base, path, out, err, cap);
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
