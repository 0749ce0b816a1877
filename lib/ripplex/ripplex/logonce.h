/*
 * ripplex/logonce.h - a warning about bad outside input, logged once per call
 * site per process, so that a hostile client cannot flood the log (the count
 * of such input is kept by the caller's metrics).
 */
#ifndef RIPPLEX_LOGONCE_H
#define RIPPLEX_LOGONCE_H

#include <stdatomic.h>

#include "ripple/ripple.h"

#define RIPPLE_LOG_ONCE(level, event, ...)                                         \
  do {                                                                             \
    static atomic_int logged_once_;                                                \
    if (!atomic_exchange(&logged_once_, 1)) ripple_log(level, event, __VA_ARGS__); \
  } while (0)

#endif
