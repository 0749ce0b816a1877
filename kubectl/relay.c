/*
 * relay.c - the pure parts of `kubectl ripple dashboard` (dashboard.c): the
 * secret path prefix, the checks every request must pass before anything is
 * relayed (its Host, its path under the prefix, its query), and the
 * Content-Type of an answer.
 *
 * Everything here reads what a browser (or anything else on this machine)
 * sent, so it is strict: what the dashboard asks for passes, anything else
 * is a 404 (tests/fuzz target fuzz_kubectl_relay).
 *
 * The Content-Type is decided here, from the path, and not taken from the
 * upstream answer: through the API server's proxy an answer may be the API
 * server's own (or a proxy's page), and the relay's origin must never serve
 * something as HTML or script that the dashboard's files did not name so.
 * ripple-server answers JSON under /v1/ and its bundle's few file types
 * elsewhere (server/serve/web.c, whose table this mirrors).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kr.h"
#include "ripplex/rnd.h"
#include "ripplex/webfile.h"

int kr_relay_secret(char out[KR_RELAY_SECRET_LEN + 1]) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  unsigned char r[KR_RELAY_SECRET_BYTES + 2];
  memset(r, 0, sizeof r);
  if (rnd_bytes(r, KR_RELAY_SECRET_BYTES) != RIPPLE_OK) return RIPPLE_ESYS;
  size_t o = 0;
  /* base64url without padding: 32 bytes are 43 characters (the last one
   * carries 4 bits; the bytes past the end are zero). */
  for (size_t i = 0; i < KR_RELAY_SECRET_BYTES; i += 3) {
    unsigned v = (unsigned)r[i] << 16 | (unsigned)r[i + 1] << 8 | r[i + 2];
    out[o++] = a[v >> 18 & 63];
    out[o++] = a[v >> 12 & 63];
    if (o < KR_RELAY_SECRET_LEN) out[o++] = a[v >> 6 & 63];
    if (o < KR_RELAY_SECRET_LEN) out[o++] = a[v & 63];
  }
  out[KR_RELAY_SECRET_LEN] = '\0';
  explicit_bzero(r, sizeof r);
  return RIPPLE_OK;
}

int kr_relay_host_ok(const char *host, unsigned port) {
  if (!host) return 0;
  static const char *const names[] = {"127.0.0.1", "localhost"};
  for (size_t i = 0; i < 2; i++) {
    size_t n = strlen(names[i]);
    if (strncasecmp(host, names[i], n) != 0) continue;
    const char *p = host + n;
    /* Browsers leave out the default port. */
    if (!*p) return port == 80;
    if (*p++ != ':' || !*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5) return 0;
    unsigned long v = 0;
    for (; *p; p++) v = v * 10 + (unsigned long)(*p - '0');
    return v == port;
  }
  return 0;
}

/* Equal in time that does not depend on where they differ. */
static int same(const char *a, const char *b, size_t n) {
  unsigned char d = 0;
  for (size_t i = 0; i < n; i++) d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

/* A path the dashboard asks for: its characters, no "..", no "//", and one
 * of the places ripple-server serves it from. */
static int dashboard_path(const char *p) {
  size_t n = strlen(p);
  if (n > KR_RELAY_PATH_MAX || strspn(p,
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789-._~/") != n)
    return 0;
  if (strstr(p, "..") || strstr(p, "//")) return 0;
  return !strcmp(p, "/") || !strcmp(p, "/index.html") || !strncmp(p, "/assets/", 8) ||
         !strncmp(p, "/v1/", 4);
}

kr_relay_map_t kr_relay_map(const char *secret, const char *url, char *out, size_t cap) {
  size_t s = strlen(secret), n = url ? strlen(url) : 0;
  if (n < 1 + s || url[0] != '/' || !same(url + 1, secret, s)) return KR_RELAY_NOT_FOUND;
  const char *rest = url + 1 + s;
  if (!*rest) return KR_RELAY_REDIRECT; /* "/SECRET": its relative paths need the slash */
  if (!dashboard_path(rest) || strlen(rest) >= cap) return KR_RELAY_NOT_FOUND;
  memcpy(out, rest, strlen(rest) + 1);
  return KR_RELAY_OK;
}

/* One of key or value, %-encoded, at out[*o]; 0 when it does not fit. */
static int put_encoded(char *out, size_t cap, size_t *o, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    int plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                *c == '-' || *c == '.' || *c == '_' || *c == '~';
    if (*o + (plain ? 1 : 3) >= cap) return 0;
    if (plain) {
      out[(*o)++] = (char)*c;
    } else {
      out[(*o)++] = '%';
      out[(*o)++] = hex[*c >> 4];
      out[(*o)++] = hex[*c & 15];
    }
  }
  return 1;
}

int kr_relay_query_add(char *out, size_t cap, const char *key, const char *value) {
  size_t start = strlen(out), o = start;
  if (!key || !*key) return RIPPLE_EINVAL;
  int ok = o + 1 < cap;
  if (ok) out[o++] = strchr(out, '?') ? '&' : '?';
  ok = ok && put_encoded(out, cap, &o, key);
  if (ok && value) {
    ok = o + 1 < cap;
    if (ok) out[o++] = '=';
    ok = ok && put_encoded(out, cap, &o, value);
  }
  out[ok ? o : start] = '\0'; /* nothing of a parameter that does not fit */
  return ok ? RIPPLE_OK : RIPPLE_EINVAL;
}

const char *kr_relay_type(const char *path, long status) {
  if (!strncmp(path, "/v1/", 4)) return "application/json";
  if (status < 200 || status > 299) return "text/plain; charset=utf-8";
  if (!strcmp(path, "/")) return webfile_type("index.html");
  return webfile_type(path);
}

int kr_relay_fetch_ok(const char *site, const char *mode, const char *dest) {
  /* A page of another origin (another port of 127.0.0.1 is "same-site") may
   * not make the browser fetch from the relay; typed or opened URLs are
   * "none". A top-level navigation may come from anywhere (the page the
   * relay opens the browser on is a file: "cross-site"): it shows the page
   * to the user, not to the page that navigated, and needs the secret like
   * any request. Browsers that send none of these are left to the secret
   * and the Host. */
  if (!site || !strcasecmp(site, "same-origin") || !strcasecmp(site, "none")) return 1;
  return mode && dest && !strcasecmp(mode, "navigate") && !strcasecmp(dest, "document");
}

#ifdef RIPPLE_KR_NO_DASHBOARD
int kr_dashboard(const kr_args_t *a, kr_ts_t *ts) {
  (void)a, (void)ts;
  fprintf(stderr, "error: this kubectl-ripple was built without libmicrohttpd: no dashboard\n");
  return 1;
}
#endif
