/*
 * ripplex/tsclient.h - how every ripple client reaches the trace server: the
 * shipper in libripple (mergelogs and spans) and kubectl-ripple (queries).
 *
 * One policy for both: no proxy from the environment (the trace server is
 * ripple's own, never reached through http_proxy), only http and https, no
 * signals (threads), bounded connect and total time, the operator's CA file
 * when one is given.
 */
#ifndef RIPPLEX_TSCLIENT_H
#define RIPPLEX_TSCLIENT_H

#include <curl/curl.h>

typedef struct tsc_policy {
  long timeout_ms;         /* the whole request */
  long connect_timeout_ms; /* 0: the same as timeout_ms */
  const char *ca_file;     /* PEM bundle for https, NULL: the system's */
} tsc_policy_t;

/* Apply the policy to an easy handle (before each request or once per handle:
 * curl keeps options across requests). */
void tsc_apply(CURL *c, const tsc_policy_t *p);

#endif
