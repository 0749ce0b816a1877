/*
 * where.c - where kubectl-ripple finds the trace server (docs/kubectl-ripple.md,
 * "Where the trace server is"): a URL it reaches directly (--server,
 * $RIPPLE_SERVER: a port-forward, the lab, tests), or a Service it reaches
 * through the Kubernetes API server's service proxy with the user's own
 * kubeconfig credentials (--server-service, $RIPPLE_SERVER_SERVICE, else the
 * install's ripple-system/ripple-server:https), and the proxy's paths.
 *
 * The names are checked here as the API server would check them, so a typo
 * is a usage error that names the option, not a 404 from the cluster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define DIGITS "0123456789"

/* A DNS-1123 label (a namespace); with letter_first a DNS-1035 label (a
 * Service's name). */
static int dns_label(const char *s, size_t n, int letter_first) {
  if (n == 0 || n > 63) return 0;
  if (strspn(s, LOWER DIGITS "-") < n) return 0;
  if (s[0] == '-' || s[n - 1] == '-') return 0;
  return !letter_first || (s[0] >= 'a' && s[0] <= 'z');
}

/* A Service's port: its name (an IANA service name: 1-15 of a-z, 0-9 and
 * '-', a letter among them, no "--", no '-' at either end) or its number. */
static int port_ok(const char *s, size_t n) {
  if (n == 0) return 0;
  if (strspn(s, DIGITS) == n) {
    long v = n <= 5 ? strtol(s, NULL, 10) : 0;
    return v >= 1 && v <= 65535;
  }
  if (n > 15 || strspn(s, LOWER DIGITS "-") < n || s[0] == '-' || s[n - 1] == '-') return 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '-' && s[i + 1] == '-') return 0;
  return strcspn(s, LOWER) < n;
}

int kr_service_parse(const char *spec, kr_where_t *out, char *err, size_t cap) {
  const char *slash = spec ? strchr(spec, '/') : NULL;
  if (!slash) {
    snprintf(err, cap, "\"%.100s\" is not NAMESPACE/SERVICE[:PORT] (like %s/%s:%s)",
             spec ? spec : "", KR_DEFAULT_SERVICE_NS, KR_DEFAULT_SERVICE_NAME,
             KR_DEFAULT_SERVICE_PORT);
    return RIPPLE_EINVAL;
  }
  const char *name = slash + 1, *colon = strchr(name, ':');
  size_t nslen = (size_t)(slash - spec);
  size_t namelen = colon ? (size_t)(colon - name) : strlen(name);
  const char *port = colon ? colon + 1 : KR_DEFAULT_SERVICE_PORT;
  const char *bad = !dns_label(spec, nslen, 0)     ? "namespace"
                    : !dns_label(name, namelen, 1) ? "service name"
                    : !port_ok(port, strlen(port)) ? "port (a port's name or number)"
                                                   : NULL;
  if (bad) {
    snprintf(err, cap, "\"%.100s\" is not NAMESPACE/SERVICE[:PORT]: the %s is not valid", spec,
             bad);
    return RIPPLE_EINVAL;
  }
  out->url = NULL;
  snprintf(out->ns, sizeof out->ns, "%.*s", (int)nslen, spec);
  snprintf(out->name, sizeof out->name, "%.*s", (int)namelen, name);
  snprintf(out->port, sizeof out->port, "%s", port);
  return RIPPLE_OK;
}

int kr_where_pick(const kr_args_t *a, kr_where_t *out, char *err, size_t cap) {
  const char *url_env = getenv("RIPPLE_SERVER"), *svc_env = getenv("RIPPLE_SERVER_SERVICE");
  kr_where_t w = {0};
  const char *svc = NULL;
  if (a->server && a->server_service) {
    snprintf(err, cap, "--server and --server-service name the trace server twice: give one");
    return RIPPLE_EINVAL;
  }
  if (a->server && *a->server) {
    w.url = a->server, w.from = "--server";
  } else if (a->server_service) {
    svc = a->server_service, w.from = "--server-service";
  } else if (url_env && *url_env) {
    w.url = url_env, w.from = "$RIPPLE_SERVER";
  } else if (svc_env && *svc_env) {
    svc = svc_env, w.from = "$RIPPLE_SERVER_SERVICE";
  } else {
    svc = KR_DEFAULT_SERVICE_NS "/" KR_DEFAULT_SERVICE_NAME ":" KR_DEFAULT_SERVICE_PORT;
    w.from = "the default";
  }
  if (w.url) {
    *out = w;
    return RIPPLE_OK;
  }
  char why[256];
  if (kr_service_parse(svc, &w, why, sizeof why) != RIPPLE_OK) {
    snprintf(err, cap, "%s: %s", w.from, why);
    return RIPPLE_EINVAL;
  }
  *out = w;
  return RIPPLE_OK;
}

char *kr_proxy_path(const kr_where_t *w, const char *path) {
  size_t cap = strlen(w->ns) + strlen(w->name) + strlen(w->port) + strlen(path) + 64;
  char *p = malloc(cap);
  if (p)
    snprintf(p, cap, "/api/v1/namespaces/%s/services/https:%s:%s/proxy%s", w->ns, w->name, w->port,
             path);
  return p;
}
