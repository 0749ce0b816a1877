#!/usr/bin/env bash
# The dashboard's large-trace benchmark (issues 13 and 28): a trace of 10,000
# spans over 200 CPIDs must render and become interactive in under 700 ms (the
# median of cold runs) in headless Chromium on this machine. Starts the real ripple-server of BUILD (serving BUILD's
# dashboard bundle) over a fresh database, posts a synthetic Deployment scale
# cascade of that size (web/test/fixtures/gen-trace.mjs, seeded), and times the
# trace view in new browsers (web/test/bench/trace-render.mjs: each run with where
# its time went). No cluster. --build takes any build dir with bin/ripple-server
# and share/ripple/web (an older bundle, to compare).
# Usage: bench/bench-dashboard.sh [--build DIR] [--runs N] [--spans N] [--cpids N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release" runs=7 spans=10000 cpids=200
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --spans) spans=$2; shift 2 ;;
    --cpids) cpids=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--runs N] [--spans N] [--cpids N]" >&2; exit 2 ;;
  esac
done
[[ -x $build/bin/ripple-server ]] || { echo "bench-dashboard: no $build/bin/ripple-server (make build)" >&2; exit 1; }
[[ -f $build/share/ripple/web/index.html ]] || { echo "bench-dashboard: no dashboard bundle in $build (make build)" >&2; exit 1; }
work=$(mktemp -d /tmp/ripple-bench-dash.XXXXXX)
server_pid=
finish() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT

# shellcheck source=scripts/server-up.sh
. "$root/scripts/server-up.sh"
server_up "$build/bin/ripple-server" "$work"
server=$server_url
trace=$(node "$root/web/test/fixtures/gen-trace.mjs" --server "$server" --spans "$spans" --cpids "$cpids" --seed 2)
cpid=$(printf '%s' "$trace" | sed -n 's/.*"root": *"\([0-9a-f-]*\)".*/\1/p')
[[ -n $cpid ]] || { echo "bench-dashboard: gen-trace printed no root: $trace" >&2; exit 1; }
echo "dashboard, a trace of $spans spans over $cpids CPIDs (root $cpid), $(nproc) cores, chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}')"
node "$root/web/test/bench/trace-render.mjs" --server "$server" --cpid "$cpid" --runs "$runs"
