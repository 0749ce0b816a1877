/*
 * testutil.h - what the unit tests share: cmocka, a sink that captures records,
 * a seeded random source and a settable clock, so tests are deterministic.
 */
#ifndef RIPPLE_TESTUTIL_H
#define RIPPLE_TESTUTIL_H

#include <setjmp.h> /* cmocka needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/types.h>

#include "ripple/ripple.h"

#define CAP_MAX 4096
#define CAP_SRC_MAX 64
#define CAP_ATTRS 12

typedef struct cap_mergelog {
  ripple_cpid_t cpid;
  ripple_cpid_t sources[CAP_SRC_MAX];
  size_t nsources;
  ripple_cpid_t trigger[CAP_SRC_MAX]; /* the sources that caused it (ripple.h) */
  size_t ntrigger;
  int64_t time_ns;
  char component[64];
  char kind[64], name[64];
} cap_mergelog_t;

typedef struct cap_span {
  ripple_cpid_t cpid;
  uint64_t span_id, parent_id;
  char service[64], name[64];
  int64_t start_ns, end_ns;
  size_t nattrs;
  char attr_key[CAP_ATTRS][32], attr_val[CAP_ATTRS][64];
} cap_span_t;

/* A sink that records everything (and a deterministic world around it). */
typedef struct capture {
  cap_mergelog_t ml[CAP_MAX];
  size_t nml;
  cap_span_t sp[CAP_MAX];
  size_t nsp;
  uint64_t rng; /* xorshift64* state */
  int64_t now;  /* what clock_ns returns */
} capture_t;

capture_t *capture_new(uint64_t seed);
ripple_sink_t capture_sink(capture_t *c);
/* Tracer options wired to the capture's sink, random source and clock. */
ripple_tracer_opts_t capture_opts(capture_t *c, const char *component, uint32_t n);
ripple_tracer_t *capture_tracer(capture_t *c, const char *component, uint32_t n);

/* Assertions about mergelogs. */
int mergelog_has_source(const cap_mergelog_t *ml, const ripple_cpid_t *id);

/* The port a ripple program logged it listens on ("event=listening ...
 * addr=127.0.0.1:PORT") in the log file at path, read again every 10 ms for up
 * to timeout_ms while the program starts; 0 if it did not say so in time. */
unsigned test_listen_port(const char *path, int timeout_ms);

/* ripple-server ($RIPPLE_SERVER_BIN, which ctest sets) on a free loopback
 * port over dir/trace.db, its log in dir/server.log, with the arguments of
 * more (NULL-terminated; NULL: none) after --listen and --db; its URL,
 * "http://127.0.0.1:PORT", into base. Returns its pid (stop it with SIGTERM
 * and waitpid); fails the test when it does not start. */
pid_t test_server_start(const char *dir, const char *const *more, char *base, size_t cap);

/* dir/name in one of a few rotating buffers, so calls can be nested. */
const char *test_path(const char *dir, const char *name);

/* Remove a directory a test made, with everything in it. */
void test_rmtree(const char *dir);
/* Run the program bin with first (NULL-terminated, may be NULL) then args
 * (NULL-terminated) as its arguments, its standard error into *err (the
 * caller frees it): the exit status, -1 when it did not exit. */
int test_exec(const char *bin, char *const first[], char *const args[], char **err);

/* A context from a seed, for hand-built scenarios. */
ripple_cpid_t test_cpid(uint64_t k);

#endif
