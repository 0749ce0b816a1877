/*
 * kube.h - the public API of ripple's Kubernetes client (libripple-kube).
 *
 * What client-go's essentials do, in C on libcurl and jansson: configuration
 * the way kubectl reads it (kubeconfig files, contexts, client certificates,
 * tokens, exec credential plugins, in-cluster service accounts), discovery of
 * resources, reads with paging, watches that resume and relist so a consumer
 * loses nothing, informers with a local cache and indexes, and writes (create,
 * update, patches, server-side apply, delete, subresources). See docs/kube.md.
 *
 * Conventions, as in ripple.h:
 *
 *   Errors.  Functions return RIPPLE_OK or a negative RIPPLE_E* code (ripple.h),
 *            or one of the RIPPLE_KUBE_E* codes below for answers of the API
 *            server. When a call fails after talking to the server, the
 *            ripple_kube_status_t it was given (may be NULL) holds the HTTP code,
 *            the Status reason and the server's message, ready for a person.
 *
 *   Memory.  The caller owns what it passes in; the library copies what it
 *            keeps. JSON objects returned through json_t ** are new references
 *            the caller releases with json_decref(). Objects handed to
 *            callbacks are borrowed for the call: json_incref() to keep one.
 *            Handles are released by exactly one _free call.
 *
 *   Threads. A config is immutable once loaded and may be shared. A client may
 *            be used from many threads at once (each call uses its own
 *            connection from a shared pool). A watch or an informer runs its
 *            own thread; its callbacks are called from that thread, one at a
 *            time. An informer's cache may be read from any thread.
 */
#ifndef RIPPLE_KUBE_H
#define RIPPLE_KUBE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Answers of the API server that callers act on. */
enum {
  RIPPLE_KUBE_EHTTP = -100,      /* any other non-2xx answer (see the status) */
  RIPPLE_KUBE_ENOTFOUND = -101,  /* 404 */
  RIPPLE_KUBE_ECONFLICT = -102,  /* 409: resourceVersion conflict, or already exists */
  RIPPLE_KUBE_EGONE = -103,      /* 410: resourceVersion or continue token too old */
  RIPPLE_KUBE_EFORBIDDEN = -104, /* 401 or 403 */
  RIPPLE_KUBE_EINVALID = -105,   /* 422: the object was refused */
  RIPPLE_KUBE_ECONNECT = -106,   /* no answer: connection refused, reset, TLS, timeout */
  RIPPLE_KUBE_ECONFIG = -107,    /* the kubeconfig is unusable (the message says why) */
  RIPPLE_KUBE_ECRED = -108,      /* a credential plugin failed */
};

typedef struct ripple_kube_status {
  long http;         /* HTTP status, 0 if there was no answer */
  char reason[64];   /* Status.reason: "NotFound", "Conflict", "Expired", ... */
  char message[512]; /* Status.message, or what went wrong locally */
} ripple_kube_status_t;

/* Text for a RIPPLE_KUBE_E* or RIPPLE_E* code. */
const char *ripple_kube_strerror(int err);

/* ---------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------- */

typedef struct ripple_kube_config ripple_kube_config_t;

typedef struct ripple_kube_config_opts {
  /* Files to read, merged as kubectl merges $KUBECONFIG (the first file to set
   * a value wins). NULL: $KUBECONFIG, else ~/.kube/config, else in-cluster. */
  const char *kubeconfig;
  const char *context;    /* NULL: current-context */
  const char *namespace_; /* NULL: the context's namespace, else "default" */
  int in_cluster;         /* use the service account, ignore kubeconfig files */
} ripple_kube_config_opts_t;

/* On failure err gets a message naming the file and the field. */
int ripple_kube_config_load(const ripple_kube_config_opts_t *o, ripple_kube_config_t **out,
                            char *err, size_t errcap);
const char *ripple_kube_config_server(const ripple_kube_config_t *c);
const char *ripple_kube_config_namespace(const ripple_kube_config_t *c);
const char *ripple_kube_config_context(const ripple_kube_config_t *c); /* "" in-cluster */
void ripple_kube_config_free(ripple_kube_config_t *c);

/* ---------------------------------------------------------------------------
 * Client and raw requests
 * ------------------------------------------------------------------------- */

typedef struct ripple_kube_client ripple_kube_client_t;

typedef struct ripple_kube_client_opts {
  uint32_t timeout_ms;    /* per request except watches; default 30000 */
  const char *user_agent; /* default "ripple/<version>" */
} ripple_kube_client_opts_t;

int ripple_kube_client_new(const ripple_kube_config_t *cfg, const ripple_kube_client_opts_t *o,
                           ripple_kube_client_t **out);
void ripple_kube_client_free(ripple_kube_client_t *c);

/* One request to a path ("/api/v1/namespaces/default/pods?limit=10"). body may
 * be NULL. On a 2xx *out (if not NULL) is the parsed answer; otherwise the
 * error code matches the status (RIPPLE_KUBE_ENOTFOUND for 404 ...). */
int ripple_kube_request(ripple_kube_client_t *c, const char *method, const char *path,
                        const char *content_type, const char *body, size_t len, json_t **out,
                        ripple_kube_status_t *st);

/* One request whose answer is the caller's to read, whatever its status:
 * for paths that are not Kubernetes objects (a service's proxy). headers are
 * extra "Name: value" lines (a NULL-terminated array, may be NULL; no CR or
 * LF). On RIPPLE_OK an answer came: *status is its HTTP status and *body its
 * bytes, NUL-terminated (*len of them; ripple_free it). Without an answer
 * RIPPLE_KUBE_ECONNECT or RIPPLE_KUBE_ECRED with st saying why. */
int ripple_kube_request_raw(ripple_kube_client_t *c, const char *method, const char *path,
                            const char *const *headers, long *status, char **body, size_t *len,
                            ripple_kube_status_t *st);

/* ---------------------------------------------------------------------------
 * Discovery
 * ------------------------------------------------------------------------- */

typedef struct ripple_kube_resource {
  const char *group;    /* "" for the core group */
  const char *version;  /* "v1" */
  const char *resource; /* plural: "deployments" */
  const char *kind;     /* "Deployment" */
  int namespaced;
} ripple_kube_resource_t;

/* Find a resource as kubectl's arguments name it: "pods", "pod", "po",
 * "deployments.apps", "Deployment", "deployments.v1.apps", a custom resource.
 * Discovery is fetched on first use and cached; an unknown name refreshes the
 * cache once (a CRD may have just been created). *out stays valid as long as
 * the client. */
int ripple_kube_resolve(ripple_kube_client_t *c, const char *name,
                        const ripple_kube_resource_t **out, ripple_kube_status_t *st);
/* Resource by group and kind ("apps", "ReplicaSet"), e.g. from ownerReferences. */
int ripple_kube_resolve_kind(ripple_kube_client_t *c, const char *group, const char *kind,
                             const ripple_kube_resource_t **out, ripple_kube_status_t *st);
/* Every resource the server serves (preferred versions, no subresources),
 * calling fn for each. */
int ripple_kube_resources(ripple_kube_client_t *c,
                          void (*fn)(void *ud, const ripple_kube_resource_t *r), void *ud,
                          ripple_kube_status_t *st);

/* ---------------------------------------------------------------------------
 * Reads
 * ------------------------------------------------------------------------- */

typedef struct ripple_kube_list_opts {
  const char *namespace_;     /* NULL or "": all namespaces (or cluster-scoped) */
  const char *label_selector; /* may be NULL */
  const char *field_selector; /* may be NULL */
  uint32_t page_size;         /* limit per request; 0: 500 */
} ripple_kube_list_opts_t;

int ripple_kube_get(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                    const char *name, json_t **out, ripple_kube_status_t *st);

/* List every object, page by page (an expired continue token restarts the
 * list from the beginning, as client-go does, and fn sees the objects of the
 * fresh list only: on a restart fn is called with obj NULL first, meaning
 * "forget what you got so far"). On success *rv is the list's
 * resourceVersion (a string the caller frees with ripple_free), to start a
 * watch from. */
int ripple_kube_list(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                     const ripple_kube_list_opts_t *o, void (*fn)(void *ud, json_t *obj), void *ud,
                     char **rv, ripple_kube_status_t *st);

/* ---------------------------------------------------------------------------
 * Watch
 *
 * A watch follows one resource (in one namespace or all) from a
 * resourceVersion, with bookmarks, resuming after dropped connections and
 * server-side timeouts from the last resourceVersion it saw, with backoff.
 * When the server says that version is gone (410, as an HTTP status or an
 * ERROR event), the watch lists again and emits the difference between what
 * it had and the fresh list as events marked relist = 1: objects that were
 * added, changed or deleted meanwhile. So the consumer sees every object's
 * final state even across compactions; it does not see every intermediate
 * version (nobody can: etcd compacted them).
 *
 * The watch keeps the last state of every object (by namespace/name, as
 * compact JSON text) to give the old state and to diff a relist. Event types
 * follow that state: an ADDED for a known object is a MODIFIED with its old
 * state, a name taken over by another uid a DELETED and an ADDED. Frames
 * that are not well-formed events are skipped and counted (bad_events).
 * Reconnections back off exponentially (from 250 ms, doubling, capped at
 * backoff_max_ms, each delay drawn in [d/2, d]) and start over after a
 * connection that worked.
 * ------------------------------------------------------------------------- */

typedef enum ripple_kube_event_type {
  RIPPLE_KUBE_ADDED,
  RIPPLE_KUBE_MODIFIED,
  RIPPLE_KUBE_DELETED,
} ripple_kube_event_type_t;

typedef struct ripple_kube_event {
  ripple_kube_event_type_t type;
  json_t *obj;     /* the object (for DELETED: its last state) */
  json_t *old;     /* the previous state known to the watch, NULL for ADDED */
  int64_t time_ns; /* wall clock when the event arrived (or the relist found it) */
  int relist;      /* 1 if found by a relist after a 410, not by the watch */
  /* The same states as the watch keeps them: compact JSON text (without
   * managedFields under strip_managed_fields), NUL-terminated, and obj's
   * identity ("" when absent). Always set; with text_only they are all there
   * is (obj and old are NULL), which spares building trees. */
  const char *obj_text, *old_text; /* old_text NULL when old is */
  size_t obj_len, old_len;
  const char *key; /* "namespace/name", or "name" for a cluster-scoped object */
  const char *uid, *rv;
} ripple_kube_event_t;

typedef struct ripple_kube_watch_handlers {
  /* Every change, in order. */
  void (*event)(void *ud, const ripple_kube_event_t *ev);
  /* The initial list is delivered (as ADDED events) and the watch is live. */
  void (*synced)(void *ud);
  /* The resourceVersion the watch has reached: after events, bookmarks and
   * lists; persist it to resume later without a relist. */
  void (*progress)(void *ud, const char *rv);
  /* The connection failed or the server refused; the watch retries. */
  void (*trouble)(void *ud, int err, const ripple_kube_status_t *st);
  void *ud;
} ripple_kube_watch_handlers_t;

typedef struct ripple_kube_watch_opts {
  ripple_kube_list_opts_t list;
  /* Start from this resourceVersion without listing (a checkpoint); NULL:
   * list first and deliver every object as ADDED. */
  const char *resource_version;
  /* With resource_version: the objects known at that checkpoint (a JSON
   * array), to diff against when a 410 forces a relist. NULL: none known, so
   * a relist reports everything as ADDED and cannot report deletions. */
  const json_t *known;
  uint32_t timeout_s;      /* server-side watch timeout; default 300, at most 86400 */
  uint32_t backoff_max_ms; /* default 30000 */
  /* Leave metadata.managedFields out of every object: a third to a half of a
   * typical Pod's JSON and two thirds of its decoded size, and few
   * consumers read them (client-go informers often drop them too). */
  int strip_managed_fields;
  /* Deliver events as text only (ripple_kube_event_t's obj_text...): no
   * trees are built, several times cheaper for a consumer that only writes
   * the objects out. */
  int text_only;
} ripple_kube_watch_opts_t;

typedef struct ripple_kube_watch ripple_kube_watch_t;

/* Start the watch in its own thread. */
int ripple_kube_watch_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                            const ripple_kube_watch_opts_t *o,
                            const ripple_kube_watch_handlers_t *h, ripple_kube_watch_t **out);
/* Stop it (interrupts a watch request within about a second; a list in
 * progress runs to its end or the client's timeout) and free it. No callback
 * runs after this returns. */
void ripple_kube_watch_free(ripple_kube_watch_t *w);

typedef struct ripple_kube_watch_stats {
  uint64_t events, bookmarks, relists, reconnects, gone, bad_events;
} ripple_kube_watch_stats_t;
void ripple_kube_watch_stats(ripple_kube_watch_t *w, ripple_kube_watch_stats_t *out);

/* ---------------------------------------------------------------------------
 * Informer: a watch plus a local cache
 * ------------------------------------------------------------------------- */

typedef struct ripple_kube_informer ripple_kube_informer_t;

typedef struct ripple_kube_informer_handlers {
  void (*add)(void *ud, json_t *obj);
  void (*update)(void *ud, json_t *old, json_t *obj);
  void (*remove)(void *ud, json_t *obj); /* the last state known */
  void (*synced)(void *ud);
  void *ud;
} ripple_kube_informer_handlers_t;

/* o as for a watch (may be NULL: every namespace), except that an informer
 * always lists first: resource_version and known are ignored. Handlers run in
 * the informer's thread after the cache is updated, so they see the cache
 * already holding obj (or no longer holding a removed one). Without add,
 * update and remove handlers no tree of an event is ever built: only each
 * event's metadata is decoded, for the indexes (several times faster). */
int ripple_kube_informer_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                               const ripple_kube_watch_opts_t *o,
                               const ripple_kube_informer_handlers_t *h,
                               ripple_kube_informer_t **out);
void ripple_kube_informer_free(ripple_kube_informer_t *inf);
/* The underlying watch's counters; all 0 without an informer. */
void ripple_kube_informer_stats(ripple_kube_informer_t *inf, ripple_kube_watch_stats_t *out);
/* Wait until the initial list is in the cache (timeout_ms 0: forever):
 * RIPPLE_OK, RIPPLE_ETIMEDOUT, or RIPPLE_EINVAL without an informer. */
int ripple_kube_informer_wait_synced(ripple_kube_informer_t *inf, uint32_t timeout_ms);

/* Cache reads. The cache holds each object as its JSON text (about its JSON
 * size in memory), and the reads by name, owner and labels hand that text to
 * fn with no tree built (a few hundred nanoseconds where a tree costs some
 * 20 us for a 5 KiB Pod). fn gets the object's compact text as the watch
 * keeps it (without metadata.managedFields under strip_managed_fields; list
 * items may lack "kind" and "apiVersion"), len bytes, NUL-terminated at
 * json[len]. The text is borrowed: valid during the call only, never to be
 * changed; copy what you keep (json_loadb(json, len, 0, NULL) for a tree).
 * fn runs outside the cache's lock, so it may read the cache again.
 *
 * Every read returns RIPPLE_OK or a negative code, RIPPLE_EINVAL without an
 * informer or fn (fn is then not called). A read of several objects is
 * RIPPLE_OK also when none matched; fn counts them if the caller needs a
 * count. Objects the read could not take for lack of memory are left out. */
/* fn once with ns/name (ns NULL or "" for a cluster-scoped object);
 * RIPPLE_ENOENT when it is not cached (fn is not called). */
int ripple_kube_informer_get_text(ripple_kube_informer_t *inf, const char *ns, const char *name,
                                  void (*fn)(void *ud, const char *json, size_t len), void *ud);
/* Objects whose metadata.ownerReferences name this uid; RIPPLE_EINVAL
 * without a uid. */
int ripple_kube_informer_by_owner_text(ripple_kube_informer_t *inf, const char *uid,
                                       void (*fn)(void *ud, const char *json, size_t len),
                                       void *ud);
/* Objects in ns (NULL or "": all) whose labels match a selector
 * ("app=web,tier!=db", "env in (a,b)", "!legacy"; NULL or "": every object);
 * RIPPLE_EINVAL for a malformed selector. */
int ripple_kube_informer_select_text(ripple_kube_informer_t *inf, const char *ns,
                                     const char *selector,
                                     void (*fn)(void *ud, const char *json, size_t len), void *ud);
/* Every cached object as a tree (built from its text for this call, some
 * 20 us for a 5 KiB Pod), borrowed by fn for the call (json_incref to keep
 * it); for callers that evaluate whole objects. An object whose tree cannot
 * be built for lack of memory is left out. */
int ripple_kube_informer_each(ripple_kube_informer_t *inf, void (*fn)(void *ud, json_t *obj),
                              void *ud);
/* How many objects the cache holds; 0 without an informer (cannot fail). */
size_t ripple_kube_informer_size(ripple_kube_informer_t *inf);

/* ---------------------------------------------------------------------------
 * Writes
 * ------------------------------------------------------------------------- */

typedef enum ripple_kube_patch {
  RIPPLE_KUBE_PATCH_JSON,      /* application/json-patch+json */
  RIPPLE_KUBE_PATCH_MERGE,     /* application/merge-patch+json */
  RIPPLE_KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
  RIPPLE_KUBE_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply) */
} ripple_kube_patch_t;

typedef struct ripple_kube_write_opts {
  const char *subresource;   /* "status", "scale", "binding"...; NULL: the object */
  const char *field_manager; /* required for apply; default "ripple" */
  int force;                 /* apply: take over conflicting fields */
  int dry_run;               /* dryRun=All */
} ripple_kube_write_opts_t;

/* obj must carry metadata.name (and metadata.namespace for namespaced
 * resources, unless ns is given). *out (may be NULL) is the stored object. */
int ripple_kube_create(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const json_t *obj, const ripple_kube_write_opts_t *o, json_t **out,
                       ripple_kube_status_t *st);
/* PUT; a stale metadata.resourceVersion gives RIPPLE_KUBE_ECONFLICT. */
int ripple_kube_update(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const json_t *obj, const ripple_kube_write_opts_t *o, json_t **out,
                       ripple_kube_status_t *st);
int ripple_kube_patch(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                      const char *name, ripple_kube_patch_t type, const char *patch, size_t len,
                      const ripple_kube_write_opts_t *o, json_t **out, ripple_kube_status_t *st);
/* Deleting something already gone is RIPPLE_KUBE_ENOTFOUND. */
int ripple_kube_delete(ripple_kube_client_t *c, const ripple_kube_resource_t *r, const char *ns,
                       const char *name, const ripple_kube_write_opts_t *o,
                       ripple_kube_status_t *st);

#ifdef __cplusplus
}
#endif

#endif
