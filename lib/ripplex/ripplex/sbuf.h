/*
 * ripplex/sbuf.h - a growable byte buffer, the JSON string escaper, and a
 * whole file read into memory.
 *
 * Memory: the buffer owns its bytes until sbuf_take() hands them to the
 * caller (free()) or sbuf_free() releases them. Errors: RIPPLE_OK or a
 * negative RIPPLE_E* code (ripple/ripple.h).
 */
#ifndef RIPPLEX_SBUF_H
#define RIPPLEX_SBUF_H

#include <stddef.h>
#include <string.h>

#include "ripple/ripple.h"

/* On allocation failure the buffer latches `oom` and ignores further appends,
 * so writers check once at the end instead of at every call. */
typedef struct sbuf {
  char *p;
  size_t len, cap;
  int oom;
} sbuf_t;

void sbuf_init(sbuf_t *b);
void sbuf_free(sbuf_t *b);
/* Room for extra more bytes and the NUL; 0, or -1 with oom latched. The slow
 * path of the inline appends below. */
int sbuf_reserve(sbuf_t *b, size_t extra);

/* The appends are inline: the trace server re-encodes every record it stores
 * with them, and a call per byte was a tenth of its ingest (issue 28). */
static inline void sbuf_put(sbuf_t *b, const char *s, size_t n) {
  if (!(b->p && !b->oom && b->len + n < b->cap) && sbuf_reserve(b, n)) return;
  if (n) memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static inline void sbuf_putc(sbuf_t *b, char c) {
  if (!(b->p && !b->oom && b->len + 1 < b->cap) && sbuf_reserve(b, 1)) return;
  b->p[b->len++] = c;
  b->p[b->len] = '\0';
}

void sbuf_puts(sbuf_t *b, const char *s);
void sbuf_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal, quotes included, escaped per RFC 8259. Invalid UTF-8
 * bytes become U+FFFD so the output is always valid JSON. */
void sbuf_json_str(sbuf_t *b, const char *s);
void sbuf_json_strn(sbuf_t *b, const char *s, size_t n);
/* Hand the NUL-terminated contents to the caller; the buffer is left empty.
 * RIPPLE_ENOMEM (and the buffer freed) if an append failed. */
int sbuf_take(sbuf_t *b, char **out, size_t *out_len);
/* A whole file as a NUL-terminated string (*out, free()); RIPPLE_ESYS with
 * errno set when it cannot be read, RIPPLE_ENOMEM. For small files:
 * certificates, tokens. */
int sbuf_read_file(const char *path, char **out);
/* The same, at most max bytes (RIPPLE_ESYS with errno EFBIG for a larger
 * file: what a config file names must not make us read /dev/zero); its
 * length in *len when len is not NULL. */
int sbuf_read_file_max(const char *path, size_t max, char **out, size_t *len);

#endif
