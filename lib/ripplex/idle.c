/*
 * idle.c - see ripplex/idle.h.
 */
#include "ripplex/idle.h"

#include <pthread.h>
#include <sched.h>

int idle_enter(void) {
#ifdef SCHED_IDLE
  struct sched_param p = {0};
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &p) == 0;
#else
  return 0;
#endif
}
