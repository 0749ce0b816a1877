/*
 * config_util.h - what config.c and config_util.c share beyond
 * kube_internal.h: bounded file reads and path joining. Private to
 * libripple-kube.
 */
#ifndef RIPPLE_KUBE_CONFIG_UTIL_H
#define RIPPLE_KUBE_CONFIG_UTIL_H

#include "kube_internal.h"

/* Read a whole file (at most 16 MiB), NUL-terminated into *out (free it).
 * RIPPLE_OK, or RIPPLE_ESYS / RIPPLE_ENOMEM with errno saying why (EFBIG for
 * a larger file). len may be NULL. */
int kube_read_file(const char *path, char **out, size_t *len);

/* p if absolute, else dir/p: kubectl resolves relative paths in a kubeconfig
 * against the file's directory. NULL when out of memory. */
char *kube_path_join(const char *dir, const char *p);

#endif
