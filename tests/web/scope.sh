#!/usr/bin/env bash
# The dashboard's own-cascade toggle in Debian's chromium against the real ripple-server
# (web/test/e2e/scope.mjs): three scales of one Deployment, each scale's
# own cascade by default, everything reachable on the toggle. No cluster: the
# records are synthetic, the server and the browser are real.
# Usage: tests/web/scope.sh RIPPLE_SERVER_BIN SOURCE_DIR
set -euo pipefail
bin=${1:?usage: scope.sh RIPPLE_SERVER_BIN SOURCE_DIR}
src=${2:?usage: scope.sh RIPPLE_SERVER_BIN SOURCE_DIR}
work=$(mktemp -d /tmp/ripple-web-scope.XXXXXX)
server_pid=
finish() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
server_up "$bin" "$work"
grep -q 'event=dashboard ' "$work/server.log" || { echo "scope.sh: the server has no dashboard bundle:" >&2; cat "$work/server.log" >&2; exit 1; }
node "$src/web/test/e2e/scope.mjs" --server "$server_url"
