#!/usr/bin/env bash
# The real node's benchmark (issue 29), on a lab of its own (lab/lab up --node):
#   - the time from `lab/lab node up` to a Ready node, the binaries built (warm),
#     --rounds times; the cold figure (the node's binaries built first, from an
#     empty Go build cache) is `lab/build.sh --node`'s own time, in docs/benchmarks.md;
#   - `helm install` of deploy/helm/ripple (lab/node/ripple-values.yaml) to every
#     ripple Pod Ready and the registration enabled by the guard, --rounds times
#     (uninstalled between rounds);
#   - the hop table of scenarios/node-scale.yaml (a Deployment scaled 1 -> 2 -> 1,
#     --scales times) on the real node and on the KWOK nodes, from `ripple run`
#     and `ripple analyze` (p50 and p99 per hop, side by side), with the chart
#     installed, so the webhook traces every write;
#   - the webhook's own hop histogram (ripple_hop_seconds, summed over its
#     replicas, read through the API server's proxy) for the writes of those runs:
#     the real kubelet's status writes among them.
# Needs root, the image (make image) and the release build (make build).
# Usage: bench/bench-node.sh [--build DIR] [--rounds N] [--scales N] [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release" rounds=3 scales=20 out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --scales) scales=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "bench-node: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
((EUID == 0)) || { echo "bench-node: needs root (the lab's real node)" >&2; exit 1; }
archive=$("$root/scripts/build-image" --print) || { echo "bench-node: no image (make image)" >&2; exit 1; }
[[ -x $build/bin/ripple-run ]] || { echo "bench-node: no $build/bin/ripple-run (make build)" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/bench-node.XXXXXX)}
mkdir -p "$out"

# A lab of its own, on ports nobody else's lab uses.
export RIPPLE_LAB_DIR=$out/lab
for v in LAB_ETCD_CLIENT_PORT LAB_ETCD_PEER_PORT LAB_APISERVER_PORT LAB_APISERVER2_PORT \
  LAB_KCM_PORT LAB_SCHEDULER_PORT LAB_KWOK_PORT LAB_AUDIT_PORT; do
  export "$v=$(free_port)"
done
LAB=$root/lab/lab
trap '"$LAB" down >/dev/null 2>&1 || true' EXIT
"$LAB" up --node --nodes 2 >"$out/lab-up.log" 2>&1 || { tail "$out/lab-up.log" >&2; exit 1; }
set -a
eval "$("$LAB" env)"
set +a
HELM=$("$root/lab/build.sh" --print-helm)
k() { "$LAB" kubectl "$@"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }
node_ready() { [[ $(k get node "$RIPPLE_LAB_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]; }

echo "== node up to Ready (binaries built), $rounds rounds"
for ((i = 1; i <= rounds; i++)); do
  "$LAB" node down >/dev/null 2>&1
  # The Node object stays (as after a reboot); wait until it is NotReady first so
  # that the next Ready is the new kubelet's.
  k delete node "$RIPPLE_LAB_NODE" --wait=true >/dev/null
  t0=$(now)
  "$LAB" node up >/dev/null 2>&1
  until node_ready; do sleep 0.1; done
  echo "  round $i: $(secs "$t0" "$(now)") s"
done
"$LAB" node import "$archive" 2>/dev/null

enabled() {
  local j
  j=$(k get mutatingwebhookconfiguration ripple-webhook -o json 2>/dev/null) || return 1
  [[ $(jq -r '.webhooks[0].clientConfig.caBundle // ""' <<<"$j") != "" ]] &&
    [[ $(jq -r '[.webhooks[0].matchConditions[].name] | index("ripple-guard-off")' <<<"$j") == null ]]
}
install() {
  "$HELM" --kubeconfig "$KUBECONFIG" install ripple "$root/deploy/helm/ripple" -n ripple-system --create-namespace \
    -f "$root/lab/node/ripple-values.yaml" >/dev/null
  for w in deployment/ripple-webhook deployment/ripple-guard statefulset/ripple-server; do
    k -n ripple-system rollout status "$w" --timeout=300s >/dev/null
  done
  until enabled; do sleep 0.1; done
}
echo "== helm install to every ripple Pod Ready and the registration enabled, $rounds rounds"
for ((i = 1; i <= rounds; i++)); do
  t0=$(now)
  install
  echo "  round $i: $(secs "$t0" "$(now)") s"
  if ((i < rounds)); then
    "$HELM" --kubeconfig "$KUBECONFIG" uninstall ripple -n ripple-system --wait >/dev/null
    k delete namespace ripple-system --wait=true >/dev/null
    # The server's local volume is Retain: free it for the next claim.
    k patch pv ripple-lab-local-server --type=json -p '[{"op":"remove","path":"/spec/claimRef"}]' >/dev/null
  fi
done

# webhook_metrics FILE: the webhook replicas' hop histograms, summed over replicas.
webhook_metrics() {
  local p
  for p in $(k -n ripple-system get pods -l app.kubernetes.io/component=webhook -o name); do
    k get --raw "/api/v1/namespaces/ripple-system/pods/${p#pod/}:9090/proxy/metrics"
  done | awk '/^ripple_hop_seconds_(bucket|count)\{/ {
      val = $NF; key = substr($0, 1, length($0) - length(val) - 1); v[key] += val }
    END { for (m in v) print m, v[m] }' >"$1"
}
# series LABELS FILE: one series of FILE with its labels taken off (hist_quantiles' form).
series() {
  awk -v L="$1" '{ val = $NF; key = substr($0, 1, length($0) - length(val) - 1) }
    key == "ripple_hop_seconds_count{" L "}" { print "ripple_hop_seconds_count", val }
    index(key, "ripple_hop_seconds_bucket{" L ",le=") == 1 {
      print "ripple_hop_seconds_bucket{" substr(key, length("ripple_hop_seconds_bucket{" L ",") + 1), val }' "$2" |
    sort -t'"' -k2,2g # buckets in order of their bounds (+Inf last), as hist_quantiles reads them
}
webhook_metrics "$out/hops-before.prom"

for type in real kwok; do
  echo "== $scales scales on the $type node(s): ripple run scenarios/node-scale.yaml"
  "$build/bin/ripple-run" "$root/scenarios/node-scale.yaml" --set type="$type" \
    --repetitions "$scales" --out "$out/run-$type" >"$out/run-$type.log" 2>&1 ||
    { tail "$out/run-$type.log" >&2; exit 1; }
  "$build/bin/ripple-analyze" "$out/run-$type" --json "$out/hops-$type.json" >/dev/null
done
webhook_metrics "$out/hops-after.prom"

echo "== hops, p50 / p99 ms (ripple analyze, the watch's arrival times)"
printf '  %-40s %18s %18s\n' hop "real node" "KWOK"
jq -r -s '.[0].hops as $r | .[1].hops as $k | ($r | keys[]) as $h |
  [$h, ($r[$h] | "\(.p50_ms|floor) / \(.p99_ms|floor) (\(.count))"),
   (($k[$h] // null) | if . then "\(.p50_ms|floor) / \(.p99_ms|floor) (\(.count))" else "-" end)] | @tsv' \
  "$out/hops-real.json" "$out/hops-kwok.json" | while IFS=$'\t' read -r h r kw; do
  printf '  %-40s %18s %18s\n' "$h" "$r" "$kw"
done

echo "== the webhook's ripple_hop_seconds over both runs: p50 / p99 s, count"
sed -n 's/^ripple_hop_seconds_count{\(.*\)} [0-9.e+]*$/\1/p' "$out/hops-after.prom" | sort | while read -r labels; do
  series "$labels" "$out/hops-before.prom" >"$out/b.prom"
  series "$labels" "$out/hops-after.prom" >"$out/a.prom"
  printf '  %-60s %s\n' "$labels" "$(hist_quantiles ripple_hop_seconds "$out/b.prom" "$out/a.prom")"
done
echo "runs and logs in $out"
