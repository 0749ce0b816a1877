#!/usr/bin/env bash
# bench-webhook.sh: what ripple-webhook costs the paper-1 scenario on the lab.
#
# Usage: bench/bench-webhook.sh [--runs N] [--build DIR] [--scenario FILE] [--out DIR] [--null]
#                                [--replicas N]
#   --runs N         runs with and runs without the webhook, alternating (default 10)
#   --build DIR      the build whose bin/ripple-run, ripple-webhook and ripple-server run
#                    (default build/release)
#   --scenario FILE  default scenarios/paper1-overhead.yaml (10 replicas scaled to 20, 30,
#                    40, 50, each step waiting for readyReplicas; then deleted)
#   --out DIR        keep the runs' directories, logs and metrics there (default: a
#                    temporary directory, deleted)
#   --null           a third arm, "null": a second ripple-webhook registered the same way
#                    but told to leave the namespace alone (--namespace-exclude), so it
#                    answers at once without a patch: what calling any webhook costs
#   --replicas N     run each webhook as N replicas behind a load balancer (default 1:
#                    one process, no balancer). "With": N ripple-webhook processes with
#                    the decider flags (--decider-lease in a namespace of the bench's own,
#                    --peer-address 127.0.0.1, --peer-ca $RIPPLE_LAB_CA: the Lease's
#                    holder decides, the others forward to it, docs/webhook.md "Several
#                    replicas"); "null": N do-nothing webhooks. Each arm is registered by
#                    the address of its own lbproxy (the build's tests/lbproxy, one
#                    backend per connection at random, as kube-proxy does); the runs
#                    start once a replica reports ripple_webhook_decider 1, and every
#                    "with" run waits for that again. Also printed: the replicas'
#                    forwarded, forward-failed and cause-unknown counters, summed.
#                    $RIPPLE_LBPROXY_BIN, when set, is the balancer run instead (the
#                    build's sets no TCP_NODELAY, which costs many calls of both arms a
#                    delayed ACK: docs/benchmarks.md, "Several replicas")
#
# The lab must be up (lab/lab up). One ripple-server (trace server) and one ripple-webhook
# (lab certificates, informers) run for the whole benchmark; each run gets its own
# namespace. "With": the webhook is registered for that namespace only (failurePolicy
# Ignore, webhook/deploy/register-lab.sh) before the run and unregistered after it;
# "without": no registration. The order alternates (with first in odd rounds), so drift
# in the machine's load falls on both sides alike.
#
# Time per propagation = a scale step's write plus the wait for readyReplicas that
# follows it (start of the scale to end of the wait, from ripple-run's run.json); a run
# has four. Printed: a table of every run's mean propagation time, the means and medians,
# the added time in percent, and the webhook's latency: from kube-apiserver's
# apiserver_admission_webhook_admission_duration_seconds (this registration's series,
# every operation; exact mean from _sum/_count, percentiles interpolated linearly in the
# histogram's buckets as Prometheus' histogram_quantile does, so no finer than its
# buckets: 5 ms, 25 ms, ...) and from the webhook's own
# ripple_webhook_request_duration_seconds (body to answer, buckets from 50 us; with
# --replicas, summed over the replicas: a review is counted once, by the replica that
# decided it, for the decision alone; a forwarding replica counts nothing, so the
# forward's round trip shows only in kube-apiserver's figures). Also printed (issue 28):
# each arm's answers per write kind from the webhooks' ripple_webhook_write_*_total
# (answers, those with a patch, the patches' operations and bytes, the webhook's own time
# per answer), and the CPU seconds per run of the webhook processes, of ripple-server and
# of each of the lab's processes (etcd, kube-apiserver, the controllers, KWOK).
# Ripple's webhooks sign their contexts (--context-key-file with a fresh key, as the chart
# runs them; from issue 28 on: earlier figures were taken without). Registrations,
# processes and namespaces are removed on exit, also on failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
runs=10 build="$root/build/release" scenario="$root/scenarios/paper1-overhead.yaml" out="" null=0
replicas=1
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --null) null=1; shift ;;
    --replicas) replicas=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-webhook: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-webhook: --runs wants a positive number" >&2; exit 2; }
((!null || runs <= 30)) || { echo "bench-webhook: --null allows at most 30 runs" >&2; exit 2; }
[[ $replicas =~ ^[1-9][0-9]?$ ]] || { echo "bench-webhook: --replicas wants a number from 1 to 99" >&2; exit 2; }
for b in ripple-run ripple-webhook ripple-server; do
  [[ -x $build/bin/$b ]] || { echo "bench-webhook: no $build/bin/$b (build first, or --build)" >&2; exit 2; }
done
lbproxy=${RIPPLE_LBPROXY_BIN:-$build/tests/lbproxy}
((replicas == 1)) || [[ -x $lbproxy ]] ||
  { echo "bench-webhook: --replicas needs $lbproxy (build the tests: cmake --build $build)" >&2; exit 2; }
for t in jq curl awk; do
  command -v "$t" >/dev/null || { echo "bench-webhook: $t is needed" >&2; exit 2; }
done
lab="$root/lab/lab"
eval "$("$lab" env)"
export KUBECONFIG
k() { "$lab" kubectl "$@"; }
k get --raw /readyz >/dev/null || { echo "bench-webhook: the lab is not up (lab/lab up)" >&2; exit 1; }

work=$(mktemp -d /tmp/ripple-bench-webhook.XXXXXX)
[[ -z $out ]] || mkdir -p "$out"
whname="ripple-bench-$$"
server_pid="" namespaces=()
# Per arm: the processes (webhooks and load balancer) and the webhooks' ports.
pids=() with_ports=() null_ports=()
cleanup() {
  local rc=$?
  for n in "$whname" "$whname-null"; do
    "$root/webhook/deploy/register-lab.sh" --delete --name "$n" >/dev/null 2>&1 || true
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
  for ns in "${namespaces[@]}"; do k delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true; done
  rm -f "$work/context-key"
  if [[ -n $out ]]; then cp -r "$work"/. "$out"/ 2>/dev/null || true; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT INT TERM


load() { uptime | sed 's/.*load average: /load /'; }
echo "machine: $(nproc) vCPU, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo);" \
  "lab: KWOK-based (kube-apiserver $(k version -o json 2>/dev/null | jq -r .serverVersion.gitVersion), KWOK nodes)"
echo "before: $(load)"

"$build/bin/ripple-server" --listen 127.0.0.1:0 --db "$work/trace.db" 2>"$work/server.log" &
server_pid=$!
server_port=$(port_of "$work/server.log")

# A namespace of our own, ready for Pods (its default ServiceAccount exists).
make_ns() {
  local ns=$1
  k create namespace "$ns" >/dev/null
  namespaces+=("$ns")
  for _ in $(seq 300); do
    k -n "$ns" get serviceaccount default >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench-webhook: no default ServiceAccount in $ns" >&2; return 1
}

# Start an arm's replicas: spawn ARM PORTS_ARRAY ARGS...; their logs are
# webhook[-null].log, or webhook[-null]-K.log with --replicas.
spawn() {
  local arm=$1 r log
  local -n ports_=$2
  shift 2
  for r in $(seq "$replicas"); do
    log="$work/webhook${arm:+-$arm}$( ((replicas == 1)) || echo "-$r").log"
    "$build/bin/ripple-webhook" "$@" 2>"$log" &
    pids+=($!)
    ports_+=("$(port_of "$log")")
  done
}
# A load balancer in front of PORTS...; its port in lb_port.
balance() {
  local log=$1 b=() p
  shift
  for p; do b+=(--backend "127.0.0.1:$p"); done
  "$lbproxy" --listen 127.0.0.1:0 "${b[@]}" >/dev/null 2>"$log" &
  pids+=($!)
  lb_port=$(port_of "$log")
}
# A replica's /metrics; nothing when it does not answer.
metrics() { curl -sf --cacert "$RIPPLE_LAB_CA" "https://127.0.0.1:$1/metrics" || true; }
# One of the with-arm's replicas decides (holds the Lease and has settled).
decider_wait() {
  local p
  for _ in $(seq 300); do
    for p in "${with_ports[@]}"; do
      metrics "$p" | grep -x 'ripple_webhook_decider 1' >/dev/null && return 0
    done
    sleep 0.1
  done
  echo "bench-webhook: no replica became the decider in 30 s (logs $work/webhook-*.log)" >&2
  return 1
}

# As the chart runs it: only the API servers may call /mutate (their client
# certificate, lab/apiserver.sh), so the cost of checking it is in the figures.
auth_args=()
[[ -z ${RIPPLE_LAB_WEBHOOK_CLIENT_CA:-} ]] || auth_args=(--client-ca "$RIPPLE_LAB_WEBHOOK_CLIENT_CA")
# And it signs every context it writes (the chart's install hook makes the key): a Pod's
# patch carries the context's MAC too (issue 28 counts the patches as the chart's are).
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$work/context-key")
wh_args=(--listen 127.0.0.1:0 --tls-cert "$RIPPLE_LAB_WEBHOOK_CERT" --tls-key "$RIPPLE_LAB_WEBHOOK_KEY"
  --trace-server "http://127.0.0.1:$server_port" --context-key-file "$work/context-key"
  ${auth_args[@]+"${auth_args[@]}"})
if ((replicas > 1)); then
  make_ns "wlb-$$-decider"
  wh_args+=(--decider-lease "wlb-$$-decider/ripple-decider" --peer-address 127.0.0.1
    --peer-ca "$RIPPLE_LAB_CA")
fi
spawn "" with_ports "${wh_args[@]}"
for p in "${with_ports[@]}"; do
  for _ in $(seq 300); do
    curl -sf --cacert "$RIPPLE_LAB_CA" "https://127.0.0.1:$p/readyz" >/dev/null && break
    sleep 0.1
  done
  curl -sf --cacert "$RIPPLE_LAB_CA" "https://127.0.0.1:$p/readyz" >/dev/null ||
    { echo "bench-webhook: the webhook's informers did not sync" >&2; exit 1; }
done
if ((replicas > 1)); then
  decider_wait
  balance "$work/lbproxy.log" "${with_ports[@]}"
  port=$lb_port
else
  port=${with_ports[0]}
fi
modes="with without"
if ((null)); then
  modes="with without null"
  excl=ripple-system
  for i in $(seq "$runs"); do excl+=",wlb-$$-$i-null"; done
  spawn null null_ports --listen 127.0.0.1:0 --tls-cert "$RIPPLE_LAB_WEBHOOK_CERT" \
    --tls-key "$RIPPLE_LAB_WEBHOOK_KEY" --no-informers --namespace-exclude "$excl" \
    ${auth_args[@]+"${auth_args[@]}"}
  if ((replicas > 1)); then
    balance "$work/lbproxy-null.log" "${null_ports[@]}"
    null_port=$lb_port
  else
    null_port=${null_ports[0]}
  fi
fi

# A registration's apiserver histogram, summed over operations: "le count" lines, then
# "sum S" and "count N".
apiserver_hist() {
  k get --raw /metrics | awk -v name="$1.ripple.dev" '
    index($0, "apiserver_admission_webhook_admission_duration_seconds") == 1 &&
    index($0, "name=\"" name "\"") {
      if ($1 ~ /_bucket\{/) { match($1, /le="[^"]*"/); le = substr($1, RSTART + 4, RLENGTH - 5); b[le] += $2 }
      else if ($1 ~ /_sum\{/) s += $2
      else if ($1 ~ /_count\{/) c += $2
    }
    END { for (le in b) print le, b[le]; print "sum", s + 0; print "count", c + 0 }'
}
# The webhook's own histogram, summed over the replicas on PORTS...
webhook_hist() {
  local p
  for p; do metrics "$p"; done | awk '
    /^ripple_webhook_request_duration_seconds_bucket/ { match($1, /le="[^"]*"/); b[substr($1, RSTART + 4, RLENGTH - 5)] += $2 }
    /^ripple_webhook_request_duration_seconds_sum/ { s += $2 }
    /^ripple_webhook_request_duration_seconds_count/ { c += $2 }
    END { for (le in b) print le, b[le]; printf "sum %.9f\n", s; print "count", c + 0 }'
}

# Requests answered by the replicas on PORTS... (a forwarded one counts at the decider).
requests() {
  local p
  for p; do metrics "$p"; done | awk '$1 == "ripple_webhook_requests_total" { n += $2 } END { print n + 0 }'
}

# Register NAME for ns (the webhook, or its load balancer, on PORT) and wait until the
# API server calls it there: a server-side dry run (dry runs send no mergelog) reaches
# one of the replicas on PORTS...
register() {
  local name=$1 p=$2 ns=$3 n0 n1
  shift 3
  "$root/webhook/deploy/register-lab.sh" --name "$name" --port "$p" "$ns" >/dev/null
  for _ in $(seq 300); do
    n0=$(requests "$@")
    k -n "$ns" create service clusterip probe --tcp=80:80 --dry-run=server -o name >/dev/null 2>&1
    n1=$(requests "$@")
    ((${n1:-0} > ${n0:-0})) && return 0
    sleep 0.1
  done
  echo "bench-webhook: the registration did not take effect in $ns" >&2; return 1
}
unregister() { "$root/webhook/deploy/register-lab.sh" --delete --name "$1" >/dev/null; }

# Mean time per propagation of a run, in seconds: each scale step's start to the end of
# the wait that follows it.
propagation() {
  jq -r '[.steps | map(select(.phase == "steps")) as $s | range(0; ($s | length) - 1) as $i
          | select(($s[$i].step | startswith("scale ")) and ($s[$i + 1].step | startswith("wait ")))
          | ($s[$i + 1].end_ns - $s[$i].start_ns) / 1e9] | add / length' "$1"
}

# CPU seconds (user + system) the processes PIDS... have used so far.
cpu_of() {
  local p
  for p; do cat "/proc/$p/stat" 2>/dev/null || true; done |
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); t += $12 + $13 } END { printf "%.2f\n", t / hz }'
}

# The lab's processes ("component pid" per line, those alive), whose CPU per run is
# printed too: what an arm costs the control plane itself.
mapfile -t lab_procs < <("$lab" status 2>/dev/null | awk '$3 == "alive" && $2 ~ /^[0-9]+$/ { print $1, $2 }')
lab_cpu() {
  local l
  for l in "${lab_procs[@]}"; do echo "${l% *} $(cpu_of "${l#* }")"; done
}

one_run() {
  local mode=$1 i=$2
  local ns="wlb-$$-$i-$mode" w0 s0
  make_ns "$ns"
  lab_cpu >"$work/$mode-$i.lab0"
  w0=$(cpu_of "${pids[@]}") s0=$(cpu_of "$server_pid")
  case $mode in
    with) ((replicas == 1)) || decider_wait; register "$whname" "$port" "$ns" "${with_ports[@]}" ;;
    null) register "$whname-null" "$null_port" "$ns" "${null_ports[@]}" ;;
  esac
  if ! "$build/bin/ripple-run" "$scenario" --no-watch --out "$work/$mode-$i" --namespace "$ns" \
    >"$work/$mode-$i.log" 2>&1; then
    echo "bench-webhook: run $i ($mode) failed:" >&2; cat "$work/$mode-$i.log" >&2; return 1
  fi
  case $mode in
    with) unregister "$whname" ;;
    null) unregister "$whname-null" ;;
  esac
  k delete namespace "$ns" --wait=false >/dev/null
  propagation "$work/$mode-$i/run.json" >"$work/$mode-$i.s"
  awk -v w0="$w0" -v w1="$(cpu_of "${pids[@]}")" -v s0="$s0" -v s1="$(cpu_of "$server_pid")" \
    'BEGIN { printf "%.2f %.2f\n", w1 - w0, s1 - s0 }' >"$work/$mode-$i.cpu"
  lab_cpu | awk 'NR == FNR { c0[$1] = $2; next } { printf "%s %.2f\n", $1, $2 - c0[$1] }' \
    "$work/$mode-$i.lab0" - >"$work/$mode-$i.labcpu"
}

# The order rotates from round to round.
read -ra arms <<<"$modes"
for i in $(seq "$runs"); do
  line="round $i/$runs:"
  for j in $(seq 0 $((${#arms[@]} - 1))); do
    mode=${arms[$(((i - 1 + j) % ${#arms[@]}))]}
    one_run "$mode" "$i"
    line+=$(printf ' %s %.3f s' "$mode" "$(cat "$work/$mode-$i.s")")
  done
  echo "$line" >&2
done
apiserver_hist "$whname" >"$work/apiserver-hist.txt"
webhook_hist "${with_ports[@]}" >"$work/webhook-hist.txt"
if ((null)); then
  apiserver_hist "$whname-null" >"$work/apiserver-hist-null.txt"
  webhook_hist "${null_ports[@]}" >"$work/webhook-hist-null.txt"
fi
for p in "${with_ports[@]}"; do metrics "$p" >"$work/metrics-$p.txt" || true; done
for p in "${null_ports[@]}"; do metrics "$p" >"$work/metrics-null-$p.txt" || true; done
k get --raw /metrics | grep -E "^apiserver_admission_webhook_(fail_open_count|request_total)\{.*$whname" \
  >"$work/apiserver-webhook-counts.txt" || true
echo "after: $(load)"

echo
echo "time per propagation (mean of a run's 4 scale steps, seconds)"
printf '%-6s' run; for m in "${arms[@]}"; do printf ' %10s' "$m"; done; echo
for i in $(seq "$runs"); do
  printf '%-6s' "$i"; for m in "${arms[@]}"; do printf ' %10.3f' "$(cat "$work/$m-$i.s")"; done; echo
done
stats() { awk '{ v[NR] = $1; s += $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f %.4f\n", s / NR, m }' "$1"; }
declare -A mean med
for m in "${arms[@]}"; do
  for i in $(seq "$runs"); do cat "$work/$m-$i.s"; done | sort -g >"$work/$m.all"
  read -r "mean[$m]" "med[$m]" < <(stats "$work/$m.all")
done
printf '%-6s' mean; for m in "${arms[@]}"; do printf ' %10.3f' "${mean[$m]}"; done; echo
printf '%-6s' median; for m in "${arms[@]}"; do printf ' %10.3f' "${med[$m]}"; done; echo
for m in "${arms[@]}"; do
  [[ $m != without ]] || continue
  awk -v m="$m" -v a="${mean[$m]}" -v b="${mean[without]}" -v c="${med[$m]}" -v d="${med[without]}" 'BEGIN {
    printf "added time per propagation (%s): %+.2f%% (means), %+.2f%% (medians)\n",
      m, (a - b) / b * 100, (c - d) / d * 100 }'
done
# The target (issue 11): ripple's added time within 1.25x of a webhook that does nothing.
if ((null)); then
  awk -v a="${mean[with]}" -v n="${mean[null]}" -v b="${mean[without]}" 'BEGIN {
    if (n - b <= 0) { printf "ripple / null added time: the null arm added nothing measurable (%+.3f s)\n", n - b; exit }
    r = (a - b) / (n - b)
    printf "ripple / null added time (means): %.2fx (%+.3f s / %+.3f s); target <= 1.25x: %s\n",
      r, a - b, n - b, r <= 1.25 ? "met" : "missed" }'
fi

# Percentiles from cumulative "le count" lines, interpolated linearly inside a bucket
# (from 0 for the first); a rank in the +Inf bucket reports "> the last bound".
percentiles() {
  awk '
    $1 == "sum" { s = $2; next } $1 == "count" { c = $2; next }
    { le[++n] = ($1 == "+Inf" ? 1e300 : $1 + 0); cum[n] = $2 + 0 }
    END {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (le[j] < le[i]) {
        t = le[i]; le[i] = le[j]; le[j] = t; t = cum[i]; cum[i] = cum[j]; cum[j] = t }
      total = cum[n]
      if (!total) { print "no requests"; exit }
      printf "requests %d, mean %.3f ms", total, s / c * 1000
      split("0.5 0.9 0.99", qs, " ")
      for (k = 1; k <= 3; k++) {
        rank = qs[k] * total; prev = 0; lo = 0
        for (i = 1; i <= n; i++) { if (cum[i] >= rank) break; prev = cum[i]; lo = le[i] }
        if (le[i] == 1e300) { printf ", p%g > %g ms", qs[k] * 100, lo * 1000; continue }
        v = cum[i] > prev ? lo + (le[i] - lo) * (rank - prev) / (cum[i] - prev) : le[i]
        printf ", p%g %.3f ms", qs[k] * 100, v * 1000
      }
      printf "\n"
    }' "$1"
}
echo
echo "webhook latency seen by kube-apiserver (apiserver_admission_webhook_admission_duration_seconds;"
echo "  percentiles interpolated in its buckets 5 ms, 25 ms, ...: bounds, not measurements):"
echo "  $(percentiles "$work/apiserver-hist.txt")"
echo "  le=0.005: $(awk '$1 == "0.005" { a = $2 } $1 == "+Inf" { b = $2 } END { if (b) printf "%.1f%% of requests", a / b * 100 }' "$work/apiserver-hist.txt")"
echo "  fail-open and request counters: $(awk '{ printf "%s%s", sep, $0; sep = "; " }' "$work/apiserver-webhook-counts.txt")"
echo "webhook's own histogram (ripple_webhook_request_duration_seconds, body to answer;"
echo "  interpolated in buckets 50 us, 100 us, 250 us, 500 us, 1 ms, 2.5 ms, ...):"
if ((replicas > 1)); then
  echo "  (summed over the $replicas replicas: each review once, where it was decided, the"
  echo "  decision alone; a forward's round trip is in kube-apiserver's figures only)"
fi
echo "  $(percentiles "$work/webhook-hist.txt")"
if ((replicas > 1)); then
  echo "  replicas (port: decided, forwarded, forward failed, cause unknown, decider):"
  for p in "${with_ports[@]}"; do
    echo "    $p: $(awk '$1 == "ripple_webhook_requests_total" { r = $2 } $1 == "ripple_webhook_forwarded_total" { f = $2 }
      $1 == "ripple_webhook_forward_failed_total" { x = $2 } $1 == "ripple_webhook_cause_unknown_total" { u = $2 }
      $1 == "ripple_webhook_decider" { d = $2 } END { printf "%d, %d, %d, %d, %d", r, f, x, u, d }' "$work/metrics-$p.txt")"
  done
  echo "  summed: $(cat "$work"/metrics-[0-9]*.txt | awk '
    $1 == "ripple_webhook_forwarded_total" { f += $2 } $1 == "ripple_webhook_forward_failed_total" { x += $2 }
    $1 == "ripple_webhook_cause_unknown_total" { u += $2 }
    END { printf "ripple_webhook_forwarded_total %d, ripple_webhook_forward_failed_total %d, ripple_webhook_cause_unknown_total %d", f, x, u }')"
fi
# Answers per write kind from /metrics files: answers, patched, patch ops, patch bytes,
# the webhook's own ms per answer.
kinds_table() {
  cat "$@" | awk '
    /^ripple_webhook_write_[a-z_]*_total\{/ {
      f = $1; sub(/\{.*/, "", f); sub(/^ripple_webhook_write_/, "", f); sub(/_total$/, "", f)
      l = $1; sub(/^[^{]*\{resource="/, "", l); sub(/",operation="/, " ", l); sub(/"\}$/, "", l)
      v[l, f] += $2; if (!(l in seen)) { seen[l] = 1; order[++n] = l } }
    END {
      for (i = 1; i <= n; i++) { l = order[i]
        printf "  %-34s %6d %6d %6d %8d %7.3f\n", l, v[l, "answers"], v[l, "patched"], v[l, "patch_ops"],
          v[l, "patch_bytes"], v[l, "answers"] ? v[l, "seconds"] / v[l, "answers"] * 1000 : 0
        a += v[l, "answers"]; p += v[l, "patched"]; o += v[l, "patch_ops"]; b += v[l, "patch_bytes"] }
      printf "  %-34s %6d %6d %6d %8d\n", "all", a, p, o, b }'
}
echo "ripple's answers per write kind (ripple_webhook_write_*_total, summed over the replicas;"
echo "  the probes' dry runs included): answers, patched, ops, patch bytes, own ms per answer"
kinds_table "$work"/metrics-[0-9]*.txt
if ((null)); then
  echo "the null webhook's answers per write kind (the same writes, had it been ripple):"
  kinds_table "$work"/metrics-null-*.txt
fi
echo "CPU seconds per run (mean; user + system): every ripple-webhook process (both arms'"
echo "  webhooks run throughout: ripple's informers follow every arm's objects) and ripple-server:"
for m in "${arms[@]}"; do
  printf '  %s: %s\n' "$m" "$(for i in $(seq "$runs"); do cat "$work/$m-$i.cpu"; done |
    awk '{ w += $1; s += $2 } END { printf "webhooks %.2f, ripple-server %.2f", w / NR, s / NR }')"
done
if ((${#lab_procs[@]})); then
  echo "the lab's processes, CPU seconds per run (mean):"
  for m in "${arms[@]}"; do
    printf '  %s: %s\n' "$m" "$(for i in $(seq "$runs"); do cat "$work/$m-$i.labcpu"; done |
      awk -v n="$runs" '!($1 in c) { o[++k] = $1 } { c[$1] += $2 }
        END { for (j = 1; j <= k; j++) printf "%s%s %.2f", (j > 1 ? ", " : ""), o[j], c[o[j]] / n }')"
  done
fi
if ((null)); then
  echo "null webhook (answers at once, no patch), seen by kube-apiserver:"
  echo "  $(percentiles "$work/apiserver-hist-null.txt")"
  echo "  its own histogram$( ((replicas == 1)) || echo " (summed over $replicas replicas)"): $(percentiles "$work/webhook-hist-null.txt")"
fi
