#!/usr/bin/env bash
# The details benchmark (issue 15): a flood of audit events and Events must not
# slow the ingest of mergelogs and spans. ripple-server (pinned to core 0)
# ingests at its full rate from bench_ingest (core 1), first alone, then while
# four senders (core 1 too) post as fast as they can:
#   - audit EventLists as kube-apiserver's batch backend sends them: 400 events
#     each, every one with request and response objects of about 8 KiB (the
#     server reads only a few fields of them);
#   - details arrays of 1,000 Events each.
# Reports the ingest rate without and with the flood, the details stored per
# second during the flood, and how many were refused with 429 (the bounded
# queue, --details-queue) rather than queued without bound.
# Usage: bench/bench-details.sh [--build DIR] [--seconds S] [--queue N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release" seconds=10 queue=100000
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--seconds S] [--queue N]" >&2; exit 2 ;;
  esac
done
server_bin=$build/bin/ripple-server ingest=$build/bench/bench_ingest
[[ -x $server_bin && -x $ingest ]] || { echo "bench-details: build $build first (make build)" >&2; exit 1; }
work=$(mktemp -d /tmp/ripple-bench-details.XXXXXX)
server_pid='' flood_pids=()
finish() {
  for p in "${flood_pids[@]}" $server_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap finish EXIT

# The bodies, built once.
python3 - "$work" <<'EOF'
import json, sys, uuid
work = sys.argv[1]
blob = "x" * 8000
items = []
for i in range(400):
    uid = str(uuid.uuid4())
    obj = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p-%d" % i, "namespace": "bench", "uid": uid, "resourceVersion": str(1000 + i)},
           "spec": {"containers": [{"name": "c", "image": "img", "args": [blob]}]}}
    items.append({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse",
                  "auditID": str(uuid.uuid4()), "stage": "ResponseComplete", "verb": "create",
                  "requestURI": "/api/v1/namespaces/bench/pods",
                  "user": {"username": "system:serviceaccount:kube-system:replicaset-controller",
                           "groups": ["system:serviceaccounts", "system:authenticated"]},
                  "sourceIPs": ["127.0.0.1"], "userAgent": "kube-controller-manager/v1.36.3",
                  "objectRef": {"resource": "pods", "namespace": "bench", "apiVersion": "v1"},
                  "responseStatus": {"metadata": {}, "code": 201},
                  "requestObject": obj, "responseObject": obj,
                  "requestReceivedTimestamp": "2026-11-25T10:00:00.000000Z",
                  "stageTimestamp": "2026-11-25T10:00:00.010000Z",
                  "annotations": {"ripple.example/ripple-span": "%016x" % (i + 1)}})
json.dump({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": items},
          open(work + "/audit.json", "w"))
events = [{"type": "event", "time": "2026-11-25T10:00:00Z",
           "object": {"kind": "Pod", "namespace": "bench", "name": "p-%d" % i, "uid": str(uuid.uuid4())},
           "reason": "FailedScheduling", "eventType": "Warning", "source": "default-scheduler",
           "message": "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.",
           "count": 1, "uid": str(uuid.uuid4())} for i in range(1000)]
json.dump(events, open(work + "/events.json", "w"))
EOF

# Sums a family's samples, labelled ones too (name{...} value).
metric() { curl -sf "$server_url/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $2 } END { print s + 0 }'; }

server_start() {
  local port=
  rm -f "$work"/trace.db*
  taskset -c 0 "$server_bin" --listen 127.0.0.1:0 --db "$work/trace.db" --max-cpids 0 --no-web \
    --no-stalls --details-queue "$queue" 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 200); do
    port=$(sed -n 's/.*event=listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log")
    [[ -n $port ]] && break
    sleep 0.05
  done
  [[ -n $port ]] || { cat "$work/server.log" >&2; exit 1; }
  server_url="http://127.0.0.1:$port"
}

ingest_rate() { # bench_ingest's records/s lines (mergelogs, then spans)
  # bench_ingest exits 1 while ingest misses its own target (500k/s): not this benchmark's figure.
  { taskset -c 1 "$ingest" --port "${server_url##*:}" --seconds "$seconds" --kind both --sync normal \
    --batch 1000 2>&1 || true; } | tee -a "$work/ingest.log" | awk '/records\/s acknowledged/ { printf "%s/s ", $1 } END { print "(mergelogs, spans)" }'
}

# One sender: post a body in a loop until killed, logging each request's time
# (the server answers once the body is parsed and queued for the writer).
flood() { # PATH FILE TIMES
  while :; do
    curl -s -o /dev/null -w '%{time_total}\n' -H 'Content-Type: application/json' \
      --data-binary "@$2" "$server_url$1" >>"$3" || true
  done
}

server_start
echo "== alone"
alone=$(ingest_rate)
echo "$alone"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true

server_start
echo "== with a flood of audit events and Events"
for _ in 1 2; do
  taskset -c 1 bash -c "$(declare -f flood); server_url=$server_url; flood /v1/audit $work/audit.json $work/times.audit" &
  flood_pids+=($!)
  taskset -c 1 bash -c "$(declare -f flood); server_url=$server_url; flood /v1/details $work/events.json $work/times.events" &
  flood_pids+=($!)
done
sleep 1
: >"$work/times.audit"; : >"$work/times.events"
before=$(metric ripple_details_stored_total)
t0=$(date +%s.%N)
flooded=$(ingest_rate)
t1=$(date +%s.%N)
after=$(metric ripple_details_stored_total)
busy=$(metric ripple_details_busy_total)
echo "$flooded"
for p in "${flood_pids[@]}"; do kill "$p" 2>/dev/null || true; done
awk -v a="$before" -v b="$after" -v t0="$t0" -v t1="$t1" -v busy="$busy" 'BEGIN {
  printf "details stored during the flood: %.0f/s (audit events and Events); refused with 429: %d\n",
    (b - a) / (t1 - t0), busy }'
for k in audit events; do # the time to an answer, p50 and p99, of the requests during the flood
  sort -n "$work/times.$k" | awk -v k="$k" '{ v[NR] = $1 } END {
    if (NR) printf "%s requests: %d, answered in p50 %.2f s, p99 %.2f s\n", k, NR, v[int(NR * 0.5 + 0.5)], v[int(NR * 0.99 + 0.5)]
    else printf "%s requests: none answered\n", k }'
done
