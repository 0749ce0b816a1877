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

#endif
