/*
 * ripplex/compare.h - two cascades of the same kind of change compared:
 * which hops appeared or disappeared, which took longer, which write another
 * component made. `kubectl ripple diff` and the trace server's
 * GET /v1/compare compute it here, from two traces as the server's /trace
 * answers them (docs/api.md).
 *
 * A hop is every write of one component, verb and resource and object kind
 * ("kube-scheduler", "create pods/binding", "Pod"). What a write took is the
 * time from the write it waited for (its predecessor, ripplex/critpath.h) to
 * its own answer, so a slow scheduler shows at the bindings and not again at
 * every write after them.
 *
 * Memory: the answer is a new jansson reference the caller owns.
 */
#ifndef RIPPLEX_COMPARE_H
#define RIPPLEX_COMPARE_H

#include <jansson.h>

/* a and b compared, into *out:
 *   {"a": {"total_ms", "writes"}, "b": {...}, "delta_ms",
 *    "hops": [{"component", "write", "kind", "change",
 *              "a": {"count", "p50_ms", "max_ms"} or null, "b": ... or null,
 *              "delta_ms"}...],
 *    "writers": [{"write", "kind", "a": [component...], "b": [...]}...]}
 * hops by how much they changed, most first: appeared and disappeared ones
 * (delta: the one side's max), then by |delta_ms| (b's max minus a's);
 * change is "appeared", "disappeared", "count" (a different number of
 * writes), "slower", "faster" (by at least 10 ms and a quarter) or "same".
 * writers: writes and kinds made by different components in a and b.
 * total_ms: from the first write to the last. RIPPLE_OK, RIPPLE_EINVAL
 * (either is not an object), RIPPLE_ENOMEM. */
int compare_compute(const json_t *a, const json_t *b, json_t **out);

#endif
