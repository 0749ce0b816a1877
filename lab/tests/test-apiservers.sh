#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `lab/lab up --apiservers 2`: a second kube-apiserver on the same etcd. Restarts the lab
# with it and checks that status lists it, its kubeconfig reaches it, it sees what the
# first one stores, it calls admission webhooks too (failurePolicy Fail on a loopback
# port where nothing listens rejects its writes naming the webhook), `restart` restarts
# it alone, and `down` frees its port. Restarts the lab with the defaults at the end (it
# leaves the lab up, without a second API server).
set -euo pipefail
LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB="$LAB_ROOT/lab"
# shellcheck source=../versions.env
. "$LAB_ROOT/versions.env"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}

"$LAB" down >/dev/null 2>&1 || true
restore() { "$LAB" down >/dev/null 2>&1 || true; "$LAB" up >/dev/null 2>&1 || echo "[test-apiservers] could not restore the default lab" >&2; }
trap restore EXIT
"$LAB" up --apiservers 2

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
name=ripple-lab-apiservers
trap 'cleanup_namespaces; "$LAB" webhook --delete --name "$name" >/dev/null 2>&1 || true; restore' EXIT
K2=$("$LAB" kubeconfig --apiserver 2) || fail "no kubeconfig for the second API server"
k2() { "$KUBECTL" --kubeconfig "$K2" "$@"; }

check "status lists kube-apiserver-2 alive on port $LAB_APISERVER2_PORT; env names its kubeconfig"
st=$("$LAB" status) || fail "status exit code $?: $st"
grep -Eq "^kube-apiserver-2 +[0-9]+ +alive +$LAB_APISERVER2_PORT\$" <<<"$st" || fail "status: $st"
env=$("$LAB" env)
grep -qx "RIPPLE_LAB_KUBECONFIG2=$K2" <<<"$env" || fail "lab/lab env does not name $K2"
grep -q "server: https://127.0.0.1:$LAB_APISERVER2_PORT\$" "$K2" || fail "$K2 does not name port $LAB_APISERVER2_PORT"
pass "alive; $K2"

check "one etcd: what one API server stores, the other serves"
ns=$(new_namespace t-apiservers)
k2 -n "$ns" create configmap from-2 --from-literal=k=v >/dev/null || fail "create through the second failed"
k -n "$ns" get configmap from-2 >/dev/null || fail "the first API server does not see the second's ConfigMap"
n=$("$LAB" kubectl --apiserver 2 get nodes --no-headers | awk '$2=="Ready" {n++} END {print n+0}')
[[ $n == 4 ]] || fail "the second API server shows $n Ready nodes, want 4"
pass "shared"

check "the second API server calls admission webhooks (failurePolicy Fail, nothing listening)"
"$LAB" webhook "https://127.0.0.1:1/mutate" "$LAB_DIR/pki/ca.crt" --name "$name" --resources configmaps \
  --failure-policy Fail >/dev/null
reject2() {
  local out
  if out=$(k2 -n "$ns" create configmap "b$RANDOM" --from-literal=k=v 2>&1); then echo "created: $out"; return 1; fi
  echo "$out"
  grep -q "$name.ripple.dev" <<<"$out"
}
wait_until "a create through the second API server rejected by webhook $name" reject2
"$LAB" webhook --delete --name "$name" >/dev/null
pass "rejected by $name.ripple.dev"

check "restart kube-apiserver-2: a new pid, healthy, the first one untouched"
p1=$(cat "$LAB_DIR/run/kube-apiserver.pid") p2=$(cat "$LAB_DIR/run/kube-apiserver-2.pid")
"$LAB" restart kube-apiserver-2 >/dev/null 2>&1 || fail "restart kube-apiserver-2 failed"
[[ $(cat "$LAB_DIR/run/kube-apiserver-2.pid") != "$p2" ]] || fail "same pid after restart"
[[ $(cat "$LAB_DIR/run/kube-apiserver.pid") == "$p1" ]] || fail "the first API server was restarted too"
wait_until "the second API server to serve again" k2 -n "$ns" get configmap from-2
pass "restarted"

check "down stops both and frees port $LAB_APISERVER2_PORT; a default up has no second one"
"$LAB" down >/dev/null
[[ -z $(ss -Htln "( sport = :$LAB_APISERVER2_PORT )") ]] || fail "port $LAB_APISERVER2_PORT still listening"
"$LAB" up >/dev/null
st=$("$LAB" status) || fail "status exit code $?: $st"
! grep -q '^kube-apiserver-2' <<<"$st" || fail "status lists kube-apiserver-2 on a default lab: $st"
env=$("$LAB" env)
! grep -q RIPPLE_LAB_KUBECONFIG2 <<<"$env" || fail "lab/lab env names a second kubeconfig on a default lab"
# Nor kube-apiserver's own tracing (up --apiserver-tracing, test-options).
! grep -q RIPPLE_LAB_OTLP_PORT <<<"$env" || fail "lab/lab env names an OTLP port on a default lab"
cmd=$(tr '\0' ' ' <"/proc/$(cat "$LAB_DIR/run/kube-apiserver.pid")/cmdline")
! grep -q -- --tracing-config-file <<<"$cmd" || fail "a default lab's kube-apiserver runs with --tracing-config-file"
pass "freed; default lab has one API server, untraced"
say "PASS"
