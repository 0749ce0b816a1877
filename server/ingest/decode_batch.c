/*
 * decode_batch.c - a request's batch as the decoder builds it, and the one
 * mergelog per CPID rule (decode_batch.h).
 */
#include "ingest/decode_batch.h"

#include <stdlib.h>
#include <string.h>

#include "ripplex/cpid.h"
#include "ripplex/sbuf.h"

int dec_batch_add(dec_batch_t *b, const ripple_cpid_t *cpid, int64_t time, size_t src_off,
                  uint32_t nsrc, size_t body_off) {
  dec_rec_t *r = &b->rec[b->n++];
  r->cpid = *cpid;
  r->time = time;
  r->src_off = src_off;
  r->nsrc = nsrc;
  r->has_trigger = 0;
  r->body_off = body_off;
  r->body_len = (uint32_t)(b->body.len - body_off);
  r->uid_off = r->uid_len = 0;
  r->end = time;
  r->kind = r->ns = r->name = r->component = (dec_str_t){0, 0};
  r->service = r->span_name = r->owner = r->operation = (dec_str_t){0, 0};
  r->span_id = 0;
  return b->body.oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

int dec_batch_note_str(dec_batch_t *b, const char *s, dec_str_t *out) {
  size_t n = s ? strlen(s) : 0;
  *out = (dec_str_t){(uint32_t)b->strs.len, (uint32_t)n};
  if (n) sbuf_put(&b->strs, s, n);
  return b->strs.oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

int dec_batch_note_object(dec_batch_t *b, const char *kind, const char *ns, const char *name,
                          const char *component) {
  dec_rec_t *r = &b->rec[b->n - 1];
  int rc = dec_batch_note_str(b, kind, &r->kind);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, ns, &r->ns);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, name, &r->name);
  if (rc == RIPPLE_OK) rc = dec_batch_note_str(b, component, &r->component);
  return rc;
}

int dec_uid_ok(const char *s, size_t n) {
  if (n == 0 || n > DEC_UID_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '-')
      return 0;
  }
  return 1;
}

int dec_batch_note_uid(dec_batch_t *b, const char *uid, size_t n) {
  if (!uid || !dec_uid_ok(uid, n)) return RIPPLE_OK;
  dec_rec_t *r = &b->rec[b->n - 1];
  r->uid_off = (uint32_t)b->uids.len;
  r->uid_len = (uint32_t)n;
  sbuf_put(&b->uids, uid, n);
  return b->uids.oom ? RIPPLE_ENOMEM : RIPPLE_OK;
}

static int seen_grow(dec_seen_t *s, const dec_batch_t *b) {
  size_t cap = s->slot ? (s->mask + 1) * 2 : 64;
  size_t *slot = calloc(cap, sizeof *slot);
  if (!slot) return RIPPLE_ENOMEM;
  for (size_t k = 0; s->slot && k <= s->mask; k++) {
    if (!s->slot[k]) continue;
    size_t h = (size_t)cpid_hash(&b->rec[s->slot[k] - 1].cpid, s->seed) & (cap - 1);
    while (slot[h]) h = (h + 1) & (cap - 1);
    slot[h] = s->slot[k];
  }
  free(s->slot);
  s->slot = slot;
  s->mask = cap - 1;
  return RIPPLE_OK;
}

long dec_seen_add(dec_seen_t *s, const dec_batch_t *b, size_t i) {
  if ((!s->slot || (s->n + 1) * 2 > s->mask + 1) && seen_grow(s, b) != RIPPLE_OK) return -2;
  size_t *slot = s->slot;
  if (!slot) return -2;
  const ripple_cpid_t *c = &b->rec[i].cpid;
  size_t h = (size_t)cpid_hash(c, s->seed) & s->mask;
  for (; slot[h]; h = (h + 1) & s->mask)
    if (cpid_eq(&b->rec[slot[h] - 1].cpid, c)) return (long)slot[h] - 1;
  slot[h] = i + 1;
  s->n++;
  return -1;
}

void dec_seen_free(dec_seen_t *s) {
  free(s->slot);
  memset(s, 0, sizeof *s);
}

dec_mark_t dec_batch_mark(const dec_batch_t *b) {
  return (dec_mark_t){b->n, b->nsrc, b->body.len, b->uids.len, b->strs.len};
}

void dec_batch_rewind(dec_batch_t *b, const dec_mark_t *m) {
  b->n = m->n;
  b->nsrc = m->nsrc;
  b->body.len = m->body;
  b->uids.len = m->uids;
  b->strs.len = m->strs;
}

void dec_batch_free(dec_batch_t *b) {
  free(b->rec);
  free(b->src);
  free(b->trig);
  sbuf_free(&b->body);
  sbuf_free(&b->uids);
  sbuf_free(&b->strs);
  memset(b, 0, sizeof *b);
}
