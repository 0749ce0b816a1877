/*
 * endpoints.c - the endpoints of a webhook registered by Service, as
 * ripple-guard probes them (guard.h; docs/guard.md, "Replicas"): the ready
 * endpoints of the Service's EndpointSlices, each at the port its Service
 * port resolves to, or the --endpoints list that stands for them in tests.
 *
 * Why each endpoint and not the Service: kube-proxy sends every new
 * connection to any ready replica, so a probe through the Service of a
 * webhook with one replica hung (and not yet unready) fails now and then
 * while the others answer, and the guard would take all tracing out of the
 * path. Probed one by one, the webhook is down only when none answers.
 *
 * Slices come from the API server, so every field is checked for its type
 * before it is believed: a malformed slice (or endpoint) is skipped and
 * counted, never fatal. Fuzzed by tests/fuzz/fuzz_endpoints.c. Pure logic;
 * the API calls are in endpoints_kube.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"

/* Is text an address of the slice's family (1 IPv4, 0 IPv6)? */
static int addr_ok(const char *text, int v4) {
  unsigned char buf[16];
  return text && strlen(text) < GUARD_ADDR_MAX &&
         inet_pton(v4 ? AF_INET : AF_INET6, text, buf) == 1;
}

int guard_addr_loopback(const char *addr) {
  unsigned char b[16];
  if (inet_pton(AF_INET, addr, b) == 1) return b[0] == 127;
  static const unsigned char one[16] = {[15] = 1};
  return inet_pton(AF_INET6, addr, b) == 1 && !memcmp(b, one, 16);
}

int guard_svc_port_name(const json_t *svc, long port, char *name, size_t cap, char *why,
                        size_t wcap) {
  const json_t *ports = json_object_get(json_object_get(svc, "spec"), "ports"), *p;
  if (!json_is_array(ports)) {
    snprintf(why, wcap, "the Service has no spec.ports");
    return RIPPLE_EJSON;
  }
  size_t i;
  json_array_foreach(ports, i, p) {
    const json_t *num = json_object_get(p, "port"), *pn = json_object_get(p, "name");
    if (!json_is_integer(num) || json_integer_value(num) != port) continue;
    if (pn && !json_is_null(pn) && !json_is_string(pn)) {
      snprintf(why, wcap, "the Service's port %ld has a name that is not a string", port);
      return RIPPLE_EJSON;
    }
    /* An unnamed port (a Service of one port) is "" in the slices too. */
    snprintf(name, cap, "%s", json_is_string(pn) ? json_string_value(pn) : "");
    return RIPPLE_OK;
  }
  snprintf(why, wcap, "the Service has no port %ld", port);
  return RIPPLE_ENOENT;
}

static int bad(guard_eps_t *eps, const char *what) {
  if (!eps->bad) snprintf(eps->why, sizeof eps->why, "%s", what);
  eps->bad++;
  return RIPPLE_EJSON;
}

/* The slice's number for the port named port_name: 1..65535, 0 when the
 * slice has none by that name (its endpoints do not serve it: a Pod without
 * the named container port), RIPPLE_EJSON when malformed. */
static long slice_port(guard_eps_t *eps, const json_t *ports, const char *port_name) {
  if (!ports || json_is_null(ports)) return 0; /* no ports: none to probe */
  if (!json_is_array(ports)) return bad(eps, "ports is not a list");
  size_t i;
  const json_t *p;
  json_array_foreach(ports, i, p) {
    const json_t *pn = json_object_get(p, "name"), *num = json_object_get(p, "port");
    if (!json_is_object(p) || (pn && !json_is_null(pn) && !json_is_string(pn)))
      return bad(eps, "a port is not an object with a string name");
    if (strcmp(json_is_string(pn) ? json_string_value(pn) : "", port_name) != 0) continue;
    if (!num || json_is_null(num)) return 0; /* "all ports": no number to dial */
    json_int_t v = json_is_integer(num) ? json_integer_value(num) : 0;
    if (v < 1 || v > 65535) return bad(eps, "a port's number is not 1-65535");
    return (long)v;
  }
  return 0;
}

/* Ready, per the API: conditions.ready true, or absent (unknown is ready).
 * 1 ready, 0 not, RIPPLE_EJSON malformed. */
static int ep_ready(guard_eps_t *eps, const json_t *ep) {
  const json_t *cond = json_object_get(ep, "conditions");
  if (cond && !json_is_null(cond) && !json_is_object(cond))
    return bad(eps, "an endpoint's conditions is not an object");
  const json_t *ready = json_object_get(cond, "ready");
  if (!ready || json_is_null(ready)) return 1;
  if (!json_is_boolean(ready)) return bad(eps, "an endpoint's conditions.ready is not a boolean");
  return json_is_true(ready);
}

/* Add addr:port unless it is there: 1 added, 0 there (or no room). */
static int add(guard_eps_t *eps, const char *addr, long port) {
  for (size_t i = 0; i < eps->n; i++)
    if (eps->e[i].port == port && !strcmp(eps->e[i].addr, addr)) return 0;
  if (eps->n == GUARD_MAX_ENDPOINTS) return eps->dropped++, 0;
  guard_ep_t *e = &eps->e[eps->n++];
  memset(e, 0, sizeof *e);
  snprintf(e->addr, sizeof e->addr, "%s", addr);
  e->port = (uint16_t)port;
  return 1;
}

/* One endpoint of a slice: 1 added, 0 not (not ready, already there), or
 * RIPPLE_EJSON (malformed: skipped and counted, the slice goes on). */
static int add_endpoint(guard_eps_t *eps, const json_t *ep, int v4, long port) {
  if (!json_is_object(ep)) return bad(eps, "an endpoint is not an object");
  const json_t *addrs = json_object_get(ep, "addresses");
  /* All addresses of an endpoint are one Pod's; the first will do (the API). */
  const char *a = json_string_value(json_array_get(addrs, 0));
  if (!addr_ok(a, v4))
    return bad(eps, "an endpoint's first address is not an IP of the slice's type");
  int r = ep_ready(eps, ep);
  if (r <= 0) return r;
  return add(eps, a, port);
}

int guard_eps_add_slice(guard_eps_t *eps, const json_t *slice, const char *port_name) {
  if (!json_is_object(slice)) return bad(eps, "a slice is not an object");
  const char *type = json_string_value(json_object_get(slice, "addressType"));
  if (!type) return bad(eps, "a slice has no addressType");
  /* FQDN slices are made by hand, never for a Service's Pods: nothing to dial. */
  if (!strcmp(type, "FQDN")) return 0;
  int v4 = !strcmp(type, "IPv4");
  if (!v4 && strcmp(type, "IPv6") != 0) return bad(eps, "a slice's addressType is unknown");
  long port = slice_port(eps, json_object_get(slice, "ports"), port_name);
  if (port < 0) return (int)port;
  const json_t *list = json_object_get(slice, "endpoints"), *ep;
  /* Go writes a slice without endpoints as null. */
  if (list && !json_is_null(list) && !json_is_array(list))
    return bad(eps, "a slice's endpoints is not a list");
  int added = 0;
  size_t i;
  json_array_foreach(list, i, ep) {
    int r = port ? add_endpoint(eps, ep, v4, port) : 0;
    if (r > 0) added += r;
  }
  return added;
}

/* One "A.B.C.D:PORT" or "[V6]:PORT" of --endpoints (len bytes at s). */
static int parse_one(const char *s, size_t len, guard_eps_t *out, char *why, size_t cap) {
  char item[80], addr[GUARD_ADDR_MAX];
  if (len >= sizeof item) return snprintf(why, cap, "an endpoint is too long"), RIPPLE_EINVAL;
  memcpy(item, s, len);
  item[len] = '\0';
  char *colon = strrchr(item, ':'), *end = NULL;
  int v6 = item[0] == '[';
  if (!colon || (v6 && colon[-1] != ']')) {
    snprintf(why, cap, "endpoint %s: not HOST:PORT ([V6]:PORT)", item);
    return RIPPLE_EINVAL;
  }
  size_t alen = (size_t)(colon - item) - (v6 ? 2 : 0);
  snprintf(addr, sizeof addr, "%.*s", (int)alen, item + v6);
  long port = strtol(colon + 1, &end, 10);
  if (alen >= sizeof addr || !addr_ok(addr, !v6) || *end || end == colon + 1 || port < 1 ||
      port > 65535) {
    snprintf(why, cap, "endpoint %s: not an IP address and a port 1-65535", item);
    return RIPPLE_EINVAL;
  }
  if (!add(out, addr, port) && out->dropped) {
    snprintf(why, cap, "more than %d endpoints", GUARD_MAX_ENDPOINTS);
    return RIPPLE_ERANGE;
  }
  return RIPPLE_OK;
}

int guard_eps_parse_list(const char *s, guard_eps_t *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  for (const char *p = s;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    int rc = parse_one(p, len, out, why, cap);
    if (rc != RIPPLE_OK) return rc;
    if (!comma) return RIPPLE_OK;
    p = comma + 1;
  }
}

static const guard_ep_t *find(const guard_eps_t *eps, const guard_ep_t *e) {
  for (size_t i = 0; i < eps->n; i++)
    if (eps->e[i].port == e->port && !strcmp(eps->e[i].addr, e->addr)) return &eps->e[i];
  return NULL;
}

void guard_eps_carry(guard_eps_t *to, const guard_eps_t *from) {
  for (size_t i = 0; i < to->n; i++) {
    const guard_ep_t *old = find(from, &to->e[i]);
    if (old) to->e[i].failing = old->failing;
  }
}

int guard_eps_same(const guard_eps_t *a, const guard_eps_t *b) {
  if (a->n != b->n) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!find(b, &a->e[i])) return 0;
  return 1;
}

void guard_ep_text(const guard_ep_t *e, char *out, size_t cap) {
  int v6 = strchr(e->addr, ':') != NULL;
  snprintf(out, cap, "%s%s%s:%u", v6 ? "[" : "", e->addr, v6 ? "]" : "", (unsigned)e->port);
}
