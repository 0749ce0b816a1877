/*
 * pause.c - the sandbox ("pause") container of the lab's real node.
 *
 * Every Pod the kubelet starts through containerd begins with a sandbox container
 * that holds the Pod's namespaces (network, IPC, and PID when shared) for as long
 * as the Pod lives; the Pod's own containers join them. No registry is reachable
 * from the lab, so instead of registry.k8s.io/pause this program is built here
 * (lab/node/images.sh: static, into localhost/ripple-lab-pause:1, FROM scratch).
 *
 * It does what the upstream pause does: nothing, for ever, until asked to stop.
 * SIGINT and SIGTERM end it with status 0 (the runtime stops a sandbox with
 * SIGTERM; an error status would be reported as a failure). As PID 1 of a Pod
 * that shares its PID namespace it also inherits orphans, so it reaps every
 * child that exits (SIGCHLD, waitpid with WNOHANG until none is left) instead of
 * leaving zombies.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  int saved = errno; /* waitpid may change it under the interrupted code */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

static int handle(int sig, void (*fn)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  /* SA_NOCLDSTOP: a stopped child is no reason to wake; SA_RESTART for the rest. */
  sa.sa_flags = SA_RESTART | (sig == SIGCHLD ? SA_NOCLDSTOP : 0);
  return sigaction(sig, &sa, NULL);
}

int main(void) {
  if (handle(SIGINT, on_stop) != 0 || handle(SIGTERM, on_stop) != 0 ||
      handle(SIGCHLD, on_child) != 0) {
    static const char msg[] = "pause: sigaction failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    return EXIT_FAILURE;
  }
  for (;;) {
    pause();
  }
}
