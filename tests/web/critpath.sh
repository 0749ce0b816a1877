#!/usr/bin/env bash
# The dashboard's critical path and compare view in Debian's chromium against the
# real ripple-server (web/test/e2e/critpath.mjs): two scales of one Deployment, the
# second with a binding 2 s late; its path marked on the waterfall, its longest hop
# the binding, and the two compared with the binding first. No cluster: the
# records are synthetic, the server and the browser are real.
# Usage: tests/web/critpath.sh RIPPLE_SERVER_BIN SOURCE_DIR
set -euo pipefail
bin=${1:?usage: critpath.sh RIPPLE_SERVER_BIN SOURCE_DIR}
src=${2:?usage: critpath.sh RIPPLE_SERVER_BIN SOURCE_DIR}
work=$(mktemp -d /tmp/ripple-web-critpath.XXXXXX)
server_pid=
finish() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
server_up "$bin" "$work"
grep -q 'event=dashboard ' "$work/server.log" || { echo "critpath.sh: the server has no dashboard bundle:" >&2; cat "$work/server.log" >&2; exit 1; }
node "$src/web/test/e2e/critpath.mjs" --server "$server_url"
