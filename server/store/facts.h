/*
 * facts.h - what the trace knows besides its spans (docs/api.md, "Details"):
 * the changes a write made (field diffs, and snapshots of created and deleted
 * objects, from the watch agent), Kubernetes Events about objects, and
 * kube-apiserver's audit events. Each is a fact: a JSON body the server wrote
 * itself, plus the keys it is joined by (object uid, namespace and name,
 * resourceVersions, the span id of the webhook's audit annotation, a CPID).
 *
 * Facts live in a database of their own (SQLite, WAL), written by a thread of
 * their own with group commits, so a flood of audit events or Events never
 * waits on, or holds up, the writes of mergelogs and spans (store.h). The
 * queue in front of that thread is bounded: past max_queue facts waiting, or
 * while its oldest job's request has waited more than 3 s, facts_put refuses
 * at once (the caller answers 429) instead of growing.
 *
 * Durability as in store.h: facts_put returns after the commit.
 *
 * Memory: facts_put copies nothing it is given past its return; rows handed
 * to a lookup's callback are valid during the call only.
 * Threads: facts_put and facts_lookup may be called from any thread.
 */
#ifndef RIPPLE_SERVER_FACTS_H
#define RIPPLE_SERVER_FACTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct facts facts_t;

typedef enum { FACT_CHANGE = 1, FACT_EVENT = 2, FACT_AUDIT = 3 } fact_type_t;

/* A fact to store, or one read back. Strings are NUL-terminated; NULL or ""
 * is absent. */
typedef struct fact {
  fact_type_t type;
  int64_t time;                       /* ns: when the change was seen, the Event last happened, the
                                         audit event's stage */
  const char *uid, *kind, *ns, *name; /* the object it is about */
  const char *rv, *prev_rv;           /* a change: the version written and the one before;
                                         audit: the version written, and the one in the request */
  const char *span_id;                /* audit: the webhook's span (its annotation) */
  const char *cpid;                   /* a change: the object's own CPID; audit: the annotation's */
  const char *op;                     /* a change: create, update, delete; audit: its verb */
  const char *body;                   /* the JSON served */
  size_t body_len;
} fact_t;

typedef struct facts_opts {
  const char *path;
  int sync_full;
  size_t max_queue;   /* facts waiting for the writer, at most [100000] */
  int64_t max_age_ns; /* retention; 0: none */
  size_t max_rows;    /* retention; 0: none */
} facts_opts_t;

/* The details' lag: from when a fact's request was queued to the commit of
 * its transaction, in seconds, one observation per fact (bounds as the OTLP
 * export's lag, export.c). */
#define FACTS_LAG_BUCKETS 13
extern const double facts_lag_bounds[FACTS_LAG_BUCKETS];

typedef struct facts_stats {
  uint64_t stored, refused_busy, write_errors, expired; /* refused_busy: calls */
  size_t queued;
  uint64_t lag_counts[FACTS_LAG_BUCKETS + 1], lag_count; /* per bucket, not cumulative */
  double lag_sum;
} facts_stats_t;

int facts_open(const facts_opts_t *o, facts_t **out, char *err, size_t errcap);
void facts_close(facts_t *f);

/* Store n facts in one transaction. RIPPLE_OK once committed; RIPPLE_EFULL
 * (nothing stored) when the queue is full or behind; RIPPLE_ESYS when the database
 * failed; RIPPLE_ENOMEM. */
int facts_put(facts_t *f, const fact_t *v, size_t n);
/* facts_put for facts received at since_ns (mono_ns()): their lag is
 * counted from then, not from this call. */
int facts_put_since(facts_t *f, const fact_t *v, size_t n, int64_t since_ns);

/* One lookup, on one reader connection: every fact that matches any key
 * given, within [since, until] (ns) except for span ids, which match at any
 * time; each at most once, in no promised order, at most limit rows. fn
 * returns nonzero to stop. */
typedef struct facts_query {
  const char *const *span_ids;
  size_t nspan_ids;
  const char *const *uids;
  size_t nuids;
  const char *const *cpids; /* changes whose object carries one of these CPIDs */
  size_t ncpids;
  const char *const *objects; /* audit facts about "namespace/name" (no uid needed) */
  size_t nobjects;
  int64_t since, until;
  size_t limit;
} facts_query_t;
typedef int (*facts_row_fn)(void *ud, uint64_t seq, const fact_t *row);
int facts_lookup(facts_t *f, const facts_query_t *q, facts_row_fn fn, void *ud);

void facts_stats(facts_t *f, facts_stats_t *out);

#endif
