/*
 * config_util.c - the resolved Kubernetes config as an object (accessors,
 * copy, free) and the small helpers loading it needs: bounded file reads,
 * kubectl's relative paths, and the text of a YAML scalar that yjson typed as
 * a number or a boolean.
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
