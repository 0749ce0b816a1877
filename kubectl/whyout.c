/*
 * whyout.c - the chain of `kubectl ripple why` for people and for programs.
 *
 * Text: a line per write, the root change first, with the time since the
 * root's admission, the hop's own time (its admission minus the previous
 * write's), the component (and the user when it is another name), the write
 * and the object; under it what the write changed (a diff's entries, the
 * fields of a created object's spec, "deleted") and, when the API server
 * refused the write, its response code. Details a hop lacks are mentioned
 * once, at the end:
 *
 *   Pod demo/web-1-a: 4 writes since the root change, cpid 1111...
 *    +0.0ms           kubernetes-admin  update deployments  Deployment demo/web
 *                       /spec/replicas: 2 -> 3
 *    +9.0ms  (9.0ms)  kube-scheduler (system:kube-scheduler)  create pods/binding  Pod demo/web-1-a
 *                       /spec/nodeName: (none) -> "node-1"
 *
 * JSON: {"object", "root", "details", "hops": [...]}, each hop the span's
 * fields (as in the trace's JSON) with at_ns, hop_ns, since_cause_ns and the
 * server's "change" and "audit" as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

/* Lines of a diff and fields of a created object shown; -o json has all. */
#define DIFF_SHOWN 8
#define FIELDS_SHOWN 4
#define VALUE_MAX 80

typedef struct wout {
  FILE *f;
  int colour;
  int indent; /* of the lines under a write */
} wout_t;

static void on(const wout_t *o, const char *c) {
  if (o->colour) fputs(c, o->f);
}

static void off(const wout_t *o) {
  if (o->colour) fputs(C_RESET, o->f);
}

static void sub(const wout_t *o) { fprintf(o->f, "%*s", o->indent, ""); }

static void object_label(FILE *f, const char *kind, const char *ns, const char *name) {
  kr_put_clean(f, *kind ? kind : "?", 120);
  fputc(' ', f);
  if (*ns) {
    kr_put_clean(f, ns, 120);
    fputc('/', f);
  }
  kr_put_clean(f, *name ? name : "(generated)", 260);
}

static void refused(const wout_t *o, const kr_span_t *s) {
  long code = kr_refused_code(s);
  if (!code) return;
  const char *reason = json_string_value(json_object_get(s->audit, "reason"));
  const char *msg = json_string_value(json_object_get(s->audit, "message"));
  sub(o);
  on(o, C_RED);
  fprintf(o->f, "refused: %ld", code);
  if (reason && *reason) {
    fputc(' ', o->f);
    kr_put_clean(o->f, reason, 80);
  }
  if (msg && *msg) {
    fputs(": ", o->f);
    kr_put_clean(o->f, msg, 300);
  }
  off(o);
  fputc('\n', o->f);
}

static void diff_entry(const wout_t *o, const json_t *e) {
  char old[VALUE_MAX + 8], new_[VALUE_MAX + 8];
  sub(o);
  kr_put_clean(o->f, json_string_value(json_object_get(e, "path")), 200);
  if (json_is_true(json_object_get(e, "redacted"))) {
    fputs(": (redacted)\n", o->f);
    return;
  }
  kr_fmt_value(json_object_get(e, "old"), old, sizeof old, VALUE_MAX);
  kr_fmt_value(json_object_get(e, "new"), new_, sizeof new_, VALUE_MAX);
  fputs(": ", o->f);
  kr_put_clean(o->f, old, sizeof old);
  fputs(" -> ", o->f);
  kr_put_clean(o->f, new_, sizeof new_);
  fputc('\n', o->f);
}

/* A create: "created", and a few fields of its spec (else of the object). */
static void created(const wout_t *o, json_t *snap) {
  json_t *spec = json_object_get(snap, "spec");
  const char *prefix = json_is_object(spec) ? "spec." : "";
  if (!json_is_object(spec)) spec = snap;
  sub(o);
  fputs("created\n", o->f);
  size_t shown = 0, more = 0;
  const char *key;
  const json_t *v;
  json_object_foreach(spec, key, v) {
    if (!*prefix && (!strcmp(key, "apiVersion") || !strcmp(key, "kind") ||
                     !strcmp(key, "metadata") || !strcmp(key, "status")))
      continue;
    if (shown == FIELDS_SHOWN) {
      more++;
      continue;
    }
    char val[VALUE_MAX + 8];
    kr_fmt_value(v, val, sizeof val, VALUE_MAX);
    sub(o);
    fputs(prefix, o->f);
    kr_put_clean(o->f, key, 120);
    fputs(": ", o->f);
    kr_put_clean(o->f, val, sizeof val);
    fputc('\n', o->f);
    shown++;
  }
  if (more) {
    sub(o);
    fprintf(o->f, "… %zu more field%s\n", more, more == 1 ? "" : "s");
  }
}

/* What the write changed; 0 when there is nothing to say (no change known). */
static int change(const wout_t *o, const json_t *c) {
  if (!c) return 0;
  const char *op = json_string_value(json_object_get(c, "op"));
  const json_t *diff = json_object_get(c, "diff");
  if (op && !strcmp(op, "create")) {
    created(o, json_object_get(c, "snapshot"));
  } else if (op && !strcmp(op, "delete")) {
    sub(o);
    fputs("deleted\n", o->f);
  } else if (json_array_size(diff) == 0) {
    sub(o);
    fputs("no field changed\n", o->f);
  } else {
    size_t i;
    const json_t *e;
    json_array_foreach(diff, i, e) {
      if (i == DIFF_SHOWN) {
        sub(o);
        fprintf(o->f, "… %zu more changes (-o json has them all)\n", json_array_size(diff) - i);
        break;
      }
      diff_entry(o, e);
    }
  }
  if (json_is_true(json_object_get(c, "truncated"))) {
    sub(o);
    fputs("… (the watch agent cut this change to its size limit)\n", o->f);
  }
  return 1;
}

static void hop_line(const wout_t *o, const kr_span_t *s, const char *at, int wa, const char *hop,
                     int wh) {
  on(o, C_YELLOW);
  fprintf(o->f, "%*s", wa, at);
  off(o);
  fputs("  ", o->f);
  on(o, C_GREEN);
  fprintf(o->f, "%*s", wh, hop);
  off(o);
  fputs("  ", o->f);
  on(o, C_CYAN);
  kr_put_clean(o->f, s->service, 120);
  off(o);
  if (*s->user && strcmp(s->user, s->service) != 0) {
    fputs(" (", o->f);
    kr_put_clean(o->f, s->user, 200);
    fputc(')', o->f);
  }
  fputs("  ", o->f);
  kr_put_clean(o->f, s->name, 120);
  fputs("  ", o->f);
  on(o, C_BOLD);
  object_label(o->f, s->kind, s->ns, s->oname);
  off(o);
  fputc('\n', o->f);
}

/* "+19.0ms" and "(10.0ms)" of hop k. */
static void times(const kr_why_t *w, size_t k, char *at, char *hop, size_t cap) {
  const kr_span_t *s = &w->t->spans[w->hops[k]], *root = &w->t->spans[w->hops[0]];
  at[0] = '+';
  kr_fmt_dur(kr_diff(s->end_ns, root->end_ns), at + 1, cap - 1);
  if (at[1] == '-') memmove(at, at + 1, strlen(at));
  hop[0] = '\0';
  if (k) {
    char d[32];
    kr_fmt_dur(kr_diff(s->end_ns, w->t->spans[w->hops[k - 1]].end_ns), d, sizeof d);
    snprintf(hop, cap, "(%s)", d);
  }
}

void kr_render_why(FILE *f, const kr_why_t *w, int colour) {
  wout_t o = {f, colour, 0};
  char at[40], hop[40];
  int wa = 0, wh = 0;
  for (size_t k = 0; k < w->n; k++) {
    times(w, k, at, hop, sizeof at);
    if ((int)strlen(at) > wa) wa = (int)strlen(at);
    if ((int)strlen(hop) > wh) wh = (int)strlen(hop);
  }
  o.indent = wa + 2 + wh + 4;
  object_label(f, w->obj.kind, w->obj.ns, w->obj.name);
  fprintf(f, ": %zu write%s since the root change, cpid %s\n", w->n, w->n == 1 ? "" : "s",
          w->t->cpid);
  size_t missing = 0;
  for (size_t k = 0; k < w->n; k++) {
    const kr_span_t *s = &w->t->spans[w->hops[k]];
    times(w, k, at, hop, sizeof at);
    hop_line(&o, s, at, wa, hop, wh);
    refused(&o, s);
    if (!change(&o, s->change) && !kr_refused_code(s)) missing++;
  }
  on(&o, C_DIM);
  if (!w->t->details)
    fputs(
        "(no details: the trace server does not serve them; it is older than "
        "GET /v1/cpids/{cpid}/details)\n",
        f);
  else if (missing)
    fputs("(no details: is ripple watch running with --trace-server?)\n", f);
  off(&o);
}

json_t *kr_why_json(const kr_why_t *w) {
  const kr_trace_t *t = w->t;
  json_t *hops = json_array();
  for (size_t k = 0; hops && k < w->n; k++) {
    const kr_span_t *s = &t->spans[w->hops[k]], *root = &t->spans[w->hops[0]];
    json_t *h = kr_span_json(t, w->hops[k]);
    if (!h) continue;
    json_object_set_new(h, "at_ns", json_integer((json_int_t)kr_diff(s->end_ns, root->end_ns)));
    json_object_set_new(
        h, "hop_ns",
        k ? json_integer((json_int_t)kr_diff(s->end_ns, t->spans[w->hops[k - 1]].end_ns))
          : json_null());
    json_object_set_new(h, "since_cause_ns",
                        json_integer((json_int_t)kr_diff(s->end_ns, s->start_ns)));
    json_object_set_new(h, "change", s->change ? json_deep_copy(s->change) : json_null());
    json_object_set_new(h, "audit", s->audit ? json_deep_copy(s->audit) : json_null());
    json_array_append_new(hops, h);
  }
  const kr_why_target_t *o = &w->obj;
  return json_pack("{s:{s:s, s:s, s:s, s:s, s:o}, s:s, s:b, s:o}", "object", "kind", o->kind,
                   "namespace", o->ns, "name", o->name, "uid", o->uid, "cpid",
                   o->cpid ? json_string(o->cpid) : json_null(), "root", t->cpid, "details",
                   t->details, "hops", hops);
}
