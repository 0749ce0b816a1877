/*
 * wire.c - mergelogs and spans as the trace server's JSON (docs/api.md).
 *
 * This is one half of a contract; the server's decoder is the other. Optional
 * fields are left out rather than sent as null.
 */
#include <stdlib.h>

#include "ripplex/clock.h"
#include "ripplex/cpid.h"
#include "ripplex/wire.h"

void wire_cpid(sbuf_t *b, const ripple_cpid_t *id) {
  char s[RIPPLE_CPID_STRLEN + 1];
  cpid_text(id, s);
  sbuf_putc(b, '"');
  sbuf_put(b, s, RIPPLE_CPID_STRLEN);
  sbuf_putc(b, '"');
}

static void put_time(sbuf_t *b, int64_t ns) {
  char s[RIPPLE_TIME_STRLEN + 1];
  time_text(ns, s);
  sbuf_putc(b, '"');
  sbuf_put(b, s, RIPPLE_TIME_STRLEN);
  sbuf_putc(b, '"');
}

/* ,"key":"value" when value is set. */
static void put_field(sbuf_t *b, int *first, const char *key, const char *value) {
  if (!value) return;
  if (!*first) sbuf_putc(b, ',');
  *first = 0;
  sbuf_json_str(b, key);
  sbuf_putc(b, ':');
  sbuf_json_str(b, value);
}

void wire_span_id(uint64_t id, char out[17]) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, id >>= 4) out[i] = hex[id & 15];
  out[16] = '\0';
}

void wire_mergelog(sbuf_t *b, const ripple_mergelog_t *ml) {
  sbuf_puts(b, "{\"cpid\":");
  wire_cpid(b, &ml->cpid);
  sbuf_puts(b, ",\"sources\":[");
  for (size_t i = 0; i < ml->nsources; i++) {
    if (i) sbuf_putc(b, ',');
    wire_cpid(b, &ml->sources[i]);
  }
  sbuf_putc(b, ']');
  if (ml->ntrigger && ml->trigger) {
    sbuf_puts(b, ",\"trigger\":[");
    for (size_t i = 0; i < ml->ntrigger; i++) {
      if (i) sbuf_putc(b, ',');
      wire_cpid(b, &ml->trigger[i]);
    }
    sbuf_putc(b, ']');
  }
  sbuf_puts(b, ",\"time\":");
  put_time(b, ml->time_ns);
  if (ml->component) {
    sbuf_puts(b, ",\"component\":");
    sbuf_json_str(b, ml->component);
  }
  const ripple_objref_t *o = ml->object;
  if (o && (o->api_version || o->kind || o->namespace_ || o->name || o->uid)) {
    int first = 1;
    sbuf_puts(b, ",\"object\":{");
    put_field(b, &first, "apiVersion", o->api_version);
    put_field(b, &first, "kind", o->kind);
    put_field(b, &first, "namespace", o->namespace_);
    put_field(b, &first, "name", o->name);
    put_field(b, &first, "uid", o->uid);
    sbuf_putc(b, '}');
  }
  sbuf_putc(b, '}');
}

void wire_span(sbuf_t *b, const ripple_span_rec_t *sp) {
  char id[17];
  sbuf_puts(b, "{\"cpid\":");
  wire_cpid(b, &sp->cpid);
  wire_span_id(sp->span_id, id);
  sbuf_printf(b, ",\"span_id\":\"%s\"", id);
  if (sp->parent_id) {
    wire_span_id(sp->parent_id, id);
    sbuf_printf(b, ",\"parent_id\":\"%s\"", id);
  }
  sbuf_puts(b, ",\"service\":");
  sbuf_json_str(b, sp->service ? sp->service : "");
  sbuf_puts(b, ",\"name\":");
  sbuf_json_str(b, sp->name ? sp->name : "");
  sbuf_puts(b, ",\"start\":");
  put_time(b, sp->start_ns);
  sbuf_puts(b, ",\"end\":");
  put_time(b, sp->end_ns);
  if (sp->nattrs) {
    int first = 1;
    sbuf_puts(b, ",\"attributes\":{");
    for (size_t i = 0; i < sp->nattrs; i++)
      put_field(b, &first, sp->attrs[i].key, sp->attrs[i].value);
    sbuf_putc(b, '}');
  }
  sbuf_putc(b, '}');
}
