#!/usr/bin/env bash
# OTLP ingest, ripple-server against Jaeger (issue 28): the same pre-built
# OTLP/HTTP protobuf request (1,000 spans, 8 string attributes each, built once
# into a file by `bench_server otlp-request`) posted over and over to
# POST /v1/traces of
#   - ripple-server: durable (--sync normal: an acknowledged span survives a
#     crash or kill of the process), with a writer token;
#   - the lab's Jaeger v2 (lab/build.sh --jaeger), memory store;
#   - the lab's Jaeger v2, badger store (on disk, its defaults: no fsync per
#     write, like ripple's sync=normal).
# Jaeger's configuration is bench/lib.sh's (no batch processor, no queue).
# Alternating (ripple, memory, badger) for --rounds rounds, each receiver
# started fresh on an empty store; the receiver is pinned to core 0, the load
# generator (bench_ingest --kind otlp, 4 keep-alive connections) to core 1.
# Prints each rate, the receiver's CPU per span (user + system time of all its
# threads over the spans acknowledged: the figure that holds on a machine
# shared with other work, where the rate does not), its peak RSS, the medians
# and the ratios.
# Usage: bench/bench-vs-jaeger.sh [--build DIR] [--seconds S] [--rounds N] [--conns N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release" seconds=10 rounds=3 conns=4
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--seconds S] [--rounds N] [--conns N]" >&2; exit 2 ;;
  esac
done
server_bin=$build/bin/ripple-server ingest=$build/bench/bench_ingest bench_server=$build/bench/bench_server
for b in "$server_bin" "$ingest" "$bench_server"; do
  [[ -x $b ]] || { echo "bench-vs-jaeger: build $build first (make build): no $b" >&2; exit 1; }
done
jaeger=$("$root/lab/build.sh" --print-jaeger) || { echo "bench-vs-jaeger: build Jaeger first (lab/build.sh --jaeger)" >&2; exit 1; }
work=$(mktemp -d /tmp/ripple-bench-vs-jaeger.XXXXXX)
pid=''
finish() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap finish EXIT

# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"

"$bench_server" otlp-request "$work/request.pb" --spans 1000
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/writer-token"
token=$(cat "$work/writer-token")
echo "request: $(stat -c %s "$work/request.pb") bytes of protobuf, 1000 spans, 8 string attributes each"

# start WHAT DIR: the receiver pinned to core 0; sets pid and port.
start() {
  local what=$1 dir=$2
  port=$(free_port)
  if [[ $what == ripple ]]; then
    taskset -c 0 "$server_bin" --listen "127.0.0.1:$port" --db "$dir/trace.db" --sync normal \
      --max-cpids 0 --no-web --writer-token-file "$work/writer-token" 2>"$dir/log" &
    pid=$!
    for _ in $(seq 200); do grep -q 'event=listening' "$dir/log" && return 0; sleep 0.05; done
  else
    health=$(free_port)
    jaeger_config "$what" "$dir" "$port" "$health"
    taskset -c 0 "$jaeger" --config "file:$dir/jaeger.yaml" >"$dir/log" 2>&1 &
    pid=$!
    jaeger_wait "$health" && return 0
  fi
  cat "$dir/log" >&2
  exit 1
}

# The receiver's CPU time so far (user + system), in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }

# run WHAT: one measurement; prints "rate spans_per_cpu_second rss_mb".
run() {
  local what=$1 dir out rate rss rejected t0 t1 spans
  dir=$(mktemp -d "$work/$what.XXXXXX")
  start "$what" "$dir"
  local args=(--port "$port" --kind otlp --body "$work/request.pb" --batch 1000 --conns "$conns" --seconds "$seconds")
  [[ $what == ripple ]] && args+=(--token "$token")
  t0=$(cpu_ticks)
  out=$("$ingest" "${args[@]}") || { echo "$out" >&2; echo "bench-vs-jaeger: $what: requests failed" >&2; exit 1; }
  t1=$(cpu_ticks)
  rate=$(awk '/records\/s acknowledged/ { print $1 }' <<<"$out")
  spans=$(awk '/records in/ { print $1 }' <<<"$out")
  rss=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")
  if [[ $what == ripple ]]; then
    # Every span must have joined its CPID (they all carry ripple.cpid).
    rejected=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "ripple_otlp_received_spans_total{result=\"rejected\"}" { print $2 }')
    [[ $rejected == 0 ]] || { echo "bench-vs-jaeger: ripple rejected $rejected spans" >&2; exit 1; }
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=''
  rm -rf "$dir"
  awk -v r="$rate" -v n="$spans" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v m="$rss" \
    'BEGIN { printf "%.0f %.0f %s\n", r, (t > 0) ? n * hz / t : 0, m }'
}

echo "Jaeger $("$jaeger" --version 2>/dev/null | head -1); receiver on core 0, load on core 1; $conns connections, $seconds s each"
declare -A rates percpu
for r in $(seq "$rounds"); do
  for what in ripple memory badger; do
    read -r rate per rss < <(run "$what")
    rates[$what]+="$rate " percpu[$what]+="$per "
    printf 'round %d  %-7s %9.0f spans/s  %9.0f spans per CPU-second  (peak RSS %s MB)\n' "$r" "$what" "$rate" "$per" "$rss"
  done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ratios UNIT RIPPLE MEMORY BADGER
ratios() {
  awk -v u="$1" -v r="$2" -v m="$3" -v b="$4" 'BEGIN {
    printf "median %s: ripple %.0f, Jaeger memory %.0f, Jaeger badger %.0f\n", u, r, m, b
    printf "  ripple / Jaeger memory %.2fx (target >= 1.5x: %s), ripple / Jaeger badger %.2fx\n",
      r / m, (r >= 1.5 * m) ? "met" : "NOT met", r / b
  }'
}
ratios "spans/s" "$(median "${rates[ripple]}")" "$(median "${rates[memory]}")" "$(median "${rates[badger]}")"
ratios "spans per CPU-second" "$(median "${percpu[ripple]}")" "$(median "${percpu[memory]}")" "$(median "${percpu[badger]}")"
