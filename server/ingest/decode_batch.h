/*
 * decode_batch.h - what the decoder (decode.c) appends to a request's batch
 * (dec_batch_t, decode.h), and the set of mergelog CPIDs that keeps one
 * mergelog per CPID. Private to the server's decoder.
 *
 * A record is appended in parts (its body, its sources, its uid and strings),
 * each at the tail of its buffer: a mark taken before the record and a rewind
 * to it take the whole record back (a repeated mergelog CPID).
 *
 * Errors: RIPPLE_OK or RIPPLE_ENOMEM. Memory: the batch owns what is appended
 * (dec_batch_free); a dec_seen_t owns its slots (dec_seen_free).
 */
#ifndef RIPPLE_SERVER_DECODE_BATCH_H
#define RIPPLE_SERVER_DECODE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/decode.h"

/* Append a record whose canonical body starts at body_off of b->body and whose
 * nsrc sources start at src_off of b->src (b->rec has room for it). */
int dec_batch_add(dec_batch_t *b, const ripple_cpid_t *cpid, int64_t time, size_t src_off,
                  uint32_t nsrc, size_t body_off);
/* s (NULL or "": nothing) kept in b->strs, for the indexes; *out says where. */
int dec_batch_note_str(dec_batch_t *b, const char *s, dec_str_t *out);
/* The last record's object and component (NULL or "": none), for the indexes. */
int dec_batch_note_object(dec_batch_t *b, const char *kind, const char *ns, const char *name,
                          const char *component);
/* A root's object uid (n bytes) for the roots index, when dec_uid_ok takes it. */
int dec_batch_note_uid(dec_batch_t *b, const char *uid, size_t n);

/* Where each of the batch's tails is. */
typedef struct dec_mark {
  size_t n, nsrc, body, uids, strs;
} dec_mark_t;
dec_mark_t dec_batch_mark(const dec_batch_t *b);
/* Everything appended since m taken back. */
void dec_batch_rewind(dec_batch_t *b, const dec_mark_t *m);

/* The mergelog CPIDs of a request so far. A CPID has one mergelog: the graph
 * keeps the first, so a second one in the same request would be stored as a
 * row that nothing refers to, which no query returns and retention never
 * deletes; the decoder takes it back out of the batch (dec_batch_t.dups).
 * Open addressing over record indexes (+1; 0 is empty), hashed with a
 * per-request random seed (set it) so that no client can choose colliding
 * CPIDs. Zeroed is empty. */
typedef struct dec_seen {
  size_t *slot;
  size_t mask, n;
  uint64_t seed;
} dec_seen_t;
/* The index of an earlier record with record i's CPID, or -1 after noting it;
 * -2 when out of memory. */
long dec_seen_add(dec_seen_t *s, const dec_batch_t *b, size_t i);
void dec_seen_free(dec_seen_t *s);

#endif
