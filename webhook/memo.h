/*
 * memo.h - what the webhook remembers between requests, in fixed memory.
 *
 * causes: CPID -> when a write carrying it was first admitted. A span's start
 *   is the admission time of its cause, so the trace shows how long each
 *   component took to react.
 * recent: object (kind, namespace, name, uid) -> the context the webhook last
 *   gave it. The informers' caches lag the API server by a few milliseconds,
 *   and a controller often writes the next object before they catch up; a
 *   write that cannot carry an annotation (a deployments/scale) is remembered
 *   here only. Entries older than the TTL are ignored, so the informers stay
 *   the source of truth.
 * held: object uid -> the context of an object whose annotation the webhook
 *   must not change after its creation (a Deployment: its controller copies
 *   its annotations onto its ReplicaSet and writes the ReplicaSet again
 *   whenever they differ), kept until replaced, with the generation the
 *   object has once that write is stored (0: not known), so that a newer
 *   spec change nobody held is not hidden by it (stamp.c).
 * services: a Service (namespace, name) -> its spec.selector, when this
 *   webhook admitted the Service moments ago (recent's TTL). The endpoints
 *   controllers write its Endpoints and EndpointSlices within milliseconds,
 *   often before the webhook's informer has the Service; a stand-in of it
 *   from here lets those writes still descend from the Service's change
 *   (sources.c). A delete forgets it.
 * deleting: object -> the CPID of the change that is deleting it (a person's
 *   delete, or the cause of a controller's), for the deletes that follow from
 *   it: the garbage collector's of its dependents, the kubelet's final delete
 *   of a Pod, the namespace controller's of a namespace's contents.
 *
 * A remembered context becomes a source of another write, so its key must
 * name one object and nothing else (a false key merges unrelated changes):
 *   - an object is keyed by its name, never by "" (a create with
 *     generateName has no name at admission: such creates are not
 *     remembered at all);
 *   - the uid is kept with the entry when known, and a read that knows the
 *     uid too gets nothing when they differ (a new object of the same name);
 *   - a delete forgets the object's entry (wh_memo_recent_forget), so a
 *     re-created object of the same name never inherits its predecessor's;
 *   - deleting is keyed by uid, except for Namespaces, keyed by name: a
 *     namespace cannot be created again until its deletion is complete.
 *
 * The tables are open-addressed, of a fixed size set at creation, and
 * overwrite their oldest entries: no allocation after creation, one mutex
 * each (held for a few hundred nanoseconds). Strings are copied.
 */
#ifndef RIPPLE_WEBHOOK_MEMO_H
#define RIPPLE_WEBHOOK_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

typedef struct wh_memo wh_memo_t;

typedef struct wh_memo_opts {
  size_t causes, recent, held, deleting,
      services; /* entries of each table (rounded up to a power of 2) */
  int64_t recent_ttl_ns, held_ttl_ns, deleting_ttl_ns;
} wh_memo_opts_t;

int wh_memo_new(const wh_memo_opts_t *o, wh_memo_t **out);
void wh_memo_free(wh_memo_t *m);

/* Remember t for id unless an earlier time is known. */
void wh_memo_cause_put(wh_memo_t *m, const ripple_cpid_t *id, int64_t t);
/* The time for id; 0 when unknown. */
int64_t wh_memo_cause_get(wh_memo_t *m, const ripple_cpid_t *id);

/* Remember ctx for the object; nothing when name is empty. uid may be "" or
 * NULL (a create: the API server gives the uid after admission). */
void wh_memo_recent_put(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                        const char *uid, const ripple_ctx_t *ctx, int64_t now);
/* RIPPLE_OK and *out when the object is known, younger than the TTL and of
 * the same uid (when both are known); else RIPPLE_ENOENT. */
int wh_memo_recent_get(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                       const char *uid, int64_t now, ripple_ctx_t *out);
void wh_memo_recent_forget(wh_memo_t *m, const char *kind, const char *ns, const char *name);
/* The same, with the generation of the object the context is about (0: not
 * known): a recent context is the object's latest only while the object is
 * still at that generation (stamp.c). */
void wh_memo_recent_put_gen(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                            const char *uid, const ripple_ctx_t *ctx, int64_t gen, int64_t now);
int wh_memo_recent_get_gen(wh_memo_t *m, const char *kind, const char *ns, const char *name,
                           const char *uid, int64_t now, ripple_ctx_t *out, int64_t *gen);

/* The context held for the object of this uid (nothing when uid is empty),
 * about generation gen of it. */
void wh_memo_held_put(wh_memo_t *m, const char *uid, const ripple_ctx_t *ctx, int64_t gen,
                      int64_t now);
/* gen (may be NULL) receives the entry's generation. */
int wh_memo_held_get(wh_memo_t *m, const char *uid, int64_t now, ripple_ctx_t *out, int64_t *gen);

/* Remember the selector (a JSON object of strings, at most
 * WH_MEMO_SELECTOR_MAX bytes as text; anything else is not remembered) of
 * the Service ns/name. */
#define WH_MEMO_SELECTOR_MAX 512
void wh_memo_service_put(wh_memo_t *m, const char *ns, const char *name, const json_t *selector,
                         int64_t now);
void wh_memo_service_forget(wh_memo_t *m, const char *ns, const char *name);
/* A stand-in of the Service ns/name remembered younger than the TTL: kind,
 * apiVersion, metadata.namespace and name, spec.selector (a new reference);
 * NULL when none is. */
json_t *wh_memo_service_standin(wh_memo_t *m, const char *ns, const char *name, int64_t now);

/* The change deleting the object with this uid (or the Namespace of this
 * name: kind "Namespace", uid NULL). */
void wh_memo_deleting_put(wh_memo_t *m, const char *kind, const char *name, const char *uid,
                          const ripple_ctx_t *ctx, int64_t now);
int wh_memo_deleting_get(wh_memo_t *m, const char *kind, const char *name, const char *uid,
                         int64_t now, ripple_ctx_t *out);

/* Handing over to the next decider (docs/webhook.md, "Several replicas"):
 * what is keyed by something another process can key the same way, as JSON
 * text appended to out: the live held entries, the deletions keyed by uid
 * (a Namespace's, keyed by its name, which is not kept, stay behind) and the
 * causes of the last max_age_ns.
 *   {"v":1,"held":[{"u":UID,"c":CTX,"g":GEN,"t":NS}...],
 *    "deleting":[{"u":UID,"c":CTX,"t":NS}...],"causes":[[CPID,NS]...]}
 * RIPPLE_OK or RIPPLE_ENOMEM. */
int wh_memo_export(wh_memo_t *m, int64_t now, int64_t max_age_ns, sbuf_t *out);
/* Take another replica's export: each entry that is well formed and newer
 * than what this memory has for its key. *taken (may be NULL) counts them.
 * RIPPLE_OK, or RIPPLE_EJSON for a text that is not such an export (nothing
 * is taken then). */
int wh_memo_import(wh_memo_t *m, const char *json, size_t len, uint32_t max_anc, int64_t now,
                   size_t *taken);

#endif
