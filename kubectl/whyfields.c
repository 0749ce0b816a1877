/*
 * whyfields.c - the fields part of `kubectl ripple why KIND/NAME`: which
 * field manager owns each field of the object now (its managedFields, as the
 * API server gave them), which change (CPID) set it last as the trace
 * server saw it, and the field fights the server flagged on the object
 * (GET /v1/fights?uid=; docs/api.md, "Field fights").
 *
 * managedFields' fieldsV1 is a tree: "f:<name>" a member, "k:<json>" a list
 * item by its keys, "v:<json>" a set's value, "i:<n>" an item by index, "."
 * the node itself. A field is a node with nothing below it but ".", shown
 * as a dotted path (spec.replicas, metadata.labels.app,
 * spec.template.spec.containers[name=web].image). The trace server names
 * fields by JSON Pointer; the two are matched where a pointer has no list
 * index in it (spec.replicas is /spec/replicas).
 *
 * Everything here comes from outside (the API server, the trace server) and
 * is read defensively: wrong types are skipped, paths and counts bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

#define FIELD_PATH_MAX 512 /* a longer path is cut (and shown cut) */
#define FIELDS_MAX 2000    /* fields read of one object */
#define FIELDS_SHOWN 40    /* in the text view; -o json has all */
#define FIGHT_WRITES_SHOWN 6

/* ---- managedFields ------------------------------------------------------------------ */

typedef struct walk {
  json_t *fields; /* {"<path>": [{"manager", "operation", "subresource", "time"}]} */
  const json_t *entry;
  size_t n;
} walk_t;

static void own(walk_t *w, const char *path) {
  json_t *owners = json_object_get(w->fields, path);
  if (!owners) {
    if (w->n >= FIELDS_MAX) return;
    w->n++;
    owners = json_array();
    json_object_set_new(w->fields, path, owners);
  }
  json_t *o = json_object();
  static const char *const keys[] = {"manager", "operation", "subresource", "time"};
  for (int i = 0; i < 4; i++) {
    const char *v = json_string_value(json_object_get(w->entry, keys[i]));
    if (v) json_object_set_new(o, keys[i], json_string(v));
  }
  json_array_append_new(owners, o);
}

/* path + one fieldsV1 key, as a dotted path; 0 for a key that is not one. */
static int step(char *out, size_t cap, const char *path, const char *key) {
  int n;
  if (!strncmp(key, "f:", 2))
    n = snprintf(out, cap, "%s%s%s", path, *path ? "." : "", key + 2);
  else if (!strncmp(key, "i:", 2))
    n = snprintf(out, cap, "%s[%s]", path, key + 2);
  else if (!strncmp(key, "k:", 2) || !strncmp(key, "v:", 2)) {
    /* k:{"name":"web"} -> [name=web]; anything else as it is */
    json_t *k = json_loads(key + 2, JSON_DECODE_ANY, NULL);
    const char *name;
    const json_t *v;
    n = snprintf(out, cap, "%s[", path);
    if (json_is_object(k)) {
      int first = 1;
      json_object_foreach(k, name, v) {
        char *vs = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        const char *s = json_is_string(v) ? json_string_value(v) : vs ? vs : "?";
        if (n >= 0 && (size_t)n < cap)
          n += snprintf(out + n, cap - (size_t)n, "%s%s=%s", first ? "" : ",", name, s);
        first = 0;
        free(vs);
      }
    } else if (n >= 0 && (size_t)n < cap) {
      n += snprintf(out + n, cap - (size_t)n, "%s", key + 2);
    }
    json_decref(k);
    if (n >= 0 && (size_t)n < cap) n += snprintf(out + n, cap - (size_t)n, "]");
  } else {
    return 0;
  }
  return n >= 0; /* cut when too long: still shown */
}

static void walk(walk_t *w, const json_t *node, const char *path, int depth) {
  const char *key;
  const json_t *child;
  int leaf = 1;
  if (!json_is_object(node) || depth > 64) return;
  json_object_foreach((json_t *)node, key, child) {
    char sub[FIELD_PATH_MAX];
    if (!strcmp(key, ".") || !step(sub, sizeof sub, path, key)) continue;
    leaf = 0;
    walk(w, child, sub, depth + 1);
  }
  if (leaf && *path) own(w, path);
}

/* {"<dotted path>": [owners]} of obj's managedFields; a new reference. */
static json_t *owners(const json_t *obj) {
  walk_t w = {json_object(), NULL, 0};
  const json_t *mf = json_object_get(json_object_get(obj, "metadata"), "managedFields");
  size_t i;
  json_array_foreach(mf, i, w.entry) { walk(&w, json_object_get(w.entry, "fieldsV1"), "", 0); }
  return w.fields;
}

/* A JSON Pointer without list indexes as a dotted path; 0 when it has one
 * (a segment of digits) or does not fit. */
static int pointer_to_dotted(const char *p, char *out, size_t cap) {
  size_t n = 0;
  if (*p != '/') return 0;
  for (const char *s = p; *s;) {
    s++; /* past '/' */
    const char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    int digits = len > 0;
    for (size_t i = 0; i < len; i++) digits &= s[i] >= '0' && s[i] <= '9';
    if (digits) return 0;
    if (n && n < cap) out[n++] = '.';
    for (size_t i = 0; i < len && n + 1 < cap; i++) {
      char c = s[i];
      if (c == '~' && i + 1 < len) c = s[++i] == '1' ? '/' : '~';
      out[n++] = c;
    }
    if (n + 1 >= cap) return 0;
    s += len;
  }
  out[n] = '\0';
  return 1;
}

json_t *kr_why_fields(const json_t *obj, const json_t *server) {
  json_t *by_path = owners(obj), *out = json_object(), *fields = json_array();
  json_t *set_by = json_object();
  size_t i;
  const json_t *f;
  json_array_foreach(json_object_get(server, "fields"), i, f) {
    char dotted[FIELD_PATH_MAX];
    const char *p = json_string_value(json_object_get(f, "path"));
    if (p && json_is_object(f) && pointer_to_dotted(p, dotted, sizeof dotted))
      json_object_set(set_by, dotted, (json_t *)f);
  }
  const char *path;
  json_t *own_v;
  json_object_foreach(by_path, path, own_v) {
    json_t *e = json_pack("{s:s, s:O}", "field", path, "managers", own_v);
    json_t *s = json_object_get(set_by, path);
    json_object_set(e, "set_by", s ? s : json_null());
    json_array_append_new(fields, e);
  }
  json_object_set_new(out, "fields", fields);
  const json_t *fights = json_object_get(server, "fights");
  json_object_set_new(out, "fights", json_is_array(fights) ? json_deep_copy(fights) : json_array());
  json_object_set_new(out, "fights_known", json_boolean(server != NULL));
  json_decref(by_path);
  json_decref(set_by);
  return out;
}

int kr_why_fights_get(kr_ts_t *ts, const char *uid, json_t **out, char *err, size_t cap) {
  char path[256];
  long status = 0;
  char *body = NULL;
  size_t len = 0;
  *out = NULL;
  if (!uid || !*uid || strlen(uid) > 128) return RIPPLE_OK;
  snprintf(path, sizeof path, "/v1/fights?limit=20&uid=%s", uid);
  int rc = kr_ts_get_raw(ts, path, &status, &body, &len, err, cap);
  if (rc != RIPPLE_OK) return rc;
  if (status == 200) *out = json_loadb(body, len, 0, NULL);
  free(body);
  /* 404: a server older than fights; anything else: no fights shown, the
   * chain still is. */
  return RIPPLE_OK;
}

/* ---- text ------------------------------------------------------------------------- */

static void put_time_of(FILE *f, const json_t *o, const char *key) {
  const char *t = json_string_value(json_object_get(o, key));
  /* "2026-11-25T10:00:03.123456789Z": the time of day is enough here */
  char hms[9];
  if (t && strlen(t) >= 19) {
    snprintf(hms, sizeof hms, "%s", t + 11);
    kr_put_clean(f, hms, sizeof hms);
  } else
    fputs("-", f);
}

/* The managers of a field, padded to a column when more follows. */
static void put_managers(FILE *f, const json_t *managers, int pad) {
  size_t i;
  const json_t *m;
  int w = 0;
  json_array_foreach(managers, i, m) {
    const char *name = json_string_value(json_object_get(m, "manager"));
    const char *sub = json_string_value(json_object_get(m, "subresource"));
    if (i) w += fprintf(f, ", ");
    kr_put_clean(f, name ? name : "?", 60);
    w += (int)strlen(name ? name : "?");
    if (sub && *sub) {
      fputs(" (", f);
      kr_put_clean(f, sub, 40);
      fputc(')', f);
      w += 3 + (int)strlen(sub);
    }
  }
  if (pad) fprintf(f, "%*s", w < 28 ? 28 - w : 1, "");
}

static void render_fields(FILE *f, const json_t *fields) {
  size_t n = json_array_size(fields), i;
  const json_t *e;
  fprintf(f, "\nFields (managedFields now; the last change ripple saw set it):\n");
  json_array_foreach(fields, i, e) {
    if (i == FIELDS_SHOWN) {
      fprintf(f, "  ... %zu more (-o json has all)\n", n - i);
      break;
    }
    const char *field = json_string_value(json_object_get(e, "field"));
    fputs("  ", f);
    kr_put_clean(f, field ? field : "?", 60);
    int w = field ? (int)strlen(field) : 1;
    fprintf(f, "%*s", w < 40 ? 40 - w : 1, "");
    const json_t *s = json_object_get(e, "set_by");
    put_managers(f, json_object_get(e, "managers"), json_is_object(s));
    if (json_is_object(s)) {
      const char *cpid = json_string_value(json_object_get(s, "cpid"));
      const char *wr = json_string_value(json_object_get(s, "writer"));
      fputs("cpid ", f);
      kr_put_clean(f, cpid ? cpid : "?", 40);
      fputs(" (", f);
      kr_put_clean(f, wr ? wr : "?", 60);
      fputs(", ", f);
      put_time_of(f, s, "time");
      fputc(')', f);
    }
    fputc('\n', f);
  }
}

static void render_fight(FILE *f, const json_t *g, int colour) {
  const json_t *m = json_object_get(g, "managers");
  const char *a = json_string_value(json_object_get(json_array_get(m, 0), "writer"));
  const char *b = json_string_value(json_object_get(json_array_get(m, 1), "writer"));
  const char *path = json_string_value(json_object_get(g, "path"));
  if (colour) fputs(C_RED, f);
  fputs("  ", f);
  kr_put_clean(f, path ? path : "?", 200);
  fputs(": ", f);
  kr_put_clean(f, a ? a : "?", 60);
  fputs(" <-> ", f);
  kr_put_clean(f, b ? b : "?", 60);
  fprintf(f, ", %lld reversals, ", (long long)json_integer_value(json_object_get(g, "reversals")));
  put_time_of(f, g, "first");
  fputs(" .. ", f);
  put_time_of(f, g, "last");
  if (colour) fputs(C_RESET, f);
  fputc('\n', f);
  size_t i;
  const json_t *w;
  const json_t *ws = json_object_get(g, "writes");
  json_array_foreach(ws, i, w) {
    if (i == FIGHT_WRITES_SHOWN) {
      fprintf(f, "    ... %zu more writes\n", json_array_size(ws) - i);
      break;
    }
    const char *wr = json_string_value(json_object_get(w, "writer"));
    const char *cpid = json_string_value(json_object_get(w, "cpid"));
    fputs("    ", f);
    put_time_of(f, w, "time");
    fputs("  ", f);
    kr_put_clean(f, wr ? wr : "?", 60);
    fputs("  cpid ", f);
    kr_put_clean(f, cpid ? cpid : "?", 40);
    fputc('\n', f);
  }
}

void kr_render_why_fields(FILE *f, const json_t *wf, int colour) {
  /* Nothing to say (an object without managedFields, a server without
   * fights): the chain alone, as before. */
  if (json_array_size(json_object_get(wf, "fields")))
    render_fields(f, json_object_get(wf, "fields"));
  const json_t *fights = json_object_get(wf, "fights");
  if (!json_array_size(fights)) return;
  fprintf(f, "\nFights (two writers setting a field back and forth):\n");
  size_t i;
  const json_t *g;
  json_array_foreach(fights, i, g) { render_fight(f, g, colour); }
}
