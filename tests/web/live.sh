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
server_pid=
finish() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
server_up "$bin" "$work"
grep -q 'event=dashboard ' "$work/server.log" || { echo "live.sh: the server has no dashboard bundle:" >&2; cat "$work/server.log" >&2; exit 1; }
node "$src/web/test/e2e/live.mjs" --server "$server_url"
