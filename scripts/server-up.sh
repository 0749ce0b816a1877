# shellcheck shell=bash
# server_up BIN DIR [ARGS...]: start ripple-server (BIN) in the background on a
# free loopback port over DIR/trace.db, its log in DIR/server.log, and wait
# until it listens. Sets server_pid and server_url; fails (status 1, the log
# on stderr) when it does not start. Sourced by the benchmarks and tests that
# run a server of their own (bench/bench-dashboard.sh, tests/web/e2e.sh);
# the caller stops it (kill "$server_pid").
server_up() {
  local bin=$1 dir=$2 port=
  shift 2
  # The log exists before the server starts: the loop below reads it at once
  # (and under set -e a sed of a missing file ends the caller).
  : >"$dir/server.log"
  "$bin" --listen 127.0.0.1:0 --db "$dir/trace.db" "$@" 2>"$dir/server.log" &
  server_pid=$!
  for _ in $(seq 200); do
    port=$(sed -n 's/.*event=listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/server.log")
    [[ -n $port ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [[ -z $port ]]; then
    echo "ripple-server did not start:" >&2
    cat "$dir/server.log" >&2
    return 1
  fi
  # shellcheck disable=SC2034 # for the caller
  server_url="http://127.0.0.1:$port"
}
