#!/usr/bin/env bash
# The dashboard's live view in Debian's chromium against the real ripple-server
# (web/test/e2e/live.mjs): a trace that arrives over ten seconds fills in
# without a reload. No cluster: the trace is synthetic, the server and the
# browser are real.
# Usage: tests/web/live.sh RIPPLE_SERVER_BIN SOURCE_DIR
set -euo pipefail
bin=${1:?usage: live.sh RIPPLE_SERVER_BIN SOURCE_DIR}
src=${2:?usage: live.sh RIPPLE_SERVER_BIN SOURCE_DIR}
work=$(mktemp -d /tmp/ripple-web-live.XXXXXX)
pid=
finish() {
  [[ -n $pid ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
"$bin" --listen 127.0.0.1:0 --db "$work/trace.db" 2>"$work/server.log" &
pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*event=listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log")
  [[ -n $port ]] && break
  sleep 0.05
done
[[ -n $port ]] || { echo "live.sh: ripple-server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
grep -q 'event=dashboard ' "$work/server.log" || { echo "live.sh: the server has no dashboard bundle:" >&2; cat "$work/server.log" >&2; exit 1; }
node "$src/web/test/e2e/live.mjs" --server "http://127.0.0.1:$port"
