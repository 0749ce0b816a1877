/*
 * kr.h - kubectl-ripple's parts (docs/kubectl-ripple.md): the command line
 * (args.c), where the trace server is (where.c), manifests (manifest.c),
 * changes that carry a root CPID (change.c), the trace server's answers,
 * directly or through the API server's service proxy (tserver.c), the cascade tree built
 * from them (tree.c) with what each write changed (details.c), the per-hop
 * summary (hops.c), stalled writes (stalls.c), the two ways of showing a
 * trace: text (render.c) and JSON (tjson.c), and the chain of writes behind
 * an object (why.c, whyout.c), and the dashboard's local relay (relay.c,
 * dashboard.c). main.c puts them together.
 *
 * Memory: the caller owns what it passes in. A kr_trace_t keeps references
 * to the JSON answers it was built from (its strings point into them) and is
 * released with kr_trace_free. JSON values handed out are new references.
 */
#ifndef RIPPLE_KUBECTL_KR_H
#define RIPPLE_KUBECTL_KR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ripple/kube.h"
#include "ripple/ripple.h"

/* Where the install puts the trace server (docs/kubectl-ripple.md), reached
 * through the API server's service proxy unless --server names a URL; its
 * reader token is in the Secret <service>-reader-token, key "token". */
#define KR_DEFAULT_SERVICE_NS "ripple-system"
#define KR_DEFAULT_SERVICE_NAME "ripple-server"
#define KR_DEFAULT_SERVICE_PORT "https"
#define KR_TOKEN_SECRET_SUFFIX "-reader-token"
#define KR_FIELD_MANAGER "kubectl-ripple"

/* ---- the command line (args.c) --------------------------------------------------- */

typedef enum kr_cmd {
  KR_CMD_NONE = 0,
  KR_CMD_HELP,
  KR_CMD_VERSION,
  KR_CMD_APPLY,
  KR_CMD_SCALE,
  KR_CMD_PATCH,
  KR_CMD_DELETE,
  KR_CMD_TRACE,
  KR_CMD_LAST,
  KR_CMD_WHY,
  KR_CMD_DASHBOARD,
  KR_CMD_DIFF,
  KR_CMD_EXPORT_TEST,
  KR_CMD_HOPS,
} kr_cmd_t;

typedef struct kr_args {
  kr_cmd_t cmd;
  /* Borrowed from argv. NULL when not given. */
  const char *kubeconfig, *context, *namespace_;
  const char *file;           /* apply -f */
  const char *patch;          /* patch -p */
  const char *server;         /* --server */
  const char *server_service; /* --server-service */
  const char *cpid;           /* trace CPID, dashboard [CPID], export-test CPID, diff CPID_A */
  const char *cpid2;          /* diff CPID_B */
  const char *output;         /* -o: "json", or export-test's FILE */
  const char *margin;         /* export-test --margin */
  const char *kind, *write;   /* hops --kind, --write */
  int64_t since_ns;           /* hops --since D (ns before now); 0 when not given */
  ripple_kube_patch_t patch_type;
  long replicas; /* scale --replicas; -1 when not given */
  int json;      /* -o json */
  int force_conflicts;
  long port;      /* dashboard --port; -1 when not given (any free port) */
  int no_browser; /* dashboard --no-browser */
  /* trace, last, dashboard: everything reachable from the CPID (--reachable,
   * --scope reachable) instead of the change's own cascade (docs/api.md). */
  int reachable;
  int critical_path; /* trace, last: --critical-path (paths.c) */
  /* KIND/NAME or KIND NAME, split. */
  char resource[128];
  char name[256];
} kr_args_t;

/* Parse argv[1..argc-1] as kubectl hands it to the plugin: flags anywhere,
 * "--flag value", "--flag=value", "-n value", "-nvalue". On failure err says
 * what is wrong (RIPPLE_EINVAL). */
int kr_args_parse(int argc, char *const *argv, kr_args_t *out, char *err, size_t cap);
void kr_usage(FILE *f);

/* ---- where the trace server is (where.c) ------------------------------------------ */

typedef struct kr_where {
  /* Reached directly at this URL (borrowed); NULL: through the API server's
   * service proxy to the Service below. */
  const char *url;
  char ns[64], name[64], port[16];
  /* What chose it, for messages: "--server", "$RIPPLE_SERVER",
   * "--server-service", "$RIPPLE_SERVER_SERVICE" or "the default". */
  const char *from;
} kr_where_t;

/* --server URL, else --server-service, else $RIPPLE_SERVER, else
 * $RIPPLE_SERVER_SERVICE, else the Service ripple-system/ripple-server:https.
 * RIPPLE_EINVAL with err for both flags, or a malformed service. */
int kr_where_pick(const kr_args_t *a, kr_where_t *out, char *err, size_t cap);
/* "NAMESPACE/SERVICE[:PORT]" (PORT a port's name or number, default "https")
 * into out's ns, name and port (url set to NULL, from untouched); the names
 * checked as Kubernetes checks them. RIPPLE_EINVAL with err otherwise. */
int kr_service_parse(const char *spec, kr_where_t *out, char *err, size_t cap);
/* The API server's path to path on w's Service:
 * "/api/v1/namespaces/NS/services/http:NAME:PORT/proxy" + path. A new string
 * (free it); NULL when out of memory. */
char *kr_proxy_path(const kr_where_t *w, const char *path);

/* ---- manifests (manifest.c) ------------------------------------------------------- */

/* Every object of a YAML (or JSON) stream, "kind: List" documents expanded,
 * as a JSON array; path "-" reads standard input. */
int kr_manifest_load(const char *path, json_t **out, char *err, size_t cap);

/* ---- changes with a root CPID (change.c) ------------------------------------------ */

typedef struct kr_ts kr_ts_t;

typedef struct kr_kube {
  ripple_kube_client_t *kc;
  const char *namespace_; /* -n, else the kubeconfig context's */
  kr_ts_t *ts;            /* the trace server (last, why); NULL for changes */
} kr_kube_t;

/* A fresh root context (a new CPID, no ancestors) and its annotation value. */
int kr_root_ctx(ripple_ctx_t *ctx, char *value, size_t cap);

/* Each prints one line per object written to out (as kubectl does) and, on
 * success, "cpid: <CPID>" last. err says what went wrong otherwise. */
int kr_apply(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap);
int kr_scale(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap);
int kr_patch(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap);
int kr_delete(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap);
/* Read the object named on the command line (KIND/NAME, -n): *obj a new
 * reference, *r its resource, what its name in messages ("deployment.apps/web").
 * A missing object is RIPPLE_KUBE_ENOTFOUND with err saying so. */
int kr_get_object(kr_kube_t *k, const kr_args_t *a, json_t **obj, const ripple_kube_resource_t **r,
                  char *what, size_t wcap, char *err, size_t cap);
/* The CPID of an object's latest change, into cpid (37 bytes): the newest
 * root the trace server indexed for the object's uid, else its annotation's. */
int kr_last_cpid(kr_kube_t *k, const kr_args_t *a, char *cpid, char *err, size_t cap);
/* The choice kr_last_cpid makes, given the object as read (kind names its
 * annotation, what names it in messages) and the trace server's roots answer
 * for its uid (NULL when there is none: an older server). RIPPLE_EJSON for
 * an answer that is not the documented shape; RIPPLE_ENOENT when neither
 * names a change. */
int kr_last_pick(const json_t *obj, const char *kind, const char *what, const json_t *roots,
                 char *cpid, char *err, size_t cap);

/* Add the annotation key=value to a merge or strategic patch object. */
int kr_patch_add_annotation(json_t *patch, const char *key, const char *value);
/* JSON Patch ops that set the annotation, given the object's current annotations
 * (NULL when it has none). A new reference. */
json_t *kr_jsonpatch_annotation(const json_t *annotations, const char *key, const char *value);

/* ---- the trace server (tserver.c) ------------------------------------------------- */

/* How to reach the trace server w names, chosen once: directly over libcurl
 * (w->url), or through the API server's service proxy with kc (borrowed, it
 * must outlive the handle; required without w->url), api the API server's URL
 * (the kubeconfig's, for messages and links). The reader token is
 * $RIPPLE_READER_TOKEN, else through the proxy the Secret
 * <service>-reader-token's "token" in the Service's namespace, read with kc
 * (one the user may not read, or that is not there, is no token). It goes
 * as "Authorization: Bearer" directly and as "X-Ripple-Token" through the
 * proxy (the API server deletes Authorization). Never printed. */
int kr_ts_open(const kr_where_t *w, ripple_kube_client_t *kc, const char *api, kr_ts_t **out,
               char *err, size_t cap);
void kr_ts_free(kr_ts_t *ts);
/* The trace server as messages name it: "at URL (--server)", or "behind
 * Service NS/NAME (the default, through the API server at URL)". */
const char *kr_ts_where(const kr_ts_t *ts);
/* The trace's page in the dashboard: kr_dashboard_url of the server's URL,
 * or of the service proxy's on the API server. A new string (free it). */
char *kr_ts_dashboard_url(const kr_ts_t *ts, const char *cpid);
/* "dashboard: <url>" for the text views directly (--server URL); through
 * the proxy, whose URL a browser cannot authenticate to, the command that
 * opens the page: "dashboard: kubectl ripple dashboard CPID" (with
 * --server-service when that flag chose the Service). */
void kr_ts_put_dashboard(FILE *f, const kr_ts_t *ts, const char *url, const char *cpid,
                         int reachable);

/* One GET of path (from "/": "/", "/assets/...", "/v1/...", a query
 * allowed) as it comes, the reader token added as for every request: *status
 * and *body (NUL-terminated, *len bytes; free it). RIPPLE_OK when an answer
 * came, whatever its status; otherwise err says why (never with the token).
 * May be called from many threads at once. */
int kr_ts_get_raw(kr_ts_t *ts, const char *path, long *status, char **body, size_t *len, char *err,
                  size_t cap);
/* Through the API server's service proxy (not directly at a URL). */
int kr_ts_proxied(const kr_ts_t *ts);

typedef struct kr_answers {
  json_t *related, *mergelogs, *spans;
  /* Optional, NULL when not asked for or not served (a server older than
   * them): GET /v1/cpids/{cpid}/details and /stalls. */
  json_t *details, *stalls;
} kr_answers_t;

/* GET /v1/cpids/{cpid}/related, /mergelogs and /spans (not details, stalls)
 * of the change's own cascade, or (reachable) of everything reachable from
 * it. A server older than scopes ignores the parameter: reachable then. */
int kr_tserver_fetch(kr_ts_t *ts, const char *cpid, int reachable, kr_answers_t *out, char *err,
                     size_t cap);
/* GET /v1/cpids/{cpid}/{what}: "origins", "details", "stalls". RIPPLE_ENOENT
 * for a 404 (a CPID the server does not know, or a server older than the
 * path), RIPPLE_ESYS when the server cannot be reached or fails. */
int kr_tserver_cpid_get(kr_ts_t *ts, const char *cpid, const char *what, json_t **out, char *err,
                        size_t cap);
void kr_answers_free(kr_answers_t *a);
/* GET /v1/objects/{uid}/roots?limit=N: the object's root mergelogs, newest
 * first. RIPPLE_ENOENT when the server answers 404 (a server older than the
 * endpoint), RIPPLE_EINVAL for a uid the server does not index. */
int kr_tserver_roots(kr_ts_t *ts, const char *uid, size_t limit, json_t **out, char *err,
                     size_t cap);

/* ---- critical paths and comparisons (paths.c) ------------------------------------ */

/* `trace CPID --critical-path`: the path's hops as a table (or -o json);
 * the exit status. */
int kr_critical_path(const kr_args_t *a, kr_ts_t *ts, const char *cpid);
/* `diff CPID_A CPID_B`: the two cascades compared hop by hop; the exit
 * status. */
int kr_diff_cascades(const kr_args_t *a, kr_ts_t *ts);
/* `hops [--since D] [--kind K] [--write W]`: GET /v1/hops, every hop's
 * times across the cascades of the changes that match, as a table (or the
 * answer with -o json). The exit status. */
int kr_hop_stats(const kr_args_t *a, kr_ts_t *ts);

/* ---- the cascade tree (tree.c) ---------------------------------------------------- */

typedef struct kr_span {
  const char *cpid, *span_id, *service, *name;
  /* Attributes (docs/webhook.md); "" when absent. */
  const char *kind, *ns, *oname, *uid, *user, *operation, *subresource;
  int64_t start_ns, end_ns;
  /* What the write changed and its audit event (docs/api.md, "Details of a
   * cascade"), borrowed from the details answer; NULL when there is none. */
  const json_t *change, *audit;
  long cause;  /* index of the cause's span; -1: none found (a root) */
  long parent; /* index of the span it is shown under; -1: top level */
  long *children;
  size_t nchildren;
} kr_span_t;

typedef struct kr_trace {
  char cpid[RIPPLE_CPID_STRLEN + 1];
  int truncated;
  size_t ncpids;    /* related CPIDs */
  kr_span_t *spans; /* in time order (end, start, span id) */
  size_t n;
  long *top; /* top-level spans, in time order */
  size_t ntop;
  int64_t t0_ns;  /* the origin of "when": the root change's admission */
  int details;    /* a details answer was given (spans' change and audit) */
  json_t *stalls; /* the stalls answer's "stalls" array, borrowed; NULL: not known */
  json_t *keep;   /* the answers the strings point into */
} kr_trace_t;

/* Build the tree from the trace server's answers for one CPID (the rule is in
 * tree.c and docs/kubectl-ripple.md). RIPPLE_EJSON with err when an answer is
 * not the documented shape. */
int kr_trace_build(const kr_answers_t *a, kr_trace_t *out, char *err, size_t cap);
void kr_trace_free(kr_trace_t *t);

/* ---- details and stalls (details.c, stalls.c) ---------------------------------------- */

/* Join a details answer to the trace's spans by span id (each span's change
 * and audit) and keep a reference to it. RIPPLE_EJSON with err when it is not
 * the documented shape (entries that are not are skipped). */
int kr_details_join(kr_trace_t *t, json_t *details, char *err, size_t cap);
/* Keep a stalls answer's array (t->stalls). An answer with "enabled": false
 * and no array is an empty one. RIPPLE_EJSON with err for another shape. */
int kr_stalls_join(kr_trace_t *t, json_t *stalls, char *err, size_t cap);
/* Changed fields in a span's change (its diff's entries); 0 without one. */
size_t kr_change_fields(const kr_span_t *s);
/* The response code of a span's audit event when it is not 2xx (the write
 * was refused); 0 otherwise. */
long kr_refused_code(const kr_span_t *s);
/* A JSON value for people: compact JSON, at most max bytes ("…" when cut). */
void kr_fmt_value(const json_t *v, char *out, size_t cap, size_t max);
/* Print s with control characters replaced by '?', at most max bytes ("…"
 * when cut, never inside a UTF-8 sequence): text from the trace server may
 * come from anyone who can write an object or an Event. */
void kr_put_clean(FILE *f, const char *s, size_t max);
/* "STALLED ..." lines, each stall's Events under it; nothing without stalls. */
void kr_render_stalls(FILE *f, const kr_trace_t *t, int colour);

/* ---- per-hop summary (hops.c) ----------------------------------------------------- */

typedef struct kr_hop {
  const char *service, *name;
  size_t count;
  int64_t p50_ns, max_ns; /* of the time since the cause */
} kr_hop_t;

/* One row per (component, span name) of the spans that have a cause, in order
 * of first appearance; *out is malloc'd (free it). */
int kr_hops(const kr_trace_t *t, kr_hop_t **out, size_t *n);

/* ---- showing a trace (render.c, tjson.c) ------------------------------------------ */

/* a - b, saturated: times come from outside and may be anything. */
static inline int64_t kr_diff(int64_t a, int64_t b) {
  int64_t d;
  if (!__builtin_sub_overflow(a, b, &d)) return d;
  return a > b ? INT64_MAX : INT64_MIN;
}

/* The terminal colours of every text view (render.c, whyout.c, stalls.c). */
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_CYAN "\033[36m"
#define C_YELLOW "\033[33m"
#define C_GREEN "\033[32m"
#define C_RED "\033[31m"
#define C_RESET "\033[0m"

/* "12.3ms", "1.25s", "2m05s"; negative values get a "-". */
void kr_fmt_dur(int64_t ns, char *out, size_t cap);
/* Should output to fd be coloured: a terminal and NO_COLOR unset or empty. */
int kr_want_colour(int fd);
void kr_render_tree(FILE *f, const kr_trace_t *t, int colour);
void kr_render_hops(FILE *f, const kr_trace_t *t, int colour);
/* The tree and the hops as one JSON document (a new reference), with
 * "stalls" (the server's array, null when not known). */
json_t *kr_trace_json(const kr_trace_t *t);
/* Span i's own fields as tjson.c shows them (cpid, span_id, component, write,
 * the object, user, operation, start, end, cause); a new reference. */
json_t *kr_span_json(const kr_trace_t *t, long i);
/* The dashboard's page of a trace: "<server>/#/trace/<cpid>", the server as
 * given without trailing slashes (ripple-server serves the dashboard beside
 * its API). A new string (free it); NULL when out of memory. */
char *kr_dashboard_url(const char *server, const char *cpid);

/* ---- the dashboard's local relay (relay.c, dashboard.c) ------------------------------ */

/* The secret path prefix: 32 random bytes, base64url without padding. */
#define KR_RELAY_SECRET_BYTES 32
#define KR_RELAY_SECRET_LEN 43
/* The longest path (after the prefix) and query relayed. */
#define KR_RELAY_PATH_MAX 512
#define KR_RELAY_QUERY_MAX 1024

/* A new secret into out: RIPPLE_OK, or RIPPLE_ESYS without random bytes. */
int kr_relay_secret(char out[KR_RELAY_SECRET_LEN + 1]);
/* A Host header that names the relay: "127.0.0.1:PORT" or "localhost:PORT"
 * (the port left out only for 80). Anything else is a page of another name
 * (DNS rebinding) or not a browser that opened the printed URL: 0. */
int kr_relay_host_ok(const char *host, unsigned port);
/* The Sec-Fetch-Site, -Mode and -Dest headers a request may carry (each
 * NULL when absent): a site absent, "none" or "same-origin"; or a top-level
 * navigation (mode "navigate", dest "document") from anywhere. */
int kr_relay_fetch_ok(const char *site, const char *mode, const char *dest);

typedef enum kr_relay_map {
  KR_RELAY_NOT_FOUND = 0,
  KR_RELAY_OK,       /* out holds the trace server's path ("/...") */
  KR_RELAY_REDIRECT, /* exactly "/SECRET": to "/SECRET/" */
} kr_relay_map_t;

/* A request's path (libmicrohttpd's, %-decoded) to the trace server's: it
 * must start "/SECRET/" (compared in constant time), and the rest be a path
 * the dashboard asks for ("/", "/index.html", "/assets/...", "/v1/...") of
 * plain characters, without ".." or "//", at most KR_RELAY_PATH_MAX bytes. */
kr_relay_map_t kr_relay_map(const char *secret, const char *url, char *out, size_t cap);
/* Append "?key=value" (or "&..."; value NULL: just the key), both
 * %-encoded, to the NUL-terminated out. RIPPLE_EINVAL when it does not fit
 * in cap or the key is empty. */
int kr_relay_query_add(char *out, size_t cap, const char *key, const char *value);
/* The Content-Type of the answer to path with status: JSON under /v1/, the
 * dashboard file's type by its name otherwise, text for an error. */
const char *kr_relay_type(const char *path, long status);

/* `kubectl ripple dashboard [CPID]`: serve the relay to ts on
 * 127.0.0.1:a->port until SIGINT or SIGTERM, the URL first on stdout; 0 on a
 * clean stop, 1 otherwise. */
int kr_dashboard(const kr_args_t *a, kr_ts_t *ts);

/* ---- why: the chain of writes behind an object (why.c, whyout.c) --------------------- */

typedef struct kr_why_target {
  const char *kind, *ns, *name, *uid; /* "" when absent */
  const char *cpid;                   /* its own CPID (its annotation's); NULL: none */
} kr_why_target_t;

typedef struct kr_why {
  const kr_trace_t *t; /* borrowed */
  kr_why_target_t obj; /* borrowed strings */
  long *hops;          /* span indexes: the root change first, the object's latest write last */
  size_t n;
} kr_why_t;

/* The object's latest write in the trace: the latest span with its uid, or
 * without a uid (a create) with its kind, namespace and name; -1 if none. */
long kr_why_latest(const kr_trace_t *t, const kr_why_target_t *o);
/* The chain from the root change to the object's latest write, following
 * each span to the one it is shown under in the tree (its cause, or the
 * first write of the same object under that cause). RIPPLE_ENOENT when the
 * trace has no write of the object. */
int kr_why_chain(const kr_trace_t *t, const kr_why_target_t *o, kr_why_t *out);
void kr_why_free(kr_why_t *w);
/* The roots to trace for an object, into out (at most max, canonical,
 * without repeats): the origins of its own CPID (an /origins answer; NULL
 * when none) and its newest indexed root (a /roots answer; NULL when none).
 * Entries that are not CPIDs are skipped. */
size_t kr_why_roots(const json_t *origins, const json_t *roots, char (*out)[RIPPLE_CPID_STRLEN + 1],
                    size_t max);
/* `kubectl ripple why`: reads the object, finds its root change, prints the
 * chain (text, or JSON with a->json). */
int kr_why(kr_kube_t *k, const kr_args_t *a, FILE *out, char *err, size_t cap);
/* kr_why once the object is read: obj as the API server gave it, kind its
 * resource's kind (names its annotation), what its name in messages. */
int kr_why_object(const kr_args_t *a, kr_ts_t *ts, const json_t *obj, const char *kind,
                  const char *what, FILE *out, char *err, size_t cap);
void kr_render_why(FILE *f, const kr_why_t *w, int colour);
/* {"object", "root", "details", "hops": [...]}; a new reference. */
json_t *kr_why_json(const kr_why_t *w);

/* ---- why: the object's fields and fights (whyfields.c) -------------------------------- */

/* GET /v1/fights?uid=UID: *out the answer, or NULL when the server has none
 * (older than fights: 404; off; another failure). RIPPLE_OK unless the
 * server cannot be reached at all. */
int kr_why_fights_get(kr_ts_t *ts, const char *uid, json_t **out, char *err, size_t cap);
/* {"fields": [{"field", "managers": [{"manager", "operation", "subresource",
 * "time"}], "set_by": {"path", "writer", "user", "cpid", "span_id", "time"} or
 * null}], "fights": [...], "fights_known"} from obj's managedFields and the
 * server's answer (NULL: unknown); a new reference. */
json_t *kr_why_fields(const json_t *obj, const json_t *server);
void kr_render_why_fields(FILE *f, const json_t *wf, int colour);

#endif
