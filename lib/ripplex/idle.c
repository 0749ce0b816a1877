/*
 * idle.c - see ripplex/idle.h.
 */
#include "ripplex/idle.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int idle_nice_for(int current) {
  if (current > 19 - IDLE_NICE_DELTA) return 19;
  return current + IDLE_NICE_DELTA;
}

int idle_enter(void) {
#if defined(__linux__) && defined(SYS_gettid)
  /* On Linux, PRIO_PROCESS with a thread id sets that thread's nice alone
   * (setpriority(2), BUGS): the other threads keep theirs. */
  id_t tid = (id_t)syscall(SYS_gettid);
  errno = 0;
  int cur = getpriority(PRIO_PROCESS, tid);
  if (cur == -1 && errno) return 0;
  return setpriority(PRIO_PROCESS, tid, idle_nice_for(cur)) == 0;
#else
  return 0;
#endif
}
