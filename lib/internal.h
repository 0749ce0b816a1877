/*
 * internal.h - what libripple's files share and the outside world does not see.
 *
 * Small helpers (CPID comparison, random bytes, a growable string buffer used
 * by every JSON writer in the library) and the internal hooks between the
 * tracer, spans and the log. Nothing here is part of the stable API.
 */
#ifndef RIPPLE_INTERNAL_H
#define RIPPLE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ripple/ripple.h"

/* CPIDs are compared often in the merge path: two 64-bit loads beat memcmp. */
static inline int cpid_eq(const ripple_cpid_t *a, const ripple_cpid_t *b) {
  uint64_t a0, a1, b0, b1;
  memcpy(&a0, a->b, 8);
  memcpy(&a1, a->b + 8, 8);
  memcpy(&b0, b->b, 8);
  memcpy(&b1, b->b + 8, 8);
  return a0 == b0 && a1 == b1;
}

static inline int cpid_nil(const ripple_cpid_t *a) {
  static const ripple_cpid_t zero;
  return cpid_eq(a, &zero);
}

/* A hash of a CPID for hash tables that hold ids from outside: splitmix64's
 * finaliser over both halves and a per-process seed, so a hostile writer cannot
 * pick ids that all land in one bucket. */
static inline uint64_t cpid_hash(const ripple_cpid_t *id, uint64_t seed) {
  uint64_t a, b;
  memcpy(&a, id->b, 8);
  memcpy(&b, id->b + 8, 8);
  uint64_t x = a ^ (b << 29 | b >> 35) ^ seed;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Fill buf with bytes from the OS random source, through a small per-thread
 * buffer so that a CPID costs no system call most of the time. Fork-safe. */
int rnd_bytes(void *buf, size_t len);

/* Turn 16 random bytes into a version-4, variant-1 UUID. */
void cpid_from_random(ripple_cpid_t *id);

/* A growable byte buffer. On allocation failure it latches `oom` and ignores
 * further appends, so writers check once at the end instead of at every call. */
typedef struct sbuf {
  char *p;
  size_t len, cap;
  int oom;
} sbuf_t;

void sbuf_init(sbuf_t *b);
void sbuf_free(sbuf_t *b);
void sbuf_put(sbuf_t *b, const char *s, size_t n);
void sbuf_puts(sbuf_t *b, const char *s);
void sbuf_putc(sbuf_t *b, char c);
void sbuf_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal, quotes included, escaped per RFC 8259. Invalid UTF-8
 * bytes become U+FFFD so the output is always valid JSON. */
void sbuf_json_str(sbuf_t *b, const char *s);
void sbuf_json_strn(sbuf_t *b, const char *s, size_t n);
/* Hand the NUL-terminated contents to the caller; the buffer is left empty. */
int sbuf_take(sbuf_t *b, char **out, size_t *out_len);
/* A whole file as a NUL-terminated string (*out, free()); RIPPLE_ESYS with
 * errno set when it cannot be read. For small files: certificates, tokens. */
int sbuf_read_file(const char *path, char **out);

/* Monotonic time in nanoseconds, for durations and deadlines (never for
 * timestamps: those are ripple_now_ns). */
int64_t mono_ns(void);

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0 if it is not one
 * (truncated, overlong, a surrogate, past U+10FFFF). */
size_t utf8_len(const unsigned char *s, size_t n);

/* Wire encoders shared by ripple_*_to_json and the shipper's batches. */
void wire_mergelog(sbuf_t *b, const ripple_mergelog_t *ml);
void wire_span(sbuf_t *b, const ripple_span_rec_t *sp);
void wire_span_id(uint64_t id, char out[17]);
/* A CPID as a JSON string, quotes included. */
void wire_cpid(sbuf_t *b, const ripple_cpid_t *id);

/* Log at most once per call site per process: for warnings about bad input that
 * could otherwise flood the log. */
#define RIPPLE_LOG_ONCE(level, event, ...)                                         \
  do {                                                                             \
    static atomic_int logged_once_;                                                \
    if (!atomic_exchange(&logged_once_, 1)) ripple_log(level, event, __VA_ARGS__); \
  } while (0)

#endif /* RIPPLE_INTERNAL_H */
