/*
 * bundle.c - the CA bundle ripple-guard keeps on the registration
 * (--ca-bundle FILE, guard.h): the file read and checked, compared with each
 * webhook's caBundle, and the patch that sets it.
 *
 * The file is the webhook's serving CA, typically ca.crt of a Secret mounted
 * into the guard's Pod; the kubelet replaces a mounted Secret's files in
 * place, so the loop re-reads it at every resync. The guard probes with this
 * CA and only removes its condition once every webhook's caBundle equals it,
 * so the API server never calls the webhook with another CA than the one the
 * probes used. The bundle is public (a CA certificate), but it is still never
 * logged: its length names it well enough.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "ripplex/b64.h"
#include "ripplex/sbuf.h"

#define PEM_BEGIN "-----BEGIN CERTIFICATE-----"
#define PEM_END "-----END CERTIFICATE-----"

/* memmem, which C17 lacks. */
static const char *find(const char *p, size_t len, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; len >= n && i <= len - n; i++)
    if (p[i] == needle[0] && !memcmp(p + i, needle, n)) return p + i;
  return NULL;
}

int guard_bundle_is_pem(const char *p, size_t len) {
  if (!p || !len || memchr(p, '\0', len)) return 0;
  const char *b = find(p, len, PEM_BEGIN);
  if (!b) return 0;
  size_t off = (size_t)(b - p) + sizeof PEM_BEGIN - 1;
  return find(b + sizeof PEM_BEGIN - 1, len - off, PEM_END) != NULL;
}

int guard_bundle_read(const char *path, char **out, size_t *len, char *why, size_t cap) {
  char *text = NULL;
  size_t n = 0;
  if (sbuf_read_file_max(path, GUARD_BUNDLE_MAX, &text, &n) != RIPPLE_OK) {
    snprintf(why, cap, "%s", errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
    return RIPPLE_ESYS;
  }
  if (!guard_bundle_is_pem(text, n)) {
    snprintf(why, cap, "%s", n ? "not a PEM certificate (no BEGIN/END CERTIFICATE)" : "empty");
    free(text);
    return RIPPLE_EINVAL;
  }
  *out = text;
  *len = n;
  return RIPPLE_OK;
}

int guard_reg_ca_equal(const guard_reg_t *r, const char *pem, size_t len) {
  if (!r->n || !pem) return 0;
  for (size_t i = 0; i < r->n; i++)
    if (!r->t[i].ca || r->t[i].ca_len != len || memcmp(r->t[i].ca, pem, len) != 0) return 0;
  return 1;
}

void guard_reg_ca_patch(const guard_reg_t *r, const char *pem, size_t len, sbuf_t *out) {
  sbuf_t b64;
  sbuf_init(&b64);
  b64_encode(&b64, pem, len);
  sbuf_puts(out, "{\"webhooks\":[");
  for (size_t i = 0; i < r->n; i++) {
    sbuf_puts(out, i ? ",{\"name\":" : "{\"name\":");
    sbuf_json_str(out, r->t[i].name);
    sbuf_puts(out, ",\"clientConfig\":{\"caBundle\":\"");
    sbuf_put(out, b64.p ? b64.p : "", b64.len);
    sbuf_puts(out, "\"}}");
  }
  sbuf_puts(out, "]}");
  if (b64.oom) out->oom = 1;
  sbuf_free(&b64);
}

int guard_reg_ca_adopt(guard_reg_t *r, const char *pem, size_t len) {
  for (size_t i = 0; i < r->n; i++) {
    char *c = malloc(len + 1);
    if (!c) return RIPPLE_ENOMEM;
    memcpy(c, pem, len);
    c[len] = '\0';
    free(r->t[i].ca);
    r->t[i].ca = c;
    r->t[i].ca_len = len;
  }
  return RIPPLE_OK;
}
