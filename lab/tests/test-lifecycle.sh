#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Test 3: `up` twice is harmless; a stale run (a component killed) is reported by status
# and cleaned by up; `down` leaves no lab process running and frees every port; `up`
# after `down` works again. This test restarts the lab; it leaves it up.
set -euo pipefail
LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB="$LAB_ROOT/lab"
# shellcheck source=../versions.env
. "$LAB_ROOT/versions.env"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler kwok"
PORTS="$LAB_ETCD_CLIENT_PORT $LAB_ETCD_PEER_PORT $LAB_APISERVER_PORT $LAB_KCM_PORT $LAB_SCHEDULER_PORT $LAB_KWOK_PORT"

say() { echo "[$(basename "$0")] $*"; }
check() { say "CHECK: $*"; }
pass() { say "ok: $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }

# Every running process whose executable is a lab component (whatever its state dir).
lab_processes() {
  local d exe name cmdline
  for d in /proc/[0-9]*; do
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    name=${exe##*/}; name=${name% (deleted)}
    case " $COMPONENTS " in *" $name "*) ;; *) continue ;; esac
    grep -q '^State:[[:space:]]*Z' "$d/status" 2>/dev/null && continue
    cmdline=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) || continue
    if [[ $cmdline == *"$LAB_DIR/"* ]]; then echo "${d#/proc/} $name"; fi
  done
}
pid_of() { cat "$LAB_DIR/run/$1.pid"; }

"$LAB" status >/dev/null || "$LAB" up

check "up twice is harmless: the second up is a no-op and pids do not change"
before=$(cat "$LAB_DIR"/run/*.pid | sort | tr '\n' ' ')
out=$("$LAB" up 2>&1) || fail "second up failed: $out"
grep -q 'already up' <<<"$out" || fail "second up did not say 'already up': $out"
after=$(cat "$LAB_DIR"/run/*.pid | sort | tr '\n' ' ')
[[ $before == "$after" ]] || fail "pids changed: $before -> $after"
pass "second up: '$out'"

check "a killed component shows as dead in status, and up cleans the stale run"
victim=$(pid_of kwok)
kill -KILL "$victim"
for _ in $(seq 1 50); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
set +e; st=$("$LAB" status 2>&1); rc=$?; set -e
[[ $rc == 1 ]] || fail "status exit code $rc, want 1 (partly up): $st"
grep -Eq '^kwok +[0-9]+ +dead' <<<"$st" || fail "status does not show kwok dead: $st"
pass "status exit 1 and kwok dead"
out=$("$LAB" up 2>&1) || fail "up after a stale run failed: $out"
grep -q 'stale' <<<"$out" || fail "up did not report the stale run: $out"
"$LAB" status >/dev/null || fail "status not 0 after up"
pass "up cleaned the stale run and the lab is up again"

check "down leaves no lab process and frees every port"
"$LAB" down
left=$(lab_processes)
[[ -z $left ]] || fail "lab processes still running after down: $left"
for p in $PORTS; do
  listening=$(ss -Htln "( sport = :$p )")
  [[ -z $listening ]] || fail "port $p still listening after down: $listening"
done
set +e; "$LAB" status >/dev/null; rc=$?; set -e
[[ $rc == 3 ]] || fail "status exit code $rc after down, want 3"
pass "no lab process, ports free, status says down"

check "down twice is harmless"
"$LAB" down

check "up after down works"
"$LAB" up
"$LAB" status || fail "status after up is not 0"
pass "lab is up again"
say "PASS"
