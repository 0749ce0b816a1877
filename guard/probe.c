/*
 * probe.c - one dry AdmissionReview POSTed to a webhook over HTTPS with
 * libcurl (guard.h), the way the API server calls it: TLS verified against
 * the registration's caBundle, a short overall timeout. A fresh connection
 * each time, so a webhook that accepts no new connections or does not finish
 * a TLS handshake (a stopped process: the kernel still completes the TCP
 * handshake) fails the probe as it would fail the API server. The
 * endpoints of a Service are probed at once (a curl multi handle), each on
 * its own connection to its own address.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char *client_cert, *client_key; /* guard_probe_client */

void guard_probe_client(const char *cert_file, const char *key_file) {
  client_cert = cert_file;
  client_key = key_file;
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
  if (client_cert) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, client_cert);
    curl_easy_setopt(c, CURLOPT_SSLKEY, client_key);
  }
}

/* One job's transfer while it runs. */
typedef struct run {
  CURL *c;
  sbuf_t req, ans;
  struct curl_slist *connect_to;
  char uid[64];
} run_t;

/* The endpoint is reached by CURLOPT_CONNECT_TO, not CURLOPT_RESOLVE: the
 * URL (and so SNI and the name TLS verifies, NAME.NS.svc) stays the
 * Service's, and since every endpoint of a Service shares one host and port,
 * RESOLVE entries would collide in the multi handle's shared DNS cache. */
static int run_start(run_t *r, guard_probe_job_t *j, uint32_t timeout_ms, struct curl_slist *hdrs) {
  snprintf(r->uid, sizeof r->uid, "ripple-guard-probe-%llu", (unsigned long long)j->seq);
  sbuf_init(&r->req);
  sbuf_init(&r->ans);
  guard_probe_body(&r->req, r->uid);
  r->c = curl_easy_init();
  if (j->ep) {
    char to[GUARD_ADDR_MAX + 16], ep[GUARD_ADDR_MAX + 10];
    guard_ep_text(j->ep, ep, sizeof ep);
    snprintf(to, sizeof to, "::%s", ep); /* any host and port of the URL */
    r->connect_to = curl_slist_append(NULL, to);
  }
  if (!r->c || r->req.oom || (j->ep && !r->connect_to)) {
    snprintf(j->why, sizeof j->why, "out of memory");
    return j->rc = RIPPLE_ENOMEM;
  }
  set_opts(r->c, j->t, timeout_ms, &r->req, hdrs, &r->ans);
  if (r->connect_to) curl_easy_setopt(r->c, CURLOPT_CONNECT_TO, r->connect_to);
  curl_easy_setopt(r->c, CURLOPT_PRIVATE, (void *)j);
  return RIPPLE_OK;
}

/* A finished transfer's verdict into its job. */
static void run_done(run_t *r, guard_probe_job_t *j, CURLcode cc, uint32_t timeout_ms) {
  long status = 0;
  curl_off_t us = 0;
  curl_easy_getinfo(r->c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(r->c, CURLINFO_TOTAL_TIME_T, &us);
  j->us = (int64_t)us;
  if (cc == CURLE_OPERATION_TIMEDOUT) {
    snprintf(j->why, sizeof j->why, "timeout after %u ms", timeout_ms);
    j->rc = RIPPLE_ETIMEDOUT;
  } else if (cc != CURLE_OK) {
    snprintf(j->why, sizeof j->why, "%s", curl_easy_strerror(cc));
    j->rc = RIPPLE_ESYS;
  } else if (status != 200) {
    snprintf(j->why, sizeof j->why, "HTTP %ld", status);
    j->rc = RIPPLE_EJSON;
  } else {
    j->rc = guard_answer_check(r->ans.p, r->ans.len, r->uid, j->why, sizeof j->why);
  }
}

static void run_free(run_t *r, CURLM *m) {
  if (r->c) {
    curl_multi_remove_handle(m, r->c);
    curl_easy_cleanup(r->c);
  }
  curl_slist_free_all(r->connect_to);
  sbuf_free(&r->req);
  sbuf_free(&r->ans);
}

/* Until every transfer ended (each has its own CURLOPT_TIMEOUT_MS). */
static void run_all(CURLM *m, run_t *runs, size_t n, uint32_t timeout_ms) {
  int running = 1;
  while (running) {
    if (curl_multi_perform(m, &running) != CURLM_OK) break;
    if (running && curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK) break;
  }
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(m, &left))) {
    if (msg->msg != CURLMSG_DONE) continue;
    for (size_t i = 0; i < n; i++) {
      guard_probe_job_t *j = NULL;
      curl_easy_getinfo(runs[i].c, CURLINFO_PRIVATE, (char **)&j);
      if (runs[i].c == msg->easy_handle && j) run_done(&runs[i], j, msg->data.result, timeout_ms);
    }
  }
}

void guard_probe_run(guard_probe_job_t *jobs, size_t n, uint32_t timeout_ms) {
  for (size_t i = 0; i < n; i++) {
    jobs[i].rc = RIPPLE_ESYS; /* until a transfer says otherwise */
    jobs[i].us = 0;
    snprintf(jobs[i].why, sizeof jobs[i].why, "the probe did not run");
  }
  run_t *runs = calloc(n ? n : 1, sizeof *runs);
  CURLM *m = curl_multi_init();
  struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  if (runs && m && hdrs) {
    for (size_t i = 0; i < n; i++)
      if (run_start(&runs[i], &jobs[i], timeout_ms, hdrs) == RIPPLE_OK)
        curl_multi_add_handle(m, runs[i].c);
    run_all(m, runs, n, timeout_ms);
  }
  for (size_t i = 0; runs && i < n; i++) run_free(&runs[i], m);
  free(runs);
  curl_slist_free_all(hdrs);
  if (m) curl_multi_cleanup(m);
}

int guard_probe(const guard_target_t *t, uint32_t timeout_ms, uint64_t seq, char *why, size_t cap) {
  guard_probe_job_t j = {.t = t, .seq = seq};
  guard_probe_run(&j, 1, timeout_ms);
  snprintf(why, cap, "%s", j.why);
  return j.rc;
}
