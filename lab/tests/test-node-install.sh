#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# docs/install.md's quick start walked as a user would, on the lab's real node (run by
# test-node.sh): the chart as the release packages it (`helm package`), whose default
# image is the release's (ghcr.io/ripple-k8s/ripple:<version>: `make image`'s image,
# given that name in the node's containerd, as a registry would serve it); the plugin
# by `make install` into a fresh prefix, found by kubectl on PATH; `kubectl ripple
# dashboard`, whose trace a real browser (chromium) shows through the relay and the
# API server's service proxy. The only values given are the lab's placement (the real
# node's label and taint).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPO=$(cd "$LAB_ROOT/.." && pwd)
REL=ripple NSR=ripple-system
eval "$("$LAB" env | grep -E '^(RIPPLE_LAB_NODE|RIPPLE_LAB_BIN)=')"
[[ -n ${RIPPLE_LAB_NODE:-} ]] || fail "the lab has no real node (lab/lab up --node)"
HELM=$("$LAB_ROOT/build.sh" --print-helm) || fail "Helm is not built (lab/build.sh --helm)"
helm() { "$HELM" --kubeconfig "$KCFG" "$@"; }
export KUBECONFIG=$KCFG
work=$(mktemp -d /tmp/ripple-node-install.XXXXXX)
relay_pid=""
cleanup() {
  [[ -z $relay_pid ]] || { kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; }
  helm uninstall "$REL" -n "$NSR" --wait >/dev/null 2>&1 || true
  k delete namespace "$NSR" --wait=false >/dev/null 2>&1 || true
  cleanup_namespaces
  rm -rf "$work"
}
trap cleanup EXIT

check "the chart packaged as the release packages it; its default image, by that name, in the node"
helm package "$REPO/deploy/helm/ripple" -d "$work" >/dev/null || fail "helm package failed"
chart=$(ls "$work"/ripple-*.tgz)
image=$(helm template "$REL" "$chart" -n "$NSR" | sed -n 's/^ *image: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' | sort -u)
[[ $image == ghcr.io/ripple-k8s/ripple:* && $(wc -l <<<"$image") == 1 ]] || fail "the packaged chart's images: $image"
archive=$("$REPO/scripts/build-image" --print) || fail "no image (make image)"
"$LAB" node import "$archive" 2>/dev/null || fail "cannot import $archive"
"$LAB" node tag "localhost/ripple:${image##*:}" "$image" 2>/dev/null || fail "cannot name the image $image"
pass "$chart, $image"

check "make install into a fresh prefix; kubectl finds the plugin there"
make -C "$REPO" --no-print-directory install PREFIX="$work/prefix" >"$work/install.log" 2>&1 ||
  { tail -n 20 "$work/install.log" >&2; fail "make install failed"; }
[[ -x $work/prefix/bin/kubectl-ripple ]] || fail "make install put no kubectl-ripple in $work/prefix/bin"
export PATH="$work/prefix/bin:$RIPPLE_LAB_BIN:$PATH"
kubectl plugin list 2>/dev/null | grep -qx "$work/prefix/bin/kubectl-ripple" || fail "kubectl does not find the plugin"
pass "$(kubectl ripple version 2>&1 | head -n 1)"

check "helm install of the packaged chart, the lab's placement its only values; the guard enables the webhook"
cat >"$work/placement.yaml" <<EOF
server: &on-node
  nodeSelector: {type: real}
  tolerations: [{key: ripple.lab/real-node, operator: Exists, effect: NoSchedule}]
webhook: *on-node
guard: *on-node
certs: *on-node
EOF
no_namespace() { ! k get namespace "$NSR" >/dev/null 2>&1; }
wait_until "no namespace $NSR (test-node-chart's is gone)" no_namespace
if [[ $(k get pv ripple-lab-local-server -o jsonpath='{.status.phase}') == Released ]]; then
  k patch pv ripple-lab-local-server --type=json -p '[{"op":"remove","path":"/spec/claimRef"}]' >/dev/null
fi
helm install "$REL" "$chart" -n "$NSR" --create-namespace -f "$work/placement.yaml" >/dev/null || fail "helm install failed"
for w in deployment/$REL-webhook deployment/$REL-guard statefulset/$REL-server; do
  k -n "$NSR" rollout status "$w" --timeout="${WAIT_TIMEOUT}s" >/dev/null || {
    k -n "$NSR" get pods -o wide >&2; fail "$w did not become ready"
  }
done
enabled() {
  local j
  j=$(k get mutatingwebhookconfiguration "$REL-webhook" -o json) || return 1
  [[ $(jq -r '.webhooks[0].clientConfig.caBundle // ""' <<<"$j") != "" ]] &&
    [[ $(jq -r '[.webhooks[0].matchConditions[].name] | index("ripple-guard-off")' <<<"$j") == null ]]
}
wait_until "the guard enables the registration" enabled
[[ $(k -n "$NSR" get pods -o jsonpath='{.items[*].spec.containers[*].image}' | tr ' ' '\n' | sort -u) == "$image" ]] ||
  fail "ripple's Pods do not run $image"
pass "every Pod runs $image"

check "kubectl ripple scale, then kubectl ripple dashboard: chromium shows the change's trace"
ns=$(new_namespace t-node-install)
real_node_app 1 | k -n "$ns" apply -f - >/dev/null
k -n "$ns" rollout status deployment/hello --timeout="${WAIT_TIMEOUT}s" >/dev/null || fail "hello did not roll out"
cpid=$(kubectl ripple -n "$ns" scale deployment/hello --replicas=2 | grep -oE '[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}' | head -n1)
[[ -n $cpid ]] || fail "kubectl ripple scale printed no CPID"
k -n "$ns" rollout status deployment/hello --timeout="${WAIT_TIMEOUT}s" >/dev/null || fail "hello did not scale"
has_kubelet() { kubectl ripple trace "$cpid" -o json | jq -e '[.tree[] | recurse(.children[]?) | select(.component == "kubelet")] | length > 0'; }
wait_until "the trace of $cpid reaches the kubelet's writes" has_kubelet
kubectl ripple dashboard --no-browser --port 0 "$cpid" >"$work/relay.out" 2>"$work/relay.err" &
relay_pid=$!
for ((i = 0; i < 200; i++)); do
  [[ $(wc -l <"$work/relay.out") -ge 2 ]] && break
  kill -0 "$relay_pid" 2>/dev/null || fail "the relay exited: $(cat "$work/relay.err")"
  sleep 0.05
done
url=$(sed -n '2s/^trace: //p' "$work/relay.out")
[[ $url == http://127.0.0.1:*/#/trace/$cpid ]] || fail "kubectl ripple dashboard printed no trace URL: $(cat "$work/relay.out")"
# The page must show every span of the trace; a late span may land between the count
# (the JSON the same relay serves the page) and the page, so it is counted again once.
shown=0
for attempt in 1 2; do
  spans=$(curl -sf --max-time 10 "${url%%#*}v1/cpids/$cpid/trace" | jq '.spans | length') || fail "the relay's API answer"
  if node "$REPO/web/test/e2e/relay.mjs" --url "$url" --spans "$spans" >"$work/browser.log" 2>&1; then
    shown=1; break
  fi
  say "attempt $attempt: $(tail -n 3 "$work/browser.log")"
done
((shown)) || fail "chromium did not show the trace: $(cat "$work/browser.log")"
kill -TERM "$relay_pid"
wait "$relay_pid" || fail "the relay exited non-zero on SIGTERM"
relay_pid=""
pass "$spans spans of $cpid shown by chromium through the relay"
