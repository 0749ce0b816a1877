/*
 * fuzz_endpoints.c - libFuzzer target for the EndpointSlices and Services
 * ripple-guard reads from the API server (guard/endpoints.c): the input as
 * JSON is taken as a Service (guard_svc_port_name), as an EndpointSlice
 * (guard_eps_add_slice, under the port name found or "https"), and as a list
 * of slices (each item, as a list's pages give them); its first line also as
 * an --endpoints value (guard_eps_parse_list).
 *
 * Properties: no crash, no leak; never more than GUARD_MAX_ENDPOINTS
 * endpoints, each a valid IP address with a port 1-65535, none twice; a
 * malformed slice counts at least one in bad; what --endpoints accepts is
 * at least one endpoint.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const guard_eps_t *e) {
  unsigned char buf[16];
  if (e->n > GUARD_MAX_ENDPOINTS) abort();
  for (size_t i = 0; i < e->n; i++) {
    const guard_ep_t *p = &e->e[i];
    if (!p->port) abort();
    if (inet_pton(AF_INET, p->addr, buf) != 1 && inet_pton(AF_INET6, p->addr, buf) != 1) abort();
    for (size_t j = 0; j < i; j++)
      if (e->e[j].port == p->port && !strcmp(e->e[j].addr, p->addr)) abort();
  }
}

static void slice(guard_eps_t *e, const json_t *s, const char *port_name) {
  unsigned bad = e->bad;
  int rc = guard_eps_add_slice(e, s, port_name);
  if (rc < 0 && e->bad <= bad) abort();
  check(e);
}

static void as_list(const char *text, size_t len) {
  char line[256];
  size_t n = 0;
  while (n < len && n < sizeof line - 1 && text[n] != '\n') n++;
  memcpy(line, text, n);
  line[n] = '\0';
  guard_eps_t e;
  char why[200];
  if (guard_eps_parse_list(line, &e, why, sizeof why) == RIPPLE_OK) {
    if (!e.n) abort();
    check(&e);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static guard_eps_t e;
  as_list((const char *)data, size);
  json_t *j = json_loadb((const char *)data, size, 0, NULL);
  if (!j) return 0;
  char name[128] = "https", why[200];
  const json_t *port = json_object_get(j, "port");
  (void)guard_svc_port_name(j, json_is_integer(port) ? (long)json_integer_value(port) : 443, name,
                            sizeof name, why, sizeof why);
  memset(&e, 0, sizeof e);
  slice(&e, j, name);
  const json_t *item;
  size_t i;
  memset(&e, 0, sizeof e);
  json_array_foreach(json_object_get(j, "items"), i, item) { slice(&e, item, name); }
  json_decref(j);
  return 0;
}
