#!/usr/bin/env bash
# The trace server's memory (issue 28), two ways:
#  1. bench_memory: bytes per CPID, per span, per object index entry, per root
#     and per write in the stall detector's window, in-process, from the
#     structures' own accounting (*_memory()) and from RSS growth;
#  2. a real ripple-server (pinned to core 0, --max-cpids 0: no retention,
#     stall detection on) fed N spans (default 10M) by bench_ingest (core 1,
#     spans as it makes them, dated now so that the stall detector's window
#     holds them as it would live ones), then: its VmRSS and VmHWM
#     (/proc/PID/status), RSS growth per span, what the graph and object
#     index hold (/metrics), and the databases' size on disk.
# Usage: bench/bench-memory.sh [--build DIR] [--spans N] [--conns N] [--no-parts]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
build="$root/build/release" spans=10000000 conns=4 parts=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --spans) spans=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --no-parts) parts=0; shift ;;
    *) echo "usage: $0 [--build DIR] [--spans N] [--conns N] [--no-parts]" >&2; exit 2 ;;
  esac
done
server_bin=$build/bin/ripple-server ingest=$build/bench/bench_ingest parts_bin=$build/bench/bench_memory
[[ -x $server_bin && -x $ingest && -x $parts_bin ]] || { echo "bench-memory: build $build first (make build)" >&2; exit 1; }
work=$(mktemp -d /tmp/ripple-bench-memory.XXXXXX)
server_pid='' sampler=''
finish() {
  [[ -n $sampler ]] && { kill "$sampler" 2>/dev/null || true; }
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT

if ((parts)); then
  "$parts_bin"
  echo
fi

: >"$work/server.log"
taskset -c 0 "$server_bin" --listen 127.0.0.1:0 --db "$work/trace.db" --max-cpids 0 --no-web \
  2>"$work/server.log" &
server_pid=$!
port=$(port_of "$work/server.log" "$server_pid") || exit 1
server_url="http://127.0.0.1:$port"
# /proc/PID/status field in kB.
status_kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$server_pid/status"; }
# Sums a family's samples, labelled ones too (name{...} value).
metric() { curl -sf "$server_url/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $2 } END { printf "%.0f\n", s }'; }
rss0=$(status_kb VmRSS)
# The server's CPU seconds (utime + stime; its name holds no space).
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$server_pid/stat"; }
cpu0=$(cpu_s)

echo "ripple-server fed $spans spans by bench_ingest ($conns connections x 1000 spans; server on core 0, load on core 1; load average $(cut -d' ' -f1-3 /proc/loadavg))"
t0=$(date +%s.%N)
# RSS along the way, every 10 s: spans stored and VmRSS in kB.
while sleep 10; do echo "$(metric ripple_records_total) $(status_kb VmRSS)"; done >"$work/samples" 2>/dev/null &
sampler=$!
# bench_ingest's exit status judges its own rate target, which --records turns off.
taskset -c 1 "$ingest" --port "$port" --kind spans --sync normal --conns "$conns" \
  --records "$spans" --dates now --seconds 900 | sed -n 's/^ *//; s/; server CPU 0%, 0 records per server CPU-second//; /records\/s\|records in/p'
# The stall detector works beside ingest: wait for its queue to drain.
for _ in $(seq 600); do
  [[ $(metric ripple_stall_queue_spans) == 0 ]] && break
  sleep 0.1
done
t1=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
rss=$(status_kb VmRSS) hwm=$(status_kb VmHWM)
stored=$(metric ripple_records_total) vertices=$(metric ripple_graph_vertices)
objects=$(metric ripple_objects) gmem=$(metric ripple_graph_memory_bytes)
dropped=$(metric ripple_stall_dropped_spans_total) window=$(metric ripple_stall_window_writes)
cpu=$(awk -v a="$cpu0" -v b="$(cpu_s)" 'BEGIN { print b - a }')
db=$(du -cb "$work"/trace.db* | awk 'END { print $1 }')
files=$(du -b "$work"/trace.db* | awk '{ n = $2; sub(".*/", "", n); printf "%s%s %.0f MB", s, n, $1 / 1e6; s = ", " }')
awk -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v n="$stored" -v v="$vertices" \
  -v o="$objects" -v g="$gmem" -v r0="$rss0" -v r="$rss" -v h="$hwm" -v db="$db" -v d="$dropped" -v files="$files" -v w="$window" -v cpu="$cpu" 'BEGIN {
  printf "  %.0f spans stored in %.0f s (to the stall detector'\''s queue drained; %d spans it dropped), server CPU %.0f s\n", n, t, d, cpu
  printf "  they carry %.0f distinct CPIDs (%.2f per span) and %.0f distinct objects\n", v, v / n, o
  printf "  VmRSS %.0f MB (%.0f MB at start), VmHWM %.0f MB: %.1f bytes of RSS growth per span\n",
    r / 1024, r0 / 1024, h / 1024, (r - r0) * 1024 / n
  printf "  graph, roots and object index (ripple_graph_memory_bytes): %.0f MB, %.1f bytes per span\n",
    g / 1e6, g / n
  printf "  stall detector: %.0f writes in its window (bounded: 200,000)\n", w
  printf "  databases on disk: %.0f MB, %.0f bytes per span (%s)\n", db / 1e6, db / n, files
}'
awk 'NF == 2 && $1 > 0 { printf "%s%.1fM spans %.0f MB", any ? ", " : "  VmRSS along the way: ", $1 / 1e6, $2 / 1024; any = 1 }
     END { if (any) print "" }' "$work/samples"
