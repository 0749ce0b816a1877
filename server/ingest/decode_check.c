/*
 * decode_check.c - the checks every span record passes and its place in the
 * batch, and a mergelog's trigger list against its sources (decode_check.h).
 */
#include "ingest/decode_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/decode_batch.h"
#include "ripplex/cpid.h"
#include "ripplex/wire.h"

int dec_fail(dec_error_t *err, long index, int rc, const char *field, const char *fmt, ...) {
  err->index = index;
  snprintf(err->field, sizeof err->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

int dec_check_count(const dec_limits_t *lim, size_t n, dec_error_t *err) {
  if (n <= lim->max_records) return RIPPLE_OK;
  return dec_fail(err, -1, RIPPLE_ERANGE, "",
                  "%zu records in one request; at most %zu are accepted", n, lim->max_records);
}

int dec_check_cpid(const ripple_cpid_t *cpid, long index, dec_error_t *err) {
  static const ripple_cpid_t nil;
  if (!cpid_eq(cpid, &nil)) return RIPPLE_OK;
  return dec_fail(err, index, RIPPLE_EINVAL, "cpid",
                  "is not a CPID (a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)");
}

int dec_check_text(const dec_limits_t *lim, long index, const char *field, size_t len,
                   dec_error_t *err) {
  if (len <= lim->max_string) return RIPPLE_OK;
  return dec_fail(err, index, RIPPLE_ERANGE, field, "is longer than %zu bytes", lim->max_string);
}

int dec_check_span_id(uint64_t id, long index, const char *field, dec_error_t *err) {
  if (id) return RIPPLE_OK;
  return dec_fail(err, index, RIPPLE_EINVAL, field,
                  "must be 16 lower-case hex digits, not all zero");
}

int dec_check_span_times(int64_t start, int64_t end, long index, dec_error_t *err) {
  if (end >= start) return RIPPLE_OK;
  return dec_fail(err, index, RIPPLE_EINVAL, "end", "is before start");
}

int dec_check_nattrs(const dec_limits_t *lim, size_t n, long index, dec_error_t *err) {
  if (n <= lim->max_attrs) return RIPPLE_OK;
  return dec_fail(err, index, RIPPLE_ERANGE, "attributes", "has more than %zu entries",
                  lim->max_attrs);
}

int dec_check_attr(const dec_limits_t *lim, long index, const char *key, size_t key_len,
                   size_t val_len, dec_error_t *err) {
  if (key_len <= lim->max_string && val_len <= lim->max_string) return RIPPLE_OK;
  char field[64];
  snprintf(field, sizeof field, "attributes.%.40s", key);
  return dec_fail(err, index, RIPPLE_ERANGE, field, "is longer than %zu bytes", lim->max_string);
}

int dec_check_span(const dec_limits_t *lim, const ripple_span_rec_t *sp, long index,
                   dec_error_t *err) {
  /* Ids are held to the string limit as the 16 hex digits of their text. */
  enum { ID_TEXT = 16 };
  int rc = dec_check_cpid(&sp->cpid, index, err);
  if (rc == RIPPLE_OK) rc = dec_check_text(lim, index, "span_id", ID_TEXT, err);
  if (rc == RIPPLE_OK) rc = dec_check_span_id(sp->span_id, index, "span_id", err);
  if (rc == RIPPLE_OK && sp->parent_id) rc = dec_check_text(lim, index, "parent_id", ID_TEXT, err);
  if (rc == RIPPLE_OK) rc = dec_check_text(lim, index, "service", strlen(sp->service), err);
  if (rc == RIPPLE_OK) rc = dec_check_text(lim, index, "name", strlen(sp->name), err);
  if (rc == RIPPLE_OK) rc = dec_check_span_times(sp->start_ns, sp->end_ns, index, err);
  if (rc == RIPPLE_OK) rc = dec_check_nattrs(lim, sp->nattrs, index, err);
  for (size_t i = 0; rc == RIPPLE_OK && i < sp->nattrs; i++) {
    const ripple_attr_t *a = &sp->attrs[i];
    rc = dec_check_attr(lim, index, a->key, strlen(a->key), strlen(a->value), err);
  }
  return rc;
}

/* A span's attribute by key, or NULL. */
static const char *span_attr(const ripple_span_rec_t *sp, const char *key) {
  for (size_t i = 0; i < sp->nattrs; i++)
    if (!strcmp(sp->attrs[i].key, key)) return sp->attrs[i].value;
  return NULL;
}

int dec_span_append(dec_batch_t *b, const ripple_span_rec_t *sp) {
  size_t body_off = b->body.len;
  wire_span(&b->body, sp);
  int rc = dec_batch_add(b, &sp->cpid, sp->start_ns, 0, 0, body_off);
  if (rc != RIPPLE_OK) return rc;
  dec_rec_t *r = &b->rec[b->n - 1];
  r->end = sp->end_ns;
  r->span_id = sp->span_id;
  rc = dec_batch_note_object(b, span_attr(sp, "kind"), span_attr(sp, "namespace"),
                             span_attr(sp, "name"), NULL);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, sp->service, &r->service);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, sp->name, &r->span_name);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, span_attr(sp, "owner"), &r->owner);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, span_attr(sp, "operation"), &r->operation);
  return rc;
}

/* A source and where it is, for the sorted lookup of long lists. */
typedef struct src_at {
  ripple_cpid_t cpid;
  size_t i;
} src_at_t;

static int src_at_cmp(const void *a, const void *b) {
  const src_at_t *x = a, *y = b;
  int c = memcmp(x->cpid.b, y->cpid.b, sizeof x->cpid.b);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The first position of c in src (sorted: the copy, or NULL for a short
 * list), or nsrc when it is not there. */
static size_t src_find(const ripple_cpid_t *src, size_t nsrc, const src_at_t *sorted,
                       const ripple_cpid_t *c) {
  if (!sorted) {
    for (size_t i = 0; i < nsrc; i++)
      if (cpid_eq(&src[i], c)) return i;
    return nsrc;
  }
  size_t lo = 0, hi = nsrc; /* the first entry not below (c, 0) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (memcmp(sorted[mid].cpid.b, c->b, sizeof c->b) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < nsrc && cpid_eq(&sorted[lo].cpid, c) ? sorted[lo].i : nsrc;
}

/* Past this many sources the lookup sorts a copy. */
#define TRIGGER_LINEAR 16

int dec_check_trigger(const ripple_cpid_t *src, size_t nsrc, const ripple_cpid_t *trig,
                      size_t ntrig, uint8_t *flags, long index, dec_error_t *err) {
  if (ntrig == 0)
    return dec_fail(err, index, RIPPLE_EINVAL, "trigger",
                    "must name at least one of sources (or be left out: every source then)");
  if (ntrig > nsrc)
    return dec_fail(err, index, RIPPLE_EINVAL, "trigger",
                    "has %zu entries; sources has %zu, and each entry must be one of them", ntrig,
                    nsrc);
  src_at_t *sorted = NULL;
  if (nsrc > TRIGGER_LINEAR && ntrig > 1) {
    if (!(sorted = malloc(nsrc * sizeof *sorted))) return RIPPLE_ENOMEM;
    for (size_t i = 0; i < nsrc; i++) sorted[i] = (src_at_t){src[i], i};
    qsort(sorted, nsrc, sizeof *sorted, src_at_cmp);
  }
  memset(flags, 0, nsrc);
  int rc = RIPPLE_OK;
  for (size_t k = 0; k < ntrig && rc == RIPPLE_OK; k++) {
    size_t at = src_find(src, nsrc, sorted, &trig[k]);
    char field[32];
    snprintf(field, sizeof field, "trigger[%zu]", k);
    if (at == nsrc)
      rc = dec_fail(err, index, RIPPLE_EINVAL, field, "is not one of sources");
    else if (flags[at])
      rc = dec_fail(err, index, RIPPLE_EINVAL, field, "names a source an earlier entry names");
    else
      flags[at] = 1;
  }
  free(sorted);
  return rc;
}
