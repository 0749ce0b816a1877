/*
 * fuzz_query.c - libFuzzer target for what the trace server reads from a
 * request besides its body: a page cursor (GET /v1/mergelogs, /v1/spans,
 * /v1/roots), a trace cursor (GET /v1/cpids/{cpid}/trace?after=), a scope
 * (?scope=own|reachable) and the Accept-Encoding header (whether a large
 * answer goes gzip'd). All come from any client.
 *
 * The first byte picks the parser: low bit set, the header; else bit 1 set,
 * the trace cursor; else bit 2 set, the scope; else the page cursor. The
 * rest, up to a NUL, is the text. Properties: none crashes nor reads past
 * the text; a cursor that parses is two integers that print back as a cursor
 * that parses to the same two; a scope is taken exactly when it is "own",
 * "reachable" or empty (the default), and its name parses back to it; a
 * header that wants gzip still does with ", identity" appended, and
 * "gzip;q=0" alone never does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/trace.h"
#include "serve/http.h"
#include "serve/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cursor(const char *s) {
  int64_t t, q;
  if (page_cursor_parse(s, &t, &q) != RIPPLE_OK) return;
  char again[64];
  snprintf(again, sizeof again, "%" PRId64 ".%" PRId64, t, q);
  int64_t t2, q2;
  if (page_cursor_parse(again, &t2, &q2) != RIPPLE_OK || t2 != t || q2 != q) abort();
}

static void trace_cursor(const char *s) {
  trace_cursor_t c, c2;
  if (trace_cursor_parse(s, &c) != RIPPLE_OK) return;
  char again[64];
  snprintf(again, sizeof again, "%" PRIu64 ".%" PRIu64, c.mergelog, c.span);
  if (trace_cursor_parse(again, &c2) != RIPPLE_OK || c2.mergelog != c.mergelog || c2.span != c.span)
    abort();
}

static void scope(const char *s) {
  graph_scope_t sc, again;
  int ok = trace_scope_parse(s, GRAPH_REACHABLE, &sc) == RIPPLE_OK;
  int want = !*s || !strcmp(s, "own") || !strcmp(s, "reachable");
  if (ok != want) abort();
  if (!ok) return;
  if (!*s && sc != GRAPH_REACHABLE) abort();
  if (trace_scope_parse(trace_scope_name(sc), GRAPH_OWN, &again) != RIPPLE_OK || again != sc)
    abort();
}

static void accept_encoding(const char *s) {
  int want = http_gzip_wanted(s);
  size_t n = strlen(s);
  char *more = malloc(n + 16);
  if (!more) return;
  memcpy(more, s, n);
  memcpy(more + n, ", identity", 11);
  if (want && !http_gzip_wanted(more)) abort();
  free(more);
  if (http_gzip_wanted("gzip;q=0") || !http_gzip_wanted("gzip")) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *s = malloc(size);
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = '\0';
  if (data[0] & 1)
    accept_encoding(s);
  else if (data[0] & 2)
    trace_cursor(s);
  else if (data[0] & 4)
    scope(s);
  else
    cursor(s);
  free(s);
  return 0;
}
