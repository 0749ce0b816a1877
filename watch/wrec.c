/*
 * wrec.c - the record of one change, as ripple-watch writes it (one JSON
 * line; the format is docs/watch.md's contract with the analyzer).
 */
#include "wrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "wdiff.h"

const char *wrec_op(ripple_kube_event_type_t t) {
  switch (t) {
    case RIPPLE_KUBE_ADDED: return "add";
    case RIPPLE_KUBE_MODIFIED: return "update";
    case RIPPLE_KUBE_DELETED: return "delete";
  }
  return "update";
}

/* A JSON string (with quotes) appended to b at *n; b has room for 6 bytes per
 * input byte plus 2. */
static size_t put_str(char *b, size_t n, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  b[n++] = '"';
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      b[n++] = '\\', b[n++] = (char)c;
    } else if (c < 0x20) {
      b[n++] = '\\', b[n++] = 'u', b[n++] = '0', b[n++] = '0';
      b[n++] = hex[c >> 4], b[n++] = hex[c & 15];
    } else {
      b[n++] = (char)c;
    }
  }
  b[n++] = '"';
  return n;
}

static size_t put_lit(char *b, size_t n, const char *lit) {
  size_t len = strlen(lit);
  memcpy(b + n, lit, len + 1); /* the NUL too: the buffer has room, the next write covers it */
  return n + len;
}

/* A Secret's text with its values redacted (wdiff_secret_redact), as a new
 * string; "\"(redacted)\"" when the text cannot be read as a Secret, so no
 * value is ever written down. NULL only without memory. */
static char *secret_text(const char *text, size_t len, size_t *out_len) {
  json_t *o = json_loadb(text, len, 0, NULL);
  char *t = NULL;
  if (o && wdiff_secret_redact(o) == RIPPLE_OK) t = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!t) t = strdup("\"(redacted)\"");
  if (t) *out_len = strlen(t);
  return t;
}

static int format(const ripple_kube_event_t *ev, const char *resource, char **out, size_t *len);

int wrec_format(const ripple_kube_event_t *ev, const char *resource, char **out, size_t *len) {
  if (!ev || !ev->obj_text || !ev->key || !resource || !out || !len) return RIPPLE_EINVAL;
  if (strcmp(resource, "secrets") != 0) return format(ev, resource, out, len);
  /* A Secret's values never reach the output (docs/watch.md): the record is
   * made from redacted copies of its texts. */
  ripple_kube_event_t red = *ev;
  char *obj = secret_text(ev->obj_text, ev->obj_len, &red.obj_len);
  char *old = ev->old_text ? secret_text(ev->old_text, ev->old_len, &red.old_len) : NULL;
  int rc = RIPPLE_ENOMEM;
  if (obj && (old || !ev->old_text)) {
    red.obj_text = obj;
    red.old_text = old;
    rc = format(&red, resource, out, len);
  }
  free(obj);
  free(old);
  return rc;
}

static int format(const ripple_kube_event_t *ev, const char *resource, char **out, size_t *len) {
  const char *uid = ev->uid ? ev->uid : "", *rv = ev->rv ? ev->rv : "";
  const char *slash = strchr(ev->key, '/');
  const char *name = slash ? slash + 1 : ev->key;
  size_t nslen = slash ? (size_t)(slash - ev->key) : 0;
  int with_old = ev->old_text && ev->type != RIPPLE_KUBE_ADDED;
  size_t small = strlen(resource) + strlen(ev->key) + strlen(uid) + strlen(rv);
  size_t cap = 256 + 6 * small + ev->obj_len + (with_old ? ev->old_len : 0);
  char *b = malloc(cap), ts[RIPPLE_TIME_STRLEN + 1];
  if (!b) return RIPPLE_ENOMEM;
  ripple_time_format(ev->time_ns, ts);
  /* The keys in docs/watch.md's order. */
  size_t n =
      (size_t)snprintf(b, cap, "{\"time\":\"%s\",\"time_ns\":%lld,\"op\":\"%s\",\"resource\":", ts,
                       (long long)ev->time_ns, wrec_op(ev->type));
  n = put_str(b, n, resource, strlen(resource));
  n = put_lit(b, n, ",\"namespace\":");
  n = put_str(b, n, ev->key, nslen);
  n = put_lit(b, n, ",\"name\":");
  n = put_str(b, n, name, strlen(name));
  n = put_lit(b, n, ",\"uid\":");
  n = put_str(b, n, uid, strlen(uid));
  n = put_lit(b, n, ",\"rv\":");
  n = put_str(b, n, rv, strlen(rv));
  if (ev->relist) n = put_lit(b, n, ",\"relist\":true");
  n = put_lit(b, n, ",\"object\":");
  memcpy(b + n, ev->obj_text, ev->obj_len), n += ev->obj_len;
  if (with_old) {
    n = put_lit(b, n, ",\"old\":");
    memcpy(b + n, ev->old_text, ev->old_len), n += ev->old_len;
  }
  n = put_lit(b, n, "}\n");
  b[n] = '\0';
  *out = b;
  *len = n;
  return RIPPLE_OK;
}
