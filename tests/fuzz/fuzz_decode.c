/*
 * fuzz_decode.c - libFuzzer target for the trace server's POST body decoder,
 * which reads whatever any client sends.
 *
 * The first byte picks the kind by its low bit and the limits by the next
 * (the seeds use "0" and "2" for mergelogs, "1" and "3" for spans; "2" and "3"
 * with tight limits), the rest is the body.
 * Properties: the decoder takes and refuses exactly what the reference decoder
 * (decode_ref.h, the jansson one it replaced) does: the same code, record and
 * field, the same message except for malformed JSON (whose wording is each
 * parser's own), and on success the same records byte for byte (and the same
 * repeated mergelogs left out). Decoding
 * either fails cleanly (an error naming a record of the
 * array or the request, and nothing allocated) or succeeds; on success the
 * canonical records, decoded again as an array, are accepted and come back
 * byte for byte, with the same CPIDs, times and sources. That is what makes
 * the stored form canonical: the server may re-read it at any time. A uid
 * kept for the roots index is a root's, valid, and its object's uid.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_ref.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small limits, so the fuzzer reaches every one of them; the tight ones are
 * below the length of a canonical time and a span id. */
static const dec_limits_t limits[2] = {{64, 16, 8, 256}, {3, 2, 2, 24}};

static void check_failed(int rc, const dec_batch_t *b, const dec_error_t *err) {
  if (rc != RIPPLE_EJSON && rc != RIPPLE_EINVAL && rc != RIPPLE_ERANGE) abort();
  if (b->rec || b->src || b->trig || b->body.p || b->uids.p || b->n) abort();
  if (err->index < -1 || !err->msg[0]) abort();
  if (!memchr(err->field, '\0', sizeof err->field) || !memchr(err->msg, '\0', sizeof err->msg))
    abort();
}

static int same_records(const dec_batch_t *a, const dec_batch_t *b) {
  if (a->n != b->n || a->nsrc != b->nsrc || a->body.len != b->body.len) return 0;
  if (a->body.len && memcmp(a->body.p, b->body.p, a->body.len) != 0) return 0;
  if (a->nsrc && memcmp(a->src, b->src, a->nsrc * sizeof *a->src) != 0) return 0;
  if (a->uids.len != b->uids.len) return 0;
  if (a->uids.len && memcmp(a->uids.p, b->uids.p, a->uids.len) != 0) return 0;
  for (size_t i = 0; i < a->n; i++) {
    const dec_rec_t *x = &a->rec[i], *y = &b->rec[i];
    if (memcmp(&x->cpid, &y->cpid, sizeof x->cpid) != 0 || x->time != y->time ||
        x->nsrc != y->nsrc || x->src_off != y->src_off || x->body_off != y->body_off ||
        x->body_len != y->body_len || x->uid_off != y->uid_off || x->uid_len != y->uid_len ||
        x->has_trigger != y->has_trigger)
      return 0;
    if (x->has_trigger && x->nsrc && memcmp(dec_trigger(a, x), dec_trigger(b, y), x->nsrc) != 0)
      return 0;
  }
  return 1;
}

/* A uid kept for the roots index belongs to a root, is one the index takes,
 * and is the object.uid of the record's canonical form. */
static void check_uids(const dec_batch_t *b) {
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    if (!r->uid_len) continue;
    if (r->nsrc || r->uid_off + r->uid_len > b->uids.len) abort();
    const char *uid = b->uids.p + r->uid_off;
    if (!dec_uid_ok(uid, r->uid_len)) abort();
    char want[DEC_UID_MAX + 16];
    int n = snprintf(want, sizeof want, "\"uid\":\"%.*s\"}}", (int)r->uid_len, uid);
    const char *body = b->body.p + r->body_off;
    if (r->body_len < (size_t)n || memcmp(body + r->body_len - n, want, (size_t)n) != 0) abort();
  }
}

static void differ(const char *what, const uint8_t *data, size_t size) {
  fprintf(stderr, "decoders differ (%s) on: %.*s\n", what, (int)size, (const char *)data);
  abort();
}

/* jansson drops a NUL byte that follows a number or a literal (its lexer
 * pushes the next byte back into a buffer in which NUL means empty), so it
 * took [1\0] as [1]. The decoder refuses every NUL byte as malformed JSON, as
 * jansson did everywhere else; such bodies are not compared. */
static int jansson_nul_quirk(const uint8_t *data, size_t size) {
  for (size_t i = 1; i < size; i++)
    if (!data[i] && isalnum(data[i - 1])) return 1;
  return 0;
}

/* The same answer as the reference for body (data, size); rc is ours. */
static void same_as_reference(dec_kind_t kind, const dec_limits_t *lim, const uint8_t *data,
                              size_t size, int rc, const dec_batch_t *b, const dec_error_t *err) {
  if (jansson_nul_quirk(data, size)) {
    if (rc != RIPPLE_EJSON) differ("NUL byte not refused", data, size);
    return;
  }
  dec_batch_t r;
  dec_error_t rerr;
  int want = ref_decode(kind, (const char *)data, size, lim, &r, &rerr);
  if (want == RIPPLE_ENOMEM || rc == RIPPLE_ENOMEM) {
    if (want == RIPPLE_OK) dec_batch_free(&r);
    return;
  }
  if (rc != want) {
    fprintf(stderr, "rc %d, reference %d (%ld %s: %s | %ld %s: %s)\n", rc, want, err->index,
            err->field, err->msg, rerr.index, rerr.field, rerr.msg);
    differ("code", data, size);
  }
  if (rc != RIPPLE_OK) {
    if (err->index != rerr.index || strcmp(err->field, rerr.field) != 0 ||
        (rc != RIPPLE_EJSON && strcmp(err->msg, rerr.msg) != 0)) {
      fprintf(stderr, "%ld %s: %s | reference %ld %s: %s\n", err->index, err->field, err->msg,
              rerr.index, rerr.field, rerr.msg);
      differ("error", data, size);
    }
    return;
  }
  if (!same_records(b, &r)) differ("records", data, size);
  if (b->dups != r.dups) differ("repeated mergelogs left out", data, size);
  dec_batch_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  dec_kind_t kind = data[0] & 1 ? DEC_SPANS : DEC_MERGELOGS;
  const dec_limits_t *lim = &limits[data[0] >> 1 & 1];
  dec_batch_t b;
  dec_error_t err;
  memset(&err, 'x', sizeof err); /* dec_decode must fill it in */
  int rc = dec_decode(kind, (const char *)data + 1, size - 1, lim, &b, &err);
  same_as_reference(kind, lim, data + 1, size - 1, rc, &b, &err);
  if (rc != RIPPLE_OK) {
    if (rc != RIPPLE_ENOMEM) check_failed(rc, &b, &err);
    return 0;
  }
  if (b.kind != kind || b.n > lim->max_records) abort();
  check_uids(&b);
  sbuf_t again;
  sbuf_init(&again);
  sbuf_putc(&again, '[');
  for (size_t i = 0; i < b.n; i++) {
    if (b.rec[i].body_off + b.rec[i].body_len > b.body.len) abort();
    if (i) sbuf_putc(&again, ',');
    sbuf_put(&again, b.body.p + b.rec[i].body_off, b.rec[i].body_len);
  }
  sbuf_putc(&again, ']');
  if (again.oom) abort();
  dec_batch_t c;
  rc = dec_decode(kind, again.p, again.len, lim, &c, &err);
  if (rc != RIPPLE_OK) {
    fprintf(stderr, "canonical form refused (%ld %s: %s): %.*s\n", err.index, err.field, err.msg,
            (int)again.len, again.p);
    abort();
  }
  if (!same_records(&b, &c)) {
    fprintf(stderr, "canonical form changed:\n%.*s\n%.*s\n", (int)b.body.len, b.body.p,
            (int)c.body.len, c.body.p);
    abort();
  }
  dec_batch_free(&c);
  dec_batch_free(&b);
  sbuf_free(&again);
  return 0;
}
