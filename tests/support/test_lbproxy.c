/*
 * test_lbproxy.c - the lab tests' load balancer (lbproxy.c) in front of two
 * echo servers on 127.0.0.1: connections spread over both backends and every
 * byte comes back in order, a dead backend costs a retry and no connection, a
 * non-loopback backend is refused before anything is dialled, SIGHUP moves
 * new connections to the backends file's new list, SIGTERM exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "wh_lab.h"

/* ---- echo backends ----------------------------------------------------------- */

typedef struct echo {
  int fd;
  unsigned port;
  atomic_int conns;
  pthread_t thread;
} echo_t;

static int listen_any(unsigned *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  assert_true(fd >= 0);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(fd, 128), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *port = ntohs(a.sin_port);
  return fd;
}

/* Echo until EOF, then half-close: the proxy must pass both EOFs on. */
static void *echo_conn(void *ud) {
  int fd = *(int *)ud;
  free(ud);
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t off = 0, w; off < n; off += w)
      if ((w = write(fd, buf + off, (size_t)(n - off))) <= 0) goto out;
  shutdown(fd, SHUT_WR);
out:
  close(fd);
  return NULL;
}

static void *echo_loop(void *ud) {
  echo_t *e = ud;
  for (;;) {
    int fd = accept(e->fd, NULL, NULL);
    if (fd < 0) return NULL; /* the listener was shut down */
    atomic_fetch_add(&e->conns, 1);
    int *arg = malloc(sizeof *arg);
    assert_non_null(arg);
    *arg = fd;
    pthread_t t;
    pthread_create(&t, NULL, echo_conn, arg);
    pthread_detach(t);
  }
}

static void echo_start(echo_t *e) {
  memset(e, 0, sizeof *e);
  e->fd = listen_any(&e->port);
  pthread_create(&e->thread, NULL, echo_loop, e);
}

static void echo_stop(echo_t *e) {
  shutdown(e->fd, SHUT_RDWR);
  pthread_join(e->thread, NULL);
  close(e->fd);
}

/* A port nothing listens on: bound, then closed again. */
static unsigned dead_port(void) {
  unsigned port;
  close(listen_any(&port));
  return port;
}

/* ---- the proxy --------------------------------------------------------------- */

static char dir[64];
static whlab_proc_t proxy = {.pid = -1}; /* killed by teardown when a test fails */

static void proxy_start(whlab_proc_t *p, const char *b1, const char *b2, const char *file) {
  const char *bin = getenv("RIPPLE_LBPROXY_BIN");
  if (!bin) fail_msg("RIPPLE_LBPROXY_BIN is needed (ctest sets it)");
  char *argv[12] = {(char *)bin, "--listen", "127.0.0.1:0"};
  int n = 3;
  const char *opts[][2] = {{"--backend", b1}, {"--backend", b2}, {"--backends-file", file}};
  for (size_t i = 0; i < 3; i++) {
    if (!opts[i][1]) continue;
    argv[n++] = (char *)opts[i][0];
    argv[n++] = (char *)opts[i][1];
  }
  snprintf(p->log, sizeof p->log, "%s/lbproxy.log", dir);
  /* A log of an earlier run would give whlab_spawn its port. */
  unlink(p->log);
  whlab_spawn(p, argv);
}

/* Send len bytes through the proxy while reading the echo, half-close, read to
 * EOF: the bytes that came back into out (len of them at most); their count. */
static size_t roundtrip(unsigned port, const char *in, size_t len, char *out) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  size_t sent = 0, got = 0;
  int shut = 0;
  for (;;) {
    struct pollfd pf = {fd, (short)(POLLIN | (shut ? 0 : POLLOUT)), 0};
    assert_true(poll(&pf, 1, 30000) > 0);
    if (!shut && (pf.revents & POLLOUT)) {
      ssize_t w = send(fd, in + sent, len - sent > 4096 ? 4096 : len - sent, MSG_NOSIGNAL);
      assert_true(w >= 0);
      if ((sent += (size_t)w) == len) shutdown(fd, SHUT_WR), shut = 1;
    }
    if (pf.revents & (POLLIN | POLLHUP)) {
      char junk[4096];
      ssize_t r = read(fd, got < len ? out + got : junk, got < len ? len - got : sizeof junk);
      if (r <= 0) break;
      got += (size_t)r;
    }
  }
  close(fd);
  return got;
}

static void expect_echo(unsigned port, size_t len) {
  char *in = malloc(len), *out = malloc(len);
  for (size_t i = 0; i < len; i++) in[i] = (char)(i * 7 + len);
  assert_int_equal(roundtrip(port, in, len, out), len);
  assert_memory_equal(in, out, len);
  free(in);
  free(out);
}

static int count_lines(const char *path, const char *what) {
  return whlab_count_in_log(path, what);
}

/* ---- tests ------------------------------------------------------------------- */

static void spreads_and_round_trips(void **state) {
  (void)state;
  echo_t a, b;
  echo_start(&a);
  echo_start(&b);
  char ba[32], bb[32];
  snprintf(ba, sizeof ba, "127.0.0.1:%u", a.port);
  snprintf(bb, sizeof bb, "127.0.0.1:%u", b.port);
  whlab_proc_t *p = &proxy;
  proxy_start(p, ba, bb, NULL);
  /* 200 connections: a backend left out by a uniform pick has odds 2^-199. */
  for (int i = 0; i < 200; i++) expect_echo(p->port, 1 + (size_t)i * 37);
  /* More than the proxy's buffers hold, both ways at once. */
  expect_echo(p->port, 3 << 20);
  int na = atomic_load(&a.conns), nb = atomic_load(&b.conns);
  fprintf(stderr, "# backend a: %d connections, b: %d\n", na, nb);
  assert_true(na > 0 && nb > 0);
  assert_int_equal(na + nb, 201);
  whlab_stop(p);
  assert_int_equal(count_lines(p->log, "event=stopped accepted=201 connect_failures=0"), 1);
  echo_stop(&a);
  echo_stop(&b);
}

static void dead_backend_is_retried(void **state) {
  (void)state;
  echo_t a;
  echo_start(&a);
  char ba[32], bd[32];
  snprintf(ba, sizeof ba, "127.0.0.1:%u", a.port);
  snprintf(bd, sizeof bd, "127.0.0.1:%u", dead_port());
  whlab_proc_t *p = &proxy;
  proxy_start(p, bd, ba, NULL);
  for (int i = 0; i < 50; i++) expect_echo(p->port, 100);
  assert_int_equal(a.conns, 50);
  whlab_stop(p);
  /* Each connection tried the dead one first about half the time. */
  assert_int_equal(count_lines(p->log, "accepted=50 connect_failures=0"), 0);
  assert_int_equal(count_lines(p->log, "unreachable=0"), 1);
  echo_stop(&a);
}

static void non_loopback_is_refused(void **state) {
  (void)state;
  const char *bin = getenv("RIPPLE_LBPROXY_BIN");
  if (!bin) {
    fail_msg("RIPPLE_LBPROXY_BIN is needed (ctest sets it)");
    return;
  }
  /* Refused while reading the command line: nothing listens, nothing is dialled. */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    execl(bin, bin, "--listen", "127.0.0.1:0", "--backend", "192.0.2.1:443", (char *)NULL);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

static void write_file(const char *path, const char *text) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  assert_int_equal(rename(tmp, path), 0);
}

static void sighup_rereads_the_file(void **state) {
  (void)state;
  echo_t a, b;
  echo_start(&a);
  echo_start(&b);
  char file[128], text[200];
  snprintf(file, sizeof file, "%s/backends", dir);
  snprintf(text, sizeof text, "# replica 0\n127.0.0.1:%u\n10.0.0.1:80\n", a.port);
  write_file(file, text);
  whlab_proc_t *p = &proxy;
  proxy_start(p, NULL, NULL, file);
  assert_int_equal(count_lines(p->log, "event=backend_refused"), 1);
  for (int i = 0; i < 20; i++) expect_echo(p->port, 10);
  assert_int_equal(a.conns, 20);
  snprintf(text, sizeof text, "127.0.0.1:%u\n", b.port);
  write_file(file, text);
  kill(p->pid, SIGHUP);
  for (int i = 0; i < 500 && count_lines(p->log, "event=backends n=1") < 2; i++) usleep(10000);
  assert_int_equal(count_lines(p->log, "event=backends n=1"), 2);
  for (int i = 0; i < 20; i++) expect_echo(p->port, 10);
  assert_int_equal(a.conns, 20);
  assert_int_equal(b.conns, 20);
  whlab_stop(p);
  unlink(file);
  echo_stop(&a);
  echo_stop(&b);
}

static int teardown(void **state) {
  (void)state;
  whlab_kill(&proxy);
  return 0;
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/ripple-lbproxy-XXXXXX");
  assert_non_null(mkdtemp(dir));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(spreads_and_round_trips, teardown),
      cmocka_unit_test_teardown(dead_backend_is_retried, teardown),
      cmocka_unit_test(non_loopback_is_refused),
      cmocka_unit_test_teardown(sighup_rereads_the_file, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char log[128];
  snprintf(log, sizeof log, "%s/lbproxy.log", dir);
  unlink(log);
  rmdir(dir);
  return rc;
}
