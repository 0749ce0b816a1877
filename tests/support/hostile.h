/*
 * hostile.h - hostile clients for the listeners' tests (issue 27): many
 * connections from a source address of their own (127.0.0.2, so that a limit
 * per address tells them from the legitimate client on 127.0.0.1), sending
 * a request one byte at a time, or a large body without a token.
 *
 * Memory: a hostile_slow_t is the caller's from hostile_slow_start to
 * hostile_slow_stop, which closes every socket it opened.
 */
#ifndef RIPPLE_TEST_HOSTILE_H
#define RIPPLE_TEST_HOSTILE_H

#include <stddef.h>
#include <sys/types.h>

/* A TCP connection from src (an IPv4 address on loopback) to
 * 127.0.0.1:port; -1 when it cannot be made. */
int hostile_connect(const char *src, unsigned port);

/* n connections from src, each sending request one byte every interval_ms
 * (the first byte at once) until the peer closes it. */
typedef struct hostile_slow hostile_slow_t;
hostile_slow_t *hostile_slow_start(const char *src, unsigned port, size_t n, const char *request,
                                   unsigned interval_ms);
/* How many were opened, and how many the peer has closed (or reset) so far. */
size_t hostile_slow_opened(hostile_slow_t *s);
size_t hostile_slow_closed(hostile_slow_t *s);
/* Stop sending and close what is left. */
void hostile_slow_stop(hostile_slow_t *s);

/* A process's resident memory (VmRSS) in KiB; -1 when unknown. */
long hostile_rss_kib(pid_t pid);

/* 1 under AddressSanitizer or ThreadSanitizer, where RSS measures their
 * shadow memory (and ASan's quarantine) more than the program. */
int hostile_sanitized(void);

#endif
