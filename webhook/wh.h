/*
 * wh.h - the webhook's engine: from an AdmissionReview body to its answer.
 *
 * The engine is pure logic around libripple: it decodes the review
 * (review.c), decides whether the write is a root change or a controller's
 * (users.c), gathers the contexts of related objects (sources.c, through a
 * text lookup that the informers implement in the program and hand-built
 * objects in tests), merges them with ripple_merge (decide.c), answers with
 * a JSON Patch, and emits one span per admitted write. It never talks to the
 * network: records go to a sink (the shipper's in the program), which only
 * enqueues.
 *
 * Memory: wh_new copies the options it keeps, except the lookup's ud, the
 * rules and the users table, which are borrowed and must outlive the engine.
 * Threads: wh_handle may be called from many threads at once.
 */
#ifndef RIPPLE_WEBHOOK_WH_H
#define RIPPLE_WEBHOOK_WH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "memo.h"
#include "metrics.h"
#include "review.h"
#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "ripplex/sbuf.h"
#include "traceparent.h"
#include "users.h"

/* Where related objects come from: the informers in the program (cache.h),
 * hand-built objects served the same way in tests. The lookup hands over an
 * object's JSON text, borrowed for the call (the informers' own text: no
 * tree, no copy), and the engine builds only what it reads of it
 * (objtext.c). Objects without "kind" or "apiVersion" (list items) are given
 * the kind asked for. Any member may be NULL (nothing found). */
typedef void (*wh_text_fn)(void *ud, const char *json, size_t len);
typedef struct wh_text_lookup {
  /* fn once with kind ns/name, when it exists. */
  void (*get)(void *ud, const char *kind, const char *ns, const char *name, wh_text_fn fn,
              void *fud);
  /* The engine met a kind it may read again (an owner's, custom resources
   * included): start keeping it. Must not block. */
  void (*want)(void *ud, const char *api_version, const char *kind);
  /* Objects of kind whose ownerReferences name uid. */
  void (*by_owner)(void *ud, const char *kind, const char *uid, wh_text_fn fn, void *fud);
  /* Objects of kind in ns whose labels match selector ("a=b,c=d"). */
  void (*select)(void *ud, const char *kind, const char *ns, const char *selector, wh_text_fn fn,
                 void *fud);
  void *ud;
} wh_text_lookup_t;

#define WH_EXCLUDE_MAX 32
/* Distinct source CPIDs merged at most (an Endpoints of a Service over Pods
 * of many changes): the first ones are merged, the rest counted. */
#define WH_SOURCES_MAX 64

typedef struct wh_opts {
  uint32_t max_ancestors;                 /* N; 0: RIPPLE_ANC_DEFAULT */
  const char *exclude_ns[WH_EXCLUDE_MAX]; /* namespaces left alone (copied) */
  size_t nexclude_ns;
  int deployment_status_ctx;    /* let deployments/status writes change the context (see docs) */
  int traceparent;              /* --traceparent: KEP-5915's annotation too (traceparent.c) */
  int log_requests;             /* one debug line per request (--log-level debug) */
  ripple_sink_t sink;           /* where mergelogs and spans go */
  wh_text_lookup_t text_lookup; /* related objects; all NULL: none */
  const ripple_rules_t *rules;  /* NULL: the built-in rules */
  const wh_users_t *users;      /* extra controller patterns; may be NULL */
  /* For tests: a clock (ns since the epoch) and a random source for the tracer. */
  int64_t (*clock_ns)(void *ud);
  int (*random)(void *ud, void *buf, size_t len);
  void *hook_ud;
} wh_opts_t;

typedef struct wh wh_t;

int wh_new(const wh_opts_t *o, wh_t **out);
void wh_free(wh_t *w);
wh_metrics_t *wh_metrics(wh_t *w);
ripple_tracer_t *wh_tracer(wh_t *w);

/* Resolve what waits for the informers (pending.c): bindings whose Pod was
 * not known when they were admitted. The program calls it every
 * WH_TICK_MS from a thread of its own; tests call it directly. */
#define WH_TICK_MS 50
void wh_tick(wh_t *w);

/* Answer one request body. Returns the HTTP status: 200 with the
 * AdmissionReview answer in out, or 400 with a JSON {"error": ...} that says
 * what was wrong. Never fails otherwise: an internal error still allows the
 * write, unchanged. */
int wh_handle(wh_t *w, const char *body, size_t len, sbuf_t *out);

/* How sure the replica is of what it remembers and reads (docs/webhook.md,
 * "Several replicas"). WH_DECIDER: this replica decides every write (the
 * only one, or the Lease's holder). WH_UNCERTAIN: another replica decides,
 * and it could not be reached: what this one remembers and what its
 * informers say of related objects may miss that replica's latest
 * decisions, so a controller's write that would take a context from a
 * related object, a held context or a remembered deletion gets a root of its
 * own marked cause unknown (span attribute causeUnknown) instead of a
 * guessed relation. Writes that need nothing but the request itself (a
 * person's root, a status write keeping the object's own context, a binding
 * taking its Pod's, read by uid) are decided as always. */
typedef enum wh_certainty { WH_DECIDER = 0, WH_UNCERTAIN = 1 } wh_certainty_t;
int wh_handle_as(wh_t *w, wh_certainty_t how, const char *body, size_t len, sbuf_t *out);

/* ---- parts shared by the engine's files ---- */

/* "Kind/name" of a controlling owner: a kind and a name of up to 253 bytes. */
#define WH_OWNER_MAX 320

/* What the engine decided for one write (decide.c). */
typedef struct wh_decision {
  int traced;       /* 0: nothing to do (excluded, no context anywhere) */
  const char *skip; /* why not traced, for the debug log */
  int root;         /* a root change */
  ripple_ctx_t ctx; /* the context of the write */
  ripple_merge_kind_t how;
  char *patch; /* a JSON Patch to return, or NULL; ripple_free it */
  size_t patch_len;
  int bad_annotation; /* the object's own annotation was malformed */
  int spontaneous;    /* a controller's write with no traced source: a root of its own */
  int cause_unknown;  /* WH_UNCERTAIN: a controller's write whose cause this replica cannot
                       * know for sure: a root of its own */
  int pending;        /* a binding whose Pod is not known yet: its span waits (pending.c) */
  int held;           /* ctx is held in memory, not written to the object (decide.c) */
  int wrote_ctx;      /* patch sets ctx on the object (not a held one, not a removal) */
  uint64_t parent_id; /* the span's parent: a client's span (traceparent.c), or 0 */
  /* The span's id, chosen before the answer so the answer's audit annotation
   * can name it (the trace server joins audit events to spans by it); 0: one
   * is chosen when the span is emitted. */
  uint64_t span_id;
  /* --traceparent (traceparent.c): the patch sets one; the write's own (or its
   * owner's copy) was kept; the root is the client's trace; the client's was
   * malformed. */
  int tp_written, tp_kept, tp_root, tp_invalid;
  int has_last; /* a delete of an object that had a context: last is its CPID */
  ripple_cpid_t last;
  int64_t start_ns; /* span start: when the write's cause was admitted */
  char kind[64];    /* kind of the object the context belongs to */
  char uid[64];     /* the object's uid ("" when unknown) */
  char rv[64];      /* the resourceVersion the write is based on ("" on create) */
  char service[WH_SERVICE_MAX];
  char owner[WH_OWNER_MAX]; /* "Kind/name" of the object's controlling owner ("": none known) */
} wh_decision_t;

/* Bindings waiting for their Pod (pending.c). */
#define WH_PENDING_MAX 1024
#define WH_PENDING_TTL_NS (10 * 1000000000LL)
typedef struct wh_pending wh_pending_t;
int wh_pending_new(wh_pending_t **out);
void wh_pending_free(wh_pending_t *p);

struct wh {
  ripple_tracer_t *tracer;
  wh_memo_t *memo;
  wh_pending_t *pending;
  ripple_rules_t *own_rules; /* when none were given */
  const ripple_rules_t *rules;
  wh_opts_t o;
  char *exclude_ns[WH_EXCLUDE_MAX];
  ripple_sink_t down; /* the sink the engine's records go to */
  wh_metrics_t m;
  int metrics_ok; /* m's mutex was initialised */
};

int64_t wh_now(wh_t *w);
/* The span of one admitted write (engine.c). */
void wh_emit_span(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t end);
/* Queue a binding's span until its Pod is known (pending.c). */
void wh_pending_add(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t now);
/* Decide for a decoded review at time now; d is filled in. RIPPLE_OK, or an
 * error after which the write is allowed unchanged. */
int wh_decide(wh_t *w, const wh_review_t *r, wh_certainty_t how, int64_t now, wh_decision_t *d);
void wh_decision_free(wh_decision_t *d);
/* "Kind/name" of obj's controlling owner (the ownerReferences entry with
 * controller: true) into out (cap bytes): 1, or 0 with out untouched when
 * there is none or it does not fit. */
int wh_owner_of(const json_t *obj, char *out, size_t cap);

/* Read an object's own context from a tree: RIPPLE_OK, RIPPLE_ENOENT (no
 * annotation) or RIPPLE_EBADCTX/RIPPLE_EVERSION (malformed). */
int wh_obj_ctx(const json_t *obj, const char *kind, uint32_t max_anc, ripple_ctx_t *out);
/* The JSON Patch that gives obj (a tree) the context under kind's key, through
 * ripple_object_patch_ctx on the object's metadata only. *changed 0: none. */
int wh_obj_patch(const json_t *obj, const char *kind, const ripple_ctx_t *ctx, char **patch,
                 size_t *len, int *changed);
/* A patch removing kind's annotation (a malformed one nothing replaces). */
int wh_obj_patch_remove(const char *kind, char **patch, size_t *len);

/* Related objects from their text (objtext.c). */
typedef struct wh_span {
  const char *p; /* the member's value in the text, NULL when absent */
  size_t n;
} wh_span_t;
/* Give obj "kind" and "apiVersion" when it lacks them (list items do). */
void wh_ensure_kind(json_t *obj, const char *kind);
/* One pass over the members of the JSON object text p[0..n): out[i] is the
 * value of the first member named keys[i]. RIPPLE_EJSON if p is not an
 * object. */
int wh_text_fields(const char *p, size_t n, const char *const *keys, size_t nkeys, wh_span_t *out);
/* A stand-in for a downstream object: kind, apiVersion and metadata's name,
 * namespace, uid, resourceVersion, labels, ownerReferences and kind's context
 * annotation, as in the whole object; nothing else. *out is a new tree. */
int wh_text_standin(const char *json, size_t len, const char *kind, json_t **out);
/* What identifies a downstream object's context, read from its text alone:
 * its name, namespace and uid and its context annotation's value (ctx NULL when
 * absent). RIPPLE_EJSON when any of it is not plain (escapes, other types,
 * overlong): then only a stand-in reads it right. */
typedef struct wh_ident {
  char name[256], ns[64], uid[64];
  const char *ctx; /* into the text */
  size_t ctx_len;
} wh_ident_t;
int wh_text_ident(const char *json, size_t len, const char *kind, wh_ident_t *out);
/* The whole object as a tree with its kind (wh_ensure_kind), or NULL. */
json_t *wh_text_tree(const char *json, size_t len, const char *kind);
/* Reads of related objects through the options' text_lookup, which may lack
 * any member (sources.c). A get without a name finds nothing. */
void wh_lookup_get(const wh_t *w, const char *kind, const char *ns, const char *name, wh_text_fn fn,
                   void *fud);
void wh_lookup_by_owner(const wh_t *w, const char *kind, const char *uid, wh_text_fn fn, void *fud);
void wh_lookup_select(const wh_t *w, const char *kind, const char *ns, const char *selector,
                      wh_text_fn fn, void *fud);

/* The contexts of the objects related to the write (sources.c). */
typedef struct wh_sources {
  ripple_ctx_t ctx[WH_SOURCES_MAX];
  size_t n;
  size_t skipped; /* related objects beyond WH_SOURCES_MAX */
  /* A related object's latest change is not known here (sources.c,
   * "stale_annotation"): the write's cause cannot be known for sure. */
  int uncertain;
} wh_sources_t;
void wh_sources_gather(wh_t *w, const wh_review_t *r, const json_t *obj, const char *kind,
                       int64_t now, wh_sources_t *s);
/* The context of a related object: the webhook's recent memory first, then
 * the object's annotation. RIPPLE_ENOENT when it has none. */
int wh_related_ctx(wh_t *w, const json_t *obj, const char *kind, int64_t now, ripple_ctx_t *out);
/* The current context of obj's controlling owner (any kind), confirmed by the
 * relation rules; the owner's uid goes to uid (cap bytes) whenever obj has a
 * controlling owner. RIPPLE_ENOENT when there is no owner or no context. */
int wh_owner_ctx(wh_t *w, const json_t *obj, const char *ns, int64_t now, char *uid, size_t cap,
                 ripple_ctx_t *out);

/* Generation stamps (stamp.c): the generation a context is about, under
 * "<context key>.generation". */
int wh_stamp_key(const char *kind, char *out, size_t cap);
/* metadata.generation, 0 when absent. */
int64_t wh_generation(const json_t *obj);
/* The stamp of kind's context on obj, 0 when absent or malformed. */
int64_t wh_stamp(const json_t *obj, const char *kind);
/* obj's generation is past about (a graceful delete's extra one allowed). */
int wh_gen_behind(const json_t *obj, int64_t about);
/* obj's context is older than its spec: the stamp is behind its generation
 * (with no stamp, a Deployment past generation 1). */
int wh_ctx_stale(const json_t *obj, const char *kind);
/* The generation the write's object has once stored: 1 for a create, the old
 * one plus one for a spec change, the old one for a subresource; 0 when not
 * known. */
int64_t wh_next_generation(const wh_review_t *r);
/* The stamp a write should leave on its object (the generation it will have
 * once stored), 0 for none. */
int64_t wh_stamp_want(const wh_review_t *r, const char *kind);
/* Add setting the stamp to want to d's patch (or make one), unless the
 * object has it already. */
int wh_stamp_patch(const wh_review_t *r, wh_decision_t *d, int64_t want);

/* Deletes (deletes.c): the span's context is the delete's cause. */
int wh_decide_delete(wh_t *w, const wh_review_t *r, wh_actor_t actor, wh_certainty_t how,
                     int64_t now, wh_decision_t *d);
/* A root context for d (a person's change, or a controller's write that has
 * no traced source), its mergelog sent through the tracer. */
int wh_decide_new_root(wh_t *w, const wh_review_t *r, wh_decision_t *d);
/* A root for a write whose cause this replica cannot know (WH_UNCERTAIN). */
int wh_decide_unknown(wh_t *w, const wh_review_t *r, int64_t now, wh_decision_t *d);
/* The object's own context in this write; RIPPLE_EBADCTX (and d's
 * bad_annotation set) when malformed, RIPPLE_ENOENT when absent. */
int wh_own_ctx(wh_t *w, const json_t *obj, const char *kind, wh_decision_t *d, ripple_ctx_t *out);

/* KEP-5915's traceparent (traceparent.c), with --traceparent only. The
 * client's trace context in a person's write to a main resource: RIPPLE_OK
 * with *tp when the write sets a well-formed one that can be a CPID,
 * RIPPLE_ENOENT when it sets none (or the flag is off), RIPPLE_EBADCTX (and
 * d->tp_invalid) when it is malformed. */
int wh_traceparent_client(const wh_t *w, const wh_review_t *r, wh_decision_t *d,
                          wh_traceparent_t *tp);
/* After a decision that wrote a context (d->wrote_ctx): the traceparent of
 * its CPID into the same patch, unless the rules keep the object's own. */
int wh_traceparent_patch(const wh_t *w, const wh_review_t *r, wh_decision_t *d);

/* Make mergelogs from the tracer carry the writer's name, or none at all for
 * a dry run: per thread, for the duration of one decision. */
void wh_sink_scope(const char *component, int quiet);

#endif
