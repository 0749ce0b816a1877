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
#include <stdint.h>

/* The critical path of trace (an object with "spans" and "mergelogs" arrays),
 * into *out:
 *   {"hops": [{"cpid", "span_id", "component", "write", "kind", "namespace",
 *              "name", "end", "ms"}...], "total_ms": N, "writes": N}
 * hops from the first write to the last; ms: what the hop added (the first
 * hop: 0). Spans it cannot read (no cpid, times it cannot parse) are
 * skipped, and so are the watch agent's (service "ripple-watch": when it saw
 * a change, not a write). RIPPLE_OK (an empty trace gives no hops), RIPPLE_EINVAL (trace
 * is not an object), RIPPLE_ENOMEM. */
int critpath_compute(const json_t *trace, json_t **out);

/* A time critpath_split does not know. */
#define CRITPATH_UNKNOWN INT64_MIN

/* The parts of one hop (ns); -1 for a part whose data is absent. */
typedef struct critpath_parts {
  int64_t seen, wrote, admission;
  int clamped; /* a time was outside its place in the order and was moved */
} critpath_parts_t;

/* One hop's time, pred_end to end (the webhook's answers to the
 * predecessor's write and to this write), split at two instants when known
 * (CRITPATH_UNKNOWN otherwise): seen, when the watch agent observed the
 * predecessor's change of its object (the closest stand-in for when the
 * controller's informer saw it), and received, when the API server received
 * this write (its audit event's requestReceivedTimestamp). Parts:
 *   seen      pred_end -> seen          (only with seen)
 *   wrote     seen (else pred_end) -> received (else end)
 *                                       (with seen or received)
 *   admission received -> end           (only with received)
 * The instants come from three clocks (agent, API server, webhook) and
 * arrive in any order, so each is clamped into [the one before, end]: no
 * part is negative, and the known parts always add up to end - pred_end
 * (0 when end is before pred_end). clamped says one was moved. */
void critpath_split(int64_t pred_end, int64_t seen, int64_t received, int64_t end,
                    critpath_parts_t *out);

/* Each hop of path (critpath_compute's answer) after the first gets
 * "parts": {"seen_ms", "wrote_ms", "admission_ms", "clamped"} (critpath_split;
 * absent parts left out, "clamped" only when true) from details (GET
 * /v1/cpids/{cpid}/details: its "writes", each a span_id with its "change"
 * and "audit"): seen from the change joined to the hop's predecessor's span
 * ("time"), received from the audit event joined to the hop's own span
 * ("received"). A hop with neither gets no parts. details NULL or without
 * writes: nothing added. RIPPLE_OK, RIPPLE_EINVAL (path is not an object),
 * RIPPLE_ENOMEM. */
int critpath_add_parts(json_t *path, const json_t *details);

#endif
