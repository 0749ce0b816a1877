/*
 * status.h - how libripple-kube says what went wrong (status.c): a local
 * error's message in a ripple_kube_status_t. At the bottom: every part
 * reports through it, and it calls none of them.
 */
#ifndef RIPPLE_KUBE_STATUS_H
#define RIPPLE_KUBE_STATUS_H

#include "ripple/kube.h"

/* Fill st with a local error message (printf-style); returns err. */
int kube_fail(ripple_kube_status_t *st, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
