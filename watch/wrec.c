/*
 * wrec.c - the record of one change, as ripple-watch writes it (one JSON
 * line; the format is docs/watch.md's contract with the analyzer).
 */
#include "wrec.h"

#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"

const char *wrec_op(ripple_kube_event_type_t t) {
  switch (t) {
    case RIPPLE_KUBE_ADDED: return "add";
    case RIPPLE_KUBE_MODIFIED: return "update";
    case RIPPLE_KUBE_DELETED: return "delete";
  }
  return "update";
}

static const char *md_str(const json_t *obj, const char *key) {
  const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
  return s ? s : "";
}

int wrec_format(const ripple_kube_event_t *ev, const char *resource, char **out, size_t *len) {
  if (!ev || !ev->obj || !resource || !out || !len) return RIPPLE_EINVAL;
  char ts[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(ev->time_ns, ts);
  /* jansson keeps insertion order, so the keys come out as documented. */
  json_t *r = json_object();
  if (!r) return RIPPLE_ENOMEM;
  json_object_set_new(r, "time", json_string(ts));
  json_object_set_new(r, "time_ns", json_integer(ev->time_ns));
  json_object_set_new(r, "op", json_string(wrec_op(ev->type)));
  json_object_set_new(r, "resource", json_string(resource));
  json_object_set_new(r, "namespace", json_string(md_str(ev->obj, "namespace")));
  json_object_set_new(r, "name", json_string(md_str(ev->obj, "name")));
  json_object_set_new(r, "uid", json_string(md_str(ev->obj, "uid")));
  json_object_set_new(r, "rv", json_string(md_str(ev->obj, "resourceVersion")));
  if (ev->relist) json_object_set_new(r, "relist", json_true());
  json_object_set(r, "object", ev->obj);
  if (ev->old && ev->type != RIPPLE_KUBE_ADDED) json_object_set(r, "old", ev->old);
  char *s = json_dumps(r, JSON_COMPACT);
  json_decref(r);
  if (!s) return RIPPLE_ENOMEM;
  size_t n = strlen(s);
  char *line = realloc(s, n + 2);
  if (!line) {
    free(s);
    return RIPPLE_ENOMEM;
  }
  line[n] = '\n';
  line[n + 1] = '\0';
  *out = line;
  *len = n + 1;
  return RIPPLE_OK;
}
