/*
 * config_util.c - the resolved Kubernetes config as an object (accessors,
 * copy, free) and the small helpers loading it needs: bounded file reads,
 * kubectl's relative paths, base64 for kubeconfig []byte fields, and the
 * text of a YAML scalar that yjson typed as a number or a boolean.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_util.h"
#include "kube_internal.h"
#include "ripplex/sbuf.h"

#define FILE_MAX (16u << 20)

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

/* FILE_MAX bounds what a kubeconfig can make us read (/dev/zero...). */
int kube_read_file(const char *path, char **out, size_t *len) {
  return sbuf_read_file_max(path, FILE_MAX, out, len);
}

/* kubectl resolves relative paths in a kubeconfig against its directory. */
char *kube_path_join(const char *dir, const char *p) {
  if (p[0] == '/' || !dir) return strdup(p);
  while (p[0] == '.' && p[1] == '/') p += 2; /* as filepath.Join cleans "./x" */
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "%s/%s", dir, p);
  char *s = NULL;
  if (sbuf_take(&b, &s, NULL) != RIPPLE_OK) s = NULL;
  sbuf_free(&b);
  return s;
}

static int b64val(unsigned char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+') return 62;
  if (ch == '/') return 63;
  return -1;
}

/* Standard base64 (what Go's []byte fields use); whitespace is skipped as
 * YAML folding may leave some, padding is optional. NULL if invalid. */
int kube_b64_decode(const char *s, char **res) {
  size_t n = strlen(s);
  char *out = malloc(n / 4 * 3 + 4);
  if (!out) return RIPPLE_ENOMEM;
  size_t o = 0, k = 0, pad = 0;
  uint32_t acc = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') continue;
    if (*p == '=') {
      pad++;
      continue;
    }
    int v = b64val(*p);
    if (v < 0 || pad) goto bad; /* a character after padding */
    acc = acc << 6 | (uint32_t)v;
    if (++k == 4) {
      out[o++] = (char)(acc >> 16), out[o++] = (char)(acc >> 8), out[o++] = (char)acc;
      k = 0, acc = 0;
    }
  }
  if (k == 1 || pad > 2 || (pad && (k + pad) != 4)) goto bad;
  if (k == 2) out[o++] = (char)(acc >> 4);
  if (k == 3) out[o++] = (char)(acc >> 10), out[o++] = (char)(acc >> 2);
  out[o] = '\0';
  *res = out;
  return RIPPLE_OK;
bad:
  free(out);
  return RIPPLE_EINVAL;
}

void kube_b64_encode(sbuf_t *b, const char *s, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    sbuf_putc(b, tab[v >> 18 & 63]);
    sbuf_putc(b, tab[v >> 12 & 63]);
    sbuf_putc(b, i + 1 < n ? tab[v >> 6 & 63] : '=');
    sbuf_putc(b, i + 2 < n ? tab[v & 63] : '=');
  }
}

/* ---- the config object ---------------------------------------------------------------- */

const char *ripple_kube_config_server(const ripple_kube_config_t *c) {
  return c ? c->server : NULL;
}
const char *ripple_kube_config_namespace(const ripple_kube_config_t *c) {
  return c ? c->namespace_ : NULL;
}
const char *ripple_kube_config_context(const ripple_kube_config_t *c) {
  return c ? c->context : NULL;
}

/* Secrets are wiped before they are freed: a config lives long and its
 * memory may be reused by anything. */
static void free_secret(char *s) {
  if (!s) return;
  volatile char *p = s;
  while (*p) *p++ = '\0';
  free(s);
}

void ripple_kube_config_free(ripple_kube_config_t *c) {
  if (!c) return;
  free(c->context);
  free(c->server);
  free(c->namespace_);
  free(c->ca_pem);
  free(c->cert_pem);
  free_secret(c->key_pem);
  free_secret(c->token);
  free(c->token_file);
  kube_exec_free(c->exec);
  free(c->username);
  free_secret(c->password);
  free(c->tls_server_name);
  free(c->proxy_url);
  free(c);
}

#define DUP(f)                  \
  do {                          \
    d->f = xstrdup(c->f);       \
    if (c->f && !d->f) oom = 1; \
  } while (0)

int kube_config_dup(const ripple_kube_config_t *c, ripple_kube_config_t **out) {
  ripple_kube_config_t *d = calloc(1, sizeof *d);
  if (!d) return RIPPLE_ENOMEM;
  int oom = 0;
  DUP(context);
  DUP(server);
  DUP(namespace_);
  DUP(ca_pem);
  DUP(cert_pem);
  DUP(key_pem);
  DUP(token);
  DUP(token_file);
  DUP(username);
  DUP(password);
  DUP(tls_server_name);
  DUP(proxy_url);
  d->insecure = c->insecure;
  if (kube_exec_dup(c->exec, &d->exec) != RIPPLE_OK) oom = 1;
  if (oom) {
    ripple_kube_config_free(d);
    return RIPPLE_ENOMEM;
  }
  *out = d;
  return RIPPLE_OK;
}
