/*
 * details.c - what each write of a trace changed, from the trace server's
 * details answer (docs/api.md, "Details of a cascade"): its "writes" entries
 * name a span id with the change the watch agent saw (a diff, or a snapshot
 * for a create or delete) and the write's audit event (who, and the response
 * code: a refused write). They are joined to the tree's spans here, and
 * shown for people by the helpers below.
 *
 * Everything in a details answer comes from outside, and some of it from
 * anyone who may write an object or an Event: values are printed as compact
 * JSON, cut to a length, and text with control characters replaced, so an
 * answer cannot move the terminal's cursor or hide a line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

int kr_details_join(kr_trace_t *t, json_t *details, char *err, size_t cap) {
  const json_t *writes = json_object_get(details, "writes");
  if (!json_is_array(writes)) {
    snprintf(err, cap, "the trace server's answer is not the documented shape: %s",
             "details needs writes[]");
    return RIPPLE_EJSON;
  }
  json_t *index = json_object();
  if (!t->keep) t->keep = json_array();
  if (!index || !t->keep || json_array_append(t->keep, details) != 0) {
    json_decref(index);
    snprintf(err, cap, "out of memory joining the details");
    return RIPPLE_ENOMEM;
  }
  size_t i;
  json_t *w;
  json_array_foreach(writes, i, w) {
    const char *id = json_string_value(json_object_get(w, "span_id"));
    /* The first entry of a span wins: a fact joins one span, so a second
     * entry is a server's mistake, not something to show. */
    if (id && !json_object_get(index, id)) json_object_set(index, id, w);
  }
  for (i = 0; i < t->n; i++) {
    kr_span_t *s = &t->spans[i];
    const json_t *e = json_object_get(index, s->span_id);
    const json_t *change = json_object_get(e, "change"), *audit = json_object_get(e, "audit");
    s->change = json_is_object(change) ? change : NULL;
    s->audit = json_is_object(audit) ? audit : NULL;
  }
  json_decref(index); /* the entries stay alive in t->keep */
  t->details = 1;
  return RIPPLE_OK;
}

size_t kr_change_fields(const kr_span_t *s) {
  return json_array_size(json_object_get(s->change, "diff"));
}

long kr_refused_code(const kr_span_t *s) {
  const json_t *c = json_object_get(s->audit, "code");
  if (!json_is_integer(c)) return 0;
  json_int_t v = json_integer_value(c);
  if (v >= 200 && v < 300) return 0;
  return v > 0 && v < 1000 ? (long)v : 0;
}

/* Bytes in the UTF-8 sequence led by c; 1 for a stray byte. */
static size_t seq_len(unsigned char c) {
  if (c >= 0xf0 && c < 0xf8) return 4;
  if (c >= 0xe0) return c < 0xf0 ? 3 : 1;
  if (c >= 0xc0) return 2;
  return 1;
}

/* How many bytes of s fit in max, whole UTF-8 sequences only; *cut when not all. */
static size_t fit(const char *s, size_t max, int *cut) {
  size_t n = 0;
  *cut = 0;
  while (s[n]) {
    size_t k = seq_len((unsigned char)s[n]);
    for (size_t j = 1; j < k; j++)
      if (!s[n + j]) k = j; /* a sequence cut short by the end of the string */
    if (n + k > max) {
      *cut = 1;
      break;
    }
    n += k;
  }
  return n;
}

void kr_put_clean(FILE *f, const char *s, size_t max) {
  if (!s) return;
  int cut;
  size_t n = fit(s, max, &cut);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f) {
      fputc('?', f);
    } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
               (unsigned char)s[i + 1] < 0xa0) {
      fputc('?', f); /* a C1 control (U+0080..U+009F): CSI for some terminals */
      i++;
    } else {
      fputc(c, f);
    }
  }
  if (cut) fputs("…", f);
}

void kr_fmt_value(const json_t *v, char *out, size_t cap, size_t max) {
  if (!cap) return;
  if (!v) {
    snprintf(out, cap, "(none)");
    return;
  }
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!s) {
    snprintf(out, cap, "(?)");
    return;
  }
  int cut;
  if (max > cap - sizeof "…") max = cap > sizeof "…" ? cap - sizeof "…" : 0;
  size_t n = fit(s, max, &cut);
  snprintf(out, cap, "%.*s%s", (int)n, s, cut ? "…" : "");
  free(s);
}
