#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The lab's test operator (lab/build/operator, a controller-runtime operator of the
# custom resource RippleApp, lab/operator/crd.yaml) as a background process of the lab.
# It authenticates as the ServiceAccount ripple-operator/ripple-operator with the
# ClusterRole of lab/operator/rbac.yaml, through a kubeconfig with a token of its own.
# Also run as `lab/lab operator ...`. See docs/lab.md.
#
# Usage: lab/operator.sh up       build if needed; apply the CRD and RBAC; new token and
#                                 kubeconfig; start the operator, wait until its workers run
#                                 (a no-op when the same binary already runs)
#        lab/operator.sh down     stop it (SIGTERM, wait, SIGKILL); objects stay
#        lab/operator.sh status   pid and state; exit 0 when it runs, 3 when not
#
# State: $RIPPLE_LAB_DIR/operator/ (kubeconfig, mode 600), run/operator.pid,
# logs/operator.log. The lab must be up (lab/lab up).
set -euo pipefail

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$LAB_ROOT/versions.env"

LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}
case $LAB_DIR in /*) ;; *) LAB_DIR="$PWD/$LAB_DIR" ;; esac
LAB_DIR=${LAB_DIR%/}
STATE="$LAB_DIR/operator"
PIDFILE="$LAB_DIR/run/operator.pid"
LOG="$LAB_DIR/logs/operator.log"
NS=ripple-operator
SA=ripple-operator
TIMEOUT=${LAB_OPERATOR_TIMEOUT:-120}

die() { echo "lab/operator: error: $*" >&2; exit 1; }
log() { echo "lab/operator: $*" >&2; }
k() { RIPPLE_LAB_DIR="$LAB_DIR" "$LAB_ROOT/lab" kubectl "$@"; }

# Is process $1 alive (not a zombie)?
alive() {
  local st
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}

# The running operator's pid: alive, not a zombie, started with this lab's state.
running_pid() {
  local p
  [[ -s $PIDFILE ]] || return 1
  p=$(<"$PIDFILE")
  alive "$p" || return 1
  [[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == *"$STATE/"* ]] || return 1
  echo "$p"
}

do_down() {
  local p i
  p=$(running_pid) || { rm -f "$PIDFILE"; log "not running"; return 0; }
  kill -TERM "$p" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    running_pid >/dev/null || break
    sleep 0.1
  done
  if running_pid >/dev/null; then
    log "pid $p did not exit within 15s of SIGTERM; sending SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  log "stopped (pid $p)"
}

do_status() {
  local p
  if p=$(running_pid); then
    echo "operator: pid $p running as system:serviceaccount:$NS:$SA (log $LOG)"
    return 0
  fi
  echo "operator: not running"
  return 3
}

# A kubeconfig for the ServiceAccount: the lab's server and CA, a fresh token.
write_kubeconfig() {
  local server ca token
  server=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  [[ $server == https://127.0.0.1:* ]] || die "the lab's API server is not on loopback: '$server'"
  token=$(k -n "$NS" create token "$SA" --duration=720h) || die "cannot create a token for $NS/$SA"
  mkdir -p "$STATE"
  (
    umask 077
    cat >"$STATE/kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ripple-lab
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: $SA
  user:
    token: $token
contexts:
- name: $SA
  context:
    cluster: ripple-lab
    user: $SA
    namespace: $NS
current-context: $SA
EOF
  )
  mv "$STATE/kubeconfig.tmp" "$STATE/kubeconfig"
}

do_up() {
  local bin p deadline
  "$LAB_ROOT/lab" status >/dev/null 2>&1 || die "the lab is not up (run lab/lab up)"
  bin=$("$LAB_ROOT/build.sh" --operator) || die "building the operator failed (see above)"
  if p=$(running_pid); then
    if [[ $(readlink "/proc/$p/exe") == "$bin" ]]; then
      log "already running (pid $p)"
      return 0
    fi
    log "pid $p runs an older build; restarting it"
    do_down
  fi
  k apply -f "$LAB_ROOT/operator/crd.yaml" >/dev/null
  k wait --for condition=established --timeout="${TIMEOUT}s" crd/rippleapps.lab.ripple.dev >/dev/null
  k apply -f "$LAB_ROOT/operator/rbac.yaml" >/dev/null
  write_kubeconfig
  mkdir -p "$(dirname "$PIDFILE")" "$(dirname "$LOG")"
  : >"$LOG"
  # Its own session, every descriptor away from the caller's (a test's pipes).
  setsid "$bin" --kubeconfig "$STATE/kubeconfig" </dev/null >>"$LOG" 2>&1 &
  p=$!
  echo "$p" >"$PIDFILE"
  deadline=$((SECONDS + TIMEOUT))
  until grep -q '"Starting workers"' "$LOG"; do
    # Alive is enough here: until the child has exec'd the operator, its command
    # line is still the shell's, which running_pid would not recognise.
    alive "$p" || { tail -n 20 "$LOG" >&2; die "the operator exited (log: $LOG)"; }
    ((SECONDS < deadline)) || { tail -n 20 "$LOG" >&2; do_down; die "the operator did not start its workers within ${TIMEOUT}s"; }
    sleep 0.2
  done
  log "running (pid $(<"$PIDFILE"), system:serviceaccount:$NS:$SA, log $LOG)"
}

case ${1:-} in
  up) do_up ;;
  down) do_down ;;
  status) do_status ;;
  -h | --help | help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" ;;
  *) die "usage: lab/operator.sh up|down|status" ;;
esac
