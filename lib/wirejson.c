/*
 * wirejson.c - ripple_mergelog_to_json() and ripple_span_to_json(): the wire
 * encoders of ripplex/wire.h behind the public API.
 */
#include "internal.h"

int ripple_mergelog_to_json(const ripple_mergelog_t *ml, char **out, size_t *out_len) {
  if (!ml || !out || (ml->nsources && !ml->sources) || ml->ntrigger > ml->nsources)
    return RIPPLE_EINVAL;
  sbuf_t b;
  sbuf_init(&b);
  wire_mergelog(&b, ml);
  return sbuf_take(&b, out, out_len);
}

int ripple_span_to_json(const ripple_span_rec_t *sp, char **out, size_t *out_len) {
  if (!sp || !out || (sp->nattrs && !sp->attrs)) return RIPPLE_EINVAL;
  sbuf_t b;
  sbuf_init(&b);
  wire_span(&b, sp);
  return sbuf_take(&b, out, out_len);
}
