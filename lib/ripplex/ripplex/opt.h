/*
 * ripplex/opt.h - the daemons' command lines: one argument loop, and the
 * value grammars every ripple program shares (addresses, numbers, sizes,
 * durations, files).
 *
 * Errors: value parsers return RIPPLE_OK, or RIPPLE_EINVAL for a value that
 * is not in their grammar (outputs untouched). Messages for people are
 * printed by opt_parse() and the file readers, prefixed with the program's
 * name. Memory: opt_file() and opt_token_file() give the caller a string to
 * free().
 */
#ifndef RIPPLEX_OPT_H
#define RIPPLEX_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ripple/ripple.h"

/* HOST:PORT with a port 0-65535 (0: any free one); host copied into
 * host[cap]. The host is not resolved: servers bind IPv4 addresses. */
int opt_listen(const char *v, char *host, size_t cap, uint16_t *port);
/* A decimal integer in [min, max]; no sign, no suffix. */
int opt_ulong(const char *v, unsigned long min, unsigned long max, unsigned long *out);
/* A decimal count or size in bytes, any size_t. */
int opt_size(const char *v, size_t *out);
/* A duration (ripple_duration_parse: 250ms, 2s, 1.5m, 3h, 7d) above zero. */
int opt_duration(const char *v, int64_t *ns);
/* A whole file (a certificate, a key, a token list); on failure prints
 * "PROG: cannot read PATH: REASON" and returns RIPPLE_ESYS. */
int opt_file(const char *prog, const char *path, char **out);
/* Bearer tokens are at least this long: a shorter one is a placeholder or a
 * typo, and guessable (`ripple certs` makes 64 hex digits). */
#define OPT_TOKEN_MIN 16
/* A bearer token from a file (a mounted Secret's key): its first line,
 * white space and CR trimmed, into *out (free it). Unreadable: RIPPLE_ESYS;
 * an empty first line or a token shorter than OPT_TOKEN_MIN: RIPPLE_EINVAL;
 * each prints "PROG: OPTION PATH: REASON". The token itself is never
 * printed. */
int opt_token_file(const char *prog, const char *option, const char *path, char **out);
/* A CA bundle a client is to trust (libcurl reads it again later): readable
 * and holding a PEM certificate, else RIPPLE_EINVAL after printing
 * "PROG: OPTION PATH: REASON". */
int opt_ca_file(const char *prog, const char *option, const char *path);

/* A program's options. option() is called for every "--name value" pair (or
 * "--name=value", as manifests write them) and for every flag (value NULL; a
 * flag given "=value" is a usage error); it returns RIPPLE_OK, RIPPLE_EINVAL for a bad
 * value, RIPPLE_ENOENT for a name it does not know. */
typedef struct opt_cli {
  const char *prog;
  const char *const *flags; /* options that take no value, NULL-terminated */
  int (*option)(void *ud, const char *name, const char *value);
  void (*usage)(FILE *f);
  void *ud;
} opt_cli_t;

/* Walk argv[1..]: RIPPLE_OK to go on; RIPPLE_ESTATE when the program must
 * exit now with *exit_status (0 after --help, 2 after a usage error, which
 * has been printed). */
int opt_parse(int argc, char **argv, const opt_cli_t *c, int *exit_status);

#endif
