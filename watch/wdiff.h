/*
 * wdiff.h - what a write changed in an object, as the trace server stores it
 * (docs/api.md, "Details"): field diffs between two versions of an object,
 * and redacted snapshots of an object when it is created or deleted.
 *
 * Pure logic on jansson trees, no I/O: the watch agent calls it off the
 * write path, with the old and new versions its watch already holds.
 *
 * What is never stored:
 *  - metadata.resourceVersion and metadata.managedFields (they change on
 *    every write and say nothing an operator asks about), and ripple's own
 *    annotations (metadata.annotations keys starting cpid.ripple.dev/),
 *    which the trace already shows;
 *  - the values under a Secret's data and stringData: a diff says which keys
 *    changed (`"redacted": true`), never their values, and a Secret's
 *    snapshot lists its keys only (a data or stringData that is not an
 *    object is hidden whole). An object is a Secret when its kind is
 *    "Secret" and its apiVersion is "v1" or not a string (list items may
 *    lack it), so pass objects that say their kind;
 *  - a Secret's kubectl.kubernetes.io/last-applied-configuration annotation,
 *    which kubectl apply fills with the whole manifest, data included;
 *  - values at paths matched by the redaction list (wdiff_redact_t).
 *
 * The objects are outside input: the walk goes 64 levels deep; a subtree
 * below that is compared whole (one entry at level 64) and copied only if
 * it nests at most 64 levels itself, else it is cut like a long value.
 * Nothing recurses deeper than that, whatever the input.
 *
 * Memory: every function returns new jansson references (json_decref) or
 * fills caller-owned structures; nothing is borrowed past the call.
 * Errors: RIPPLE_OK, RIPPLE_EINVAL (not an object, a bad pattern),
 * RIPPLE_ENOMEM. Outputs are written only on success.
 */
#ifndef RIPPLE_WATCH_WDIFF_H
#define RIPPLE_WATCH_WDIFF_H

#include <jansson.h>
#include <stddef.h>

#include "ripple/ripple.h"

/* Redaction patterns: JSON Pointers (RFC 6901) whose segments may be "*"
 * (any one key or array index), e.g.
 *   /spec/template/spec/containers/ * /env/ * /value   (without the spaces)
 * A pattern matches a path and everything below it. "~0" and "~1" stand for
 * "~" and "/" in a key; "*" is a whole segment, never part of one. At most
 * 64 segments, none empty, and 512 bytes. */
#define WDIFF_REDACT_MAX 64
typedef struct wdiff_redact {
  const char *pattern[WDIFF_REDACT_MAX];
  size_t n;
} wdiff_redact_t;

/* Check one pattern: RIPPLE_OK, or RIPPLE_EINVAL with the reason in err
 * (when err is not NULL; cut to cap bytes). */
int wdiff_pattern_check(const char *pattern, char *err, size_t cap);

/* Bounds on what one record may hold (0: the default in brackets). */
typedef struct wdiff_limits {
  size_t max_changes;  /* entries in a diff [256]; past it, "truncated": true */
  size_t max_value;    /* bytes of a value's compact JSON text [1024]; a longer
                          value is replaced by {"truncated": <its size in bytes>} */
  size_t max_snapshot; /* bytes of a snapshot's JSON text [65536]; past it the
                          snapshot keeps metadata only and says "truncated" */
} wdiff_limits_t;

/* The changes from old to new, both objects of one kind (a Secret when
 * either is one: its data is redacted). *out is an array of
 *   {"path": "/spec/replicas", "old": 1, "new": 3}
 * "old" is absent for an added field, "new" for a removed one; a redacted
 * path's entry has neither and says "redacted": true, once at the path the
 * pattern matched whatever changed below it. Objects are compared key by
 * key; arrays element by element by index (an array that changed length
 * reports each index that differs, then the added or removed indexes); a
 * change of type is one entry. Values are copied as in wdiff_snapshot, then
 * an entry's old or new value whose text exceeds max_value is cut whole.
 *
 * Entries are sorted by path, segment by segment (no entry is below another):
 * keys that are decimal numbers, as array indexes are, first and in numeric
 * order, then the others in byte order of the unescaped key; so /a/x comes
 * before /a-b and /l/2 before /l/10. Past max_changes the first ones in that
 * order are kept and *truncated is set (truncated may be NULL). r and lim
 * may be NULL: no patterns, the default limits. */
int wdiff_diff(const json_t *old, const json_t *new_, const wdiff_redact_t *r,
               const wdiff_limits_t *lim, json_t **out, int *truncated);

/* A copy of obj for a creation or deletion record: managedFields,
 * resourceVersion and ripple's annotations removed, redactions applied (a
 * redacted value becomes the string "(redacted)"; a Secret's data and
 * stringData keep their keys with that value), leaves longer than max_value
 * cut as in wdiff_diff; past max_snapshot only {"metadata": ...} is kept
 * (or {} without metadata), and *truncated is set (truncated may be NULL). */
int wdiff_snapshot(const json_t *obj, const wdiff_redact_t *r, const wdiff_limits_t *lim,
                   json_t **out, int *truncated);

/* A Secret made safe to write down, in place: every value of data and
 * stringData (the keys stay) and the last-applied annotation become
 * "(redacted)". RIPPLE_EINVAL (nothing changed) when obj is not a Secret by
 * the rule above; RIPPLE_ENOMEM. ripple-watch's records (wrec.h) use it. */
int wdiff_secret_redact(json_t *obj);

#endif
