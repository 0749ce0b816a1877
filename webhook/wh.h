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
 * This is the engine's header for the program (main.c, http.c, the peers'
 * files) and its tests. The engine's own parts share core.h and declare
 * their entry points each in a header of its own (core.h draws the calls:
 * top to bottom, never back up).
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

#include "metrics.h"
#include "owners.h"
#include "ripple/ripple.h"
#include "ripple/rules.h"
#include "ripplex/sbuf.h"
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
  /* --context-key-file: the key of the contexts' MACs (ctxmac.h), copied;
   * NULL: contexts are unsigned and every stored one is taken. */
  const char *context_key;
  size_t context_key_len;
  /* --owner-kind: custom resources followed as owners (owners.h); NULL: the
   * built-in kinds only. Borrowed. */
  const wh_owner_kinds_t *owner_kinds;
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

/* kube-apiserver's own trace context (its tracing configuration, docs/otlp.md,
 * "kube-apiserver's own traces"): the W3C `traceparent` header of a /mutate
 * call, whose parent-id is the API server's "HTTP POST" client span of this
 * very call. Outside input: wh_apiserver_tp takes the header's value (NULL:
 * none; several headers: pass WH_APISERVER_TP_MANY) and returns it when it is
 * exactly a W3C version-00 traceparent (55 characters, lower-case hex,
 * non-zero ids), else NULL, counting malformed ones. wh_handle_call answers
 * as wh_handle_as and records a valid, sampled one's ids on the write's span
 * (attributes apiserverTraceId, apiserverSpanId); nothing else depends on
 * it: not the CPID, not the span's parent. */
extern const char WH_APISERVER_TP_MANY[];
const char *wh_apiserver_tp(wh_t *w, const char *header);
int wh_handle_call(wh_t *w, wh_certainty_t how, const char *apiserver_tp, const char *body,
                   size_t len, sbuf_t *out);

/* The engine's clock: the options' clock_ns, or the real one (ns since the
 * epoch). */
int64_t wh_now(wh_t *w);

#endif
