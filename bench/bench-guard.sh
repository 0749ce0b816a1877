#!/usr/bin/env bash
# bench-guard.sh: what a webhook that stops answering costs the cluster, with and without
# ripple-guard (docs/guard.md), on the lab.
#
# Usage: bench/bench-guard.sh [--runs N] [--build DIR]
#   --runs N     runs of each arm (default 3); medians are printed
#   --build DIR  the build whose bin/ripple-webhook, ripple-server, ripple-guard run
#                (default build/release)
#
# The lab must be up. One ripple-server and one ripple-webhook run for the whole
# benchmark, registered (webhook/deploy/register-lab.sh: timeoutSeconds 1, failurePolicy
# Ignore) for one namespace. Each run creates a Deployment of 3, waits for 3 ready, then
# times `kubectl scale` 3 -> 8 up to readyReplicas == 8 (kubectl wait, a watch). Arms:
#   healthy      the webhook answers
#   stopped      the webhook is stopped (SIGSTOP), no guard: every write in the
#                namespace waits for timeoutSeconds
#   guarded      SIGSTOP, ripple-guard running; timed once the guard acted (the
#                registration carries its condition and the API server skips the webhook)
#   from-stop    SIGSTOP and the scale at once, ripple-guard running: the time includes
#                the guard's time to act
# and the guard's time to act: SIGSTOP -> registration patched (the guard's log line
# webhook_disabled) -> the API server no longer calls the webhook (the first dry-run
# ConfigMap create, sent one after the other with curl, that kube-apiserver counts in
# apiserver_admission_match_condition_exclusions_total for the webhook; the time is when
# that create was sent, so a create that waited for the stopped webhook's timeout does not
# count its wait).
# Everything it starts or creates is removed on exit, also on failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
runs=3 build="$root/build/release"
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-guard: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-guard: --runs wants a positive number" >&2; exit 2; }
build=$(cd "$build" && pwd)
for b in ripple-webhook ripple-server ripple-guard; do
  [[ -x $build/bin/$b ]] || { echo "bench-guard: no $build/bin/$b (build first, or --build)" >&2; exit 2; }
done
lab="$root/lab/lab"
eval "$("$lab" env)"
export KUBECONFIG
k() { "$lab" kubectl "$@"; }
k get --raw /readyz >/dev/null || { echo "bench-guard: the lab is not up (lab/lab up)" >&2; exit 1; }

work=$(mktemp -d /tmp/ripple-bench-guard.XXXXXX)
name="ripple-bench-guard-$$" ns="ripple-bench-guard-$$"
server_pid="" webhook_pid="" guard_pid=""
cleanup() {
  local rc=$?
  [[ -z $webhook_pid ]] || kill -CONT "$webhook_pid" 2>/dev/null || true
  for p in "$guard_pid" "$webhook_pid" "$server_pid"; do
    [[ -z $p ]] || kill "$p" 2>/dev/null || true
  done
  "$root/webhook/deploy/register-lab.sh" --delete --name "$name" >/dev/null 2>&1 || true
  k delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
api() { # curl the API server as the lab's admin
  curl -sf --cacert "$RIPPLE_LAB_CA" --cert "$RIPPLE_LAB_ADMIN_CERT" --key "$RIPPLE_LAB_ADMIN_KEY" "$@"
}
excluded() { # how often the API server skipped the webhook by a matchCondition
  api "$RIPPLE_LAB_SERVER/metrics" | awk -v n="name=\"$name.ripple.dev\"" \
    '/^apiserver_admission_match_condition_exclusions_total\{/ && index($0, n) {s += $NF} END {print s + 0}'
}
dry_create() {
  api -X POST -H 'Content-Type: application/json' -o /dev/null \
    "$RIPPLE_LAB_SERVER/api/v1/namespaces/$ns/configmaps?dryRun=All" \
    -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-probe"}}'
}
guard_off() { [[ $(k get mutatingwebhookconfiguration "$name" -o jsonpath='{.webhooks[0].matchConditions[0].name}') == ripple-guard-off ]]; }
wait_until() { # DESCRIPTION CMD...: up to 60 s
  local d=$1; shift
  for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
  echo "bench-guard: timed out waiting for $d" >&2; exit 1
}
ready() { k -n "$ns" wait "deployment/$1" --timeout=300s --for=jsonpath='{.status.readyReplicas}'="$2" >/dev/null; }
start_guard() {
  "$build/bin/ripple-guard" --name "$name" --listen 127.0.0.1:0 >/dev/null 2>"$work/guard.log" &
  guard_pid=$!
  port_of "$work/guard.log" "$guard_pid" >/dev/null
}
stop_guard() { kill "$guard_pid"; wait "$guard_pid" 2>/dev/null || true; guard_pid=""; }
called() { local e; e=$(excluded); dry_create || true; (($(excluded) == e)); }
resume() { # SIGCONT, and with a guard wait until it put the webhook back and the API
  # server calls it again (it sees a new registration a moment after the patch)
  kill -CONT "$webhook_pid"
  [[ -z $guard_pid ]] || wait_until "the guard to restore the webhook" eval '! guard_off'
  [[ -z $guard_pid ]] || wait_until "the API server to call the webhook again" called
}

"$build/bin/ripple-server" --listen 127.0.0.1:0 --db "$work/trace.db" >/dev/null 2>"$work/server.log" &
server_pid=$!
trace="http://127.0.0.1:$(port_of "$work/server.log" "$server_pid")"
"$build/bin/ripple-webhook" --listen 127.0.0.1:0 --tls-cert "$RIPPLE_LAB_WEBHOOK_CERT" \
  --tls-key "$RIPPLE_LAB_WEBHOOK_KEY" --trace-server "$trace" >/dev/null 2>"$work/webhook.log" &
webhook_pid=$!
wport=$(port_of "$work/webhook.log" "$webhook_pid")
k create namespace "$ns" >/dev/null
"$root/webhook/deploy/register-lab.sh" --name "$name" --port "$wport" "$ns" >/dev/null


e0=0
skipping() { dry_create || true; (($(excluded) > e0)); }
# one ARM: a Deployment of 3, then the scale 3 -> 8 timed as the arm says.
one() {
  local arm=$1 d t0 t
  d="web-$RANDOM$RANDOM"
  k -n "$ns" create deployment "$d" --image=ripple.invalid/noop:1 --replicas=3 >/dev/null 2>&1
  ready "$d" 3
  case $arm in
    stopped) kill -STOP "$webhook_pid" ;;
    guarded)
      kill -STOP "$webhook_pid"
      wait_until "the guard to act" guard_off
      e0=$(excluded)
      wait_until "the API server to skip the webhook" skipping ;;
  esac
  t0=$(now)
  [[ $arm != from-stop ]] || kill -STOP "$webhook_pid"
  k -n "$ns" scale "deployment/$d" --replicas=8 >/dev/null 2>&1
  ready "$d" 8
  t=$(secs "$t0" "$(now)")
  [[ $arm == healthy ]] || resume
  k -n "$ns" delete deployment "$d" --wait=false >/dev/null
  echo "$t"
}

# The guard's time to act: SIGSTOP -> patched (its log) -> the API server skips.
act() {
  local e0 t0 tp ts line
  e0=$(excluded)
  t0=$(now)
  kill -STOP "$webhook_pid"
  while :; do # ts: when the first dry-run create that the API server skipped was sent
    ts=$(now)
    dry_create || true
    (($(excluded) > e0)) && break
    (($(secs "$t0" "$(now)" | cut -d. -f1) < 60)) || { echo "bench-guard: the API server never skipped the webhook" >&2; exit 1; }
    sleep 0.02
  done
  line=$(grep 'event=webhook_disabled' "$work/guard.log" | tail -n1)
  tp=$(sed -n 's/^ts=\([^ ]*\).*/\1/p' <<<"$line")
  tp=$(date -d "$tp" +%s.%N)
  resume
  echo "$(secs "$t0" "$tp") $(secs "$t0" "$ts")"
}

declare -A res
for arm in healthy stopped; do
  for _ in $(seq "$runs"); do res[$arm]+="$(one "$arm") "; done
done
start_guard
for arm in guarded from-stop; do
  for _ in $(seq "$runs"); do res[$arm]+="$(one "$arm") "; done
done
patched="" skipped=""
for _ in $(seq "$runs"); do
  read -r p s <<<"$(act)"
  patched+="$p " skipped+="$s "
done
stop_guard

printf '\nbench-guard: scale 3 -> 8 until 8 ready (s), %s runs each, lab %s, %s\n' "$runs" \
  "$(k version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n1)" "$(date -u +%FT%TZ)"
printf '%-12s %-8s %s\n' arm median runs
for arm in healthy stopped guarded from-stop; do
  printf '%-12s %-8s %s\n' "$arm" "$(tr ' ' '\n' <<<"${res[$arm]}" | grep . | median)" "${res[$arm]}"
done
printf '%-12s %-8s %s\n' "to-patch" "$(tr ' ' '\n' <<<"$patched" | grep . | median)" "$patched"
printf '%-12s %-8s %s\n' "to-skip" "$(tr ' ' '\n' <<<"$skipped" | grep . | median)" "$skipped"
h=$(tr ' ' '\n' <<<"${res[healthy]}" | grep . | median)
g=$(tr ' ' '\n' <<<"${res[guarded]}" | grep . | median)
awk -v h="$h" -v g="$g" 'BEGIN {d = g - h; printf "target (guarded within 3 s of healthy): %+.3f s, %s\n", d, (d <= 3 ? "met" : "MISSED")}'
