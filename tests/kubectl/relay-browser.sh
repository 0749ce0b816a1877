#!/usr/bin/env bash
# `kubectl ripple dashboard` in Debian's chromium (web/test/e2e/relay.mjs): the real
# ripple-server (wanting a reader token, serving the dashboard's bundle) given a
# synthetic scale cascade, the real kubectl-ripple relaying it from 127.0.0.1 (--server
# URL: no cluster), and the browser opening the trace URL the relay printed first on its
# stdout, as a script would read it. The trace must render with all its spans, no token
# typed; the relay stops with status 0 on SIGTERM. Then as a person starts it: with a
# display, the relay opens the browser (a stand-in xdg-open here) on a page of its own
# that chromium follows to the trace.
# Usage: relay-browser.sh RIPPLE_SERVER_BIN KUBECTL_RIPPLE_BIN SOURCE_DIR
set -euo pipefail
server_bin=${1:?usage: relay-browser.sh RIPPLE_SERVER_BIN KUBECTL_RIPPLE_BIN SOURCE_DIR}
kubectl_bin=${2:?usage: relay-browser.sh RIPPLE_SERVER_BIN KUBECTL_RIPPLE_BIN SOURCE_DIR}
src=${3:?usage: relay-browser.sh RIPPLE_SERVER_BIN KUBECTL_RIPPLE_BIN SOURCE_DIR}
work=$(mktemp -d /tmp/ripple-relay-browser.XXXXXX)
server_pid=
relay_pid=
finish() {
  [[ -n $relay_pid ]] && { kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; }
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT
fail() { echo "relay-browser.sh: $*" >&2; exit 1; }

token=relay-browser-reader-token-$RANDOM$RANDOM
echo "$token" >"$work/readers"
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
server_up "$server_bin" "$work" --reader-token-file "$work/readers"
grep -q 'event=dashboard ' "$work/server.log" || fail "the server has no dashboard bundle: $(cat "$work/server.log")"

trace=$(node "$src/web/test/fixtures/gen-trace.mjs" --server "$server_url" --spans 40 --cpids 3 --seed 5)
root=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).root)' "$trace")
spans=$(node -e 'process.stdout.write(String(JSON.parse(process.argv[1]).spans))' "$trace")

# The relay as a script starts it: its URL lines read from its stdout.
RIPPLE_READER_TOKEN=$token "$kubectl_bin" dashboard --no-browser --port 0 --server "$server_url" "$root" \
  >"$work/relay.out" 2>"$work/relay.err" &
relay_pid=$!
for _ in $(seq 200); do
  [[ $(wc -l <"$work/relay.out") -ge 2 ]] && break
  kill -0 "$relay_pid" 2>/dev/null || fail "the relay exited: $(cat "$work/relay.err")"
  sleep 0.05
done
base=$(sed -n '1s/^dashboard: //p' "$work/relay.out")
url=$(sed -n '2s/^trace: //p' "$work/relay.out")
[[ $base =~ ^http://127\.0\.0\.1:[0-9]+/[A-Za-z0-9_-]{43}/$ ]] || fail "the first line is not the URL: $(head -1 "$work/relay.out")"
[[ $url == "${base}#/trace/$root" ]] || fail "the second line is not the trace's URL: $url"

node "$src/web/test/e2e/relay.mjs" --url "$url" --spans "$spans"

kill -TERM "$relay_pid"
status=0
wait "$relay_pid" || status=$?
relay_pid=
((status == 0)) || fail "the relay exited $status on SIGTERM"
secret=${base%/}
secret=${secret##*/}
! grep -qF -e "$secret" -e "$token" "$work/relay.err" || fail "the relay's stderr holds its secret or the token"
# Opening the browser: with a display known the relay runs xdg-open (here a stand-in
# that records its argument) on a page of the user's own that sends the browser on, so
# the secret is on no command line. The browser opens that page and lands on the trace.
mkdir "$work/bin"
cat >"$work/bin/xdg-open" <<EOF
#!/bin/sh
printf '%s' "\$1" >"$work/opened"
EOF
chmod +x "$work/bin/xdg-open"
PATH=$work/bin:$PATH DISPLAY=:99 TMPDIR=$work RIPPLE_READER_TOKEN=$token "$kubectl_bin" dashboard --port 0 \
  --server "$server_url" "$root" >"$work/relay2.out" 2>"$work/relay2.err" &
relay_pid=$!
for _ in $(seq 200); do
  [[ -s $work/opened ]] && break
  kill -0 "$relay_pid" 2>/dev/null || fail "the relay exited: $(cat "$work/relay2.err")"
  sleep 0.05
done
page=$(cat "$work/opened" 2>/dev/null) || fail "xdg-open was not run: $(cat "$work/relay2.err")"
[[ $page == "$work"/kubectl-ripple-*/open.html ]] || fail "xdg-open was given $page, not the relay's page"
[[ $(stat -c %a "$page") == 600 && $(stat -c %a "${page%/*}") == 700 ]] || fail "the page is readable by others"
url2=$(sed -n '2s/^trace: //p' "$work/relay2.out")
grep -qF "$url2" "$page" || fail "the page does not send the browser to $url2"
node "$src/web/test/e2e/relay.mjs" --url "file://$page" --spans "$spans"
kill -TERM "$relay_pid"
status=0
wait "$relay_pid" || status=$?
relay_pid=
((status == 0)) || fail "the relay exited $status on SIGTERM"
[[ ! -e $page ]] || fail "the relay left its page behind"
echo "relay-browser.sh: ok"
