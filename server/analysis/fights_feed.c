/*
 * fights_feed.c - see fights_feed.h.
 */
#include "analysis/fights_feed.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define FEED_DIFFS 64 /* diff entries read of one change; the detector keeps 8 */

static int is_update_span(const dec_batch_t *b, const dec_rec_t *r) {
  static const char op[] = "UPDATE", watch[] = "ripple-watch";
  if (r->operation.len != sizeof op - 1 || memcmp(dec_str(b, r->operation), op, sizeof op - 1))
    return 0;
  return !(r->service.len == sizeof watch - 1 &&
           !memcmp(dec_str(b, r->service), watch, sizeof watch - 1));
}

int fights_feed_spans(fights_t *f, const dec_batch_t *b) {
  if (!f || b->kind != DEC_SPANS) return 0;
  int n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const dec_rec_t *r = &b->rec[i];
    if (!is_update_span(b, r)) continue;
    json_t *o = json_loadb(b->body.p + r->body_off, r->body_len, 0, NULL);
    const json_t *a = json_object_get(o, "attributes");
    fights_write_t w = {
        .uid = json_string_value(json_object_get(a, "uid")),
        .rv = json_string_value(json_object_get(a, "resourceVersion")),
        .writer = json_string_value(json_object_get(o, "service")),
        .user = json_string_value(json_object_get(a, "user")),
        .subresource = json_string_value(json_object_get(a, "subresource")),
        .cpid = r->cpid,
        .span_id = r->span_id,
        .time = r->time,
    };
    n += fights_add_write(f, &w);
    json_decref(o);
  }
  return n;
}

static int feed_change(fights_t *f, const fact_t *v) {
  json_t *o = json_loadb(v->body, v->body_len, 0, NULL);
  const json_t *diff = json_object_get(o, "diff");
  fights_diff_t d[FEED_DIFFS];
  size_t nd = 0, i;
  const json_t *e;
  json_array_foreach(diff, i, e) {
    if (nd == FEED_DIFFS) break;
    const char *path = json_string_value(json_object_get(e, "path"));
    if (!path || json_is_true(json_object_get(e, "redacted")) || !fights_tracked(path)) continue;
    uint64_t h[2] = {FIGHTS_ABSENT, FIGHTS_ABSENT};
    static const char *const keys[] = {"old", "new"};
    for (int k = 0; k < 2; k++) {
      const json_t *val = json_object_get(e, keys[k]);
      char *s = val ? json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
      if (s) h[k] = fights_hash(s, strlen(s)); /* the text goes at once */
      free(s);
    }
    d[nd++] = (fights_diff_t){path, h[0], h[1]};
  }
  fights_change_t c = {v->uid, v->kind, v->ns, v->name, v->prev_rv, v->time, d, nd};
  int n = nd ? fights_add_change(f, &c) : 0;
  json_decref(o);
  return n;
}

int fights_feed_facts(fights_t *f, const det_batch_t *b) {
  if (!f) return 0;
  int n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const fact_t *v = &b->v[i];
    if (v->type == FACT_CHANGE && v->op && !strcmp(v->op, "update") && v->uid && v->prev_rv)
      n += feed_change(f, v);
  }
  return n;
}
