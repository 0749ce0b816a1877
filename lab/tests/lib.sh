# shellcheck shell=bash
# Shared helpers of the lab's tests. Source it; it needs a running lab (lab/lab up).
set -euo pipefail

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=$(cd "$TESTS_DIR/.." && pwd)
LAB="$LAB_ROOT/lab"
# Bound of every wait, in seconds (no test asserts on time; this only stops a hang).
WAIT_TIMEOUT=${LAB_TEST_TIMEOUT:-180}

say() { echo "[$(basename "$0")] $*"; }
check() { say "CHECK: $*"; }
pass() { say "ok: $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }

# kubectl of the lab (same version as the API server), else the one in PATH.
if LAB_BIN=$("$LAB_ROOT/build.sh" --print 2>/dev/null); then KUBECTL="$LAB_BIN/kubectl"; else KUBECTL=kubectl; fi
KCFG=$("$LAB" kubeconfig) || fail "the lab is not up (run lab/lab up)"
k() { "$KUBECTL" --kubeconfig "$KCFG" "$@"; }

# wait_until DESCRIPTION CMD...: retry CMD (quietly) until it succeeds or WAIT_TIMEOUT passes.
wait_until() {
  local what=$1; shift
  local deadline=$((SECONDS + WAIT_TIMEOUT)) out=""
  until out=$("$@" 2>&1); do
    if ((SECONDS >= deadline)); then
      say "last output: ${out:0:2000}" >&2
      fail "timed out after ${WAIT_TIMEOUT}s waiting for: $what"
    fi
    sleep 0.5
  done
}

# pods_ready NS SELECTOR: print the number of Pods that are Running, Ready, not being
# deleted, and bound to a fake (KWOK) node.
pods_ready() {
  k -n "$1" get pods -l "$2" -o jsonpath='{range .items[*]}{.status.phase}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.nodeName}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' |
    awk '$1=="Running" && $2=="True" && $3 ~ /^kwok-node-/ && $4=="" {n++} END {print n+0}'
}

# has_n_ready_pods NS SELECTOR N: succeeds when exactly N pods are ready (see pods_ready).
has_n_ready_pods() {
  local n
  n=$(pods_ready "$1" "$2")
  echo "$n of $3 pods ready"
  [[ $n == "$3" ]]
}

# new_namespace PREFIX: create a namespace, print its name, and delete it on exit.
# Callers run it in a command substitution (a subshell), so the names to delete go
# to a file, not a variable the subshell would lose.
TEST_NAMESPACES_FILE=$(mktemp /tmp/ripple-lab-test-ns.XXXXXX)
cleanup_namespaces() {
  local ns
  while read -r ns; do
    [[ -n $ns ]] && k delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1
  done <"$TEST_NAMESPACES_FILE" || true
  rm -f "$TEST_NAMESPACES_FILE"
}
trap cleanup_namespaces EXIT
new_namespace() {
  local ns
  ns="$1-$(date +%s)-$$"
  k create namespace "$ns" >/dev/null || fail "could not create namespace $ns"
  echo "$ns" >>"$TEST_NAMESPACES_FILE"
  # The ServiceAccount controller makes the namespace's default ServiceAccount; Pods need it.
  wait_until "ServiceAccount default in $ns" k -n "$ns" get serviceaccount default
  echo "$ns"
}

# deployment_yaml NAME REPLICAS LABEL: a Deployment whose Pods run nowhere but on KWOK
# nodes (the image is never pulled: no kubelet exists).
deployment_yaml() {
  cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
spec:
  replicas: $2
  selector:
    matchLabels: {app: $3}
  template:
    metadata:
      labels: {app: $3}
    spec:
      containers:
      - name: app
        image: ripple.invalid/noop:1
        ports:
        - containerPort: 8080
EOF
}

# real_node_app REPLICAS: a Deployment "hello" of the lab's own image on the real node
# (lab/lab up --node), with the kubelet's readiness probe, and its Service "hello".
real_node_app() {
  cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello}
spec:
  replicas: $1
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: ripple.lab/real-node, operator: Exists, effect: NoSchedule}]
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: hello
        image: localhost/ripple-lab-hello:1
        imagePullPolicy: Never
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: hello}
spec:
  selector: {app: hello}
  ports: [{port: 80, targetPort: 8080}]
EOF
}
