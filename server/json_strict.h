/*
 * json_strict.h - the checks that make yajl's parser refuse what jansson
 * refused, for the trace server's decoder (decode.c).
 *
 * yajl is more lenient than jansson in a few places, and the decoder's
 * contract (docs/api.md, tests/server/test_decode.c) was set with jansson: UTF-8
 * that is overlong, encodes a surrogate or goes past U+10FFFF; \u escapes of
 * NUL or of an unpaired surrogate; vertical tab and form feed as white space;
 * integers beyond int64 and reals beyond double.
 */
#ifndef RIPPLE_SERVER_JSON_STRICT_H
#define RIPPLE_SERVER_JSON_STRICT_H

#include <stddef.h>

#define JSTRICT_OK ((size_t)-1)

/* The offset of the first byte of json that jansson refused and yajl would
 * take, with *why saying what it is; or JSTRICT_OK. A scan of the raw bytes
 * suffices: any backslash of a valid body is inside a string, and bytes
 * outside strings that are not ASCII are refused by yajl as well. */
size_t jstrict_scan(const char *json, size_t n, const char **why);

/* 1 for a JSON number (as yajl lexed it) jansson took, 0 for an integer
 * beyond int64 or a real beyond double, -1 when out of memory. */
int jstrict_number_ok(const char *s, size_t n);

#endif
