/*
 * ctx.c - trace contexts and their text encoding.
 *
 * The encoding (docs/format.md) is deliberately plain: a format version, the
 * CPID, then the ancestors, nearest first.
 *
 *     1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60;0c9d...,77aa...
 *
 * It must survive being pasted by people, copied by controllers and written by
 * hostile clients, so decoding accepts exactly this shape and nothing else:
 * a value that is almost right is still wrong, and the caller treats it as
 * absent. Canonical UUID text keeps CPIDs greppable across annotations, logs and
 * the trace server's API.
 */
#include "internal.h"

int ripple_ctx_is_set(const ripple_ctx_t *ctx) { return ctx && !cpid_nil(&ctx->cpid); }

int ripple_ctx_equal(const ripple_ctx_t *a, const ripple_ctx_t *b) {
  if (!cpid_eq(&a->cpid, &b->cpid) || a->nanc != b->nanc) return 0;
  for (uint32_t i = 0; i < a->nanc; i++)
    if (!cpid_eq(&a->anc[i], &b->anc[i])) return 0;
  return 1;
}

int ripple_ctx_encode(const ripple_ctx_t *ctx, char *buf, size_t cap, size_t *len) {
  if (!ctx || !buf || ctx->nanc > RIPPLE_ANC_MAX || !ripple_ctx_is_set(ctx)) return RIPPLE_EINVAL;
  size_t need = 2 + RIPPLE_CPID_STRLEN + (size_t)ctx->nanc * (RIPPLE_CPID_STRLEN + 1);
  if (cap < need + 1) return RIPPLE_ERANGE;
  char *p = buf;
  *p++ = '1';
  *p++ = ';';
  cpid_text(&ctx->cpid, p);
  p += RIPPLE_CPID_STRLEN;
  for (uint32_t i = 0; i < ctx->nanc; i++) {
    *p++ = i == 0 ? ';' : ',';
    cpid_text(&ctx->anc[i], p);
    p += RIPPLE_CPID_STRLEN;
  }
  *p = '\0';
  if (len) *len = (size_t)(p - buf);
  return RIPPLE_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Parse the body after "1;" into ctx. */
static int decode_v1(const char *s, size_t len, ripple_ctx_t *ctx) {
  if (len < RIPPLE_CPID_STRLEN) return RIPPLE_EBADCTX;
  int rc = ripple_cpid_parse(s, RIPPLE_CPID_STRLEN, &ctx->cpid);
  if (rc != RIPPLE_OK) return rc;
  size_t i = RIPPLE_CPID_STRLEN;
  if (i == len) return RIPPLE_OK;
  char sep = ';';
  while (i < len) {
    if (s[i] != sep || len - i - 1 < RIPPLE_CPID_STRLEN) return RIPPLE_EBADCTX;
    if (ctx->nanc == RIPPLE_ANC_MAX) return RIPPLE_EBADCTX;
    ripple_cpid_t *a = &ctx->anc[ctx->nanc];
    if ((rc = ripple_cpid_parse(s + i + 1, RIPPLE_CPID_STRLEN, a)) != RIPPLE_OK) return rc;
    /* An ancestor equal to the CPID or listed twice is a lie about the graph. */
    if (cpid_eq(a, &ctx->cpid)) return RIPPLE_EBADCTX;
    for (uint32_t k = 0; k < ctx->nanc; k++)
      if (cpid_eq(a, &ctx->anc[k])) return RIPPLE_EBADCTX;
    ctx->nanc++;
    i += 1 + RIPPLE_CPID_STRLEN;
    sep = ',';
  }
  return RIPPLE_OK;
}

int ripple_ctx_decode(const char *s, size_t len, uint32_t max_anc, ripple_ctx_t *out) {
  if (!out || (!s && len)) return RIPPLE_EINVAL;
  memset(out, 0, sizeof *out);
  while (len && is_space(*s)) s++, len--;
  while (len && is_space(s[len - 1])) len--;
  /* The version: digits then ';'. Only "1" is known; other numbers are a
   * newer writer, which deserves its own error so operators can tell. */
  size_t v = 0;
  while (v < len && v < 4 && s[v] >= '0' && s[v] <= '9') v++;
  if (v == 0 || v >= len || s[v] != ';') return RIPPLE_EBADCTX;
  if (v != 1 || s[0] != '1') return RIPPLE_EVERSION;
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  int rc = decode_v1(s + 2, len - 2, &c);
  if (rc != RIPPLE_OK) return rc;
  if (c.nanc > max_anc) c.nanc = max_anc > RIPPLE_ANC_MAX ? RIPPLE_ANC_MAX : max_anc;
  *out = c;
  return RIPPLE_OK;
}
