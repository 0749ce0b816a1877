/*
 * ripplex/yjson.h - YAML as JSON: the one YAML reader of ripple (manifests,
 * scenarios, kubeconfigs, rule files, the watch agent's configuration).
 *
 * Memory: *out is a new jansson reference the caller releases with
 * json_decref(). Errors: RIPPLE_OK, RIPPLE_EINVAL (not YAML, or too big:
 * err says where and why), RIPPLE_ENOMEM.
 */
#ifndef RIPPLEX_YJSON_H
#define RIPPLEX_YJSON_H

#include <jansson.h>
#include <stddef.h>

/* Every non-empty document of a YAML stream, as a JSON array. */
int yjson_parse(const char *text, size_t len, json_t **out, char *err, size_t cap);

/* The text of a scalar as YAML wrote it, for fields that are strings whatever
 * YAML typed them as (a token "0123" typed as a number, a name "true"): a
 * string as it is, a number in its shortest form that reads back the same,
 * true/false, "" for null; NULL for an array or an object. Numbers are
 * written into buf. Leading zeros and exponents are not kept: 007 reads 7. */
#define YJSON_TEXT_MAX 32
const char *yjson_text(const json_t *v, char buf[YJSON_TEXT_MAX]);

#endif
