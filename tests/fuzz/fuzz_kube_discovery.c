/*
 * fuzz_kube_discovery.c - libFuzzer target for the documents discovery and
 * list read from the API server (or from anything between it and us):
 * discovery snapshots, list pages with their continue tokens, and Status
 * objects turned into messages.
 *
 * The input is split at NUL bytes into documents, served in the order they
 * are asked for whatever the path (so discovery meets any shape at any
 * step); a document that is not JSON is a 503. Properties:
 *   - a fetch either succeeds or fails with an error, leaking nothing;
 *   - a second snapshot of the same documents merged into the first keeps
 *     every lookup's answer, pointer for pointer;
 *   - the paging loop ends (documents run out), delivers no more objects
 *     than the pages hold, and outputs a resourceVersion only on success;
 *   - kube_check leaves a NUL-terminated message whatever the body.
 */
#include <stdlib.h>
#include <string.h>

#include "kube_rw.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Skipped group versions are logged as warnings: not by the million. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  ripple_log_setup("fuzz", RIPPLE_LOG_ERROR, NULL, NULL);
  return 0;
}

typedef struct docs {
  const char *p[64];
  size_t len[64], n, next, items;
} docs_t;

static int serve(void *ud, const char *path, json_t **out, ripple_kube_status_t *st) {
  docs_t *d = ud;
  (void)path;
  if (d->next >= d->n) return kube_fail(st, RIPPLE_KUBE_ECONNECT, "no more documents");
  size_t i = d->next++;
  json_t *j = json_loadb(d->p[i], d->len[i], 0, NULL);
  if (!j) return kube_fail(st, RIPPLE_KUBE_EHTTP, "service unavailable");
  if (json_is_array(json_object_get(j, "items")))
    d->items += json_array_size(json_object_get(j, "items"));
  *out = j;
  return RIPPLE_OK;
}

static size_t delivered;
static void count(void *ud, json_t *obj) {
  (void)ud;
  if (obj) delivered++;
}

/* Names to look up: fixed ones and the input's own strings. */
static const char *const NAMES[] = {
    "pods", "po", "Pod", "deployments.apps", "deployments.v1.apps", "a.b.c", ".", "..", "x."};

static void lookups(const kube_discovery_t *d, const docs_t *in,
                    const ripple_kube_resource_t **got) {
  size_t k = 0;
  for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
    got[k++] = kube_discovery_find(d, NAMES[i]);
  for (size_t i = 0; i < in->n && i < 8; i++) {
    char name[64];
    size_t n = in->len[i] < sizeof name - 1 ? in->len[i] : sizeof name - 1;
    memcpy(name, in->p[i], n);
    name[n] = '\0';
    got[k++] = kube_discovery_find(d, name);
    got[k++] = kube_discovery_find_kind(d, "", name);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  docs_t in = {0};
  for (size_t off = 0; off <= size && in.n < 64;) {
    const uint8_t *z = memchr(data + off, 0, size - off);
    size_t len = z ? (size_t)(z - (data + off)) : size - off;
    in.p[in.n] = (const char *)data + off, in.len[in.n++] = len;
    off += len + 1;
    if (!z) break;
  }
  kube_discovery_t *a = NULL, *b = NULL;
  docs_t d1 = in, d2 = in;
  ripple_kube_status_t st;
  if (kube_discovery_fetch(serve, &d1, &a, &st) == RIPPLE_OK) {
    const ripple_kube_resource_t *before[64] = {0}, *after[64] = {0};
    lookups(a, &in, before);
    if (kube_discovery_fetch(serve, &d2, &b, &st) != RIPPLE_OK) abort(); /* same documents */
    if (kube_discovery_merge(a, b) != RIPPLE_OK) abort();
    lookups(a, &in, after);
    if (memcmp(before, after, sizeof before) != 0) abort();
    kube_discovery_free(a);
  }
  docs_t d3 = in;
  char *rv = NULL;
  delivered = 0;
  int rc = kube_list_pages(serve, &d3, "/api/v1/pods", 2, count, NULL, &rv, &st);
  if (delivered > d3.items || (rc == RIPPLE_OK) != (rv != NULL)) abort();
  free(rv);
  kube_check(422, (const char *)data, size, &st);
  if (!memchr(st.message, 0, sizeof st.message) || !memchr(st.reason, 0, sizeof st.reason)) abort();
  return 0;
}
