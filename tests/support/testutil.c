/*
 * testutil.c - see testutil.h.
 */
#include "testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ripplex/sbuf.h"

static uint64_t next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static int cap_random(void *ud, void *buf, size_t len) {
  capture_t *c = ud;
  unsigned char *p = buf;
  for (size_t i = 0; i < len; i += 8) {
    uint64_t v = next(&c->rng);
    memcpy(p + i, &v, len - i < 8 ? len - i : 8);
  }
  return 0;
}

static int64_t cap_clock(void *ud) { return ((capture_t *)ud)->now; }

static void cap_ml(void *ud, const ripple_mergelog_t *ml) {
  capture_t *c = ud;
  if (c->nml == CAP_MAX) fail_msg("capture: too many mergelogs");
  cap_mergelog_t *m = &c->ml[c->nml++];
  memset(m, 0, sizeof *m);
  m->cpid = ml->cpid;
  if (ml->nsources > CAP_SRC_MAX) fail_msg("capture: too many sources");
  if (ml->nsources) memcpy(m->sources, ml->sources, ml->nsources * sizeof *ml->sources);
  m->nsources = ml->nsources;
  if (ml->ntrigger > CAP_SRC_MAX) fail_msg("capture: too many trigger entries");
  if (ml->ntrigger) memcpy(m->trigger, ml->trigger, ml->ntrigger * sizeof *ml->trigger);
  m->ntrigger = ml->ntrigger;
  m->time_ns = ml->time_ns;
  if (ml->component) snprintf(m->component, sizeof m->component, "%s", ml->component);
  if (ml->object && ml->object->kind) snprintf(m->kind, sizeof m->kind, "%s", ml->object->kind);
  if (ml->object && ml->object->name) snprintf(m->name, sizeof m->name, "%s", ml->object->name);
}

static void cap_sp(void *ud, const ripple_span_rec_t *sp) {
  capture_t *c = ud;
  if (c->nsp == CAP_MAX) fail_msg("capture: too many spans");
  cap_span_t *s = &c->sp[c->nsp++];
  memset(s, 0, sizeof *s);
  s->cpid = sp->cpid;
  s->span_id = sp->span_id;
  s->parent_id = sp->parent_id;
  snprintf(s->service, sizeof s->service, "%s", sp->service);
  snprintf(s->name, sizeof s->name, "%s", sp->name);
  s->start_ns = sp->start_ns;
  s->end_ns = sp->end_ns;
  s->nattrs = sp->nattrs;
  for (size_t i = 0; i < sp->nattrs && i < CAP_ATTRS; i++) {
    snprintf(s->attr_key[i], sizeof s->attr_key[i], "%s", sp->attrs[i].key);
    snprintf(s->attr_val[i], sizeof s->attr_val[i], "%s", sp->attrs[i].value);
  }
}

capture_t *capture_new(uint64_t seed) {
  capture_t *c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
  c->now = 1763762790000000000LL; /* 2025-11-21T22:06:30Z */
  return c;
}

ripple_sink_t capture_sink(capture_t *c) {
  ripple_sink_t k = {cap_ml, cap_sp, c};
  return k;
}

ripple_tracer_opts_t capture_opts(capture_t *c, const char *component, uint32_t n) {
  ripple_tracer_opts_t o = {0};
  o.component = component;
  o.max_ancestors = n;
  o.no_ancestors = n == 0;
  o.sink = capture_sink(c);
  o.clock_ns = cap_clock;
  o.random = cap_random;
  o.hook_ud = c;
  return o;
}

ripple_tracer_t *capture_tracer(capture_t *c, const char *component, uint32_t n) {
  ripple_tracer_opts_t o = capture_opts(c, component, n);
  ripple_tracer_t *t = NULL;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_OK);
  return t;
}

int mergelog_has_source(const cap_mergelog_t *ml, const ripple_cpid_t *id) {
  for (size_t i = 0; i < ml->nsources; i++)
    if (ripple_cpid_equal(&ml->sources[i], id)) return 1;
  return 0;
}

ripple_cpid_t test_cpid(uint64_t k) {
  ripple_cpid_t id;
  memset(&id, 0, sizeof id);
  uint64_t s = k * 0x9E3779B97F4A7C15ULL + 1;
  for (int i = 0; i < 2; i++) {
    uint64_t v = next(&s);
    memcpy(id.b + 8 * i, &v, 8);
  }
  id.b[6] = (uint8_t)((id.b[6] & 0x0f) | 0x40);
  id.b[8] = (uint8_t)((id.b[8] & 0x3f) | 0x80);
  return id;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  if (remove(path) != 0) fprintf(stderr, "test_rmtree: cannot remove %s\n", path);
  return 0;
}

void test_rmtree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

const char *test_path(const char *dir, const char *name) {
  static _Thread_local char ring[8][512];
  static _Thread_local unsigned k;
  char *p = ring[k++ % 8];
  snprintf(p, sizeof ring[0], "%s/%s", dir, name);
  return p;
}

int test_exec(const char *bin, char *const first[], char *const args[], char **err) {
  char *argv[64] = {(char *)bin};
  size_t n = 1;
  for (size_t i = 0; first && first[i] && n < 63; i++) argv[n++] = first[i];
  for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
  argv[n] = NULL;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (dup2(fds[1], 2) < 0) _exit(126);
    close(fds[0]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  sbuf_t b;
  sbuf_init(&b);
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) sbuf_put(&b, buf, (size_t)got);
  close(fds[0]);
  sbuf_putc(&b, '\0');
  assert_false(b.oom);
  int st = 0;
  waitpid(pid, &st, 0);
  *err = b.p;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

pid_t test_server_start(const char *dir, const char *const *more, char *base, size_t cap) {
  const char *server = getenv("RIPPLE_SERVER_BIN");
  if (!server || !*server) {
    fail_msg("$RIPPLE_SERVER_BIN is not set (run through ctest)");
    return -1;
  }
  char db[256], log[256];
  snprintf(db, sizeof db, "%s/trace.db", dir);
  snprintf(log, sizeof log, "%s/server.log", dir);
  const char *argv[32] = {server, "--listen", "127.0.0.1:0", "--db", db};
  size_t n = 5;
  for (size_t i = 0; more && more[i] && n < sizeof argv / sizeof argv[0] - 1; i++)
    argv[n++] = more[i];
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
    execv(server, (char *const *)argv);
    _exit(127);
  }
  unsigned port = test_listen_port(log, 30000);
  if (!port) fail_msg("ripple-server did not start (see %s)", log);
  snprintf(base, cap, "http://127.0.0.1:%u", port);
  return pid;
}

unsigned test_listen_port(const char *path, int timeout_ms) {
  char line[1024];
  unsigned port = 0;
  for (int waited = 0; !port && waited <= timeout_ms; waited += 10) {
    FILE *f = fopen(path, "r");
    while (f && !port && fgets(line, sizeof line, f)) {
      const char *a = strstr(line, "event=listening") ? strstr(line, "addr=127.0.0.1:") : NULL;
      if (a) port = (unsigned)strtoul(a + 15, NULL, 10);
    }
    if (f) fclose(f);
    if (!port) usleep(10000);
  }
  return port;
}
