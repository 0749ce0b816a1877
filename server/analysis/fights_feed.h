/*
 * fights_feed.h - what the field-fight detector (fights.h) is fed: the
 * webhook's spans of updates (from the server's commit hook) and the watch
 * agent's changes (from the details' ingest), read out of the records the
 * server already decoded.
 *
 * Only updates are read (the span's operation attribute UPDATE, a change's op
 * update with a diff); a span's body is parsed again here, which costs a few
 * microseconds per update and nothing for any other record. A value in a
 * diff is hashed, never copied; a redacted one is left out.
 *
 * Threads: as fights.h (any thread). Memory: nothing of the batches is kept.
 */
#ifndef RIPPLE_SERVER_FIGHTS_FEED_H
#define RIPPLE_SERVER_FIGHTS_FEED_H

#include "analysis/details.h"
#include "analysis/fights.h"
#include "ingest/decode.h"

/* The attributes of a span the detector reads, out of the span's body as
 * the server encoded it (ingest/decode.h); "" when absent, longer than
 * FIGHTS_ATTR_MAX - 1 bytes, or holding an escape of a control character. */
#define FIGHTS_ATTR_MAX 256
typedef struct fights_attrs {
  char uid[FIGHTS_ATTR_MAX], rv[FIGHTS_ATTR_MAX], user[FIGHTS_ATTR_MAX], sub[FIGHTS_ATTR_MAX];
} fights_attrs_t;
void fights_span_attrs(const char *body, size_t len, fights_attrs_t *a);

/* A batch of spans just committed; returns the fights flagged. f NULL: off. */
int fights_feed_spans(fights_t *f, const dec_batch_t *b);
/* A batch of details just stored; returns the fights flagged. */
int fights_feed_facts(fights_t *f, const det_batch_t *b);

#endif
