/*
 * fuzz_wdiff.c - libFuzzer target for the watch agent's diffs and snapshots
 * (watch/wdiff.h), whose objects come from the API server: outside input.
 *
 * Input: one byte picking the limits, then the old and the new object as
 * JSON, then redaction patterns, separated by NUL bytes. A Secret's data
 * values are replaced by a marker before the calls, so a leak is visible.
 * Properties: nothing crashes or leaks; with valid patterns both calls
 * succeed on objects; a diff is an array of entries with JSON Pointer paths
 * in wdiff.h's order, none below another, none at a path never stored,
 * values cut to max_value, no more than max_changes; an object against
 * itself has no changes; a snapshot fits max_snapshot or holds metadata
 * only; the marker appears in no output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wdiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CANARY "RIPPLECANARY"
#define ANN "cpid.ripple.dev/"
#define ANN_PATH "/metadata/annotations/cpid.ripple.dev~1"

static const wdiff_limits_t presets[4] = {{0, 0, 0}, {4, 16, 64}, {1, 1, 1}, {1000, 4096, 1 << 20}};

static int is_secret(const json_t *o) {
  const char *kind = json_string_value(json_object_get(o, "kind"));
  const json_t *av = json_object_get(o, "apiVersion");
  return kind && strcmp(kind, "Secret") == 0 &&
         (!json_is_string(av) || strcmp(json_string_value(av), "v1") == 0);
}

static void plant(json_t *o) {
  const char *maps[] = {"data", "stringData"};
  for (int m = 0; m < 2; m++) {
    json_t *d = json_object_get(o, maps[m]), *v;
    const char *k;
    json_object_foreach(d, k, v) {
      if (json_is_string(v)) json_string_set(v, CANARY);
    }
  }
}

static int all_digits(const char *k, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (k[i] < '0' || k[i] > '9') return 0;
  return n > 0;
}

/* wdiff.h's order of keys: decimal numbers numerically first, then bytes. */
static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
  int da = all_digits(a, an), db = all_digits(b, bn);
  if (da != db) return db - da;
  if (da && an != bn) return an < bn ? -1 : 1;
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

/* The segment of pointer p at *i (just past its '/'), unescaped into seg. */
static size_t segment(const char *p, size_t *i, char *seg) {
  size_t n = 0;
  for (; p[*i] && p[*i] != '/'; (*i)++) {
    if (p[*i] == '~') {
      (*i)++;
      if (p[*i] != '0' && p[*i] != '1') abort(); /* not a valid escape */
      seg[n++] = p[*i] == '0' ? '~' : '/';
    } else {
      seg[n++] = p[*i];
    }
  }
  return n;
}

static int path_cmp(const char *a, const char *b, char *sa, char *sb) {
  size_t i = 0, j = 0;
  for (;;) {
    if (!a[i] || !b[j]) return !a[i] && !b[j] ? 0 : !a[i] ? -1 : 1;
    i++, j++;
    size_t la = segment(a, &i, sa), lb = segment(b, &j, sb);
    int c = key_cmp(sa, la, sb, lb);
    if (c) return c;
  }
}

static int under(const char *p, const char *prefix) {
  size_t n = strlen(prefix);
  return strncmp(p, prefix, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static void check_metadata(const json_t *md) {
  if (json_object_get(md, "resourceVersion") || json_object_get(md, "managedFields")) abort();
  const char *k;
  json_t *v;
  json_object_foreach(json_object_get(md, "annotations"), k, v) {
    if (strncmp(k, ANN, strlen(ANN)) == 0) abort();
  }
}

static void check_value(const json_t *v, size_t max) {
  char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!t) abort();
  int cut = json_is_object(v) && json_object_size(v) == 1 &&
            json_is_integer(json_object_get(v, "truncated"));
  if (strlen(t) > max && !cut) abort();
  free(t);
}

static void check_entry(const json_t *e, const wdiff_limits_t *lim) {
  const char *p = json_string_value(json_object_get(e, "path"));
  if (!p || p[0] != '/') abort();
  if (under(p, "/metadata/resourceVersion") || under(p, "/metadata/managedFields") ||
      strncmp(p, ANN_PATH, strlen(ANN_PATH)) == 0)
    abort();
  const json_t *o = json_object_get(e, "old"), *n = json_object_get(e, "new");
  if (json_object_get(e, "redacted")) {
    if (!json_is_true(json_object_get(e, "redacted")) || o || n) abort();
    return;
  }
  if (!o && !n) abort();
  size_t max = lim->max_value ? lim->max_value : 1024;
  if (o) check_value(o, max);
  if (n) check_value(n, max);
  if (strcmp(p, "/metadata") == 0) check_metadata(o), check_metadata(n);
  if (strcmp(p, "/metadata/annotations") == 0) {
    json_t *md = json_pack("{s:O?}", "annotations", o);
    check_metadata(md);
    json_decref(md);
    md = json_pack("{s:O?}", "annotations", n);
    check_metadata(md);
    json_decref(md);
  }
}

static void check_text(const json_t *v, int canary) {
  char *t = json_dumps(v, JSON_COMPACT);
  if (!t) abort();
  if (canary && strstr(t, CANARY)) abort();
  free(t);
}

static void check_diff(const json_t *out, int truncated, const wdiff_limits_t *lim, int canary) {
  size_t max = lim->max_changes ? lim->max_changes : 256, n = json_array_size(out);
  if (!json_is_array(out) || n > max || (truncated && n != max)) abort();
  const char *prev = NULL;
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(out, i);
    check_entry(e, lim);
    const char *p = json_string_value(json_object_get(e, "path"));
    if (prev) {
      size_t len = strlen(prev) + strlen(p) + 1;
      char *sa = malloc(len), *sb = malloc(len);
      if (path_cmp(prev, p, sa, sb) >= 0 || under(p, prev)) abort();
      free(sa);
      free(sb);
    }
    prev = p;
  }
  check_text(out, canary);
}

static void check_snapshot(const json_t *obj, const wdiff_redact_t *r, const wdiff_limits_t *lim,
                           int canary) {
  json_t *out;
  int truncated;
  if (wdiff_snapshot(obj, r, lim, &out, &truncated) != RIPPLE_OK) abort();
  check_metadata(json_object_get(out, "metadata"));
  check_text(out, canary);
  char *t = json_dumps(out, JSON_COMPACT);
  size_t max = lim->max_snapshot ? lim->max_snapshot : 65536;
  if (!t || (!truncated && strlen(t) > max)) abort();
  if (truncated && json_object_size(out) > (json_object_get(out, "metadata") ? 1u : 0u)) abort();
  free(t);
  json_decref(out);
}

static void run(json_t *a, json_t *b, const wdiff_redact_t *r, const wdiff_limits_t *lim,
                int canary) {
  json_t *out;
  int truncated;
  int rc = wdiff_diff(a, b, r, lim, &out, &truncated);
  if (!json_is_object(a) || !json_is_object(b)) {
    if (rc != RIPPLE_EINVAL) abort();
  } else {
    if (rc != RIPPLE_OK) abort();
    check_diff(out, truncated, lim, canary);
    json_decref(out);
    if (wdiff_diff(a, a, r, lim, &out, &truncated) != RIPPLE_OK || json_array_size(out)) abort();
    json_decref(out);
  }
  if (json_is_object(a)) check_snapshot(a, r, lim, canary);
  if (json_is_object(b)) check_snapshot(b, r, lim, canary);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const wdiff_limits_t *lim = &presets[data[0] & 3];
  char *buf = malloc(size);
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  char *parts[6] = {buf};
  size_t np = 1;
  for (char *p = buf; np < 6 && (p = memchr(p, '\0', (size_t)(buf + size - 1 - p))); p++)
    parts[np++] = p + 1;
  if (np < 2) parts[np++] = "{}";
  wdiff_redact_t r = {.n = 0};
  int valid = 1;
  char err[256];
  for (size_t i = 2; i < np; i++) {
    r.pattern[r.n++] = parts[i];
    valid &= wdiff_pattern_check(parts[i], err, sizeof err) == RIPPLE_OK;
  }
  json_t *a = json_loads(parts[0], 0, NULL), *b = json_loads(parts[1], 0, NULL), *out;
  int truncated;
  if (!valid && wdiff_diff(a ? a : b, b ? b : a, &r, lim, &out, &truncated) != RIPPLE_EINVAL)
    abort();
  if (valid) {
    /* Only in Secrets: no output may hold a Secret's values, whatever else
     * (a snapshot of a ConfigMap) may show. */
    int canary = !memmem(data, size, CANARY, strlen(CANARY));
    if (canary && is_secret(a)) plant(a);
    if (canary && is_secret(b)) plant(b);
    run(a, b, &r, lim, canary);
  }
  json_decref(a);
  json_decref(b);
  free(buf);
  return 0;
}
