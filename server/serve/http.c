/*
 * http.c - the trace server's HTTP API (docs/api.md) on libmicrohttpd.
 *
 * One thread per connection, so a slow query or a client that waits for its
 * group commit never holds up another connection; the connection limit bounds
 * the threads. Bodies are refused as soon as they pass the size limit (by
 * Content-Length, or while streaming), and every error is a JSON object that
 * says what was wrong.
 *
 * Authentication first: on the access handler's first call, when only the
 * headers have arrived, a request that will be refused anyway (no token, a
 * wrong method or path, a body too large, a wrong Content-Type, no room in
 * the body budget) is answered at once, and libmicrohttpd then reads none of
 * its body and closes the connection after the answer. A client without a
 * token costs a thread and libmicrohttpd's per-connection buffer, never a
 * body.
 */
#include "serve/http.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ripplex/clock.h"
#include "ripplex/httpd.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"

#include "analysis/hops.h"
#include "analysis/paths.h"
#include "graph/trace.h"
#include "ingest/gzip.h"

/* Answers at least this large are compressed for clients that take gzip: a
 * trace of 10,000 spans is 4.8 MB of JSON, about a tenth of that compressed,
 * and a browser on loopback spends longer moving the bytes than the server
 * compressing them at level 1. */
#define GZIP_MIN 16384

struct http {
  struct MHD_Daemon *d;
  srv_t *srv;
  http_opts_t o;
  atomic_uint_fast64_t connections;
  httpd_budget_t budget; /* body bytes held by all requests */
};

int http_gzip_wanted(const char *h) {
  if (!h) return 0;
  for (const char *p = h; *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    size_t n = strcspn(p, ",;");
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    int gzip = n == 4 && !strncasecmp(p, "gzip", 4);
    p += strcspn(p, ",;");
    double q = 1;
    while (*p == ';') {
      p++;
      while (*p == ' ') p++;
      if (tolower((unsigned char)p[0]) == 'q' && p[1] == '=') q = strtod(p + 2, NULL);
      p += strcspn(p, ",;");
    }
    if (gzip) return q > 0;
  }
  return 0;
}

/* The server's answers are sbuf documents; large ones go compressed to
 * clients that take gzip. */
static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
                                const sbuf_t *b) {
  static const char *const gz[] = {"Content-Encoding", "gzip", "Vary", "Accept-Encoding", NULL};
  static const char *const vary[] = {"Vary", "Accept-Encoding", NULL};
  if (b->len < GZIP_MIN || b->len > UINT32_MAX / 2)
    return httpd_send(c, status, type, b->p, b->len);
  if (!http_gzip_wanted(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding")))
    return httpd_send_headers(c, status, type, b->p, b->len, vary);
  char *z = NULL;
  size_t zlen = 0;
  enum MHD_Result rc = gzip_encode(b->p, b->len, &z, &zlen) == RIPPLE_OK
                           ? httpd_send_headers(c, status, type, z, zlen, gz)
                           : httpd_send_headers(c, status, type, b->p, b->len, vary);
  free(z);
  return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, long index,
                                  const char *field, const char *msg) {
  sbuf_t b;
  sbuf_init(&b);
  sbuf_puts(&b, "{\"error\":");
  sbuf_json_str(&b, msg);
  if (index >= 0) sbuf_printf(&b, ",\"index\":%ld", index);
  if (field && *field) {
    sbuf_puts(&b, ",\"field\":");
    sbuf_json_str(&b, field);
  }
  sbuf_puts(&b, "}");
  enum MHD_Result rc = send_buf(c, status, "application/json", &b);
  sbuf_free(&b);
  return rc;
}

/* ---- authentication ------------------------------------------------------- */

/* Compare without leaking where the first difference is. */
static int same_secret(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  unsigned char d = (unsigned char)(la != lb);
  for (size_t i = 0; i < la; i++) d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
  return d == 0;
}

#define NEED_WRITER "a writer token is required (Authorization: Bearer ..., or X-Ripple-Token: ...)"
#define NEED_READER "a reader token is required (Authorization: Bearer ..., or X-Ripple-Token: ...)"

static int known_token(const char *t, char *const *tokens) {
  int ok = 0;
  for (char *const *k = tokens; t && *k; k++) ok |= same_secret(t, *k);
  return ok;
}

/* A token in "Authorization: Bearer <token>" or in "X-Ripple-Token:
 * <token>", either will do. The second is for clients that come through the
 * Kubernetes API server's service proxy (kubectl ripple): the API server
 * deletes the Authorization header once it has authenticated the request
 * (and a proxy on the way may put its own credential there). */
static int authorized(struct MHD_Connection *c, char *const *tokens) {
  if (!tokens || !tokens[0]) return 1; /* no tokens configured: open */
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  const char *x = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Ripple-Token");
  /* The scheme's name is case-insensitive (RFC 9110, 11.1): "bearer x" too. */
  int bearer = known_token(h && !strncasecmp(h, "Bearer ", 7) ? h + 7 : NULL, tokens);
  return bearer | known_token(x, tokens);
}

/* ---- routing -------------------------------------------------------------- */

static size_t arg_size(struct MHD_Connection *c, const char *k, size_t dflt) {
  const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
  if (!v || !*v) return dflt;
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  return *end || v[0] == '-' ? (size_t)-1 : (size_t)n;
}

/* since/until: RFC 3339. 1 when absent (value unchanged), 0 if malformed. */
static int arg_time(struct MHD_Connection *c, const char *k, int64_t *out) {
  const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
  if (!v || !*v) return 1;
  return ripple_time_parse(v, strlen(v), out) == RIPPLE_OK;
}

static enum MHD_Result handle_ingest(http_t *h, struct MHD_Connection *c, dec_kind_t kind,
                                     httpd_req_t *r) {
  if (r->too_big) {
    atomic_fetch_add(&h->srv->m.rejected[kind == DEC_MERGELOGS ? 0 : 1], 1);
    char msg[96];
    snprintf(msg, sizeof msg, "request body is larger than %zu bytes; send smaller batches",
             h->o.max_body);
    return send_error(c, 413, -1, "", msg);
  }
  dec_error_t err = {0};
  size_t accepted;
  int status = srv_ingest(h->srv, kind, r->body.p ? r->body.p : "", r->body.len, &accepted, &err);
  if (status != 200) return send_error(c, (unsigned)status, err.index, err.field, err.msg);
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "{\"accepted\":%zu}", accepted);
  enum MHD_Result rc = send_buf(c, 200, "application/json", &b);
  sbuf_free(&b);
  return rc;
}

/* POST /v1/details and POST /v1/audit. */
static enum MHD_Result handle_details(http_t *h, struct MHD_Connection *c, int audit,
                                      httpd_req_t *r) {
  if (r->too_big) {
    atomic_fetch_add(&h->srv->details.details_refused, 1);
    return send_error(c, 413, -1, "",
                      audit ? "request body is larger than --max-audit-body; lower the audit "
                              "webhook's batch size (--audit-webhook-batch-max-size)"
                            : "request body is larger than --max-body; send smaller batches");
  }
  dec_error_t err = {.index = -1};
  size_t accepted;
  const char *body = r->body.p ? r->body.p : "";
  int status = audit ? tdet_ingest_audit(&h->srv->details, body, r->body.len, &accepted, &err)
                     : tdet_ingest(&h->srv->details, body, r->body.len, &accepted, &err);
  if (status != 200) return send_error(c, (unsigned)status, err.index, err.field, err.msg);
  sbuf_t b;
  sbuf_init(&b);
  sbuf_printf(&b, "{\"accepted\":%zu}", accepted);
  enum MHD_Result rc = send_buf(c, 200, "application/json", &b);
  sbuf_free(&b);
  return rc;
}

/* Is a Content-Type this media type (parameters such as charset allowed)? */
static int media_is(const char *ct, const char *type) {
  size_t n = strlen(type);
  return ct && !strncasecmp(ct, type, n) && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* POST /v1/traces: OTLP/HTTP, protobuf or JSON, plain or gzip'd. */
static enum MHD_Result handle_otlp(http_t *h, struct MHD_Connection *c, httpd_req_t *r) {
  const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
  const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
  int json = media_is(ct, "application/json");
  if (!json && !media_is(ct, "application/x-protobuf"))
    return send_error(
        c, 415, -1, "",
        "Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)");
  if (ce && *ce && strcasecmp(ce, "gzip") != 0 && strcasecmp(ce, "identity") != 0)
    return send_error(c, 415, -1, "", "Content-Encoding must be gzip or identity");
  if (r->too_big) {
    atomic_fetch_add(&h->srv->m.rejected[1], 1);
    return send_error(c, 413, -1, "", "request body is too large; send smaller batches");
  }
  char *plain = NULL;
  size_t len = r->body.len;
  const char *body = r->body.p ? r->body.p : "";
  if (ce && !strcasecmp(ce, "gzip")) {
    int rc = gzip_decode(body, len, h->o.max_body, &plain, &len);
    if (rc != RIPPLE_OK)
      return send_error(
          c, rc == RIPPLE_ERANGE ? 413 : 400, -1, "",
          rc == RIPPLE_ERANGE ? "the body inflates past the size limit" : "the body is not gzip");
    body = plain;
  }
  sbuf_t b;
  sbuf_init(&b);
  dec_error_t err = {0};
  int status = srv_ingest_otlp(h->srv, json, body, len, &b, &err);
  free(plain);
  enum MHD_Result rc =
      status == 200 ? httpd_send(c, 200, json ? "application/json" : "application/x-protobuf",
                                 b.p ? b.p : "", b.len)
                    : send_error(c, (unsigned)status, err.index, err.field, err.msg);
  sbuf_free(&b);
  return rc;
}

static enum MHD_Result send_answer(struct MHD_Connection *c, int status, const sbuf_t *b);

/* ?scope=own|reachable (absent: dflt) into *scope; 0 when it is neither. */
static int arg_scope(struct MHD_Connection *c, graph_scope_t dflt, graph_scope_t *scope) {
  const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "scope");
  return trace_scope_parse(v, dflt, scope) == RIPPLE_OK;
}

static enum MHD_Result send_scope_error(struct MHD_Connection *c) {
  return send_error(c, 400, -1, "scope",
                    "must be own (what the change caused) or reachable (everything it reaches)");
}

/* GET /v1/cpids/{cpid}/details and /stalls, GET /v1/stalls (id NULL) and
 * GET /v1/stalls/expected (what "expected"). */
static enum MHD_Result handle_facts(http_t *h, struct MHD_Connection *c, const ripple_cpid_t *id,
                                    const char *what) {
  size_t limit = arg_size(c, "limit", 0);
  if (limit == (size_t)-1) return send_error(c, 400, -1, "limit", "must be a non-negative integer");
  graph_scope_t scope;
  if (!arg_scope(c, GRAPH_OWN, &scope)) return send_scope_error(c);
  sbuf_t b;
  sbuf_init(&b);
  int status = !strcmp(what, "details")    ? tdet_answer(&h->srv->details, id, scope, limit, &b)
               : !strcmp(what, "expected") ? stalls_model(&h->srv->stalls, &b)
                                           : stalls_answer(&h->srv->stalls, id, scope, &b);
  enum MHD_Result rc = status == 404
                           ? send_error(c, 404, -1, "cpid", "no such CPID in the merge graph")
                           : send_answer(c, status, &b);
  sbuf_free(&b);
  return rc;
}

/* A query's answer about one CPID (status from the query), and b freed. */
static enum MHD_Result send_cpid_answer(struct MHD_Connection *c, int status, sbuf_t *b) {
  enum MHD_Result rc;
  if (status == 404)
    rc = send_error(c, 404, -1, "cpid", "no such CPID in the merge graph");
  else if (status != 200 || b->oom)
    rc = send_error(c, 503, -1, "", "query failed; retry later");
  else
    rc = send_buf(c, 200, "application/json", b);
  sbuf_free(b);
  return rc;
}

/* GET /v1/cpids/{cpid}/trace[?limit=N][&after=CURSOR][&scope=own|reachable]:
 * related, mergelogs and spans in one answer (graph/trace.h); the change's
 * own cascade unless scope=reachable. */
static enum MHD_Result handle_trace(http_t *h, struct MHD_Connection *c, const ripple_cpid_t *id) {
  size_t limit = arg_size(c, "limit", 0);
  if (limit == (size_t)-1) return send_error(c, 400, -1, "limit", "must be a non-negative integer");
  if (!limit || limit > h->srv->cfg.query_limit) limit = h->srv->cfg.query_limit;
  const char *after = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
  trace_cursor_t since;
  if (after && trace_cursor_parse(after, &since) != RIPPLE_OK)
    return send_error(c, 400, -1, "after", "must be the \"next\" of an earlier trace answer");
  graph_scope_t scope;
  if (!arg_scope(c, GRAPH_OWN, &scope)) return send_scope_error(c);
  sbuf_t b;
  sbuf_init(&b);
  int status = trace_answer(&h->srv->core, id, scope, limit, after ? &since : NULL, &b);
  return send_cpid_answer(c, status, &b);
}

/* ?limit= and ?scope= of an answer computed from whole traces: at most the
 * server's query limit of CPIDs, own by default. 0 after answering a 400. */
static int whole_args(http_t *h, struct MHD_Connection *c, size_t *limit, graph_scope_t *scope,
                      enum MHD_Result *rc) {
  *limit = arg_size(c, "limit", 0);
  if (*limit == (size_t)-1) {
    *rc = send_error(c, 400, -1, "limit", "must be a non-negative integer");
    return 0;
  }
  if (!*limit || *limit > h->srv->cfg.query_limit) *limit = h->srv->cfg.query_limit;
  if (!arg_scope(c, GRAPH_OWN, scope)) {
    *rc = send_scope_error(c);
    return 0;
  }
  return 1;
}

/* GET /v1/cpids/{cpid}/critical-path[?scope=own|reachable][&limit=N]: the
 * chain of writes that ends at the cascade's last write (analysis/paths.h). */
static enum MHD_Result handle_critical(http_t *h, struct MHD_Connection *c,
                                       const ripple_cpid_t *id) {
  size_t limit;
  graph_scope_t scope;
  enum MHD_Result rc;
  if (!whole_args(h, c, &limit, &scope, &rc)) return rc;
  sbuf_t b;
  sbuf_init(&b);
  return send_cpid_answer(c, paths_critical(&h->srv->core, &h->srv->details, id, scope, limit, &b),
                          &b);
}

/* A CPID from the query argument name; 0 when it is not one. */
static int arg_cpid(struct MHD_Connection *c, const char *name, ripple_cpid_t *out) {
  const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
  return v && ripple_cpid_parse(v, strlen(v), out) == RIPPLE_OK;
}

/* GET /v1/compare?a=CPID&b=CPID[&scope=own|reachable][&limit=N]: two
 * cascades compared, hop by hop (analysis/paths.h). */
static enum MHD_Result handle_compare(http_t *h, struct MHD_Connection *c) {
  ripple_cpid_t a, bid;
  if (!arg_cpid(c, "a", &a)) return send_error(c, 400, -1, "a", "must be a CPID");
  if (!arg_cpid(c, "b", &bid)) return send_error(c, 400, -1, "b", "must be a CPID");
  size_t limit;
  graph_scope_t scope;
  enum MHD_Result rc;
  if (!whole_args(h, c, &limit, &scope, &rc)) return rc;
  sbuf_t b;
  sbuf_init(&b);
  return send_cpid_answer(c, paths_compare(&h->srv->core, &a, &bid, scope, limit, &b), &b);
}

static enum MHD_Result handle_cpid(http_t *h, struct MHD_Connection *c, const char *rest) {
  /* rest = "<cpid>/<what>" */
  ripple_cpid_t id;
  const char *slash = strchr(rest, '/');
  if (!slash || ripple_cpid_parse(rest, (size_t)(slash - rest), &id) != RIPPLE_OK)
    return send_error(c, 400, -1, "cpid",
                      "the path must be /v1/cpids/<CPID>/<related|origins|mergelogs|spans|trace>");
  const char *what = slash + 1;
  query_t q;
  if (!strcmp(what, "details") || !strcmp(what, "stalls")) return handle_facts(h, c, &id, what);
  if (!strcmp(what, "trace")) return handle_trace(h, c, &id);
  if (!strcmp(what, "critical-path")) return handle_critical(h, c, &id);
  if (!strcmp(what, "related"))
    q = Q_RELATED;
  else if (!strcmp(what, "origins"))
    q = Q_ORIGINS;
  else if (!strcmp(what, "mergelogs"))
    q = Q_MERGELOGS;
  else if (!strcmp(what, "spans"))
    q = Q_SPANS;
  else
    return send_error(
        c, 404, -1, "",
        "unknown query; use related, origins, mergelogs, spans, trace, critical-path, details "
        "or stalls");
  size_t limit = arg_size(c, "limit", 0);
  if (limit == (size_t)-1) return send_error(c, 400, -1, "limit", "must be a non-negative integer");
  /* related, mergelogs and spans keep the CPID paper's meaning by default
   * (everything reachable); /trace, /details and /v1/roots default to own. */
  graph_scope_t scope;
  if (!arg_scope(c, GRAPH_REACHABLE, &scope)) return send_scope_error(c);
  sbuf_t b;
  sbuf_init(&b);
  int status = srv_query(h->srv, q, &id, scope, limit, &b);
  return send_cpid_answer(c, status, &b);
}

/* GET /v1/fights[?since=RFC3339][&limit=N][&uid=UID]: field fights
 * (analysis/fights.h), newest first. */
static enum MHD_Result handle_fights(http_t *h, struct MHD_Connection *c) {
  int64_t since = INT64_MIN;
  if (!arg_time(c, "since", &since))
    return send_error(c, 400, -1, "since", "must be an RFC 3339 time");
  size_t limit = arg_size(c, "limit", 100);
  if (limit == (size_t)-1 || !limit || limit > FIGHTS_LIMIT_MAX)
    return send_error(c, 400, -1, "limit", "must be an integer from 1 to 1000");
  const char *uid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "uid");
  if (uid && !dec_uid_ok(uid, strlen(uid)))
    return send_error(c, 400, -1, "uid",
                      "must be 1 to 128 letters, digits or '-' (an object's metadata.uid)");
  sbuf_t b;
  sbuf_init(&b);
  int rc = RIPPLE_OK;
  if (h->srv->fights)
    rc = fights_answer(h->srv->fights, since, uid, limit, &b);
  else
    sbuf_puts(&b, "{\"enabled\":false,\"fights\":[],\"truncated\":false}");
  enum MHD_Result r = rc != RIPPLE_OK || b.oom
                          ? send_error(c, 503, -1, "", "out of memory; retry later")
                          : send_buf(c, 200, "application/json", &b);
  sbuf_free(&b);
  return r;
}

static enum MHD_Result handle_object(http_t *h, struct MHD_Connection *c, const char *rest) {
  /* rest = "<uid>/roots" */
  const char *slash = strchr(rest, '/');
  if (!slash || !dec_uid_ok(rest, (size_t)(slash - rest)))
    return send_error(c, 400, -1, "uid",
                      "the path must be /v1/objects/<uid>/roots, the uid 1 to 128 letters, "
                      "digits or '-' (an object's metadata.uid)");
  if (strcmp(slash + 1, "roots") != 0)
    return send_error(c, 404, -1, "", "unknown query; use roots");
  size_t limit = arg_size(c, "limit", 10);
  if (limit == (size_t)-1 || limit == 0 || limit > 100)
    return send_error(c, 400, -1, "limit", "must be between 1 and 100");
  char uid[DEC_UID_MAX + 1];
  snprintf(uid, sizeof uid, "%.*s", (int)(slash - rest), rest);
  sbuf_t b;
  sbuf_init(&b);
  int status = srv_roots(h->srv, uid, limit, &b);
  enum MHD_Result rc = status != 200 || b.oom
                           ? send_error(c, 503, -1, "", "query failed; retry later")
                           : send_buf(c, 200, "application/json", &b);
  sbuf_free(&b);
  return rc;
}

/* A filter: absent or empty is NULL (anything); 0 when it is too long. */
static int arg_filter(struct MHD_Connection *c, const char *k, const char **out) {
  const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
  *out = v && *v ? v : NULL;
  return !v || strlen(v) <= 4096;
}

static enum MHD_Result send_answer(struct MHD_Connection *c, int status, const sbuf_t *b) {
  return status != 200 || b->oom ? send_error(c, 503, -1, "", "query failed; retry later")
                                 : send_buf(c, 200, "application/json", b);
}

/* GET /v1/objects?kind=&namespace=&name=&limit= */
static enum MHD_Result handle_objects(http_t *h, struct MHD_Connection *c) {
  const char *kind, *ns, *name;
  if (!arg_filter(c, "kind", &kind) || !arg_filter(c, "namespace", &ns) ||
      !arg_filter(c, "name", &name))
    return send_error(c, 400, -1, "", "a filter is longer than 4096 bytes");
  size_t limit = arg_size(c, "limit", 50);
  if (limit == (size_t)-1 || limit == 0 || limit > 1000)
    return send_error(c, 400, -1, "limit", "must be between 1 and 1000");
  sbuf_t b;
  sbuf_init(&b);
  enum MHD_Result rc = send_answer(c, search_objects(&h->srv->core, kind, ns, name, limit, &b), &b);
  sbuf_free(&b);
  return rc;
}

/* GET /v1/hops?since=&until=&kind=&write=&component=&limit=&scope=: per-hop
 * statistics across the cascades of the roots that match (analysis/hops.h). */
static enum MHD_Result handle_hops(http_t *h, struct MHD_Connection *c) {
  hops_query_t q = {.since = INT64_MIN, .cpid_limit = h->srv->cfg.query_limit};
  if (!arg_time(c, "since", &q.since))
    return send_error(c, 400, -1, "since", "must be an RFC 3339 time");
  if (!arg_time(c, "until", &q.until))
    return send_error(c, 400, -1, "until", "must be an RFC 3339 time");
  if (!arg_filter(c, "component", &q.component) || !arg_filter(c, "kind", &q.kind) ||
      !arg_filter(c, "write", &q.write))
    return send_error(c, 400, -1, "", "a filter is longer than 4096 bytes");
  q.limit = arg_size(c, "limit", 50);
  if (q.limit == (size_t)-1 || q.limit == 0 || q.limit > HOPS_LIMIT_MAX)
    return send_error(c, 400, -1, "limit", "must be between 1 and 500");
  if (!arg_scope(c, GRAPH_OWN, &q.scope)) return send_scope_error(c);
  sbuf_t b;
  sbuf_init(&b);
  enum MHD_Result rc = send_answer(c, hops_answer(&h->srv->core, &q, &b), &b);
  sbuf_free(&b);
  return rc;
}

/* GET /v1/roots?since=&until=&component=&namespace=&kind=&name=&limit=&cursor= */
static enum MHD_Result handle_roots(http_t *h, struct MHD_Connection *c) {
  search_roots_query_t q = {.since = INT64_MIN, .until = 0};
  if (!arg_time(c, "since", &q.since))
    return send_error(c, 400, -1, "since", "must be an RFC 3339 time");
  if (!arg_time(c, "until", &q.until))
    return send_error(c, 400, -1, "until", "must be an RFC 3339 time");
  if (!arg_filter(c, "component", &q.component) || !arg_filter(c, "namespace", &q.ns) ||
      !arg_filter(c, "kind", &q.kind) || !arg_filter(c, "name", &q.name))
    return send_error(c, 400, -1, "", "a filter is longer than 4096 bytes");
  q.limit = arg_size(c, "limit", 50);
  if (q.limit == (size_t)-1 || q.limit == 0 || q.limit > 1000)
    return send_error(c, 400, -1, "limit", "must be between 1 and 1000");
  q.cursor = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
  if (!arg_scope(c, GRAPH_OWN, &q.scope)) return send_scope_error(c);
  char err[128];
  sbuf_t b;
  sbuf_init(&b);
  int status = search_roots(&h->srv->core, &q, &b, err, sizeof err);
  enum MHD_Result rc =
      status == 400 ? send_error(c, 400, -1, "cursor", err) : send_answer(c, status, &b);
  sbuf_free(&b);
  return rc;
}

static enum MHD_Result handle_list(http_t *h, struct MHD_Connection *c, dec_kind_t kind) {
  int64_t since = INT64_MIN, until = 0;
  if (!arg_time(c, "since", &since))
    return send_error(c, 400, -1, "since", "must be an RFC 3339 time");
  if (!arg_time(c, "until", &until))
    return send_error(c, 400, -1, "until", "must be an RFC 3339 time");
  size_t limit = arg_size(c, "limit", 1000);
  if (limit == (size_t)-1 || limit == 0 || limit > 10000)
    return send_error(c, 400, -1, "limit", "must be between 1 and 10000");
  char err[128];
  sbuf_t b;
  sbuf_init(&b);
  const char *cursor = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
  int status = srv_list(h->srv, kind, since, until, cursor, limit, &b, err, sizeof err);
  enum MHD_Result rc;
  if (status == 400)
    rc = send_error(c, 400, -1, "cursor", err);
  else if (status != 200 || b.oom)
    rc = send_error(c, 503, -1, "", "listing failed; retry later");
  else
    rc = send_buf(c, 200, "application/json", &b);
  sbuf_free(&b);
  return rc;
}

/* The listener's defences at work (docs/server.md, "Limits against hostile
 * clients"). The daemon is the connection's: h->d is written once
 * httpd_start returns, when connections may already be served. */
static void listener_metrics(http_t *h, struct MHD_Connection *c, sbuf_t *b) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
  prom_gauge(b, "ripple_http_body_bytes_in_flight",
             "Request body bytes held now (--max-body-in-flight bounds them).",
             (double)atomic_load(&h->budget.used));
  prom_counter(b, "ripple_http_body_budget_refused_total",
               "Requests answered 503: the bodies in flight were at --max-body-in-flight.",
               atomic_load(&h->budget.refused));
  prom_counter(b, "ripple_http_deadline_closed_total",
               "Connections shut down because their request had not arrived within "
               "--request-deadline.",
               ci ? httpd_deadline_closed(ci->daemon) : 0);
}

/* Clients of a newer API version get told so, not just "no such endpoint". */
static const char *unknown_path_message(const char *url) {
  if (url[0] == '/' && url[1] == 'v' && url[2] >= '0' && url[2] <= '9' &&
      strncmp(url, "/v1/", 4) != 0)
    return "this API version is not served; this server speaks v1 (docs/api.md)";
  return "no such endpoint";
}

static enum MHD_Result route(http_t *h, struct MHD_Connection *c, const char *url,
                             const char *method, httpd_req_t *r, int *which) {
  int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
  sbuf_t b;
  *which = ROUTE_OTHER;
  if (!strcmp(url, "/healthz") && get) {
    sbuf_init(&b);
    sbuf_puts(&b, "ok\n");
    enum MHD_Result rc = send_buf(c, 200, "text/plain", &b);
    sbuf_free(&b);
    return rc;
  }
  if (!strcmp(url, "/readyz") && get) {
    if (!atomic_load(&h->srv->ready)) return send_error(c, 503, -1, "", "not ready");
    sbuf_init(&b);
    sbuf_puts(&b, "ok\n");
    enum MHD_Result rc = send_buf(c, 200, "text/plain", &b);
    sbuf_free(&b);
    return rc;
  }
  if (post && !strcmp(url, "/v1/traces")) {
    if (!authorized(c, h->o.writer_tokens)) return send_error(c, 401, -1, "", NEED_WRITER);
    *which = ROUTE_INGEST_SPANS;
    return handle_otlp(h, c, r);
  }
  int details = !strcmp(url, "/v1/details") || !strcmp(url, "/v1/audit");
  if (post && details) {
    if (!authorized(c, h->o.writer_tokens)) return send_error(c, 401, -1, "", NEED_WRITER);
    *which = ROUTE_OTHER;
    return handle_details(h, c, url[4] == 'a', r);
  }
  int ingest = !strcmp(url, "/v1/mergelogs") || !strcmp(url, "/v1/spans");
  if (post && ingest) {
    if (!authorized(c, h->o.writer_tokens)) return send_error(c, 401, -1, "", NEED_WRITER);
    int ml = !strcmp(url, "/v1/mergelogs");
    *which = ml ? ROUTE_INGEST_MERGELOGS : ROUTE_INGEST_SPANS;
    return handle_ingest(h, c, ml ? DEC_MERGELOGS : DEC_SPANS, r);
  }
  /* The dashboard's files hold no data: no token (web.h). */
  if (get && web_claims(url)) return web_answer(h->o.web, c, url);
  int search = !strcmp(url, "/v1/objects") || !strcmp(url, "/v1/roots");
  int stalls = !strcmp(url, "/v1/stalls") || !strcmp(url, "/v1/stalls/expected");
  int compare = !strcmp(url, "/v1/compare");
  int fights = !strcmp(url, "/v1/fights"), hops = !strcmp(url, "/v1/hops");
  int known = ingest || search || details || stalls || compare || fights || hops ||
              !strcmp(url, "/v1/traces") || !strcmp(url, "/metrics") ||
              !strncmp(url, "/v1/cpids/", 10) || !strncmp(url, "/v1/objects/", 12);
  if (!get)
    return send_error(c, known ? 405 : 404, -1, "",
                      known ? "method not allowed" : unknown_path_message(url));
  if (!authorized(c, h->o.reader_tokens)) return send_error(c, 401, -1, "", NEED_READER);
  if (!strcmp(url, "/metrics")) {
    sbuf_init(&b);
    srv_metrics(h->srv, atomic_load(&h->connections), &b);
    listener_metrics(h, c, &b);
    if (h->o.more_metrics) h->o.more_metrics(h->o.more_metrics_ud, &b);
    enum MHD_Result rc = send_buf(c, 200, "text/plain; version=0.0.4", &b);
    sbuf_free(&b);
    return rc;
  }
  if (ingest) {
    *which = ROUTE_LIST;
    return handle_list(h, c, !strcmp(url, "/v1/mergelogs") ? DEC_MERGELOGS : DEC_SPANS);
  }
  if (!strncmp(url, "/v1/cpids/", 10)) {
    *which = ROUTE_QUERY;
    return handle_cpid(h, c, url + 10);
  }
  if (!strncmp(url, "/v1/objects/", 12)) {
    *which = ROUTE_QUERY;
    return handle_object(h, c, url + 12);
  }
  if (stalls) {
    *which = ROUTE_QUERY;
    return handle_facts(h, c, NULL, url[10] ? "expected" : "stalls");
  }
  if (fights) {
    *which = ROUTE_QUERY;
    return handle_fights(h, c);
  }
  if (search) {
    *which = ROUTE_QUERY;
    return url[4] == 'o' ? handle_objects(h, c) : handle_roots(h, c);
  }
  if (compare || hops) {
    *which = ROUTE_QUERY;
    return compare ? handle_compare(h, c) : handle_hops(h, c);
  }
  return send_error(c, 404, -1, "", unknown_path_message(url));
}

/* Refused for want of room in the body budget: come back soon. */
static enum MHD_Result send_busy(struct MHD_Connection *c) {
  static const char *const retry[] = {"Retry-After", "1", NULL};
  static const char msg[] =
      "{\"error\":\"the server holds too many request bodies at once (--max-body-in-flight); "
      "retry\"}";
  return httpd_send_headers(c, 503, "application/json", msg, sizeof msg - 1, retry);
}

/* The answer to a request that is refused whatever its body holds, decided
 * from the headers alone (*refused 1), or MHD_YES to read on. The same checks
 * stand in route() and the handlers (where the body is in). */
static enum MHD_Result refuse_early(http_t *h, struct MHD_Connection *c, const char *url,
                                    const char *method, const httpd_req_t *r, int *refused) {
  int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
  int traces = !strcmp(url, "/v1/traces");
  int writes = traces || !strcmp(url, "/v1/details") || !strcmp(url, "/v1/audit") ||
               !strcmp(url, "/v1/mergelogs") || !strcmp(url, "/v1/spans");
  *refused = 1;
  if (post && writes) {
    if (!authorized(c, h->o.writer_tokens)) return send_error(c, 401, -1, "", NEED_WRITER);
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    if (traces && !media_is(ct, "application/json") && !media_is(ct, "application/x-protobuf"))
      return send_error(
          c, 415, -1, "",
          "Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)");
    if (traces && ce && *ce && strcasecmp(ce, "gzip") != 0 && strcasecmp(ce, "identity") != 0)
      return send_error(c, 415, -1, "", "Content-Encoding must be gzip or identity");
    *refused = r->too_big || r->over_budget;
    if (r->over_budget) return send_busy(c);
    if (r->too_big && (!strcmp(url, "/v1/mergelogs") || !strcmp(url, "/v1/spans") || traces))
      atomic_fetch_add(&h->srv->m.rejected[url[4] == 'm' ? 0 : 1], 1);
    else if (r->too_big)
      atomic_fetch_add(&h->srv->details.details_refused, 1);
    return *refused ? send_error(c, 413, -1, "",
                                 "request body is larger than the limit "
                                 "(--max-body, --max-audit-body); send smaller "
                                 "batches")
                    : MHD_YES;
  }
  /* Only the writes above take a body; anything else but a read is refused
   * from its headers (the same answers as route()'s). */
  if (!get) {
    int known = writes || !strcmp(url, "/v1/objects") || !strcmp(url, "/v1/roots") ||
                !strcmp(url, "/v1/stalls") || !strcmp(url, "/v1/stalls/expected") ||
                !strcmp(url, "/v1/fights") || !strcmp(url, "/v1/hops") ||
                !strcmp(url, "/metrics") || !strncmp(url, "/v1/cpids/", 10) ||
                !strncmp(url, "/v1/objects/", 12);
    return send_error(c, known ? 405 : 404, -1, "",
                      known ? "method not allowed" : unknown_path_message(url));
  }
  if (!strcmp(url, "/healthz") || !strcmp(url, "/readyz") || web_claims(url)) {
    *refused = 0;
    return MHD_YES;
  }
  if (!authorized(c, h->o.reader_tokens)) return send_error(c, 401, -1, "", NEED_READER);
  *refused = r->over_budget;
  return r->over_budget ? send_busy(c) : MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls) {
  (void)version;
  http_t *h = cls;
  httpd_req_t *r = NULL;
  /* kube-apiserver sends audit events in batches that can be far larger
   * than any batch of records. */
  size_t max =
      h->o.max_audit_body && !strcmp(url, "/v1/audit") ? h->o.max_audit_body : h->o.max_body;
  if (!*con_cls) { /* the first call: headers only */
    if (httpd_req_begin(c, con_cls, max, &h->budget, &r) != RIPPLE_OK) return MHD_NO;
    int refused;
    enum MHD_Result ans = refuse_early(h, c, url, method, r, &refused);
    if (refused) metrics_observe(&h->srv->m, ROUTE_OTHER, mono_ns() - r->start_ns);
    return ans;
  }
  int rc = httpd_req_feed(c, con_cls, data, size, max, &r);
  if (rc <= 0) return rc == 0 ? MHD_YES : MHD_NO;
  if (r->over_budget) return send_busy(c);
  int which;
  enum MHD_Result ans = route(h, c, url, method, r, &which);
  httpd_req_release(r); /* the answer is a copy: the body's bytes go back now */
  metrics_observe(&h->srv->m, which, mono_ns() - r->start_ns);
  return ans;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode toe) {
  (void)c, (void)socket_ctx;
  http_t *h = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED)
    atomic_fetch_add(&h->connections, 1);
  else
    atomic_fetch_sub(&h->connections, 1);
}

int http_start(srv_t *srv, const http_opts_t *o, http_t **out, char *err, size_t errcap) {
  http_t *h = calloc(1, sizeof *h);
  if (!h) return RIPPLE_ENOMEM;
  h->srv = srv;
  h->o = *o;
  h->budget.cap = o->max_body_in_flight;
  httpd_opts_t ho = {.host = o->host,
                     .port = o->port,
                     .tls_cert = o->tls_cert,
                     .tls_key = o->tls_key,
                     .max_connections = (unsigned)o->max_connections,
                     .timeout_s = o->idle_timeout_s,
                     .per_ip_limit = o->max_connections_per_ip,
                     .deadline_s = o->request_deadline_s,
                     .on_request = on_request,
                     .on_completed = httpd_req_done,
                     .on_connection = on_connection,
                     .cls = h};
  int rc = httpd_start(&ho, &h->d, &h->o.port, err, errcap);
  if (rc != RIPPLE_OK) {
    free(h);
    return rc;
  }
  *out = h;
  return RIPPLE_OK;
}

uint16_t http_port(const http_t *h) { return h->o.port; }

void http_stop(http_t *h) {
  if (!h) return;
  httpd_stop(h->d);
  free(h);
}
