#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `lab/lab webhook`: registering a MutatingWebhookConfiguration by loopback URL. A
# non-loopback URL is refused. With failurePolicy Ignore and nothing listening, writes
# still succeed (the API server only dials 127.0.0.1); with Fail they are rejected, which
# proves the API server calls the URL. The configuration is removed at the end.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}
ca="$LAB_DIR/pki/ca.crt"
name=ripple-lab-test
trap 'cleanup_namespaces; "$LAB" webhook --delete --name "$name" >/dev/null 2>&1 || true' EXIT

check "a non-loopback webhook URL is refused"
if "$LAB" webhook https://192.0.2.1:8443/mutate "$ca" --name "$name" 2>/dev/null; then
  fail "lab/lab webhook accepted a non-loopback URL"
fi
pass "refused"

# A loopback port where nothing listens.
port=1
ns=$(new_namespace t-webhook)
check "failurePolicy Ignore: a ConfigMap is created although the webhook is down"
"$LAB" webhook "https://127.0.0.1:$port/mutate" "$ca" --name "$name" --resources configmaps >/dev/null
k -n "$ns" create configmap a --from-literal=k=v >/dev/null || fail "create failed with an Ignore webhook"
pass "created"

check "failurePolicy Fail: the create is rejected, naming the webhook (so the API server called it)"
"$LAB" webhook "https://127.0.0.1:$port/mutate" "$ca" --name "$name" --resources configmaps --failure-policy Fail >/dev/null
reject() {
  local out
  if out=$(k -n "$ns" create configmap "b$RANDOM" --from-literal=k=v 2>&1); then echo "created: $out"; return 1; fi
  echo "$out"
  grep -q "$name.ripple.dev" <<<"$out"
}
wait_until "a create rejected by webhook $name" reject
pass "rejected by $name.ripple.dev"

"$LAB" webhook --delete --name "$name" >/dev/null
k -n "$ns" create configmap c --from-literal=k=v >/dev/null || fail "create failed after the webhook was deleted"
pass "webhook deleted; writes work"
say "PASS"
