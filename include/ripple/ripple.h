/*
 * ripple.h - the public API of libripple, the CPID trace-context library.
 *
 * A change in a Kubernetes control plane travels from object to object through
 * controllers that watch each other's output. libripple gives every object a
 * Change Propagation ID (CPID) plus a bounded list of ancestor CPIDs, decides when
 * the contexts a controller read must be merged into a new CPID (and reports that
 * as a "mergelog"), records spans tagged with CPIDs, and ships mergelogs and spans
 * to the ripple trace server in the background. See docs/library.md for a tour
 * and docs/format.md for the annotation format.
 *
 * Conventions (they hold for every function below):
 *
 *   Errors.  Every function that can fail returns int: RIPPLE_OK (0) or one of the
 *            negative RIPPLE_E* codes. ripple_strerror() turns a code into text.
 *            Output parameters are written only on success unless said otherwise.
 *
 *   Memory.  The caller owns what it passes in and keeps ownership; libripple
 *            copies what it needs to keep. Anything libripple allocates for the
 *            caller (strings returned through char **) is released with
 *            ripple_free(). Handles (ripple_tracer_t, ripple_shipper_t,
 *            ripple_span_t) are created by a _new or _start call and released by
 *            exactly one _free or _end call. Records handed to a sink callback are borrowed
 *            for the duration of the call only.
 *
 *   Threads. Value types (ripple_cpid_t, ripple_ctx_t) and the pure functions on
 *            them are safe from any thread. A tracer and a shipper may be used from
 *            many threads at once. A span belongs to one thread at a time.
 *
 *   Time.    Wall-clock time is int64 nanoseconds since the Unix epoch (UTC).
 */
#ifndef RIPPLE_RIPPLE_H
#define RIPPLE_RIPPLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RIPPLE_VERSION_MAJOR 0
#define RIPPLE_VERSION_MINOR 1
#define RIPPLE_VERSION_PATCH 0

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

enum {
  RIPPLE_OK = 0,
  RIPPLE_EINVAL = -1,   /* an argument is invalid (NULL, out of range) */
  RIPPLE_ENOMEM = -2,   /* out of memory */
  RIPPLE_ENOENT = -3,   /* the thing looked for is absent (no context) */
  RIPPLE_EBADCTX = -4,  /* a context string is malformed */
  RIPPLE_EVERSION = -5, /* a context string has a format version we do not know */
  RIPPLE_EJSON = -6,    /* a JSON document is malformed or not the expected shape */
  RIPPLE_ERANGE = -7,   /* a buffer is too small or a limit is exceeded */
  RIPPLE_EFULL = -8,    /* a queue is full; the record was dropped and counted */
  RIPPLE_ESYS = -9,     /* a system call failed (errno tells more) */
  RIPPLE_ESTATE = -10,  /* the handle is in the wrong state (shut down) */
  RIPPLE_ETIMEDOUT = -11,
};

/* A constant, human-readable description of an error code; never NULL. */
const char *ripple_strerror(int err);
/* The code's symbolic name ("RIPPLE_EBADCTX"); never NULL. */
const char *ripple_errname(int err);

/* Release memory that libripple allocated for the caller. NULL is fine. */
void ripple_free(void *p);

/* ---------------------------------------------------------------------------
 * CPIDs
 *
 * A CPID is a random (version 4) UUID. Its text form is the canonical 36
 * characters, lower case: 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60.
 * ------------------------------------------------------------------------- */

#define RIPPLE_CPID_STRLEN 36 /* without the terminating NUL */

typedef struct ripple_cpid {
  uint8_t b[16];
} ripple_cpid_t;

/* A new random version-4 UUID from the operating system's random source. */
int ripple_cpid_generate(ripple_cpid_t *out);
/* Parse exactly `len` bytes of canonical UUID text (either case). The nil UUID
 * is rejected: it cannot name a change. */
int ripple_cpid_parse(const char *s, size_t len, ripple_cpid_t *out);
/* Write the canonical text and a NUL into out (RIPPLE_CPID_STRLEN + 1 bytes). */
void ripple_cpid_format(const ripple_cpid_t *id, char *out);
int ripple_cpid_equal(const ripple_cpid_t *a, const ripple_cpid_t *b);
/* True for the all-zero UUID, which libripple uses to mean "no CPID". */
int ripple_cpid_is_nil(const ripple_cpid_t *id);

/* ---------------------------------------------------------------------------
 * Trace contexts
 *
 * A context is the CPID of an object's latest change plus up to N ancestor
 * CPIDs, nearest first, without duplicates and never containing the CPID
 * itself. N is fixed per cluster (a tracer setting, default 10) and can never
 * exceed RIPPLE_ANC_MAX, so a context's encoded size is bounded.
 *
 * A context whose cpid is nil is "absent". Zero-initialising a ripple_ctx_t
 * gives an absent context.
 * ------------------------------------------------------------------------- */

#define RIPPLE_ANC_MAX 32
#define RIPPLE_ANC_DEFAULT 10

/* The longest encoding: "1;" cpid (";" cpid ("," cpid)*)? for RIPPLE_ANC_MAX. */
#define RIPPLE_CTX_STRMAX (2 + RIPPLE_CPID_STRLEN + RIPPLE_ANC_MAX * (RIPPLE_CPID_STRLEN + 1))

typedef struct ripple_ctx {
  ripple_cpid_t cpid;
  uint32_t nanc;
  ripple_cpid_t anc[RIPPLE_ANC_MAX];
} ripple_ctx_t;

int ripple_ctx_is_set(const ripple_ctx_t *ctx);
/* True when both have the same CPID and the same ancestors in the same order. */
int ripple_ctx_equal(const ripple_ctx_t *a, const ripple_ctx_t *b);

/* Encode to the text form used for annotations, HTTP headers (Ripple-Context),
 * log fields and the environment (RIPPLE_CONTEXT). Writes at most `cap` bytes
 * including the NUL; RIPPLE_ERANGE if that is not enough (RIPPLE_CTX_STRMAX + 1
 * always is). *len, if not NULL, receives the length without the NUL. */
int ripple_ctx_encode(const ripple_ctx_t *ctx, char *buf, size_t cap, size_t *len);

/* Decode `len` bytes. Surrounding ASCII white space is ignored; anything else
 * that is not exactly the documented format is RIPPLE_EBADCTX (or
 * RIPPLE_EVERSION for a format version we do not know), and *out is then left
 * absent. A list longer than max_anc is cut to its first max_anc entries
 * (clusters may lower N); a list longer than RIPPLE_ANC_MAX is malformed. */
int ripple_ctx_decode(const char *s, size_t len, uint32_t max_anc, ripple_ctx_t *out);

/* ---------------------------------------------------------------------------
 * Contexts on Kubernetes objects
 *
 * The context lives in one annotation whose key depends on the object's kind:
 * "cpid.ripple.dev/<kind in lower case>". A key per kind matters: controllers
 * copy annotations between kinds (the Deployment controller copies every
 * Deployment annotation onto its ReplicaSets), and a copy must never collide
 * with the object's own context. Objects are JSON text; `kind` may be NULL to
 * take it from the object's "kind" field (list items from the API server have
 * none, so pass it then).
 * ------------------------------------------------------------------------- */

#define RIPPLE_ANNOTATION_PREFIX "cpid.ripple.dev/"
#define RIPPLE_ANNOTATION_KEYMAX 80

/* Write the annotation key for a kind ("Deployment" -> cpid.ripple.dev/deployment).
 * RIPPLE_EINVAL if the kind cannot form a valid annotation key. */
int ripple_annotation_key(const char *kind, char *out, size_t cap);

/* Read the context of an object. RIPPLE_ENOENT when the annotation is absent,
 * RIPPLE_EBADCTX/RIPPLE_EVERSION when its value is malformed, RIPPLE_EJSON when
 * the document is not a JSON object or has no usable kind. */
int ripple_object_get_ctx(const char *json, size_t len, const char *kind, uint32_t max_anc,
                          ripple_ctx_t *out);

/* Return a copy of the object (*out, ripple_free it) with the context set and
 * every other field kept: same keys in the same order, same values. Numbers keep
 * their value (integers exactly, reals to double precision). */
int ripple_object_set_ctx(const char *json, size_t len, const char *kind, const ripple_ctx_t *ctx,
                          char **out, size_t *out_len);

/* Return a JSON Patch (RFC 6902) that sets the context on the given object, as
 * an admission webhook answers. *changed is 0 and the patch is "[]" when the
 * object already carries exactly this context, so decisions stay idempotent. */
int ripple_object_patch_ctx(const char *json, size_t len, const char *kind, const ripple_ctx_t *ctx,
                            char **out, size_t *out_len, int *changed);

/* ---------------------------------------------------------------------------
 * Records: what a tracer emits
 * ------------------------------------------------------------------------- */

/* Which object a record is about. Any field may be NULL. */
typedef struct ripple_objref {
  const char *api_version;
  const char *kind;
  const char *namespace_;
  const char *name;
  const char *uid;
} ripple_objref_t;

/* "cpid was made from sources": an edge source -> cpid for each source in the
 * trace server's merge graph. A root change has no sources.
 *
 * trigger (may be NULL, ntrigger 0: not known) names the sources that caused
 * the write, a subset of sources: the newest change the writer merged. The
 * other sources were carried along (the object's own earlier context, older
 * related changes). A change's own cascade follows trigger edges only; every
 * source still counts for what is reachable (docs/api.md). */
typedef struct ripple_mergelog {
  ripple_cpid_t cpid;
  const ripple_cpid_t *sources;
  size_t nsources;
  int64_t time_ns;
  const char *component;         /* may be NULL */
  const ripple_objref_t *object; /* may be NULL */
  const ripple_cpid_t *trigger;  /* may be NULL */
  size_t ntrigger;
} ripple_mergelog_t;

typedef struct ripple_attr {
  const char *key;
  const char *value;
} ripple_attr_t;

/* A unit of work inside a component, caused by the change `cpid`. Span ids are
 * 64-bit random numbers (16 hex digits in text); parent_id 0 means none. */
typedef struct ripple_span_rec {
  ripple_cpid_t cpid;
  uint64_t span_id;
  uint64_t parent_id;
  const char *service;
  const char *name;
  int64_t start_ns;
  int64_t end_ns;
  const ripple_attr_t *attrs;
  size_t nattrs;
} ripple_span_rec_t;

/* Where records go. Callbacks run on the thread that produced the record and
 * must not block: the shipper's sink only enqueues. Either callback may be NULL. */
typedef struct ripple_sink {
  void (*mergelog)(void *ud, const ripple_mergelog_t *ml);
  void (*span)(void *ud, const ripple_span_rec_t *sp);
  void *ud;
} ripple_sink_t;

/* Encode records as the trace server's JSON wire objects (docs/api.md). */
int ripple_mergelog_to_json(const ripple_mergelog_t *ml, char **out, size_t *out_len);
int ripple_span_to_json(const ripple_span_rec_t *sp, char **out, size_t *out_len);

/* ---------------------------------------------------------------------------
 * Tracer: roots, merges and spans for one component
 * ------------------------------------------------------------------------- */

typedef struct ripple_tracer ripple_tracer_t;

typedef struct ripple_tracer_opts {
  const char *component;  /* who emits: "kubectl", "deployment-controller"; required */
  uint32_t max_ancestors; /* N; 0 means "use RIPPLE_ANC_DEFAULT", see no_ancestors */
  int no_ancestors;       /* set to run with N = 0 (the paper's baseline) */
  ripple_sink_t sink;     /* where mergelogs and spans go; may be all NULL */
  /* Optional hooks for tests and simulations; NULL means the real thing. */
  int64_t (*clock_ns)(void *ud);                  /* wall clock */
  int (*random)(void *ud, void *buf, size_t len); /* random bytes, returns 0 on success */
  void *hook_ud;
} ripple_tracer_opts_t;

typedef struct ripple_tracer_stats {
  uint64_t roots;     /* root contexts started */
  uint64_t merges;    /* ripple_merge calls that produced a context */
  uint64_t mergelogs; /* new CPIDs made by merging (mergelogs emitted, roots excluded) */
  uint64_t reused;    /* merges answered by reusing a CPID that descends from all */
  uint64_t unchanged; /* merges that left the target exactly as it was */
  uint64_t bad_ctx;   /* malformed or unknown-version contexts treated as absent */
  uint64_t cycles;    /* contradictory ancestor lists (no root); merged anew */
  uint64_t spans;     /* spans ended */
} ripple_tracer_stats_t;

int ripple_tracer_new(const ripple_tracer_opts_t *opts, ripple_tracer_t **out);
void ripple_tracer_free(ripple_tracer_t *t);
uint32_t ripple_tracer_max_ancestors(const ripple_tracer_t *t);
void ripple_tracer_stats(const ripple_tracer_t *t, ripple_tracer_stats_t *out);

/* Read an object's context the way a component should: a malformed annotation
 * is counted (stats.bad_ctx), logged once at debug level and reported as
 * RIPPLE_ENOENT, exactly like a missing one. RIPPLE_EJSON still means the
 * object itself could not be read. */
int ripple_tracer_extract(ripple_tracer_t *t, const char *json, size_t len, const char *kind,
                          ripple_ctx_t *out);
/* The same for a context carried as text (a header or an environment variable). */
int ripple_tracer_extract_str(ripple_tracer_t *t, const char *s, size_t len, ripple_ctx_t *out);

/* Start a root context for an operator's change and emit its mergelog (no
 * sources). `obj` may be NULL. */
int ripple_root(ripple_tracer_t *t, const ripple_objref_t *obj, ripple_ctx_t *out);

typedef enum ripple_merge_kind {
  RIPPLE_MERGE_NONE = 0,  /* no context anywhere: *out is absent, nothing to write */
  RIPPLE_MERGE_UNCHANGED, /* the target already descends from every source: keep it */
  RIPPLE_MERGE_REUSED,    /* one CPID descends from all the others: no mergelog */
  RIPPLE_MERGE_NEW,       /* a new CPID was made and its mergelog emitted */
} ripple_merge_kind_t;

/* Decide the context to write on a target object that a component is about to
 * write because it read `sources` (the paper's Algorithm 1). `target` is the
 * object's current context (NULL or absent for a create); absent sources are
 * skipped. A target that already carries the winning CPID is never rewritten,
 * and the answer is idempotent whenever the result's ancestor list could hold
 * every CPID that went in (at most N of them besides the winner, which covers
 * every chain that carries one change): merging the result again with the same
 * sources then returns RIPPLE_MERGE_UNCHANGED. With more distinct inputs than N
 * (N = 0, or an Endpoints object over Pods of many changes) nothing local can
 * remember them all, and a repeat merges anew. `obj` names the target in the
 * mergelog and may be NULL; `how` may be NULL. */
int ripple_merge(ripple_tracer_t *t, const ripple_ctx_t *target, const ripple_ctx_t *const *sources,
                 size_t nsources, const ripple_objref_t *obj, ripple_ctx_t *out,
                 ripple_merge_kind_t *how);

const char *ripple_merge_kind_name(ripple_merge_kind_t how);

/* ---------------------------------------------------------------------------
 * Spans
 * ------------------------------------------------------------------------- */

typedef struct ripple_span ripple_span_t;

/* Start a root span of the tracer's component for work caused by ctx's CPID. */
int ripple_span_start(ripple_tracer_t *t, const ripple_ctx_t *ctx, const char *name,
                      ripple_span_t **out);
/* Start a child span: same CPID, parent_id = the parent's span id. */
int ripple_span_start_child(const ripple_span_t *parent, const char *name, ripple_span_t **out);
/* Copy an attribute onto the span (a later value for the same key wins). */
int ripple_span_set_attr(ripple_span_t *s, const char *key, const char *value);
/* Override the start time (for work whose cause happened earlier). */
void ripple_span_set_start(ripple_span_t *s, int64_t start_ns);
uint64_t ripple_span_id(const ripple_span_t *s);
/* End the span at the tracer's clock, hand it to the sink and free it. */
void ripple_span_end(ripple_span_t *s);
/* Free a span without emitting it (an aborted unit of work). */
void ripple_span_discard(ripple_span_t *s);

/* ---------------------------------------------------------------------------
 * Shipper: background delivery to the trace server
 *
 * Records are copied into a bounded queue and sent from a background thread in
 * batches (POST /v1/mergelogs, POST /v1/spans). Failures are retried with
 * exponential backoff; while the server is down or slow the queue fills and
 * further records are dropped and counted. Enqueueing never waits on the
 * network. A 4xx answer other than 408 and 429 means the batch can never be
 * accepted: it is dropped and counted as rejected.
 * ------------------------------------------------------------------------- */

typedef struct ripple_shipper ripple_shipper_t;

typedef struct ripple_shipper_opts {
  const char *url;            /* trace server base URL, e.g. http://127.0.0.1:7480; required */
  const char *bearer_token;   /* optional writer token */
  const char *ca_file;        /* optional CA bundle for https */
  size_t queue_capacity;      /* records; default 65536 */
  size_t batch_max;           /* records per request; default 1024 */
  uint32_t flush_interval_ms; /* send a partial batch after this; default 200 */
  uint32_t timeout_ms;        /* per request; default 5000 */
  uint32_t backoff_min_ms;    /* first retry delay; default 100 */
  uint32_t backoff_max_ms;    /* cap; default 10000 */
} ripple_shipper_opts_t;

typedef struct ripple_shipper_stats {
  uint64_t enqueued;  /* records accepted into the queue */
  uint64_t sent;      /* records the server acknowledged (2xx) */
  uint64_t dropped;   /* records dropped because the queue was full */
  uint64_t rejected;  /* records in batches the server refused for good (4xx) */
  uint64_t abandoned; /* records still queued when the shipper was freed */
  uint64_t requests;  /* HTTP requests made */
  uint64_t failures;  /* requests that failed and were retried */
  uint64_t queued;    /* records waiting now */
} ripple_shipper_stats_t;

int ripple_shipper_new(const ripple_shipper_opts_t *opts, ripple_shipper_t **out);
/* A sink that enqueues into this shipper; pass it in ripple_tracer_opts_t. */
ripple_sink_t ripple_shipper_sink(ripple_shipper_t *s);
int ripple_shipper_enqueue_mergelog(ripple_shipper_t *s, const ripple_mergelog_t *ml);
int ripple_shipper_enqueue_span(ripple_shipper_t *s, const ripple_span_rec_t *sp);
/* A detail for POST /v1/details (docs/api.md, "Details"): one JSON object,
 * len bytes, copied. The watch agent sends what each write changed and
 * Kubernetes Events this way. Queued, counted and dropped like any record. */
int ripple_shipper_enqueue_detail(ripple_shipper_t *s, const char *json, size_t len);
/* Wait until everything enqueued so far is sent or given up, at most timeout_ms.
 * RIPPLE_ETIMEDOUT if records are still waiting. */
int ripple_shipper_flush(ripple_shipper_t *s, uint32_t timeout_ms);
void ripple_shipper_stats(ripple_shipper_t *s, ripple_shipper_stats_t *out);
/* Flush for at most timeout_ms, stop the thread, count what is left as
 * abandoned, free everything. */
void ripple_shipper_free(ripple_shipper_t *s, uint32_t timeout_ms);

/* ---------------------------------------------------------------------------
 * Logging
 *
 * One line per event, logfmt, on stderr by default:
 *   ts=2026-11-21T22:06:30.123456789Z level=info component=shipper
 *   event=batch_failed cpid=3f2b8e4c-... status=503 retry_in_ms=400
 * (one line; wrapped here). The CPID field comes from the calling thread's
 * current context, so a controller sets it once per reconcile.
 * ------------------------------------------------------------------------- */

typedef enum ripple_log_level {
  RIPPLE_LOG_DEBUG = 0,
  RIPPLE_LOG_INFO,
  RIPPLE_LOG_WARN,
  RIPPLE_LOG_ERROR,
} ripple_log_level_t;

/* Receives each finished line (without newline). Must be thread-safe. */
typedef void (*ripple_log_fn)(void *ud, ripple_log_level_t level, const char *line);

/* Route lines elsewhere (NULL restores stderr) and set the minimum level. Call
 * before starting threads that log. */
void ripple_log_setup(const char *component, ripple_log_level_t min_level, ripple_log_fn fn,
                      void *ud);
/* Parse "debug", "info", "warn" or "error". */
int ripple_log_level_parse(const char *s, ripple_log_level_t *out);

/* Set the calling thread's current context (NULL clears it). The pointer is
 * copied from, not kept. */
void ripple_log_set_ctx(const ripple_ctx_t *ctx);

/* Log one event. `fmt` gives further key=value pairs, already formatted, e.g.
 * ripple_log(RIPPLE_LOG_INFO, "synced", "replicas=%d", n). Values with spaces must
 * be quoted by the caller with ripple_log_quote(). */
void ripple_log(ripple_log_level_t level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write `s` as a logfmt value into out (quoted and escaped when needed). */
void ripple_log_quote(const char *s, char *out, size_t cap);

/* ---------------------------------------------------------------------------
 * Time
 * ------------------------------------------------------------------------- */

int64_t ripple_now_ns(void);
/* RFC 3339 UTC with nanoseconds: 2026-11-21T22:06:30.123456789Z (30 bytes + NUL,
 * so `out` holds at least RIPPLE_TIME_STRLEN + 1 bytes). */
#define RIPPLE_TIME_STRLEN 30
void ripple_time_format(int64_t ns, char *out);
/* Parse RFC 3339 (any offset, 0-9 fraction digits) into ns since the epoch. */
int ripple_time_parse(const char *s, size_t len, int64_t *out);
/* Parse a duration as people write it on command lines and in files: a
 * non-negative number with ms, s (the default), m, h or d: "250ms", "30",
 * "1.5m", "7d". RIPPLE_EINVAL for anything else. */
int ripple_duration_parse(const char *s, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* RIPPLE_RIPPLE_H */
