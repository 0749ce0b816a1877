/*
 * sbuf.c - a growable string buffer and a JSON string escaper.
 *
 * Every JSON document ripple writes (wire records, patches, batches, the
 * servers' answers) is built here. Reading JSON is jansson's job; writing is
 * simple enough that a buffer and a correct escaper are clearer and much
 * faster than building a tree.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "ripplex/utf8.h"

void sbuf_init(sbuf_t *b) { memset(b, 0, sizeof *b); }

void sbuf_free(sbuf_t *b) {
  free(b->p);
  sbuf_init(b);
}

int sbuf_reserve(sbuf_t *b, size_t extra) {
  if (b->oom) return -1;
  if (b->p && b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      b->oom = 1;
      return -1;
    }
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void sbuf_puts(sbuf_t *b, const char *s) { sbuf_put(b, s, strlen(s)); }

void sbuf_printf(sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sbuf_put(b, tmp, (size_t)n);
    return;
  }
  if (sbuf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Bytes a JSON string takes as they are: printable ASCII but '"' and '\\'.
 * The rest go through the escapes or the UTF-8 check. */
static int plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

void sbuf_json_strn(sbuf_t *b, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  if (sbuf_reserve(b, n + 2)) return; /* the common case in one growth */
  sbuf_putc(b, '"');
  size_t run = 0; /* bytes that need no escaping, copied in one go */
  for (size_t i = 0; i < n;) {
    if (plain(s[i])) {
      run++;
      i++;
      continue;
    }
    unsigned char c = s[i];
    size_t l = c >= 0x80 ? utf8_len(s + i, n - i) : 0;
    if (l) {
      run += l;
      i += l;
      continue;
    }
    sbuf_put(b, (const char *)s + i - run, run);
    run = 0;
    switch (c) {
      case '"': sbuf_put(b, "\\\"", 2); break;
      case '\\': sbuf_put(b, "\\\\", 2); break;
      case '\n': sbuf_put(b, "\\n", 2); break;
      case '\r': sbuf_put(b, "\\r", 2); break;
      case '\t': sbuf_put(b, "\\t", 2); break;
      default:
        if (c < 0x20)
          sbuf_printf(b, "\\u%04x", c);
        else
          sbuf_put(b, "\\ufffd", 6); /* invalid UTF-8 byte */
    }
    i++;
  }
  sbuf_put(b, (const char *)s + n - run, run);
  sbuf_putc(b, '"');
}

void sbuf_json_str(sbuf_t *b, const char *s) { sbuf_json_strn(b, s, strlen(s)); }

int sbuf_take(sbuf_t *b, char **out, size_t *out_len) {
  if (b->oom) {
    sbuf_free(b);
    return RIPPLE_ENOMEM;
  }
  if (!b->p) {
    sbuf_put(b, "", 0); /* an empty document is still a string */
    if (b->oom || !b->p) return RIPPLE_ENOMEM;
  }
  *out = b->p;
  if (out_len) *out_len = b->len;
  sbuf_init(b);
  return RIPPLE_OK;
}

int sbuf_read_file_max(const char *path, size_t max, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return RIPPLE_ESYS;
  sbuf_t b;
  sbuf_init(&b);
  char buf[8192];
  size_t n;
  int e = 0;
  errno = 0;
  while (!e && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    if (b.len + n > max)
      e = EFBIG;
    else
      sbuf_put(&b, buf, n);
  }
  if (!e && ferror(f)) e = errno ? errno : EIO;
  fclose(f);
  if (!e && sbuf_take(&b, out, len) != RIPPLE_OK) e = ENOMEM;
  if (!e) return RIPPLE_OK;
  sbuf_free(&b);
  errno = e;
  return e == ENOMEM ? RIPPLE_ENOMEM : RIPPLE_ESYS;
}

int sbuf_read_file(const char *path, char **out) {
  return sbuf_read_file_max(path, SIZE_MAX, out, NULL);
}
