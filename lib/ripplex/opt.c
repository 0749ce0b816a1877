/*
 * opt.c - the daemons' command lines (ripplex/opt.h).
 *
 * ripple-server, ripple-webhook and ripple-guard take "--name value" options
 * and a few flags; the loop, its messages and the value grammars live here so
 * that the three read their command lines the same way. The file readers
 * (certificates, the trace server's token and CA) serve ripple-watch too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/opt.h"
#include "ripplex/sbuf.h"

int opt_listen(const char *v, char *host, size_t cap, uint16_t *port) {
  const char *colon = strrchr(v, ':');
  char *end = NULL;
  unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (!colon || (size_t)(colon - v) >= cap || *end || end == colon + 1 || colon[1] == '-' ||
      p > 65535)
    return RIPPLE_EINVAL;
  memcpy(host, v, (size_t)(colon - v));
  host[colon - v] = '\0';
  *port = (uint16_t)p;
  return RIPPLE_OK;
}

int opt_ulong(const char *v, unsigned long min, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (end == v || *end || v[0] == '-' || v[0] == '+' || errno || n < min || n > max)
    return RIPPLE_EINVAL;
  *out = n;
  return RIPPLE_OK;
}

int opt_size(const char *v, size_t *out) {
  unsigned long n;
  if (opt_ulong(v, 0, SIZE_MAX, &n) != RIPPLE_OK) return RIPPLE_EINVAL;
  *out = (size_t)n;
  return RIPPLE_OK;
}

int opt_duration(const char *v, int64_t *ns) {
  int64_t d;
  if (ripple_duration_parse(v, &d) != RIPPLE_OK || d <= 0) return RIPPLE_EINVAL;
  *ns = d;
  return RIPPLE_OK;
}

int opt_file(const char *prog, const char *path, char **out) {
  if (sbuf_read_file(path, out) == RIPPLE_OK) return RIPPLE_OK;
  fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
  return RIPPLE_ESYS;
}

/* Token files are one short line; a larger file is not one. */
#define TOKEN_FILE_MAX 65536

int opt_token_file(const char *prog, const char *option, const char *path, char **out) {
  char *text = NULL;
  if (sbuf_read_file_max(path, TOKEN_FILE_MAX, &text, NULL) != RIPPLE_OK) {
    fprintf(stderr, "%s: %s %s: cannot read it: %s\n", prog, option, path,
            errno == EFBIG ? "larger than 64 KiB, not a token" : strerror(errno));
    return RIPPLE_ESYS;
  }
  char *b = text;
  while (*b == ' ' || *b == '\t') b++;
  size_t n = strcspn(b, "\r\n");
  while (n && (b[n - 1] == ' ' || b[n - 1] == '\t')) n--;
  if (!n) {
    fprintf(stderr, "%s: %s %s: its first line holds no token\n", prog, option, path);
    free(text);
    return RIPPLE_EINVAL;
  }
  if (n < OPT_TOKEN_MIN) {
    fprintf(stderr, "%s: %s %s: the token is %zu characters, shorter than %d: too easy to guess\n",
            prog, option, path, n, OPT_TOKEN_MIN);
    free(text);
    return RIPPLE_EINVAL;
  }
  memmove(text, b, n);
  text[n] = '\0';
  *out = text;
  return RIPPLE_OK;
}

int opt_ca_file(const char *prog, const char *option, const char *path) {
  char *text = NULL;
  size_t n = 0;
  if (sbuf_read_file_max(path, 1u << 22, &text, &n) != RIPPLE_OK) {
    fprintf(stderr, "%s: %s %s: cannot read it: %s\n", prog, option, path, strerror(errno));
    return RIPPLE_EINVAL;
  }
  int pem = strstr(text, "-----BEGIN CERTIFICATE-----") != NULL;
  free(text);
  if (!pem) {
    fprintf(stderr, "%s: %s %s: no PEM certificate in it (-----BEGIN CERTIFICATE-----)\n", prog,
            option, path);
    return RIPPLE_EINVAL;
  }
  return RIPPLE_OK;
}

static int is_flag(const opt_cli_t *c, const char *a) {
  for (const char *const *f = c->flags; f && *f; f++)
    if (!strcmp(*f, a)) return 1;
  return 0;
}

int opt_parse(int argc, char **argv, const opt_cli_t *c, int *exit_status) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      c->usage(stdout);
      *exit_status = 0;
      return RIPPLE_ESTATE;
    }
    /* "--name=value" is "--name value" (the way manifests write flags); the value
     * stays in argv, so options may keep pointers to it. */
    char name[64];
    const char *eq = !strncmp(a, "--", 2) ? strchr(a, '=') : NULL;
    if (eq && (size_t)(eq - a) < sizeof name) {
      snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
      a = name;
      v = eq + 1;
    }
    int flag = is_flag(c, a);
    if (flag && v) {
      fprintf(stderr, "%s: %s takes no value\n", c->prog, a);
      *exit_status = 2;
      return RIPPLE_ESTATE;
    }
    if (!flag && !v && i + 1 < argc) v = argv[++i];
    int rc = flag || v ? c->option(c->ud, a, v) : RIPPLE_ENOENT;
    if (rc == RIPPLE_ENOENT) {
      fprintf(stderr, "%s: unknown option or missing value: %s\n", c->prog, a);
      c->usage(stderr);
    } else if (rc != RIPPLE_OK) {
      fprintf(stderr, "%s: bad value for %s: '%s'\n", c->prog, a, v ? v : "");
    }
    if (rc != RIPPLE_OK) {
      *exit_status = 2;
      return RIPPLE_ESTATE;
    }
  }
  return RIPPLE_OK;
}
