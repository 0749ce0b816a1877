/*
 * fuzz_objtext.c - the webhook's reads of related objects' text
 * (webhook/objtext.c): a bounds-checked scan that pulls a few fields out of
 * an object's JSON without building a tree. The text comes from the
 * informer's cache, but a scan that trusts its input is one bug away from an
 * out-of-bounds read, so any bytes go in. Where jansson accepts the input as
 * an object, what the scan reports must agree with the tree: the identity
 * (name, namespace, context annotation) and the stand-in's metadata.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "objtext.h"
#include "ripple/ripple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *md_str(const json_t *obj, const char *key) {
  return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static void check_ident(const char *text, size_t size, const json_t *tree) {
  wh_ident_t id;
  if (wh_text_ident(text, size, "Pod", &id) != RIPPLE_OK) return;
  const char *name = md_str(tree, "name"), *ns = md_str(tree, "namespace");
  /* A name the scan reports is the tree's (when the tree has one as text). */
  if (name && strcmp(name, id.name) != 0) abort();
  if (ns && strcmp(ns, id.ns) != 0) abort();
  if (id.ctx && (id.ctx < text || id.ctx + id.ctx_len > text + size)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  static const char *const keys[] = {"metadata", "kind", "apiVersion", "spec"};
  wh_span_t out[4];
  if (wh_text_fields(text, size, keys, 4, out) == RIPPLE_OK)
    for (int i = 0; i < 4; i++)
      if (out[i].p && (out[i].p < text || out[i].p + out[i].n > text + size)) abort();
  json_t *standin = NULL;
  if (wh_text_standin(text, size, "Pod", &standin) == RIPPLE_OK) json_decref(standin);
  /* Duplicate keys: the scan takes the first, jansson the last, Go's decoder
   * (the API server's) the last too; the API server never writes them, so
   * the comparison is only made for documents without any. */
  json_t *tree = json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
  if (json_is_object(tree)) check_ident(text, size, tree);
  json_decref(tree);
  json_decref(wh_text_tree(text, size, "Pod"));
  free(text);
  return 0;
}
