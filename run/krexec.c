/*
 * krexec.c - running kubectl-ripple, the program, for an expected cascade
 * (replay.c): its standard output read through a pipe, bounded. The program
 * is found next to ripple-run (as `ripple` finds its commands and ripple run
 * finds ripple-watch), else on PATH. posix_spawn, not fork: ripple-run has
 * threads (the sampler).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

#define XP_EXEC_MAX (256u << 20)

void xp_sibling(const char *name, char *out, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) {
    snprintf(out, cap, "%.*s/%s", (int)(slash - self), self, name);
    if (access(out, X_OK) == 0) return;
  }
  snprintf(out, cap, "%s", name); /* posix_spawnp searches PATH */
}

/* Read fd to its end into a growing buffer. */
static int read_all(int fd, char **out) {
  size_t n = 0, cap = 0;
  char *buf = NULL;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? cap * 2 : 131072;
      char *b = cap <= XP_EXEC_MAX ? realloc(buf, cap) : NULL;
      if (!b) {
        free(buf);
        return cap > XP_EXEC_MAX ? RIPPLE_ERANGE : RIPPLE_ENOMEM;
      }
      buf = b;
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  buf[n] = '\0';
  *out = buf;
  return RIPPLE_OK;
}

int xp_exec(char *const argv[], int quiet, char **out, int *status, char *err, size_t cap) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    snprintf(err, cap, "pipe: %s", strerror(errno));
    return RIPPLE_ESYS;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (quiet) posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    snprintf(err, cap, "cannot run %s: %s", argv[0], strerror(rc));
    return RIPPLE_ESYS;
  }
  char *buf = NULL;
  int rrc = read_all(p[0], &buf);
  close(p[0]);
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  if (rrc != RIPPLE_OK) {
    snprintf(err, cap, "%s: its output is too large", argv[0]);
    return rrc;
  }
  *out = buf;
  return RIPPLE_OK;
}
