/*
 * test_crash.c - kill -9 during sustained ingest loses nothing acknowledged.
 *
 *   test_crash PATH-TO-ripple-server
 *
 * Writers post batches of mergelogs and spans to the real ripple-server binary
 * as fast as it takes them and remember which batches were acknowledged. The
 * server is killed with SIGKILL in the middle of it, restarted on the same
 * database, and then every acknowledged record must be there, and every batch
 * must be there whole or not at all (a request is all-or-nothing). Several
 * rounds, each adding to the same database, so the later rounds also check
 * that a database recovered from a crash takes new writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

enum { WRITERS = 4, BATCH = 200, MAX_BATCHES = 4000, ROUNDS = 3, KILL_AFTER = 150 };

typedef struct server {
  pid_t pid;
  char base[64];
} server_t;

static const char *server_bin;
static pid_t running = -1; /* killed at exit, so a failed test leaves nothing behind */

static void kill_running(void) {
  if (running > 0) kill(running, SIGKILL);
}
static char db_path[128];

/* Start ripple-server on a free port; learn the port from its "listening" log
 * line, which it writes once it accepts connections. Its log goes to a file
 * next to the database, shown if it fails to start. */
static void server_start(server_t *s) {
  /* A new log file per start: reading an old one would find the port of the
   * server that was just killed. */
  static int starts;
  char log_path[160];
  snprintf(log_path, sizeof log_path, "%s.%d.log", db_path, starts++);
  s->pid = fork();
  assert_true(s->pid >= 0);
  if (s->pid == 0) {
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
    execl(server_bin, server_bin, "--listen", "127.0.0.1:0", "--db", db_path, "--max-cpids", "0",
          (char *)NULL);
    _exit(127);
  }
  running = s->pid;
  unsigned port = 0;
  char line[1024];
  port = test_listen_port(log_path, 30000);
  if (!port) {
    FILE *f = fopen(log_path, "r");
    while (f && fgets(line, sizeof line, f)) fputs(line, stderr);
    if (f) fclose(f);
    fail_msg("ripple-server did not start (its log is above)");
  }
  snprintf(s->base, sizeof s->base, "http://127.0.0.1:%u", port);
}

static void server_kill(server_t *s) {
  kill(s->pid, SIGKILL);
  int st;
  waitpid(s->pid, &st, 0);
  assert_true(WIFSIGNALED(st));
}

static void server_stop(server_t *s) {
  kill(s->pid, SIGTERM);
  int st;
  waitpid(s->pid, &st, 0);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Batch b's record i has a CPID that encodes (round, b, i), so the checker
 * can tell which batch every stored record came from. */
static void cpid_of(int round, int b, int i, char out[64]) {
  snprintf(out, 64, "%08x-%04x-4%03x-8000-%012x", (unsigned)round, (unsigned)b, (unsigned)i,
           (unsigned)(round * MAX_BATCHES + b));
}

typedef struct load {
  const server_t *srv;
  int round;
  atomic_int next;  /* next batch number to send */
  atomic_int acked; /* batches acknowledged so far */
  atomic_bool stop;
  unsigned char state[MAX_BATCHES]; /* 0 not sent, 1 sent, 2 acknowledged */
} load_t;

static void batch_body(int round, int b, sbuf_t *out) {
  char id[64], prev[64]; /* 36 used; room for what gcc cannot rule out */
  out->len = 0;
  sbuf_putc(out, '[');
  /* Even batches are mergelogs, odd ones spans: both tables take the crash. */
  for (int i = 0; i < BATCH; i++) {
    cpid_of(round, b, i, id);
    if (i) sbuf_putc(out, ',');
    if (b % 2 == 0) {
      cpid_of(round, b, i ? i - 1 : 0, prev);
      sbuf_printf(out,
                  "{\"cpid\":\"%s\",\"sources\":[%s%s%s],\"time\":\"2026-11-22T10:00:00."
                  "%09dZ\",\"component\":\"crash-test\"}",
                  id, i ? "\"" : "", i ? prev : "", i ? "\"" : "", b * BATCH + i);
    } else {
      sbuf_printf(out,
                  "{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"crash-test\","
                  "\"name\":\"write\",\"start\":\"2026-11-22T10:00:00.000000001Z\","
                  "\"end\":\"2026-11-22T10:00:00.000000002Z\"}",
                  id, b * BATCH + i + 1);
    }
  }
  sbuf_putc(out, ']');
}

static void *writer(void *ud) {
  load_t *l = ud;
  sbuf_t body;
  sbuf_init(&body);
  char url[128];
  while (!atomic_load(&l->stop)) {
    int b = atomic_fetch_add(&l->next, 1);
    if (b >= MAX_BATCHES) break;
    batch_body(l->round, b, &body);
    snprintf(url, sizeof url, "%s/v1/%s", l->srv->base, b % 2 ? "spans" : "mergelogs");
    l->state[b] = 1;
    hc_resp_t r;
    if (hc_request("POST", url, body.p, body.len, NULL, &r) == 0 && r.status == 200) {
      l->state[b] = 2;
      atomic_fetch_add(&l->acked, 1);
    }
    hc_resp_free(&r);
  }
  sbuf_free(&body);
  return NULL;
}

/* Count, per batch of this round, the records the server has. */
static void count_stored(const server_t *s, const char *kind, int round, int *per_batch) {
  char path[256], cursor[64] = "";
  for (;;) {
    snprintf(path, sizeof path, "/v1/%s?limit=10000%s%s", kind, *cursor ? "&cursor=" : "", cursor);
    json_t *j = hc_get_json(s->base, path, 200);
    assert_non_null(j);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(j, kind), i, v) {
      const char *id = json_string_value(json_object_get(v, "cpid"));
      char *end;
      unsigned long r = strtoul(id, &end, 16), b = strtoul(end + 1, NULL, 16);
      assert_int_equal(*end, '-');
      if (r == (unsigned long)round && b < MAX_BATCHES) per_batch[b]++;
    }
    json_t *next = json_object_get(j, "next");
    int done = json_is_null(next);
    if (!done) snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
    json_decref(j);
    if (done) break;
  }
}

static void one_round(int round) {
  server_t s;
  server_start(&s);
  static load_t l;
  memset(&l, 0, sizeof l);
  l.srv = &s;
  l.round = round;
  pthread_t th[WRITERS];
  for (int i = 0; i < WRITERS; i++) pthread_create(&th[i], NULL, writer, &l);
  /* Kill it while the writers are busy: after some batches were acknowledged,
   * with more in flight. */
  while (atomic_load(&l.acked) < KILL_AFTER + round * 37 && atomic_load(&l.next) < MAX_BATCHES)
    usleep(1000);
  server_kill(&s);
  atomic_store(&l.stop, 1);
  for (int i = 0; i < WRITERS; i++) pthread_join(th[i], NULL);

  server_start(&s);
  static int ml[MAX_BATCHES], sp[MAX_BATCHES];
  memset(ml, 0, sizeof ml);
  memset(sp, 0, sizeof sp);
  count_stored(&s, "mergelogs", round, ml);
  count_stored(&s, "spans", round, sp);
  int acked = 0, unacked = 0, partial = 0, lost = 0, extra = 0;
  for (int b = 0; b < MAX_BATCHES; b++) {
    int have = b % 2 ? sp[b] : ml[b];
    if (have != 0 && have != BATCH) partial++;
    if (l.state[b] == 2) acked++, lost += have != BATCH;
    if (l.state[b] == 0 && have) extra++;
    if (l.state[b] == 1) unacked++;
  }
  fprintf(
      stderr,
      "round %d: %d batches acknowledged before kill -9 (%d unacknowledged): %d lost, %d partial\n",
      round, acked, unacked, lost, partial);
  assert_true(acked >= KILL_AFTER);
  assert_int_equal(lost, 0);
  assert_int_equal(partial, 0);
  assert_int_equal(extra, 0);
  server_stop(&s);
}

static void test_kill9_loses_nothing_acknowledged(void **state) {
  (void)state;
  for (int round = 0; round < ROUNDS; round++) one_round(round);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_crash PATH-TO-ripple-server\n");
    return 2;
  }
  server_bin = argv[1];
  char dir[] = "/tmp/ripple-crash-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  snprintf(db_path, sizeof db_path, "%s/trace.db", dir);
  signal(SIGPIPE, SIG_IGN);
  atexit(kill_running);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_kill9_loses_nothing_acknowledged)};
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  test_rmtree(dir);
  return rc;
}
