/*
 * ripplex/critpath.h - the critical path of a cascade: the chain of writes,
 * across merges, that ends at the cascade's last write, each with the time
 * it added. The trace server answers it (GET /v1/cpids/{cpid}/critical-path)
 * and `kubectl ripple trace --critical-path` prints it; both compute it here,
 * from a trace as the server's /trace answer has it (docs/api.md).
 *
 * Which write waited for which, from what a trace records (docs/api.md,
 * "Critical path"): a write's predecessor is the latest of
 *   - the previous write of the same object (by uid, else kind, namespace
 *     and name): a Pod's status after its binding; for a status write, also
 *     the latest write of an object it owns (the span's owner attribute): a
 *     ReplicaSet's status after its Pods';
 *   - for a write that keeps a CPID it did not make: the write that made it
 *     (the first of that CPID), whose admission the webhook counts the
 *     write's time from;
 *   - for the first write of a merged CPID: the latest write, before it, of
 *     the CPIDs that triggered the merge (all its sources when its mergelog
 *     names no trigger): an Endpoints update after the Pod status that made
 *     a Pod ready.
 * A person's change (the first write of a root CPID) waited for nothing.
 * The path starts at the last write and follows predecessors back to a write
 * with none (the person's change). A hop's time is from its predecessor's
 * end to its own.
 *
 * Memory: the answer is a new jansson reference the caller owns.
 */
#ifndef RIPPLEX_CRITPATH_H
#define RIPPLEX_CRITPATH_H

#include <jansson.h>

/* The critical path of trace (an object with "spans" and "mergelogs" arrays),
 * into *out:
 *   {"hops": [{"cpid", "span_id", "component", "write", "kind", "namespace",
 *              "name", "end", "ms"}...], "total_ms": N, "writes": N}
 * hops from the first write to the last; ms: what the hop added (the first
 * hop: 0). Spans it cannot read (no cpid, times it cannot parse) are
 * skipped. RIPPLE_OK (an empty trace gives no hops), RIPPLE_EINVAL (trace
 * is not an object), RIPPLE_ENOMEM. */
int critpath_compute(const json_t *trace, json_t **out);

#endif
