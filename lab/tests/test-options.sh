#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The options of `lab/lab up` for later work: --no-deployment-controllers, --no-scheduler,
# --audit, --nodes, --apiserver-tracing. Restarts the lab with them, checks each, and
# restarts it with the defaults at the end (it leaves the lab up).
set -euo pipefail
LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB="$LAB_ROOT/lab"
# shellcheck source=../versions.env
. "$LAB_ROOT/versions.env"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}

"$LAB" down >/dev/null 2>&1 || true
restore() { "$LAB" down >/dev/null 2>&1 || true; "$LAB" up >/dev/null 2>&1 || echo "[test-options] could not restore the default lab" >&2; }
trap restore EXIT
"$LAB" up --nodes 2 --no-deployment-controllers --no-scheduler --audit --apiserver-tracing

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'cleanup_namespaces; restore' EXIT

check "--nodes 2 made 2 Ready fake nodes"
n=$(k get nodes -l type=kwok --no-headers | awk '$2=="Ready"' | grep -c .) || true
[[ $n == 2 ]] || fail "$n Ready nodes, want 2"
pass "2 nodes"

check "status shows the scheduler as not started"
st=$("$LAB" status) || fail "status exit code $?: $st"
grep -Eq '^kube-scheduler +- +not started' <<<"$st" || fail "status: $st"
pass "kube-scheduler not started"

ns=$(new_namespace t-options)
check "--no-deployment-controllers: a Deployment gets no ReplicaSet (checked for 5 s)"
deployment_yaml web 3 web | k -n "$ns" apply -f - >/dev/null
sleep 5
rs=$(k -n "$ns" get replicasets -o name | grep -c .) || true
[[ $rs == 0 ]] || fail "$rs ReplicaSet(s) exist"
pass "no ReplicaSet"

check "--no-scheduler: a Pod stays Pending without a node (checked for 5 s), and binding it by hand makes KWOK run it"
k -n "$ns" run lone --image=ripple.invalid/noop:1 --restart=Never >/dev/null
sleep 5
node=$(k -n "$ns" get pod lone -o jsonpath='{.spec.nodeName}')
[[ -z $node ]] || fail "pod lone was bound to '$node'"
k create --raw "/api/v1/namespaces/$ns/pods/lone/binding" -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"lone"},"target":{"apiVersion":"v1","kind":"Node","name":"kwok-node-0"}}
EOF
wait_until "pod lone Running and Ready" has_n_ready_pods "$ns" run=lone 1
pass "unscheduled, then Running on kwok-node-0 after a manual Binding"

check "--audit: the audit log records the Deployment's creation with its body"
audit="$LAB_DIR/audit/audit.log"
wait_until "a create of deployments/web in $audit" \
  grep -q "\"verb\":\"create\".*\"resource\":\"deployments\",\"namespace\":\"$ns\",\"name\":\"web\"" "$audit"
grep -q '"requestObject"' "$audit" || fail "no requestObject in the audit log"
pass "audit log has the create with requestObject"

check "--apiserver-tracing: kube-apiserver exports its traces over OTLP gRPC to 127.0.0.1:$LAB_OTLP_PORT, every request"
cfg="$LAB_DIR/tracing/tracing.yaml"
cmd=$(tr '\0' ' ' <"/proc/$(cat "$LAB_DIR/run/kube-apiserver.pid")/cmdline")
grep -q -- "--tracing-config-file=$cfg" <<<"$cmd" || fail "kube-apiserver runs without --tracing-config-file=$cfg"
grep -qx "endpoint: 127.0.0.1:$LAB_OTLP_PORT" "$cfg" || fail "$cfg: $(cat "$cfg")"
grep -qx "samplingRatePerMillion: 1000000" "$cfg" || fail "$cfg: $(cat "$cfg")"
env=$("$LAB" env)
grep -qx "RIPPLE_LAB_OTLP_PORT=$LAB_OTLP_PORT" <<<"$env" || fail "lab/lab env does not name RIPPLE_LAB_OTLP_PORT"
# Nothing listens there: its exporter says where it dialled.
wait_until "kube-apiserver's exporter to dial 127.0.0.1:$LAB_OTLP_PORT" \
  grep -q "127.0.0.1:$LAB_OTLP_PORT: connect: connection refused" "$LAB_DIR/logs/kube-apiserver.log"
pass "tracing to 127.0.0.1:$LAB_OTLP_PORT"
say "PASS"
