/*
 * agentproc.c - the watch agent as a child process of `ripple run`.
 *
 * ripple run starts the real `ripple-watch`, the same program an operator
 * runs, rather than watching in-process: what a run measures is then what
 * the agent does in production, and its CPU and memory are its own, apart
 * from the runner's. Its log goes to RUNDIR/agent.txt through a pipe the
 * runner reads, which is also how the runner learns that every resource is
 * listed and watched ("event=watch_synced") before the first step.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ripple/ripple.h"
#include "run.h"

struct agentproc {
  pid_t pid;
  int fd; /* the read end of the child's stderr */
  FILE *log;
  pthread_t reader;
  pthread_mutex_t mu;
  int synced, nres, exited;
};

static void *reader_main(void *arg) {
  agentproc_t *a = arg;
  FILE *in = fdopen(a->fd, "r");
  char line[8192];
  while (in && fgets(line, sizeof line, in)) {
    fputs(line, a->log);
    fflush(a->log);
    if (strstr(line, " event=watch_synced ")) {
      pthread_mutex_lock(&a->mu);
      a->synced++;
      pthread_mutex_unlock(&a->mu);
    }
  }
  if (in) fclose(in);
  pthread_mutex_lock(&a->mu);
  a->exited = 1;
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

static int count_resources(const char *list) {
  int n = 1;
  for (const char *p = list; *p; p++) n += *p == ',';
  return n;
}

static pid_t spawn(const agentproc_opts_t *o, int errfd) {
  char out[4096], state[4096];
  snprintf(out, sizeof out, "%s/changes.jsonl", o->rundir);
  snprintf(state, sizeof state, "%s/watch-state", o->rundir);
  const char *argv[20];
  int n = 0;
  argv[n++] = o->program;
  argv[n++] = "--resources", argv[n++] = o->resources;
  argv[n++] = "--namespace", argv[n++] = o->namespace_;
  argv[n++] = "--out", argv[n++] = out;
  argv[n++] = "--state-dir", argv[n++] = state;
  argv[n++] = "--report-every", argv[n++] = "10s";
  if (o->kubeconfig) argv[n++] = "--kubeconfig", argv[n++] = o->kubeconfig;
  if (o->context) argv[n++] = "--context", argv[n++] = o->context;
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    /* Its own process group: a Ctrl-C meant for the runner must not stop the
     * agent before the teardown; the runner stops it when it is time. Only
     * async-signal-safe calls here (the runner has threads). */
    setpgid(0, 0);
    dup2(errfd, STDERR_FILENO);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO), dup2(devnull, STDOUT_FILENO);
    execvp(o->program, (char *const *)argv);
    static const char msg[] = "ripple run: cannot execute ripple-watch\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  return pid;
}

static void stop_child(agentproc_t *a) {
  kill(a->pid, SIGKILL);
  waitpid(a->pid, NULL, 0);
  pthread_join(a->reader, NULL);
}

int agentproc_start(const agentproc_opts_t *o, uint32_t timeout_ms, agentproc_t **out, char *err,
                    size_t cap) {
  agentproc_t *a = calloc(1, sizeof *a);
  char path[4096];
  int fds[2] = {-1, -1};
  snprintf(path, sizeof path, "%s/agent.txt", o->rundir);
  if (!a || (a->log = fopen(path, "a")) == NULL || pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(err, cap, "cannot set up the agent's log %s: %s", path, strerror(errno));
    if (a && a->log) fclose(a->log);
    free(a);
    return RIPPLE_ESYS;
  }
  pthread_mutex_init(&a->mu, NULL);
  a->nres = count_resources(o->resources);
  a->fd = fds[0];
  a->pid = spawn(o, fds[1]);
  close(fds[1]);
  if (a->pid < 0 || pthread_create(&a->reader, NULL, reader_main, a) != 0) {
    snprintf(err, cap, "cannot start %s: %s", o->program, strerror(errno));
    if (a->pid > 0) kill(a->pid, SIGKILL), waitpid(a->pid, NULL, 0);
    close(a->fd);
    fclose(a->log);
    free(a);
    return RIPPLE_ESYS;
  }
  int64_t deadline = ripple_now_ns() + (int64_t)timeout_ms * 1000000LL;
  int synced = 0, exited = 0;
  while (ripple_now_ns() < deadline) {
    pthread_mutex_lock(&a->mu);
    synced = a->synced, exited = a->exited;
    pthread_mutex_unlock(&a->mu);
    if (synced >= a->nres || exited) break;
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  if (synced < a->nres) {
    snprintf(err, cap, "the watch agent %s (%d of %d resources watched); see %s",
             exited ? "exited" : "did not start watching in time", synced, a->nres, path);
    stop_child(a);
    fclose(a->log);
    free(a);
    return RIPPLE_ETIMEDOUT;
  }
  *out = a;
  return RIPPLE_OK;
}

pid_t agentproc_pid(const agentproc_t *a) { return a->pid; }

int agentproc_stop(agentproc_t *a) {
  if (!a) return RIPPLE_OK;
  kill(a->pid, SIGTERM);
  int status = 0;
  /* A clean stop flushes, syncs and checkpoints: give it time, then insist. */
  int64_t deadline = ripple_now_ns() + 30000000000LL;
  pid_t got;
  while ((got = waitpid(a->pid, &status, WNOHANG)) == 0 && ripple_now_ns() < deadline) {
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  if (got == 0) kill(a->pid, SIGKILL), waitpid(a->pid, &status, 0);
  pthread_join(a->reader, NULL);
  fclose(a->log);
  pthread_mutex_destroy(&a->mu);
  free(a);
  return got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
}
