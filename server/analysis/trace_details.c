/*
 * trace_details.c - the server's side of details (trace_details.h):
 * answering GET /v1/cpids/{cpid}/details by joining facts to the cascade's
 * spans. What POST /v1/details and POST /v1/audit bring is stored by
 * details_work.c.
 *
 * The joins, strictest first; a fact joins at most one span, and a fact that
 * joins nothing is shown only when it is known to belong to the cascade:
 *  - audit event to span: the span id the webhook put in the audit event's
 *    annotations (exact);
 *  - change to span: the object's uid and the resourceVersion the write
 *    started from (the span's resourceVersion attribute, the change's
 *    previousResourceVersion; a binding, a create of a subresource, updates
 *    its Pod from the version it names); else the version the audit event
 *    says was written; a create by its CPID, kind, namespace and name when exactly one
 *    span fits; a delete by uid;
 *  - changes that join no span are listed when the object's own CPID is one
 *    of the cascade's (a Pod created by generateName, named after admission);
 *  - audit events with no span id (writes the webhook never saw: refused
 *    before admission, excluded namespaces, a webhook that failed open) about
 *    the cascade's objects, in its time window, are listed as such;
 *  - Events whose involved object is one of the cascade's (by uid), in its
 *    time window, newest version of each Event only.
 */
#include "analysis/trace_details.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/details.h"
#include "analysis/fights_feed.h"
#include "graph/keytab.h"
#include "ripplex/clock.h"
#include "ripplex/cpid.h"
#include "ripplex/idle.h"
#include "ripplex/wire.h"

/* Events and audit events that come after the cascade's last write still
 * belong to it for this long (a Pod that cannot be scheduled gets its
 * FailedScheduling Events long after its create). */
#define WINDOW_AFTER_NS (10 * 60 * 1000000000LL)
#define WINDOW_BEFORE_NS (60 * 1000000000LL)
/* Facts read for one answer, at most. */
#define FACTS_MAX 100000

/* ---- the cascade's spans ------------------------------------------------------ */

typedef struct dspan {
  json_t *rec; /* borrowed from the spans array */
  const char *span_id, *cpid, *uid, *rv, *kind, *ns, *name, *op, *sub;
  json_t *change, *audit; /* joined facts (new references) */
} dspan_t;

typedef struct dq {
  dspan_t *sp;
  size_t nsp;
  json_t *spans;                       /* the span records */
  keytab_t by_span, uids, cpids, objs; /* span id -> dspan; sets */
  json_t *facts;                       /* every fact read, parsed */
  keytab_t seen;                       /* facts read, by seq */
  int64_t since, until;
  int truncated, oom;
} dq_t;

static void seqs_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 256;
    uint64_t *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return;
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = x;
}

typedef struct seqs {
  uint64_t *v;
  size_t n, cap;
} seqs_t;
static void push_seq(void *ud, uint64_t seq) {
  seqs_t *s = ud;
  seqs_push(&s->v, &s->n, &s->cap, seq);
}

static void set_add(dq_t *q, keytab_t *t, const char *k) {
  keytab_slot_t *slot;
  if (k && *k && keytab_put(t, k, strlen(k), &slot) != RIPPLE_OK) q->oom = 1;
}

static const char *attr(const json_t *rec, const char *k) {
  const char *v = json_string_value(json_object_get(json_object_get(rec, "attributes"), k));
  return v ? v : "";
}

static int index_spans(tdet_t *s, const seqs_t *rows, const keytab_t *keep, dq_t *q);

/* The related CPIDs' spans, read and indexed. Returns an HTTP status. */
static int load_spans(tdet_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                      dq_t *q) {
  vid_t *vs;
  size_t n;
  seqs_t rows = {0};
  pthread_rwlock_rdlock(&s->core->lock);
  int rc = graph_cascade(s->core->g, cpid, scope, limit, &vs, &n, &q->truncated);
  if (rc != RIPPLE_OK) {
    pthread_rwlock_unlock(&s->core->lock);
    return rc == RIPPLE_ENOENT ? 404 : 503;
  }
  for (size_t i = 0; i < n; i++) {
    char t[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(graph_cpid(s->core->g, vs[i]), t);
    set_add(q, &q->cpids, t);
    graph_span_seqs(s->core->g, vs[i], push_seq, &rows);
  }
  pthread_rwlock_unlock(&s->core->lock);
  free(vs);
  rc = index_spans(s, &rows, NULL, q);
  free(rows.v);
  return rc;
}

/* The spans of rows, read and indexed: those whose span id keep holds (NULL:
 * all). Returns an HTTP status. */
static int index_spans(tdet_t *s, const seqs_t *rows, const keytab_t *keep, dq_t *q) {
  sbuf_t b;
  sbuf_init(&b);
  int first = 1;
  sbuf_putc(&b, '[');
  int rc = store_bodies(s->core->store, DEC_SPANS, rows->v, rows->n, &b, &first);
  sbuf_putc(&b, ']');
  q->spans = rc == RIPPLE_OK && !b.oom ? json_loadb(b.p, b.len, 0, NULL) : NULL;
  sbuf_free(&b);
  if (!q->spans) return 503;
  for (size_t i = json_array_size(q->spans); keep && i-- > 0;) {
    const char *id = json_string_value(json_object_get(json_array_get(q->spans, i), "span_id"));
    if (!id || !keytab_get(keep, id, strlen(id))) json_array_remove(q->spans, i);
  }
  q->nsp = json_array_size(q->spans);
  q->sp = calloc(q->nsp ? q->nsp : 1, sizeof *q->sp);
  if (!q->sp) return 503;
  q->since = INT64_MAX, q->until = INT64_MIN;
  for (size_t i = 0; i < q->nsp; i++) {
    json_t *r = json_array_get(q->spans, i);
    dspan_t *d = &q->sp[i];
    *d = (dspan_t){r,
                   json_string_value(json_object_get(r, "span_id")),
                   json_string_value(json_object_get(r, "cpid")),
                   attr(r, "uid"),
                   attr(r, "resourceVersion"),
                   attr(r, "kind"),
                   attr(r, "namespace"),
                   attr(r, "name"),
                   attr(r, "operation"),
                   attr(r, "subresource"),
                   NULL,
                   NULL};
    int64_t t0, t1;
    const char *st = json_string_value(json_object_get(r, "start"));
    const char *en = json_string_value(json_object_get(r, "end"));
    if (st && ripple_time_parse(st, strlen(st), &t0) == RIPPLE_OK && t0 < q->since) q->since = t0;
    if (en && ripple_time_parse(en, strlen(en), &t1) == RIPPLE_OK && t1 > q->until) q->until = t1;
    keytab_slot_t *slot;
    if (d->span_id && keytab_put(&q->by_span, d->span_id, strlen(d->span_id), &slot) == RIPPLE_OK)
      slot->val = d;
    set_add(q, &q->uids, d->uid);
    if (*d->name) {
      char o[600];
      snprintf(o, sizeof o, "%s/%s", d->ns, d->name);
      set_add(q, &q->objs, o);
    }
  }
  if (q->since > q->until) q->since = q->until = 0;
  q->since -= WINDOW_BEFORE_NS;
  q->until += WINDOW_AFTER_NS;
  return 200;
}

/* ---- facts --------------------------------------------------------------------- */

typedef struct dfact {
  fact_type_t type;
  int64_t time;
  char *k[9]; /* uid, kind, ns, name, rv, prev_rv, span_id, cpid, op (copies, "" absent) */
  json_t *body;
  int used; /* joined to a span */
} dfact_t;
enum { K_UID, K_KIND, K_NS, K_NAME, K_RV, K_PREV, K_SPAN, K_CPID, K_OP };

typedef struct dfacts {
  dfact_t *v;
  size_t n, cap;
  keytab_t seen; /* by seq */
  int oom;
} dfacts_t;

static int take_fact(void *ud, uint64_t seq, const fact_t *f) {
  dfacts_t *a = ud;
  keytab_slot_t *slot;
  if (keytab_get(&a->seen, (const char *)&seq, sizeof seq)) return 0;
  if (keytab_put(&a->seen, (const char *)&seq, sizeof seq, &slot) != RIPPLE_OK) return a->oom = 1;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    dfact_t *nv = realloc(a->v, cap * sizeof *nv);
    if (!nv) return a->oom = 1;
    a->v = nv;
    a->cap = cap;
  }
  dfact_t *d = &a->v[a->n];
  *d = (dfact_t){f->type, f->time, {0}, json_loadb(f->body, f->body_len, 0, NULL), 0};
  const char *k[9] = {f->uid,     f->kind,    f->ns,   f->name, f->rv,
                      f->prev_rv, f->span_id, f->cpid, f->op};
  for (int i = 0; i < 9; i++) d->k[i] = strdup(k[i] ? k[i] : "");
  for (int i = 0; i < 9; i++)
    if (!d->k[i]) a->oom = 1;
  if (!d->body) a->oom = 1;
  a->n++;
  return a->oom;
}

static void dfacts_free(dfacts_t *a) {
  for (size_t i = 0; i < a->n; i++) {
    for (int k = 0; k < 9; k++) free(a->v[i].k[k]);
    json_decref(a->v[i].body);
  }
  free(a->v);
  keytab_free(&a->seen, NULL);
}

/* The keys of a set, borrowed from it. */
static const char **keys_of(const keytab_t *t, size_t *n) {
  const char **k = malloc((t->n ? t->n : 1) * sizeof *k);
  *n = 0;
  for (size_t i = 0; k && t->slot && i <= t->mask; i++)
    if (t->slot[i].key) k[(*n)++] = t->slot[i].key;
  return k;
}

/* One lookup with whatever sets are given (NULL: none). */
static int lookup(tdet_t *s, dq_t *q, const keytab_t *spans, const keytab_t *uids,
                  const keytab_t *cpids, const keytab_t *objs, dfacts_t *out) {
  facts_query_t fq = {.since = q->since, .until = q->until, .limit = FACTS_MAX};
  const char **a = spans ? keys_of(spans, &fq.nspan_ids) : NULL;
  const char **b = uids ? keys_of(uids, &fq.nuids) : NULL;
  const char **c = cpids ? keys_of(cpids, &fq.ncpids) : NULL;
  const char **d = objs ? keys_of(objs, &fq.nobjects) : NULL;
  fq.span_ids = a, fq.uids = b, fq.cpids = c, fq.objects = d;
  int rc = (spans && !a) || (uids && !b) || (cpids && !c) || (objs && !d)
               ? RIPPLE_ENOMEM
               : facts_lookup(s->core->facts, &fq, take_fact, out);
  free(a), free(b), free(c), free(d);
  return rc == RIPPLE_OK && !out->oom ? RIPPLE_OK : RIPPLE_ESYS;
}

/* ---- joining ------------------------------------------------------------------- */

static int eq(const char *a, const char *b) { return a && b && *a && !strcmp(a, b); }

static dspan_t *span_of(dq_t *q, const char *span_id) {
  keytab_slot_t *slot = *span_id ? keytab_get(&q->by_span, span_id, strlen(span_id)) : NULL;
  return slot ? slot->val : NULL;
}

static void join_audit(dq_t *q, dfacts_t *f) {
  for (size_t i = 0; i < f->n; i++) {
    dfact_t *a = &f->v[i];
    dspan_t *d = a->type == FACT_AUDIT ? span_of(q, a->k[K_SPAN]) : NULL;
    if (!d || d->audit) continue;
    d->audit = json_incref(a->body);
    a->used = 1;
  }
}

/* Changes by the keys a span can find them by (the rules at the top of this
 * file): "u" uid, previous version (an update); "w" uid, version written (as
 * an audit event names it); "d" uid (a delete); "c" CPID, kind, namespace,
 * name (a create). The first change under a key wins. */
static void key_of(sbuf_t *k, char tag, const char *a, const char *b, const char *c,
                   const char *d) {
  k->len = 0;
  sbuf_putc(k, tag);
  const char *v[] = {a, b, c, d};
  for (int i = 0; i < 4 && v[i]; i++) {
    sbuf_putc(k, '\x1f');
    sbuf_puts(k, v[i]);
  }
}

static void index_put(dq_t *q, keytab_t *ix, const sbuf_t *k, dfact_t *c) {
  keytab_slot_t *slot;
  if (!k->len || k->oom) return;
  if (keytab_put(ix, k->p, k->len, &slot) != RIPPLE_OK)
    q->oom = 1;
  else if (!slot->val)
    slot->val = c;
}

static void index_change(dq_t *q, keytab_t *ix, sbuf_t *k, dfact_t *c) {
  const char *op = c->k[K_OP], *uid = c->k[K_UID];
  if (!*uid) return;
  k->len = 0;
  if (!strcmp(op, "update") && *c->k[K_PREV])
    key_of(k, 'u', uid, c->k[K_PREV], NULL, NULL);
  else if (!strcmp(op, "delete"))
    key_of(k, 'd', uid, NULL, NULL, NULL);
  else if (!strcmp(op, "create") && *c->k[K_CPID])
    key_of(k, 'c', c->k[K_CPID], c->k[K_KIND], c->k[K_NS], c->k[K_NAME]);
  index_put(q, ix, k, c);
  if (!*c->k[K_RV]) return;
  key_of(k, 'w', uid, c->k[K_RV], NULL, NULL);
  index_put(q, ix, k, c);
}

static dfact_t *find_change(const keytab_t *ix, const sbuf_t *k) {
  keytab_slot_t *slot = k->len && !k->oom ? keytab_get(ix, k->p, k->len) : NULL;
  dfact_t *c = slot ? slot->val : NULL;
  return c && !c->used ? c : NULL;
}

static dfact_t *change_for(const dspan_t *d, const keytab_t *ix, sbuf_t *k) {
  dfact_t *c = NULL;
  if (d->audit) {
    const json_t *ref = json_object_get(d->audit, "object");
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    const char *rv = json_string_value(json_object_get(d->audit, "writtenResourceVersion"));
    if (uid && rv) key_of(k, 'w', uid, rv, NULL, NULL), c = find_change(ix, k);
  }
  if (c) return c;
  /* A write of a subresource (a binding is a create of one) updates its
   * object, from the version it names. */
  int update = !strcmp(d->op, "UPDATE") || (*d->sub && !strcmp(d->op, "CREATE"));
  if (update && *d->uid && *d->rv)
    key_of(k, 'u', d->uid, d->rv, NULL, NULL);
  else if (!strcmp(d->op, "DELETE") && *d->uid)
    key_of(k, 'd', d->uid, NULL, NULL, NULL);
  else if (!strcmp(d->op, "CREATE") && d->cpid && *d->name)
    key_of(k, 'c', d->cpid, d->kind, d->ns, d->name);
  else
    return NULL;
  return find_change(ix, k);
}

static void join_changes(dq_t *q, dfacts_t *f) {
  keytab_t ix;
  sbuf_t k;
  keytab_init(&ix);
  sbuf_init(&k);
  for (size_t i = 0; i < f->n; i++)
    if (f->v[i].type == FACT_CHANGE) index_change(q, &ix, &k, &f->v[i]);
  for (size_t i = 0; i < q->nsp; i++) {
    dspan_t *d = &q->sp[i];
    dfact_t *c = change_for(d, &ix, &k);
    if (!c) continue;
    d->change = json_incref(c->body);
    c->used = 1;
  }
  sbuf_free(&k);
  keytab_free(&ix, NULL);
}

/* Objects the facts name that the cascade's spans did not: objects it
 * created (their audit events, their changes' CPIDs), by uid and by
 * namespace/name (audit events of writes refused before admission name no
 * uid). */
static void more_objects(dq_t *q, dfacts_t *f, keytab_t *out, keytab_t *objs) {
  for (size_t i = 0; i < f->n; i++) {
    dfact_t *a = &f->v[i];
    int ours = (a->type == FACT_AUDIT && span_of(q, a->k[K_SPAN])) ||
               (a->type == FACT_CHANGE && *a->k[K_CPID] &&
                keytab_get(&q->cpids, a->k[K_CPID], strlen(a->k[K_CPID])));
    if (!ours) continue;
    if (*a->k[K_UID] && !keytab_get(&q->uids, a->k[K_UID], strlen(a->k[K_UID])))
      set_add(q, out, a->k[K_UID]);
    char o[600];
    snprintf(o, sizeof o, "%s/%s", a->k[K_NS], a->k[K_NAME]);
    if (*a->k[K_NAME] && !keytab_get(&q->objs, o, strlen(o))) set_add(q, objs, o);
  }
}

/* ---- the answer ------------------------------------------------------------------ */

static void put_json(sbuf_t *o, const json_t *v) {
  char *t = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
  if (t)
    sbuf_puts(o, t);
  else
    sbuf_puts(o, "null");
  free(t);
}

static void answer_writes(const dq_t *q, sbuf_t *o) {
  sbuf_puts(o, ",\"writes\":[");
  int first = 1;
  for (size_t i = 0; i < q->nsp; i++) {
    const dspan_t *d = &q->sp[i];
    if (!d->change && !d->audit) continue;
    sbuf_puts(o, first ? "{\"span_id\":" : ",{\"span_id\":");
    first = 0;
    sbuf_json_str(o, d->span_id ? d->span_id : "");
    sbuf_puts(o, ",\"change\":");
    put_json(o, d->change ? d->change : json_null());
    sbuf_puts(o, ",\"audit\":");
    put_json(o, d->audit ? d->audit : json_null());
    sbuf_putc(o, '}');
  }
  sbuf_putc(o, ']');
}

/* The newest version of each Event (by the Event's own uid). */
static int newest_event(const dfacts_t *f, size_t i) {
  const char *uid = json_string_value(json_object_get(f->v[i].body, "uid"));
  for (size_t k = 0; uid && k < f->n; k++) {
    if (k == i || f->v[k].type != FACT_EVENT) continue;
    const char *u = json_string_value(json_object_get(f->v[k].body, "uid"));
    int64_t tk = f->v[k].time, ti = f->v[i].time;
    if (eq(u, uid) && (tk > ti || (tk == ti && k > i))) return 0;
  }
  return 1;
}

static void answer_rest(const dq_t *q, const dfacts_t *f, const keytab_t *uids2, sbuf_t *o) {
  static const char *const lists[] = {"changes", "events", "audit"};
  for (int l = 0; l < 3; l++) {
    sbuf_printf(o, ",\"%s\":[", lists[l]);
    int first = 1;
    for (size_t i = 0; i < f->n; i++) {
      const dfact_t *a = &f->v[i];
      const char *uid = a->k[K_UID];
      int ours_obj =
          *uid && (keytab_get(&q->uids, uid, strlen(uid)) || keytab_get(uids2, uid, strlen(uid)));
      int show = 0;
      if (l == 0)
        show = a->type == FACT_CHANGE && !a->used && *a->k[K_CPID] &&
               keytab_get(&q->cpids, a->k[K_CPID], strlen(a->k[K_CPID]));
      else if (l == 1)
        show = a->type == FACT_EVENT && ours_obj && a->time >= q->since && a->time <= q->until &&
               newest_event(f, i);
      else
        show = a->type == FACT_AUDIT && !a->used && !*a->k[K_SPAN];
      if (!show) continue;
      if (!first) sbuf_putc(o, ',');
      first = 0;
      put_json(o, a->body);
    }
    sbuf_putc(o, ']');
  }
}

static void dq_free(dq_t *q) {
  for (size_t i = 0; i < q->nsp; i++) {
    json_decref(q->sp[i].change);
    json_decref(q->sp[i].audit);
  }
  free(q->sp);
  json_decref(q->spans);
  keytab_free(&q->by_span, NULL);
  keytab_free(&q->uids, NULL);
  keytab_free(&q->cpids, NULL);
  keytab_free(&q->objs, NULL);
}

/* The facts about q's spans and objects read (and those about the objects
 * the facts name: more_objects) into f, and joined to the spans. */
static int join_facts(tdet_t *s, dq_t *q, dfacts_t *f, keytab_t *uids2, keytab_t *objs2) {
  if (lookup(s, q, &q->by_span, &q->uids, &q->cpids, &q->objs, f) != RIPPLE_OK) return 503;
  more_objects(q, f, uids2, objs2);
  if ((uids2->n || objs2->n) && lookup(s, q, NULL, uids2, NULL, objs2, f) != RIPPLE_OK) return 503;
  join_audit(q, f);
  join_changes(q, f);
  return 200;
}

int tdet_answer(tdet_t *s, const ripple_cpid_t *cpid, graph_scope_t scope, size_t limit,
                sbuf_t *out) {
  if (!limit || limit > s->query_limit) limit = s->query_limit;
  dq_t q = {0};
  dfacts_t f = {0};
  keytab_t uids2, objs2;
  keytab_init(&q.by_span), keytab_init(&q.uids), keytab_init(&q.cpids), keytab_init(&q.objs);
  keytab_init(&f.seen), keytab_init(&uids2), keytab_init(&objs2);
  int status = load_spans(s, cpid, scope, limit, &q);
  if (status == 200) status = join_facts(s, &q, &f, &uids2, &objs2);
  if (status == 200 && !q.oom) {
    sbuf_puts(out, "{\"cpid\":");
    wire_cpid(out, cpid);
    sbuf_printf(out, ",\"truncated\":%s", q.truncated ? "true" : "false");
    answer_writes(&q, out);
    answer_rest(&q, &f, &uids2, out);
    sbuf_putc(out, '}');
  }
  if (q.oom) status = 503;
  dfacts_free(&f);
  keytab_free(&uids2, NULL);
  keytab_free(&objs2, NULL);
  dq_free(&q);
  return status;
}

int tdet_span_writes(tdet_t *s, const ripple_cpid_t *cpids, size_t n, const char *const *span_ids,
                     size_t nspans, sbuf_t *out) {
  dq_t q = {0};
  dfacts_t f = {0};
  keytab_t keep, uids2, objs2;
  seqs_t rows = {0};
  keytab_init(&q.by_span), keytab_init(&q.uids), keytab_init(&q.cpids), keytab_init(&q.objs);
  keytab_init(&f.seen), keytab_init(&keep), keytab_init(&uids2), keytab_init(&objs2);
  for (size_t i = 0; i < nspans; i++) set_add(&q, &keep, span_ids[i]);
  pthread_rwlock_rdlock(&s->core->lock);
  for (size_t i = 0; i < n; i++) {
    char t[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(&cpids[i], t);
    vid_t v = keytab_get(&q.cpids, t, strlen(t)) ? 0 : graph_find(s->core->g, &cpids[i]);
    if (!v) continue; /* unknown, or its spans read already */
    set_add(&q, &q.cpids, t);
    graph_span_seqs(s->core->g, v, push_seq, &rows);
  }
  pthread_rwlock_unlock(&s->core->lock);
  int status = index_spans(s, &rows, &keep, &q);
  free(rows.v);
  if (status == 200) status = join_facts(s, &q, &f, &uids2, &objs2);
  if (status == 200 && !q.oom) {
    sbuf_puts(out, "{\"spans\":");
    sbuf_printf(out, "%zu", q.nsp);
    answer_writes(&q, out);
    sbuf_putc(out, '}');
  }
  if (q.oom) status = 503;
  dfacts_free(&f);
  keytab_free(&keep, NULL), keytab_free(&uids2, NULL), keytab_free(&objs2, NULL);
  dq_free(&q);
  return status;
}
