/*
 * watch_decode.c - turns the bytes of a watch response into events.
 *
 * The API server writes one JSON document per line: {"type":...,"object":...}.
 * Bytes arrive in chunks that cut documents anywhere, so a frame that spans
 * chunks is collected here; a frame inside one chunk is decoded in place,
 * without a copy. A frame that is not a well-formed event is skipped and
 * counted, never fatal: one bad line from a proxy or a buggy server must not
 * stop a watch. A refused request (410, 403, 500...) has a bare Status as its
 * body; it is reported as an ERROR event, like the ERROR events the server
 * sends inside a stream, so the watch has one place to handle both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "watch_internal.h"

static const char *const obj_path[] = {"object", NULL};
static const char *const meta_path[] = {"object", "metadata", NULL};
static const char *const managed_path[] = {"object", "metadata", "managedFields", NULL};

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : dflt;
}

static int frame_error(json_t *status, wev_t *ev) {
  ev->type = WEV_ERROR;
  ev->obj = status;
  ev->rv = NULL;
  json_t *code = json_object_get(status, "code");
  ev->code = json_is_integer(code) ? (long)json_integer_value(code) : 0;
  ev->reason = str_or(status, "reason", "");
  ev->message = str_or(status, "message", "");
  return RIPPLE_OK;
}

static int parse_type(const char *t, wev_type_t *out) {
  static const struct {
    const char *name;
    wev_type_t type;
  } types[] = {{"ADDED", WEV_ADDED},
               {"MODIFIED", WEV_MODIFIED},
               {"DELETED", WEV_DELETED},
               {"BOOKMARK", WEV_BOOKMARK},
               {"ERROR", WEV_ERROR}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    if (strcmp(t, types[i].name) == 0) {
      *out = types[i].type;
      return 0;
    }
  }
  return -1;
}

static int classify(json_t *doc, wev_t *ev, const char **why) {
  if (!json_is_object(doc)) return *why = "not a JSON object", RIPPLE_EJSON;
  json_t *type = json_object_get(doc, "type"), *obj = json_object_get(doc, "object");
  if (!type) {
    if (strcmp(str_or(doc, "kind", ""), "Status") == 0) return frame_error(doc, ev);
    return *why = "no \"type\"", RIPPLE_EJSON;
  }
  if (!json_is_string(type)) return *why = "\"type\" is not a string", RIPPLE_EJSON;
  if (!json_is_object(obj)) return *why = "no \"object\"", RIPPLE_EJSON;
  if (parse_type(json_string_value(type), &ev->type) != 0)
    return *why = "unknown event type", RIPPLE_EJSON;
  if (ev->type == WEV_ERROR) return frame_error(obj, ev);
  json_t *md = json_object_get(obj, "metadata");
  ev->obj = obj;
  ev->rv = json_string_value(json_object_get(md, "resourceVersion"));
  ev->code = 0;
  ev->reason = ev->message = "";
  if (ev->type == WEV_BOOKMARK) {
    if (!ev->rv) return *why = "BOOKMARK without metadata.resourceVersion", RIPPLE_EJSON;
    return RIPPLE_OK;
  }
  const char *name = json_string_value(json_object_get(md, "name"));
  if (!name || !*name) return *why = "object without metadata.name", RIPPLE_EJSON;
  return RIPPLE_OK;
}

int wdec_frame(const char *p, size_t n, int flags, json_t **root, wev_t *ev, const char **why) {
  json_t *doc = NULL;
  /* Without WDEC_TREE only the metadata is built, and never its
   * managedFields: the record keeps the text, the tree serves the indexes. */
  jparse_opts_t o = {(flags & WDEC_STRIP) || !(flags & WDEC_TREE) ? managed_path : NULL,
                     flags & WDEC_TREE ? NULL : meta_path, obj_path};
  jparse_spans_t sp = {NULL, 0, NULL, 0};
  int rc = jparse_ex(p, n, &o, &doc, &sp);
  if (rc != RIPPLE_OK) {
    *why = rc == RIPPLE_ENOMEM ? "out of memory" : "not JSON";
    return rc;
  }
  rc = classify(doc, ev, why);
  if (rc != RIPPLE_OK) {
    json_decref(doc);
    return rc;
  }
  ev->text = sp.span;
  ev->text_len = sp.span_len;
  ev->cut = NULL;
  ev->cut_len = 0;
  /* A document with two "object" members could report a managedFields of
   * the one that lost; cut only inside the object kept. */
  if ((flags & WDEC_STRIP) && sp.drop && sp.span && sp.drop > sp.span &&
      sp.drop + sp.drop_len < sp.span + sp.span_len) {
    ev->cut = sp.drop;
    ev->cut_len = sp.drop_len;
  }
  *root = doc;
  return RIPPLE_OK;
}

json_t *wdec_strip(json_t *obj) {
  json_t *md = json_object_get(obj, "metadata");
  if (!json_object_get(md, "managedFields")) return json_incref(obj);
  json_t *o = json_copy(obj), *m = json_copy(md);
  if (!o || !m || json_object_del(m, "managedFields") != 0 ||
      json_object_set_new(o, "metadata", m) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* ---- framing ------------------------------------------------------------------- */

void wdec_init(wdec_t *d, size_t max_frame, int flags, wdec_fn fn, void *ud) {
  memset(d, 0, sizeof *d);
  sbuf_init(&d->part);
  d->max_frame = max_frame ? max_frame : WDEC_MAX_FRAME;
  d->flags = flags;
  d->fn = fn;
  d->ud = ud;
}

void wdec_reset(wdec_t *d) {
  d->part.len = 0;
  d->part.oom = 0;
  d->overlong = 0;
}

void wdec_free(wdec_t *d) { sbuf_free(&d->part); }

static void bad_frame(wdec_t *d, const char *why) {
  d->bad++;
  snprintf(d->why, sizeof d->why, "%s", why);
}

static int blank(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return 0;
  return 1;
}

static int decode(wdec_t *d, const char *p, size_t n) {
  if (blank(p, n)) return 0; /* keep-alive newlines are not frames */
  d->frames++;
  json_t *root;
  wev_t ev;
  const char *why = "";
  if (wdec_frame(p, n, d->flags, &root, &ev, &why) != RIPPLE_OK) {
    bad_frame(d, why);
    return 0;
  }
  int rc = d->fn(d->ud, &ev);
  json_decref(root);
  return rc;
}

/* Collect part of a frame; one that grows beyond the limit is dropped. */
static void collect(wdec_t *d, const char *p, size_t n) {
  if (d->overlong) return;
  if (d->part.len + n > d->max_frame) {
    d->frames++;
    bad_frame(d, "frame longer than the limit");
    d->overlong = 1;
    d->part.len = 0;
    return;
  }
  sbuf_put(&d->part, p, n);
  if (d->part.oom) {
    d->frames++;
    bad_frame(d, "out of memory");
    d->overlong = 1;
    d->part.len = 0;
    d->part.oom = 0;
  }
}

int wdec_feed(wdec_t *d, const char *p, size_t n) {
  while (n) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) {
      collect(d, p, n);
      return 0;
    }
    size_t len = (size_t)(nl - p);
    int rc = 0;
    if (d->overlong) {
      d->overlong = 0; /* the end of the dropped frame */
    } else if (d->part.len) {
      collect(d, p, len);
      if (!d->overlong) rc = decode(d, d->part.p, d->part.len);
      d->overlong = 0;
      d->part.len = 0;
    } else if (len > d->max_frame) {
      d->frames++;
      bad_frame(d, "frame longer than the limit");
    } else {
      rc = decode(d, p, len);
    }
    p += len + 1;
    n -= len + 1;
    if (rc) return rc;
  }
  return 0;
}

int wdec_end(wdec_t *d) {
  int rc = 0;
  if (!d->overlong && d->part.len) rc = decode(d, d->part.p, d->part.len);
  wdec_reset(d);
  return rc;
}
