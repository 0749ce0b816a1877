/*
 * log.c - ripple's one logging convention: one logfmt line per event.
 *
 *   ts=... level=warn component=webhook event=ship_failed cpid=... status=503
 *
 * Every program and the library log through here so that a single grep for a
 * CPID finds a change's lines across components. Lines are assembled in a stack
 * buffer and written with one write(2), so lines from threads never interleave.
 */
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"

static struct {
  char component[64];
  ripple_log_level_t min;
  ripple_log_fn fn;
  void *ud;
} cfg = {"ripple", RIPPLE_LOG_INFO, NULL, NULL};

static _Thread_local char cur_cpid[RIPPLE_CPID_STRLEN + 1];

static const char *level_names[] = {"debug", "info", "warn", "error"};

void ripple_log_setup(const char *component, ripple_log_level_t min_level, ripple_log_fn fn,
                      void *ud) {
  if (component) snprintf(cfg.component, sizeof cfg.component, "%s", component);
  cfg.min = min_level;
  cfg.fn = fn;
  cfg.ud = ud;
}

int ripple_log_level_parse(const char *s, ripple_log_level_t *out) {
  for (int i = 0; s && i < 4; i++) {
    if (strcasecmp(s, level_names[i]) == 0) {
      *out = (ripple_log_level_t)i;
      return RIPPLE_OK;
    }
  }
  return RIPPLE_EINVAL;
}

void ripple_log_set_ctx(const ripple_ctx_t *ctx) {
  if (ripple_ctx_is_set(ctx))
    cpid_text(&ctx->cpid, cur_cpid);
  else
    cur_cpid[0] = '\0';
}

void ripple_log_quote(const char *s, char *out, size_t cap) {
  if (cap == 0) return;
  int plain = *s != '\0';
  for (const char *p = s; *p && plain; p++)
    plain = (unsigned char)*p > ' ' && *p != '"' && *p != '=' && *p != '\\';
  size_t o = 0;
  if (plain) {
    snprintf(out, cap, "%s", s);
    return;
  }
  out[o++] = '"';
  for (const char *p = s; *p && o + 3 < cap; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
      out[o++] = '\\', out[o++] = (char)c;
    else if (c == '\n')
      out[o++] = '\\', out[o++] = 'n';
    else if (c < ' ')
      out[o++] = ' ';
    else
      out[o++] = (char)c;
  }
  if (o < cap) out[o++] = '"';
  out[o < cap ? o : cap - 1] = '\0';
}

void ripple_log(ripple_log_level_t level, const char *event, const char *fmt, ...) {
  if (level < cfg.min || level > RIPPLE_LOG_ERROR) return;
  char line[2048], ts[RIPPLE_TIME_STRLEN + 1];
  time_text(ripple_now_ns(), ts);
  int n = snprintf(line, sizeof line, "ts=%s level=%s component=%s event=%s", ts,
                   level_names[level], cfg.component, event);
  if (cur_cpid[0] && n > 0 && (size_t)n < sizeof line)
    n += snprintf(line + n, sizeof line - (size_t)n, " cpid=%s", cur_cpid);
  if (fmt && *fmt && n > 0 && (size_t)n + 1 < sizeof line) {
    line[n++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (m > 0) n += m;
  }
  if (n < 0) return;
  size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
  /* One event, one line: a newline smuggled in through a value is flattened. */
  for (size_t i = 0; i < len; i++)
    if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
  line[len] = '\0';
  if (cfg.fn) {
    cfg.fn(cfg.ud, level, line);
    return;
  }
  line[len] = '\n';
  ssize_t w = write(STDERR_FILENO, line, len + 1);
  (void)w;
}
