/*
 * internal.h - what libripple's files share and the outside world does not see.
 *
 * The internal layer it builds on (lib/ripplex: buffers, CPID helpers, random
 * bytes, the wire encoders) and the few hooks between its own files. Nothing
 * here is part of the stable API, and nothing outside lib/ includes it.
 */
#ifndef RIPPLE_INTERNAL_H
#define RIPPLE_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/clock.h"
#include "ripplex/cpid.h"
#include "ripplex/logonce.h"
#include "ripplex/rnd.h"
#include "ripplex/sbuf.h"
#include "ripplex/utf8.h"
#include "ripplex/wire.h"

/* Turn 16 random bytes into a version-4, variant-1 UUID. */
void cpid_from_random(ripple_cpid_t *id);

#endif /* RIPPLE_INTERNAL_H */
