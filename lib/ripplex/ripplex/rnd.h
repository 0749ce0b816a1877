/*
 * ripplex/rnd.h - random bytes from the kernel's CSPRNG, buffered per thread.
 */
#ifndef RIPPLEX_RND_H
#define RIPPLEX_RND_H

#include <stddef.h>

#include "ripple/ripple.h"

/* Fill buf with len random bytes: RIPPLE_OK, or RIPPLE_ESYS when the kernel
 * gives none. Fork-safe: a child never repeats its parent's bytes. */
int rnd_bytes(void *buf, size_t len);

#endif
