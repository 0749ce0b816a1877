/*
 * hostile.c - hostile clients for the listeners' tests (hostile.h).
 */
#include "hostile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int hostile_connect(const char *src, unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in from = {.sin_family = AF_INET};
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, src, &from.sin_addr);
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0 ||
      connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

struct hostile_slow {
  pthread_t thread;
  char src[32];
  unsigned port, interval_ms;
  const char *request;
  size_t n;
  int *fds;     /* -1 once closed */
  size_t *sent; /* bytes of request sent on each */
  atomic_size_t opened, closed;
  atomic_int stop;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void slow_close(hostile_slow_t *s, size_t i) {
  close(s->fds[i]);
  s->fds[i] = -1;
  atomic_fetch_add(&s->closed, 1);
}

/* The next byte on every open connection. */
static void slow_send(hostile_slow_t *s) {
  size_t len = strlen(s->request);
  for (size_t i = 0; i < s->n; i++) {
    if (s->fds[i] < 0) continue;
    if (s->sent[i] >= len) s->sent[i] = 0; /* a pipeline of the same request */
    ssize_t w = send(s->fds[i], s->request + s->sent[i], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w == 1)
      s->sent[i]++;
    else if (errno != EAGAIN && errno != EWOULDBLOCK)
      slow_close(s, i);
  }
}

/* Wait up to ms for the peer to close (or answer) any of them. */
static void slow_watch(hostile_slow_t *s, int ms) {
  struct pollfd *p = calloc(s->n, sizeof *p);
  if (!p) return;
  for (size_t i = 0; i < s->n; i++) p[i] = (struct pollfd){.fd = s->fds[i], .events = POLLIN};
  if (poll(p, s->n, ms) > 0) {
    for (size_t i = 0; i < s->n; i++) {
      if (s->fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t r = recv(s->fds[i], buf, sizeof buf, MSG_DONTWAIT);
      if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) slow_close(s, i);
    }
  }
  free(p);
}

static void *slow_main(void *arg) {
  hostile_slow_t *s = arg;
  for (size_t i = 0; i < s->n; i++) {
    s->fds[i] = hostile_connect(s->src, s->port);
    if (s->fds[i] >= 0) atomic_fetch_add(&s->opened, 1);
  }
  int64_t next = 0;
  while (!atomic_load(&s->stop) && atomic_load(&s->closed) < atomic_load(&s->opened)) {
    if (now_ms() >= next) {
      slow_send(s);
      next = now_ms() + s->interval_ms;
    }
    slow_watch(s, 100);
  }
  return NULL;
}

hostile_slow_t *hostile_slow_start(const char *src, unsigned port, size_t n, const char *request,
                                   unsigned interval_ms) {
  hostile_slow_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  snprintf(s->src, sizeof s->src, "%s", src);
  s->port = port;
  s->n = n;
  s->request = request;
  s->interval_ms = interval_ms;
  s->fds = malloc(n * sizeof *s->fds);
  s->sent = calloc(n, sizeof *s->sent);
  if (!s->fds || !s->sent || pthread_create(&s->thread, NULL, slow_main, s) != 0) {
    free(s->fds);
    free(s->sent);
    free(s);
    return NULL;
  }
  return s;
}

size_t hostile_slow_opened(hostile_slow_t *s) { return atomic_load(&s->opened); }
size_t hostile_slow_closed(hostile_slow_t *s) { return atomic_load(&s->closed); }

void hostile_slow_stop(hostile_slow_t *s) {
  if (!s) return;
  atomic_store(&s->stop, 1);
  pthread_join(s->thread, NULL);
  for (size_t i = 0; i < s->n; i++)
    if (s->fds[i] >= 0) close(s->fds[i]);
  free(s->fds);
  free(s->sent);
  free(s);
}

long hostile_rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kib = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kib;
}

int hostile_sanitized(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return 1;
#else
  return 0;
#endif
#else
  return 0;
#endif
}
