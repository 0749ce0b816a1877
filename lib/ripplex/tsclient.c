/*
 * tsclient.c - the trace server client policy (ripplex/tsclient.h).
 */
#include "ripplex/tsclient.h"

void tsc_apply(CURL *c, const tsc_policy_t *p) {
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, p->timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   p->connect_timeout_ms ? p->connect_timeout_ms : p->timeout_ms);
  if (p->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, p->ca_file);
}
