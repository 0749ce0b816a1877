/*
 * fuzz_kubectl_relay.c - what `kubectl ripple dashboard` reads from anything
 * on this machine (kubectl/relay.c): a request's path, its Host and
 * Sec-Fetch-Site headers and its query's keys and values. The input is
 * lines: the path, the Host, the Sec-Fetch-Site, then "key=value" lines.
 * Whatever they hold: no crash, and a path let through is one the trace
 * server may be asked for: under "/", no "..", no "//", of plain
 * characters, within its bound, after the exact secret.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

#define SECRET "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde"

static void check_path(const char *url, const char *out) {
  size_t n = strlen(out);
  if (out[0] != '/' || n > KR_RELAY_PATH_MAX || strstr(out, "..") || strstr(out, "//")) abort();
  if (strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/") != n)
    abort();
  if (strncmp(url, "/" SECRET "/", sizeof SECRET + 1) != 0) abort();
  const char *t = kr_relay_type(out, 200);
  if (!t || !*t) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *in = malloc(size + 1);
  if (!in) return 0;
  memcpy(in, data, size);
  in[size] = '\0';
  char *save = NULL, *line[3] = {NULL, NULL, NULL};
  char *p = strtok_r(in, "\n", &save);
  for (int i = 0; i < 3 && p; i++, p = strtok_r(NULL, "\n", &save)) line[i] = p;
  char out[KR_RELAY_PATH_MAX + KR_RELAY_QUERY_MAX + 2];
  if (line[0] && kr_relay_map(SECRET, line[0], out, sizeof out) == KR_RELAY_OK) {
    check_path(line[0], out);
    size_t base = strlen(out);
    for (; p; p = strtok_r(NULL, "\n", &save)) {
      char *eq = strchr(p, '=');
      if (eq) *eq = '\0';
      if (kr_relay_query_add(out, sizeof out, p, eq ? eq + 1 : NULL) != RIPPLE_OK) break;
    }
    /* The query is %-encoded: nothing that could end the path or a line. */
    if (strlen(out) >= sizeof out || strpbrk(out + base, " #\r\n/")) abort();
  }
  (void)kr_relay_host_ok(line[1], 8123);
  (void)kr_relay_fetch_ok(line[2], line[2], line[1]);
  free(in);
  return 0;
}
