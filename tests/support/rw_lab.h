/*
 * rw_lab.h - what the lab tests of discovery, reads and writes share
 * (test_kube_discovery.c, test_kube_rw.c): a client on $KUBECONFIG, a
 * namespace of their own with a random suffix, JSON written printf-style,
 * and assertions that print the server's message when a call fails.
 */
#ifndef RIPPLE_RW_LAB_H
#define RIPPLE_RW_LAB_H

#include <jansson.h>
#include <stddef.h>

#include "ripple/kube.h"
#include "testutil.h"

/* A call that must succeed; st is the ripple_kube_status_t it was given. */
#define LAB_OK(st, expr)                                                         \
  do {                                                                           \
    int rc_ = (expr);                                                            \
    if (rc_ != RIPPLE_OK)                                                        \
      fail_msg("%s:%d: %s: %s (http %ld %s: %s)", __FILE__, __LINE__, #expr,     \
               ripple_kube_strerror(rc_), (st).http, (st).reason, (st).message); \
  } while (0)

/* A call that must fail with want. */
#define LAB_ERR(st, want, expr)                                                               \
  do {                                                                                        \
    int rc_ = (expr);                                                                         \
    if (rc_ != (want))                                                                        \
      fail_msg("%s:%d: %s: got %s, want %s (http %ld %s: %s)", __FILE__, __LINE__, #expr,     \
               ripple_kube_strerror(rc_), ripple_kube_strerror(want), (st).http, (st).reason, \
               (st).message);                                                                 \
  } while (0)

/* A client on $KUBECONFIG (fails the test without one). */
ripple_kube_client_t *lab_client(void);

/* Lowercase letters and digits, n of them, NUL-terminated (out: n + 1). */
void lab_suffix(char *out, size_t n);

/* Create namespace "<prefix>-<random>" into out, delete it (without waiting). */
void lab_ns_new(ripple_kube_client_t *c, const char *prefix, char *out, size_t cap);
void lab_ns_delete(ripple_kube_client_t *c, const char *ns);

const ripple_kube_resource_t *lab_resolve(ripple_kube_client_t *c, const char *name);

/* JSON from a printf format; fails the test when it does not parse. */
json_t *lab_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The value at a dotted path ("spec.template.spec.nodeName"); NULL if absent. */
const json_t *lab_at(const json_t *j, const char *path);
const char *lab_str(const json_t *j, const char *path);
long long lab_int(const json_t *j, const char *path); /* -1 if absent */

/* Poll cond every 100 ms until it is true or timeout_ms has passed. */
/* The names of the objects of resource in ns matching selector, as a JSON
 * object {name: true} (the caller's reference). */
json_t *lab_names(ripple_kube_client_t *c, const char *resource, const char *ns,
                  const char *selector);
int lab_wait(int (*cond)(void *ud), void *ud, int timeout_ms);
/* Run a shell command line of the test's own (printf-style: quote what the
 * arguments put in it); its standard output into *out (the caller frees it).
 * The exit status, -1 when it did not exit. */
int lab_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
