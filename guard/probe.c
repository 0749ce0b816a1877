/*
 * probe.c - one dry AdmissionReview POSTed to a webhook over HTTPS with
 * libcurl (guard.h), the way the API server calls it: TLS verified against
 * the registration's caBundle, a short overall timeout. A fresh connection
 * each time, so a webhook that accepts no new connections or does not finish
 * a TLS handshake (a stopped process: the kernel still completes the TCP
 * handshake) fails the probe as it would fail the API server.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"

#define GUARD_ANSWER_MAX (1u << 20)

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
  sbuf_t *b = ud;
  if (b->len + sz * n > GUARD_ANSWER_MAX) return 0; /* aborts the transfer */
  sbuf_put(b, p, sz * n);
  return sz * n;
}

static void set_opts(CURL *c, const guard_target_t *t, uint32_t timeout_ms, const sbuf_t *req,
                     struct curl_slist *hdrs, sbuf_t *ans) {
  curl_easy_setopt(c, CURLOPT_URL, t->url);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
#endif
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
  curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->p);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)req->len);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, ans);
  if (t->ca) {
    struct curl_blob blob = {.data = t->ca, .len = t->ca_len, .flags = CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
}

int guard_probe(const guard_target_t *t, uint32_t timeout_ms, uint64_t seq, char *why, size_t cap) {
  char uid[64];
  snprintf(uid, sizeof uid, "ripple-guard-probe-%llu", (unsigned long long)seq);
  sbuf_t req, ans;
  sbuf_init(&req);
  sbuf_init(&ans);
  guard_probe_body(&req, uid);
  CURL *c = curl_easy_init();
  struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  int rc = RIPPLE_ENOMEM;
  if (!c || !hdrs || req.oom) {
    snprintf(why, cap, "out of memory");
    goto done;
  }
  set_opts(c, t, timeout_ms, &req, hdrs, &ans);
  CURLcode cc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (cc == CURLE_OPERATION_TIMEDOUT) {
    snprintf(why, cap, "timeout after %u ms", timeout_ms);
    rc = RIPPLE_ETIMEDOUT;
  } else if (cc != CURLE_OK) {
    snprintf(why, cap, "%s", curl_easy_strerror(cc));
    rc = RIPPLE_ESYS;
  } else if (status != 200) {
    snprintf(why, cap, "HTTP %ld", status);
    rc = RIPPLE_EJSON;
  } else {
    rc = guard_answer_check(ans.p, ans.len, uid, why, cap);
  }
done:
  curl_slist_free_all(hdrs);
  if (c) curl_easy_cleanup(c);
  sbuf_free(&req);
  sbuf_free(&ans);
  return rc;
}
