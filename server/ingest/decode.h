/*
 * decode.h - turning POST bodies into validated records.
 *
 * A request is all-or-nothing, so decoding either accepts every record of the
 * array or names the first problem: which record (index), which field, and
 * what is wrong with it. Accepted records are re-encoded canonically with
 * libripple's wire encoder: what the server stores and serves is always valid,
 * uniform JSON, whatever the client sent.
 */
#ifndef RIPPLE_SERVER_DECODE_H
#define RIPPLE_SERVER_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

typedef enum { DEC_MERGELOGS, DEC_SPANS } dec_kind_t;

typedef struct dec_limits {
  size_t max_records; /* per request */
  size_t max_sources; /* per mergelog */
  size_t max_attrs;   /* per span */
  size_t max_string;  /* bytes in any string field */
} dec_limits_t;

/* The most bytes of an object uid the roots index takes (docs/api.md). */
#define DEC_UID_MAX 128

/* A string of a record kept for the indexes, in dec_batch_t.strs; len 0:
 * absent or empty. */
typedef struct dec_str {
  uint32_t off, len;
} dec_str_t;

typedef struct dec_rec {
  ripple_cpid_t cpid;
  int64_t time;   /* a mergelog's time, a span's start */
  size_t src_off; /* into dec_batch_t.src (and .trig) */
  uint32_t nsrc;
  uint8_t has_trigger; /* a mergelog with a trigger list (dec_trigger) */
  uint32_t uid_off;    /* into dec_batch_t.uids */
  size_t body_off;     /* into dec_batch_t.body */
  uint32_t body_len;
  /* A root mergelog's object.uid when dec_uid_ok takes it (the roots index);
   * 0 for every other record. */
  uint32_t uid_len;
  int64_t end; /* a span's end; a mergelog's time */
  /* The object written (a mergelog's object, a span's kind/namespace/name
   * attributes) and a mergelog's component, for the object index and root
   * search. */
  dec_str_t kind, ns, name, component;
  /* A span's service and name, and its owner and operation attributes, and
   * its span id: the hop it is, for stalled-cascade detection (stall.h). */
  dec_str_t service, span_name, owner, operation;
  uint64_t span_id;
} dec_rec_t;

typedef struct dec_batch {
  dec_kind_t kind;
  dec_rec_t *rec;
  size_t n;
  ripple_cpid_t *src;
  uint8_t *trig; /* one flag per entry of src: 1 for a trigger (dec_trigger) */
  size_t nsrc;
  sbuf_t body; /* canonical JSON of each record, back to back */
  sbuf_t uids; /* roots' object uids, back to back, not terminated */
  sbuf_t strs; /* the records' dec_str_t strings, back to back, not terminated */
  size_t dups; /* mergelogs left out: their CPID's first mergelog in the request is kept */
} dec_batch_t;

/* The text of a dec_str_t (not NUL-terminated; its len bytes; "" when
 * empty: a batch without strings has no buffer at all). */
static inline const char *dec_str(const dec_batch_t *b, dec_str_t s) {
  return s.len ? b->strs.p + s.off : "";
}

/* A mergelog's trigger flags, one per source (1: the source caused the
 * write), or NULL when it named no trigger list (every source counts). */
static inline const uint8_t *dec_trigger(const dec_batch_t *b, const dec_rec_t *r) {
  return r->has_trigger ? b->trig + r->src_off : NULL;
}

typedef struct dec_error {
  long index;     /* record index, or -1 for the request as a whole */
  char field[64]; /* e.g. "sources[2]", or "" */
  char msg[192];
} dec_error_t;

/* RIPPLE_OK, or RIPPLE_EJSON/RIPPLE_ERANGE/RIPPLE_EINVAL with *err filled in.
 * On success free the batch with dec_batch_free(). */
int dec_decode(dec_kind_t kind, const char *json, size_t len, const dec_limits_t *lim,
               dec_batch_t *out, dec_error_t *err);
void dec_batch_free(dec_batch_t *b);

/* 1 if s (n bytes) is an object uid the roots index takes: 1 to DEC_UID_MAX
 * letters, digits and '-' (a Kubernetes uid is a UUID). */
int dec_uid_ok(const char *s, size_t n);

#endif
