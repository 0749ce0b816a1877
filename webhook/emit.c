/*
 * emit.c - the engine's records on their way to its sink (emit.h).
 *
 * Mergelogs are made by libripple's tracer (ripple_root, ripple_merge) and
 * pass through a sink of ours on their way to the real one, so that each
 * names the component whose write caused it rather than the webhook, and so
 * that a dry run sends nothing (the registration says sideEffects:
 * NoneOnDryRun). Spans are built here, not with ripple_span_*, because their
 * service is the writer, which changes from request to request.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "ripplex/rnd.h"

/* A copy of s of at most WH_ATTR_MAX bytes in buf: a longer one is cut at a
 * UTF-8 character's start and ends in "...", so a reader sees it was cut.
 * Returns s itself when it fits (or is NULL); *cut is set when it did not. */
static const char *bounded(const char *s, char buf[WH_ATTR_MAX + 1], int *cut) {
  if (!s) return s;
  size_t n = strnlen(s, WH_ATTR_MAX + 1);
  if (n <= WH_ATTR_MAX) return s;
  n = WH_ATTR_MAX - 3;
  while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* not inside a character */
  memcpy(buf, s, n);
  memcpy(buf + n, "...", 4);
  *cut = 1;
  return buf;
}

static _Thread_local const char *tl_component;
static _Thread_local int tl_quiet;
static _Thread_local ripple_cpid_t tl_trigger[WH_SOURCES_MAX + 1];
static _Thread_local size_t tl_ntrigger;

void wh_sink_scope(const char *component, int quiet) {
  tl_component = component;
  tl_quiet = quiet;
  tl_ntrigger = 0;
}

void wh_sink_trigger(const ripple_cpid_t *ids, size_t n) {
  if (n > sizeof tl_trigger / sizeof tl_trigger[0]) n = 0; /* not known: every source */
  if (n) memcpy(tl_trigger, ids, n * sizeof *ids);
  tl_ntrigger = n;
}

/* ml's sources that the scope names as its trigger, each once, into out. The
 * trace server refuses a whole batch for one trigger list that repeats a CPID
 * or names one that is not a source (docs/api.md), so the list is made from
 * the sources (distinct, ripple_merge's), never from the scope's as given:
 * the object's own context can be among its sources too. */
static size_t trigger_of(const ripple_mergelog_t *ml, ripple_cpid_t *out) {
  size_t n = 0;
  for (size_t k = 0; k < ml->nsources && n <= WH_SOURCES_MAX; k++)
    for (size_t i = 0; i < tl_ntrigger; i++)
      if (ripple_cpid_equal(&tl_trigger[i], &ml->sources[k])) {
        out[n++] = ml->sources[k];
        break;
      }
  return n;
}

void wh_sink_mergelog(void *ud, const ripple_mergelog_t *ml) {
  wh_t *w = ud;
  if (tl_quiet || !w->down.mergelog) return;
  ripple_mergelog_t copy = *ml;
  if (tl_component) copy.component = tl_component;
  ripple_cpid_t trig[WH_SOURCES_MAX + 1];
  if (ml->nsources && tl_ntrigger) {
    copy.ntrigger = trigger_of(ml, trig);
    copy.trigger = copy.ntrigger ? trig : NULL;
  }
  /* The trace server refuses a whole batch over one long string. */
  static _Thread_local char b[4][WH_ATTR_MAX + 1];
  int cut = 0;
  ripple_objref_t obj;
  copy.component = bounded(copy.component, b[0], &cut);
  if (ml->object) {
    obj = *ml->object;
    obj.kind = bounded(obj.kind, b[1], &cut);
    obj.namespace_ = bounded(obj.namespace_, b[2], &cut);
    obj.name = bounded(obj.name, b[3], &cut);
    copy.object = &obj;
  }
  if (cut) atomic_fetch_add(&w->m.truncated, 1);
  w->down.mergelog(w->down.ud, &copy);
}

uint64_t wh_span_id(wh_t *w) {
  uint64_t id = 0;
  while (!id) {
    int rc = w->o.random ? w->o.random(w->o.hook_ud, &id, sizeof id) : rnd_bytes(&id, sizeof id);
    if (rc != 0) return 1; /* still a valid id; collisions only blur a trace */
  }
  return id;
}

/* "update pods/status": the verb in lower case, the resource, the subresource. */
static void span_name(const wh_review_t *r, char *out, size_t cap) {
  char verb[16];
  size_t i = 0;
  for (; i < sizeof verb - 1 && r->op_name[i]; i++)
    verb[i] =
        (char)(r->op_name[i] >= 'A' && r->op_name[i] <= 'Z' ? r->op_name[i] + 32 : r->op_name[i]);
  verb[i] = '\0';
  snprintf(out, cap, "%s %s%s%s", verb, r->resource, *r->subresource ? "/" : "", r->subresource);
}

/* The attribute keys are a contract with kubectl-ripple and the dashboard
 * (docs/webhook.md): the first seven always, then subresource, lastCpid,
 * spontaneous, owner and the API server's span (its traceparent header, hex
 * validated on arrival) when they apply. */
void wh_emit_span(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t end) {
  if (!w->down.span) return;
  char name[192], last[RIPPLE_CPID_STRLEN + 1] = "";
  span_name(r, name, sizeof name);
  /* Every string that came in the request is bounded (bounded()): the
   * trace server refuses a whole batch, other writes' spans included, over
   * one string past its limit. */
  static _Thread_local char b[5][WH_ATTR_MAX + 1];
  int cut = 0;
  ripple_attr_t attrs[15] = {
      {"kind", d->kind},
      {"namespace", bounded(r->ns, b[0], &cut)},
      {"name", bounded(r->name, b[1], &cut)},
      {"uid", d->uid},
      {"resourceVersion", d->rv},
      {"user", bounded(r->user, b[2], &cut)},
      {"operation", bounded(r->op_name, b[3], &cut)},
  };
  size_t nattrs = 7;
  if (*r->subresource)
    attrs[nattrs++] = (ripple_attr_t){"subresource", bounded(r->subresource, b[4], &cut)};
  if (d->has_last) {
    ripple_cpid_format(&d->last, last);
    attrs[nattrs++] = (ripple_attr_t){"lastCpid", last};
  }
  if (d->spontaneous) attrs[nattrs++] = (ripple_attr_t){"spontaneous", "true"};
  if (d->cause_unknown) attrs[nattrs++] = (ripple_attr_t){"causeUnknown", "true"};
  if (*d->owner) attrs[nattrs++] = (ripple_attr_t){"owner", d->owner};
  if (*r->apiserver_trace && *r->apiserver_span) {
    attrs[nattrs++] = (ripple_attr_t){"apiserverTraceId", r->apiserver_trace};
    attrs[nattrs++] = (ripple_attr_t){"apiserverSpanId", r->apiserver_span};
  }
  if (cut) {
    attrs[nattrs++] = (ripple_attr_t){"truncated", "true"};
    atomic_fetch_add(&w->m.truncated, 1);
  }
  ripple_span_rec_t sp = {
      d->ctx.cpid, d->span_id ? d->span_id : wh_span_id(w), d->parent_id, d->service, name,
      d->start_ns, end < d->start_ns ? d->start_ns : end,   attrs,        nattrs};
  w->down.span(w->down.ud, &sp);
  atomic_fetch_add(&w->m.spans, 1);
  /* A controller's write with a known cause is a hop. */
  if (!d->root && !d->spontaneous && !d->cause_unknown && d->start_ns < end)
    wh_metrics_hop(&w->m, d->service, name, end - d->start_ns);
}
