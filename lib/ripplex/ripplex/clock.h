/*
 * ripplex/clock.h - monotonic time, and timestamps as text.
 */
#ifndef RIPPLEX_CLOCK_H
#define RIPPLEX_CLOCK_H

#include <stdint.h>

#include "ripple/ripple.h"

/* Monotonic time in nanoseconds, for durations and deadlines (never for
 * timestamps: those are ripple_now_ns). */
int64_t mono_ns(void);

/* "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" and a NUL: what ripple_time_format()
 * writes, without the call through libripple's API. */
void time_text(int64_t ns, char out[RIPPLE_TIME_STRLEN + 1]);

#endif
