/*
 * lbproxy.c - a small TCP load balancer for lab tests: the Service in front of
 * several replicas of a program (ripple-webhook), as kube-proxy's iptables mode
 * makes one: every accepted connection goes to one backend picked uniformly at
 * random, and stays there until it closes. It only copies bytes (TLS passes
 * through), so the API server sees the replicas' own certificate.
 *
 *   lbproxy --listen 127.0.0.1:PORT [--backend 127.0.0.1:PORT]...
 *           [--backends-file FILE] [--max-conns N]
 *
 * PORT 0 picks a free port; the log line "event=listening addr=127.0.0.1:N"
 * says which. Backends must be on loopback (the lab's network rule): others are
 * refused, never dialled. SIGHUP re-reads --backends-file (one 127.x.y.z:PORT
 * a line, '#' comments), so a test can move a replica to a new port as a
 * rolling restart would; connections already open stay where they are, as
 * conntrack keeps them. A backend that refuses a connection is counted and
 * another one tried. At most --max-conns (default 256) connections are open;
 * more wait in the listen backlog. SIGTERM or SIGINT: exit 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ripple/ripple.h"

#define MAX_BACKENDS 64
#define BUF_SIZE 16384

/* One direction of a connection: bytes read from `from` not yet written to `to`. */
typedef struct pipe_dir {
  char buf[BUF_SIZE];
  size_t off, len;
  int eof;  /* `from` said it sends no more */
  int shut; /* and `to` was told (shutdown SHUT_WR) */
} pipe_dir_t;

typedef struct conn {
  int client, backend;
  int connecting;  /* backend connect still in progress */
  uint64_t tried;  /* backends tried (bits), for the fallback */
  pipe_dir_t up;   /* client -> backend */
  pipe_dir_t down; /* backend -> client */
} conn_t;

static struct sockaddr_in backends[MAX_BACKENDS];
static size_t nbackends;
static const char *backends_file;
static conn_t **conns;
static size_t nconns, max_conns = 256;
static unsigned long long accepted, connect_failures, unreachable;
static volatile sig_atomic_t stop_flag, reload_flag;

static void on_signal(int sig) {
  if (sig == SIGHUP)
    reload_flag = 1;
  else
    stop_flag = 1;
}

/* "127.x.y.z:PORT" into *out; 0 when it is not a loopback address and port. */
static int parse_loopback(const char *s, struct sockaddr_in *out) {
  char host[64];
  const char *colon = strrchr(s, ':');
  if (!colon || (size_t)(colon - s) >= sizeof host) return 0;
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = '\0';
  char *end;
  long port = strtol(colon + 1, &end, 10);
  memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons((uint16_t)port);
  if (*end || port < 0 || port > 65535 || inet_pton(AF_INET, host, &out->sin_addr) != 1) return 0;
  return (ntohl(out->sin_addr.s_addr) >> 24) == 127;
}

static int add_backend(struct sockaddr_in *list, size_t *n, const char *s) {
  if (*n >= MAX_BACKENDS || !parse_loopback(s, &list[*n]) || !list[*n].sin_port) {
    char q[160];
    ripple_log_quote(s, q, sizeof q);
    ripple_log(RIPPLE_LOG_WARN, "backend_refused", "backend=%s why=\"not 127.x.y.z:PORT\"", q);
    return 0;
  }
  ++*n;
  return 1;
}

/* The backends file replaces the list; an unreadable file keeps the old one,
 * so a test writing it anew (rename) never leaves the proxy with nothing. */
static void reload(void) {
  FILE *f = fopen(backends_file, "r");
  if (!f) {
    ripple_log(RIPPLE_LOG_WARN, "backends_unreadable", "file=%s errno=%d", backends_file, errno);
    return;
  }
  struct sockaddr_in list[MAX_BACKENDS];
  memset(list, 0, sizeof list);
  size_t n = 0;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "#\r\n")] = '\0';
    char *s = line + strspn(line, " \t");
    s[strcspn(s, " \t")] = '\0';
    if (*s) add_backend(list, &n, s);
  }
  fclose(f);
  memcpy(backends, list, sizeof list);
  nbackends = n;
  ripple_log(RIPPLE_LOG_INFO, "backends", "n=%zu", n);
}

static void conn_close(size_t i) {
  conn_t *c = conns[i];
  close(c->client);
  if (c->backend >= 0) close(c->backend);
  free(c);
  conns[i] = conns[--nconns];
}

/* Uniform in [0, n): the kernel's random bytes (modulo bias is nothing at
 * these sizes), else a counter, which still spreads connections. */
static size_t random_below(size_t n) {
  static uint32_t fallback;
  uint32_t r;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = fallback++;
  return r % n;
}

/* Start a connect to a random backend not tried yet; 0 when none is left. */
/* Bytes go on as they come, as kube-proxy's kernel forwarding passes them:
 * Nagle's algorithm on a relayed request meeting a delayed ACK would hold
 * small writes for 40 ms and bend every latency measured through the proxy. */
static void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int dial(conn_t *c) {
  for (;;) {
    size_t left = 0, pick;
    for (size_t i = 0; i < nbackends; i++) left += !(c->tried >> i & 1);
    if (!left) return 0;
    pick = random_below(left);
    size_t b = 0;
    for (;; b++)
      if (!(c->tried >> b & 1) && pick-- == 0) break;
    c->tried |= 1ULL << b;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    no_delay(fd);
    if (connect(fd, (struct sockaddr *)&backends[b], sizeof backends[b]) == 0 ||
        errno == EINPROGRESS) {
      c->backend = fd;
      c->connecting = 1;
      return 1;
    }
    connect_failures++;
    close(fd);
  }
}

static void on_accept(int lfd) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  no_delay(fd);
  accepted++;
  conn_t *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return;
  }
  c->client = fd;
  c->backend = -1;
  conns[nconns++] = c;
  if (!dial(c)) {
    unreachable++;
    conn_close(nconns - 1);
  }
}

/* The backend's connect finished: 1 to go on, 0 when no backend is left. */
static int on_connected(conn_t *c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c->backend, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
    c->connecting = 0;
    return 1;
  }
  connect_failures++;
  close(c->backend);
  c->backend = -1;
  if (dial(c)) return 1;
  unreachable++;
  return 0;
}

/* Move what can be moved in one direction: 0 when the connection is broken. */
static int pump(pipe_dir_t *p, int from, int to, short rev_from, short rev_to) {
  if (!p->len && !p->eof && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t n = read(from, p->buf, sizeof p->buf);
    if (n > 0) {
      p->off = 0;
      p->len = (size_t)n;
    } else if (n == 0) {
      p->eof = 1;
    } else if (errno != EAGAIN && errno != EINTR) {
      return 0;
    }
  }
  if (p->len && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t n = send(to, p->buf + p->off, p->len, MSG_NOSIGNAL);
    if (n > 0) {
      p->off += (size_t)n;
      p->len -= (size_t)n;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return 0;
    }
  }
  /* Half-close: the other side learns of the EOF only after every byte. */
  if (p->eof && !p->len && !p->shut) {
    shutdown(to, SHUT_WR);
    p->shut = 1;
  }
  return 1;
}

/* Which events a direction waits for on its two ends. */
static void want(const pipe_dir_t *p, short *ev_from, short *ev_to) {
  if (!p->len && !p->eof) *ev_from |= POLLIN;
  if (p->len) *ev_to |= POLLOUT;
}

static void serve(int lfd) {
  struct pollfd *pf = calloc(1 + 2 * max_conns, sizeof *pf);
  conn_t **polled = calloc(max_conns, sizeof(conn_t *));
  if (!pf || !polled) exit(1);
  sigset_t none;
  sigemptyset(&none);
  while (!stop_flag) {
    if (reload_flag) {
      reload_flag = 0;
      if (backends_file) reload();
    }
    /* A full proxy stops accepting: the rest wait in the backlog. */
    pf[0] = (struct pollfd){.fd = nconns < max_conns ? lfd : -1, .events = POLLIN};
    size_t n = nconns;
    for (size_t i = 0; i < n; i++) {
      conn_t *c = polled[i] = conns[i];
      short ec = 0, eb = 0;
      if (c->connecting) {
        eb = POLLOUT;
      } else {
        want(&c->up, &ec, &eb);
        want(&c->down, &eb, &ec);
      }
      pf[1 + 2 * i] = (struct pollfd){.fd = c->client, .events = ec};
      pf[2 + 2 * i] = (struct pollfd){.fd = c->backend, .events = eb};
    }
    /* Signals are blocked except inside ppoll: none is lost between checks. */
    if (ppoll(pf, 1 + 2 * n, NULL, &none) < 0) continue;
    for (size_t i = 0; i < n; i++) {
      conn_t *c = polled[i];
      short rc = pf[1 + 2 * i].revents, rb = pf[2 + 2 * i].revents;
      int ok = 1;
      if (c->connecting) {
        if (rb) ok = on_connected(c);
      } else {
        ok = pump(&c->up, c->client, c->backend, rc, rb) &&
             pump(&c->down, c->backend, c->client, rb, rc);
      }
      if (!ok || (c->up.shut && c->down.shut)) {
        for (size_t j = 0; j < nconns; j++)
          if (conns[j] == c) conn_close(j);
      }
    }
    if (pf[0].revents & POLLIN) on_accept(lfd);
  }
  free(pf);
  free(polled);
}

static int usage(void) {
  fprintf(stderr,
          "usage: lbproxy --listen 127.0.0.1:PORT [--backend 127.0.0.1:PORT]... "
          "[--backends-file FILE] [--max-conns N]\n");
  return 2;
}

static int listen_on(const struct sockaddr_in *a) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
  struct sockaddr_in got = {0};
  socklen_t len = sizeof got;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(fd, (const struct sockaddr *)a, sizeof *a) < 0 || listen(fd, 128) < 0 ||
      getsockname(fd, (struct sockaddr *)&got, &len) < 0) {
    ripple_log(RIPPLE_LOG_ERROR, "listen_failed", "errno=%d", errno);
    exit(1);
  }
  char host[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &got.sin_addr, host, sizeof host);
  ripple_log(RIPPLE_LOG_INFO, "listening", "addr=%s:%u max_conns=%zu", host, ntohs(got.sin_port),
             max_conns);
  return fd;
}

int main(int argc, char **argv) {
  ripple_log_setup("lbproxy", RIPPLE_LOG_INFO, NULL, NULL);
  struct sockaddr_in laddr;
  int have_listen = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage();
    i++;
    if (!strcmp(a, "--listen")) {
      if (!parse_loopback(v, &laddr)) return usage();
      have_listen = 1;
    } else if (!strcmp(a, "--backend")) {
      if (!add_backend(backends, &nbackends, v)) return 2;
    } else if (!strcmp(a, "--backends-file")) {
      backends_file = v;
    } else if (!strcmp(a, "--max-conns")) {
      max_conns = strtoul(v, NULL, 10);
      if (max_conns < 1 || max_conns > 4096) return usage();
    } else {
      return usage();
    }
  }
  if (!have_listen) return usage();
  if (backends_file) reload();
  conns = calloc(max_conns, sizeof(conn_t *));
  if (!conns) return 1;
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, NULL);
  int lfd = listen_on(&laddr);
  serve(lfd);
  while (nconns) conn_close(0);
  close(lfd);
  free(conns);
  ripple_log(RIPPLE_LOG_INFO, "stopped", "accepted=%llu connect_failures=%llu unreachable=%llu",
             accepted, connect_failures, unreachable);
  return 0;
}
