/*
 * http_client.h - a few lines of libcurl for tests that talk to a real
 * ripple-server: one request, its status and its body, and a parsed JSON
 * answer when the test wants to look inside.
 */
#ifndef RIPPLE_TEST_HTTP_CLIENT_H
#define RIPPLE_TEST_HTTP_CLIENT_H

#include <jansson.h>
#include <stddef.h>

typedef struct hc_resp {
  long status; /* 0: no answer (connection refused, reset, timeout) */
  char *body;  /* NUL-terminated, malloc'd; free with hc_resp_free */
  size_t len;
} hc_resp_t;

/* method "GET" or "POST"; body may be NULL; token (a bearer token) may be NULL. */
int hc_request(const char *method, const char *url, const char *body, size_t len, const char *token,
               hc_resp_t *out);
void hc_resp_free(hc_resp_t *r);

/* POST body (JSON) to base+path: 1 when the answer is 200, else 0 with the
 * answer on stderr. */
int hc_post_ok(const char *base, const char *path, const char *body);

/* GET base+path and parse the JSON answer; NULL unless the status is `want`. */
json_t *hc_get_json(const char *base, const char *path, long want);

/* The value of the unlabelled series `name` in a Prometheus text body (not
 * changed), -1 when it has none. */
double hc_metric_value(const char *text, const char *name);

/* Does a JSON array of strings hold s? */
int hc_array_has(const json_t *arr, const char *s);

#endif
