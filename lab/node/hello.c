/*
 * hello.c - the workload of the lab's real node: a tiny HTTP/1.1 server that Pods
 * on that node run (localhost/ripple-lab-hello:1, built FROM scratch by
 * lab/node/images.sh), so that the lab's tests see containers that really start,
 * pass their probes, serve, and stop.
 *
 *   hello [PORT]     listen on 0.0.0.0:PORT (default 8080)
 *
 * GET / and GET /healthz answer 200 "ok\n"; any other request 404 (400 when it is
 * not an HTTP request line). It is a probe target, so it is built to be boring:
 * one connection at a time, each request head read into a fixed buffer, every read
 * and write bounded by a timeout (SO_RCVTIMEO, SO_SNDTIMEO) so a client that sends
 * nothing cannot hold it, and Connection: close after every answer. SIGTERM (the
 * kubelet stopping the Pod) and SIGINT end it at once with status 0: it keeps no
 * state worth finishing.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { HEAD_MAX = 4096, IO_TIMEOUT_S = 2, BACKLOG = 64 };

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static int port_of(const char *s) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 65535) {
    return -1;
  }
  return (int)v;
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return -1;
  }
  int one = 1;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((unsigned short)port);
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, BACKLOG) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads until the end of the request head ("\r\n\r\n"), a full buffer, EOF or the
 * timeout. Returns the bytes read (NUL-terminated), or -1 when nothing usable came. */
static ssize_t read_head(int fd, char *buf, size_t cap) {
  size_t n = 0;
  while (n < cap - 1) {
    ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
    if (r < 0 && errno == EINTR) {
      continue;
    }
    if (r <= 0) {
      break;
    }
    n += (size_t)r;
    buf[n] = '\0';
    if (strstr(buf, "\r\n\r\n") != NULL || strstr(buf, "\n\n") != NULL) {
      return (ssize_t)n;
    }
  }
  buf[n] = '\0';
  /* A full first line is enough to answer (the rest is ignored). */
  return strchr(buf, '\n') != NULL ? (ssize_t)n : -1;
}

/* The status for a request head: 200 for GET / and GET /healthz (a query string
 * ignored), 404 for any other request, 400 for what is no request line. */
static int status_of(const char *head) {
  const char *eol = head + strcspn(head, "\r\n");
  const char *sp1 = strchr(head, ' ');
  if (sp1 == NULL || sp1 > eol) {
    return 400;
  }
  const char *target = sp1 + 1;
  size_t len = strcspn(target, " ?\r\n");
  const char *after = target + strcspn(target, " \r\n");
  if (len == 0 || strncmp(after, " HTTP/1.", 8) != 0) {
    return 400;
  }
  int get = (size_t)(sp1 - head) == 3 && strncmp(head, "GET", 3) == 0;
  int known = (len == 1 && target[0] == '/') || (len == 8 && strncmp(target, "/healthz", 8) == 0);
  return get && known ? 200 : 404;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      return; /* the client left, or the timeout: nothing more to do for it */
    }
    p += w;
    n -= (size_t)w;
  }
}

static void serve(int fd) {
  static const char ok[] =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
      "Content-Length: 3\r\nConnection: close\r\n\r\nok\n";
  static const char nf[] =
      "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
      "Content-Length: 10\r\nConnection: close\r\n\r\nnot found\n";
  static const char bad[] =
      "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
      "Content-Length: 12\r\nConnection: close\r\n\r\nbad request\n";
  struct timeval tv = {.tv_sec = IO_TIMEOUT_S, .tv_usec = 0};
  char head[HEAD_MAX];
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
    return; /* without a timeout a client could hold the server: not served */
  }
  ssize_t n = read_head(fd, head, sizeof head);
  if (n < 0) {
    if (head[0] != '\0') {
      send_all(fd, bad, sizeof bad - 1);
    }
    return;
  }
  switch (status_of(head)) {
    case 200: send_all(fd, ok, sizeof ok - 1); break;
    case 404: send_all(fd, nf, sizeof nf - 1); break;
    default: send_all(fd, bad, sizeof bad - 1); break;
  }
  shutdown(fd, SHUT_WR);
}

int main(int argc, char **argv) {
  int port = 8080;
  if (argc > 2 || (argc == 2 && (port = port_of(argv[1])) < 0)) {
    fprintf(stderr, "usage: hello [PORT]   (PORT 1-65535, default 8080)\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
    perror("hello: sigaction");
    return 1;
  }
  int lfd = listen_on(port);
  if (lfd < 0) {
    fprintf(stderr, "hello: cannot listen on 0.0.0.0:%d: %s\n", port, strerror(errno));
    return 1;
  }
  fprintf(stderr, "hello: listening on 0.0.0.0:%d\n", port);
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
      /* Out of descriptors or memory: wait a little instead of spinning. */
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
      continue;
    }
    serve(fd);
    close(fd);
  }
}
