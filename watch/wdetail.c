/*
 * wdetail.c - see wdetail.h.
 */
#include "wdetail.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

#define MESSAGE_MAX 1024

static const char *str(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

static void set_str(json_t *o, const char *k, const char *v) {
  if (v && *v) json_object_set_new(o, k, json_string(v));
}

static void set_time(json_t *o, int64_t ns) {
  char t[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ns, t);
  json_object_set_new(o, "time", json_string(t));
}

static int dump(json_t *rec, char **out, size_t *len) {
  char *t = json_dumps(rec, JSON_COMPACT);
  json_decref(rec);
  if (!t) return RIPPLE_ENOMEM;
  *out = t;
  *len = strlen(t);
  return RIPPLE_OK;
}

/* The object an Event is about: core/v1's involvedObject or events.k8s.io's
 * regarding. */
static json_t *event_object(const json_t *ev) {
  const json_t *o = json_object_get(ev, "involvedObject");
  if (!json_is_object(o)) o = json_object_get(ev, "regarding");
  if (!json_is_object(o) || !str(o, "kind") || !str(o, "name")) return NULL;
  json_t *r = json_object();
  static const char *const keys[] = {"apiVersion", "kind", "namespace", "name", "uid"};
  for (int i = 0; i < 5; i++) set_str(r, keys[i], str(o, keys[i]));
  return r;
}

/* The time an Event last happened, as RFC 3339 text, or NULL. */
static const char *event_time(const json_t *ev) {
  const char *t = str(json_object_get(ev, "series"), "lastObservedTime");
  if (!t) t = str(ev, "lastTimestamp");
  if (!t) t = str(ev, "eventTime");
  if (!t) t = str(ev, "deprecatedLastTimestamp");
  if (!t) t = str(json_object_get(ev, "metadata"), "creationTimestamp");
  return t;
}

static int format_event(const ripple_kube_event_t *e, const json_t *ev, char **out, size_t *len) {
  if (e->type == RIPPLE_KUBE_DELETED) return RIPPLE_ENOENT;
  json_t *obj = event_object(ev);
  if (!obj) return RIPPLE_ENOENT;
  json_t *rec = json_object();
  json_object_set_new(rec, "type", json_string("event"));
  const char *t = event_time(ev);
  int64_t ns;
  set_time(rec, t && ripple_time_parse(t, strlen(t), &ns) == RIPPLE_OK ? ns : e->time_ns);
  json_object_set_new(rec, "object", obj);
  set_str(rec, "reason", str(ev, "reason"));
  const char *msg = str(ev, "message");
  if (!msg) msg = str(ev, "note");
  if (msg && strlen(msg) > MESSAGE_MAX) {
    char cut[MESSAGE_MAX + 4];
    size_t n = MESSAGE_MAX;
    while (n && ((unsigned char)msg[n] & 0xC0) == 0x80) n--; /* a whole character */
    snprintf(cut, sizeof cut, "%.*s...", (int)n, msg);
    set_str(rec, "message", cut);
  } else {
    set_str(rec, "message", msg);
  }
  set_str(rec, "eventType", str(ev, "type"));
  const char *src = str(json_object_get(ev, "source"), "component");
  if (!src) src = str(ev, "reportingController");
  if (!src) src = str(ev, "reportingComponent");
  set_str(rec, "source", src);
  set_str(rec, "action", str(ev, "action"));
  set_str(rec, "uid", str(json_object_get(ev, "metadata"), "uid"));
  set_str(rec, "firstTime", str(ev, "firstTimestamp"));
  const json_t *n = json_object_get(ev, "count");
  if (!json_is_integer(n)) n = json_object_get(json_object_get(ev, "series"), "count");
  if (json_is_integer(n) && json_integer_value(n) >= 0)
    json_object_set_new(rec, "count", json_integer(json_integer_value(n)));
  return dump(rec, out, len);
}

/* The object's own CPID: its context under its kind's key. */
static void own_cpid(const ripple_kube_event_t *e, const char *kind, json_t *rec) {
  ripple_ctx_t ctx;
  char lower[128], id[RIPPLE_CPID_STRLEN + 1];
  size_t n = strlen(kind);
  if (n >= sizeof lower) n = sizeof lower - 1;
  for (size_t i = 0; i < n; i++)
    lower[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z' ? kind[i] + 32 : kind[i]);
  lower[n] = '\0';
  if (ripple_object_get_ctx(e->obj_text, e->obj_len, lower, RIPPLE_ANC_MAX, &ctx) != RIPPLE_OK)
    return;
  ripple_cpid_format(&ctx.cpid, id);
  set_str(rec, "cpid", id);
}

static int format_change(const ripple_kube_event_t *e, const wdetail_res_t *res, const json_t *obj,
                         const wdiff_redact_t *redact, char **out, size_t *len) {
  const json_t *m = json_object_get(obj, "metadata");
  const char *kind = str(obj, "kind") ? str(obj, "kind") : res->kind;
  json_t *rec = json_object(), *ref = json_object();
  json_object_set_new(rec, "type", json_string("change"));
  set_time(rec, e->time_ns);
  set_str(ref, "apiVersion", str(obj, "apiVersion") ? str(obj, "apiVersion") : res->api_version);
  set_str(ref, "kind", kind);
  set_str(ref, "namespace", str(m, "namespace"));
  set_str(ref, "name", str(m, "name"));
  set_str(ref, "uid", str(m, "uid"));
  json_object_set_new(rec, "object", ref);
  set_str(rec, "resourceVersion", e->rv);
  own_cpid(e, kind ? kind : "", rec);
  json_t *old = e->old_text ? json_loadb(e->old_text, e->old_len, 0, NULL) : NULL;
  int upd = e->type == RIPPLE_KUBE_MODIFIED && json_is_object(old);
  json_object_set_new(rec, "op",
                      json_string(e->type == RIPPLE_KUBE_ADDED     ? "create"
                                  : e->type == RIPPLE_KUBE_DELETED ? "delete"
                                                                   : "update"));
  /* The object as the diff sees it says its kind: a list item may not. */
  json_t *o2 = json_copy((json_t *)obj);
  if (kind) json_object_set_new(o2, "kind", json_string(kind));
  json_t *part = NULL;
  int truncated = 0, rc;
  wdiff_limits_t lim = {0}; /* the defaults */
  if (upd) {
    set_str(rec, "previousResourceVersion",
            str(json_object_get(old, "metadata"), "resourceVersion"));
    if (kind) json_object_set_new(old, "kind", json_string(kind));
    rc = wdiff_diff(old, o2, redact, &lim, &part, &truncated);
  } else {
    rc = wdiff_snapshot(o2, redact, &lim, &part, &truncated);
  }
  json_decref(o2);
  json_decref(old);
  if (rc != RIPPLE_OK) {
    json_decref(rec);
    return rc;
  }
  json_object_set_new(rec, upd ? "diff" : "snapshot", part);
  if (truncated) json_object_set_new(rec, "truncated", json_true());
  return dump(rec, out, len);
}

int wdetail_format(const ripple_kube_event_t *e, const wdetail_res_t *res,
                   const wdiff_redact_t *redact, char **out, size_t *len) {
  json_t *obj = json_loadb(e->obj_text, e->obj_len, 0, NULL);
  if (!json_is_object(obj)) {
    json_decref(obj);
    return RIPPLE_EJSON;
  }
  int rc =
      res->events ? format_event(e, obj, out, len) : format_change(e, res, obj, redact, out, len);
  json_decref(obj);
  return rc;
}
