#!/usr/bin/env bash
# One of the dashboard's browser tests against the real ripple-server, in Debian's
# chromium: web/test/e2e/NAME.mjs, given the URL of a server started here with the
# build's dashboard bundle (scripts/server-up.sh). No cluster: the tests post
# synthetic records; the server and the browser are real. The tests (each file's
# header says what it checks):
#   live      a trace that arrives over ten seconds fills in without a reload
#   scope     each scale's own cascade by default, everything reachable on the toggle
#   critpath  the critical path marked on the waterfall, its table, and #/compare
#   hopstats  #/hops from Find: every hop's times across five scales, the binding first
# Usage: tests/web/e2e.sh RIPPLE_SERVER_BIN SOURCE_DIR NAME
set -euo pipefail
bin=${1:?usage: e2e.sh RIPPLE_SERVER_BIN SOURCE_DIR NAME}
src=${2:?usage: e2e.sh RIPPLE_SERVER_BIN SOURCE_DIR NAME}
name=${3:?usage: e2e.sh RIPPLE_SERVER_BIN SOURCE_DIR NAME}
[[ $name =~ ^[a-z]+$ && -f $src/web/test/e2e/$name.mjs ]] || { echo "e2e.sh: no browser test $name" >&2; exit 2; }
work=$(mktemp -d "/tmp/ripple-web-$name.XXXXXX")
server_pid=
finish() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
server_up "$bin" "$work"
grep -q 'event=dashboard ' "$work/server.log" || { echo "e2e.sh: the server has no dashboard bundle:" >&2; cat "$work/server.log" >&2; exit 1; }
node "$src/web/test/e2e/$name.mjs" --server "$server_url"
