/*
 * fuzz_kubectl_why_fields.c - `kubectl ripple why`'s fields and fights
 * (whyfields.c) from a hostile API server and trace server. The input is one
 * JSON array [object, fights answer] (the object as the API server gives it,
 * with its managedFields; the answer as GET /v1/fights?uid= gives it, or
 * null). Whatever it holds, reading, rendering and the JSON must not crash,
 * leak or loop, every field listed has at least one manager, and the text
 * holds no control character but newlines (the terminal's escapes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *in = json_loadb((const char *)data, size, 0, NULL);
  if (!json_is_array(in)) {
    json_decref(in);
    return 0;
  }
  const json_t *srv = json_array_get(in, 1);
  json_t *wf = kr_why_fields(json_array_get(in, 0), json_is_null(srv) ? NULL : srv);
  if (!wf) abort();
  size_t i;
  const json_t *e;
  json_array_foreach(json_object_get(wf, "fields"), i, e) {
    if (!json_array_size(json_object_get(e, "managers"))) abort();
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) abort();
  kr_render_why_fields(f, wf, 0);
  fclose(f);
  for (size_t k = 0; k < len; k++)
    if ((unsigned char)text[k] < 0x20 && text[k] != '\n') abort();
  free(text);
  char *s = json_dumps(wf, JSON_COMPACT);
  free(s);
  json_decref(wf);
  json_decref(in);
  return 0;
}
