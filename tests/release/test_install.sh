#!/usr/bin/env bash
# test_install.sh BUILD: `make install` and `make uninstall` (the Makefile's
# install-files and uninstall, on the build BUILD already made) into a fresh
# prefix, twice: a plain PREFIX, and a DESTDIR with another PREFIX as a packager
# stages one. Checks that every program with an install() rule and the dashboard
# are where they belong, that they run from there (`kubectl-ripple version`,
# `ripple-server --help`, `ripple server --help` through the dispatcher), that
# ripple-server serves the dashboard from the installed share/ripple/web without
# being told where it is, and that uninstall leaves nothing of ripple behind.
set -euo pipefail

build=$(cd "${1:?usage: test_install.sh BUILD}" && pwd)
src=${RIPPLE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=scripts/server-up.sh
. "$src/scripts/server-up.sh"
work=$(mktemp -d /tmp/ripple-install-test.XXXXXX)
server_pid=
cleanup() {
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

version=$(sed -n 's/^project(ripple VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
# The programs: every install(TARGETS x) in the source (ripple-cli is installed as
# `ripple`, its OUTPUT_NAME), so a new program is checked without an edit here.
mapfile -t programs < <(sed -n 's/^install(TARGETS \([A-Za-z0-9_-]*\).*/\1/p' "$src"/*/CMakeLists.txt |
  sed 's/^ripple-cli$/ripple/' | sort)
[[ ${#programs[@]} -ge 8 ]] || { echo "FAIL: only ${#programs[@]} install() rules found" >&2; exit 1; }
[[ -f $build/share/ripple/web/index.html ]] ||
  { echo "FAIL: $build has no dashboard (share/ripple/web); configured with RIPPLE_WEB=OFF?" >&2; exit 1; }

# The Makefile's targets see BUILD/release: here the test's own build.
mkdir -p "$work/b"
ln -s "$build" "$work/b/release"
mk() { make --no-print-directory -C "$src" BUILD="$work/b" "$@"; }

check_prefix() { # check_prefix ROOT LABEL: ROOT is where PREFIX landed
  local root=$1 label=$2 p out url
  for p in "${programs[@]}"; do
    if [[ -x $root/bin/$p ]]; then ok "$label: bin/$p"; else fail "$label: bin/$p is not installed"; fi
  done
  if [[ -f $root/share/ripple/web/index.html ]] && compgen -G "$root/share/ripple/web/assets/*.js" >/dev/null; then
    ok "$label: share/ripple/web (index.html, assets)"
  else fail "$label: the dashboard is not in share/ripple/web"; fi
  if diff -r "$build/share/ripple/web" "$root/share/ripple/web" >/dev/null; then
    ok "$label: the dashboard is the build's, file for file"
  else fail "$label: share/ripple/web differs from the build's"; fi
  if out=$("$root/bin/kubectl-ripple" version 2>&1) && [[ $out == "kubectl-ripple $version" ]]; then
    ok "$label: kubectl-ripple version: $out"
  else fail "$label: kubectl-ripple version: $out"; fi
  if out=$("$root/bin/ripple-server" --help 2>&1) && [[ $out == *"--web DIR"* ]]; then
    ok "$label: ripple-server --help"
  else fail "$label: ripple-server --help: $out"; fi
  # The dispatcher execs ripple-server from its own directory, not from PATH.
  if out=$(PATH=/usr/bin:/bin "$root/bin/ripple" server --help 2>&1) && [[ $out == *"--web DIR"* ]]; then
    ok "$label: ripple server --help (the dispatcher)"
  else fail "$label: ripple server --help: $out"; fi

  # The dashboard, found by ripple-server beside its bin/ (no --web).
  mkdir -p "$work/srv-$label"
  if ! server_up "$root/bin/ripple-server" "$work/srv-$label"; then
    fail "$label: ripple-server did not start"
    return
  fi
  url=$server_url
  if grep -q "event=dashboard dir=\"\{0,1\}$(realpath "$root/share/ripple/web")\"\{0,1\} " \
    "$work/srv-$label/server.log"; then
    ok "$label: ripple-server found the dashboard in the installed share/ripple/web"
  else fail "$label: ripple-server's dashboard is not the installed one: $(grep -m1 dashboard "$work/srv-$label/server.log")"; fi
  if curl -fsS "$url/" -o "$work/index.html" && cmp -s "$work/index.html" "$root/share/ripple/web/index.html"; then
    ok "$label: GET / is the installed index.html"
  else fail "$label: GET / is not the installed index.html"; fi
  asset=$(cd "$root/share/ripple/web" && compgen -G "assets/*.js" | head -n1)
  if curl -fsS "$url/$asset" -o "$work/asset" && cmp -s "$work/asset" "$root/share/ripple/web/$asset"; then
    ok "$label: GET /$asset is the installed file"
  else fail "$label: GET /$asset is not the installed file"; fi
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

check_gone() { # check_gone ROOT LABEL
  local left
  left=$(cd "$1" && find . -mindepth 1 \( -name 'ripple*' -o -name 'kubectl-ripple' \) | head -n5)
  if [[ -z $left ]]; then ok "$2: make uninstall left nothing of ripple"
  else fail "$2: make uninstall left: $left"; fi
  if [[ -d $1/bin ]]; then ok "$2: make uninstall kept bin/ itself"; else fail "$2: bin/ was removed"; fi
}

# 1. make install PREFIX=DIR
if mk install-files PREFIX="$work/prefix" >"$work/install.log" 2>&1; then
  ok "make install PREFIX=$work/prefix"
  check_prefix "$work/prefix" prefix
  mk uninstall >"$work/uninstall.log" 2>&1 || fail "make uninstall: $(cat "$work/uninstall.log")"
  check_gone "$work/prefix" prefix
else fail "make install PREFIX: $(tail -5 "$work/install.log")"; fi

# 2. make install DESTDIR=STAGE PREFIX=/opt/ripple: the files under STAGE/opt/ripple,
# run from there (bin/../share/ripple/web holds wherever the tree is moved).
if mk install-files DESTDIR="$work/stage" PREFIX=/opt/ripple >"$work/install.log" 2>&1; then
  ok "make install DESTDIR=$work/stage PREFIX=/opt/ripple"
  if [[ -z $(find "$work/stage" -mindepth 1 -maxdepth 1 ! -name opt) ]]; then
    ok "destdir: nothing outside DESTDIR/opt"
  else fail "destdir: files outside the prefix: $(ls "$work/stage")"; fi
  check_prefix "$work/stage/opt/ripple" destdir
  mk uninstall DESTDIR="$work/stage" >"$work/uninstall.log" 2>&1 ||
    fail "make uninstall: $(cat "$work/uninstall.log")"
  check_gone "$work/stage/opt/ripple" destdir
else fail "make install DESTDIR: $(tail -5 "$work/install.log")"; fi

# 3. make uninstall with nothing installed says so and fails.
if mk uninstall >/dev/null 2>&1; then fail "make uninstall succeeded with nothing installed"
else ok "make uninstall refuses with nothing installed"; fi

if ((fails)); then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all install checks passed"
