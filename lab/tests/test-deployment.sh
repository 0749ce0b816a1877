#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Test 1: a Deployment of 10 replicas reaches 10 Running and Ready Pods on fake nodes;
# scaling it to 50 works; a Service selecting them gets Endpoints and EndpointSlices
# with 50 addresses, all in the fake Pod range 198.18.0.0/15.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ns=$(new_namespace t-deploy)
say "namespace $ns"

check "Deployment web with 10 replicas reaches 10 Running+Ready Pods on kwok-node-*"
deployment_yaml web 10 web | k -n "$ns" apply -f - >/dev/null
wait_until "10 ready pods of deployment web" has_n_ready_pods "$ns" app=web 10
wait_until "deployment web status.readyReplicas=10" \
  k -n "$ns" wait --for=jsonpath='{.status.readyReplicas}'=10 deployment/web --timeout=5s
pass "10 Pods Running and Ready"

check "the Pods are spread over the fake nodes"
nodes=$(k -n "$ns" get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
((nodes >= 2)) || fail "all 10 Pods are on $nodes node(s)"
pass "Pods are on $nodes distinct fake nodes"

check "scaling to 50 gives 50 Running+Ready Pods"
k -n "$ns" scale deployment web --replicas=50 >/dev/null
wait_until "50 ready pods of deployment web" has_n_ready_pods "$ns" app=web 50
pass "50 Pods Running and Ready"

check "Service web gets Endpoints with 50 addresses"
k -n "$ns" expose deployment web --port=80 --target-port=8080 >/dev/null
endpoints_count() {
  local n
  n=$(k -n "$ns" get endpoints web -o jsonpath='{range .subsets[*].addresses[*]}{.ip}{"\n"}{end}' 2>/dev/null | grep -c .) || true
  echo "endpoints: $n addresses"
  [[ $n == 50 ]]
}
wait_until "Endpoints web with 50 addresses" endpoints_count
pass "Endpoints has 50 addresses"

check "Service web gets EndpointSlices with 50 ready addresses"
slice_count() {
  local n
  n=$(k -n "$ns" get endpointslices -l kubernetes.io/service-name=web \
    -o jsonpath='{range .items[*].endpoints[*]}{.addresses[0]}{" "}{.conditions.ready}{"\n"}{end}' | awk '$2=="true"' | grep -c .) || true
  echo "endpointslices: $n ready addresses"
  [[ $n == 50 ]]
}
wait_until "EndpointSlices of web with 50 ready addresses" slice_count
pass "EndpointSlices have 50 ready addresses"

check "every Pod IP is a fake address in 198.18.0.0/15 and unique"
ips=$(k -n "$ns" get pods -l app=web -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}')
bad=$(grep -Ev '^198\.(18|19)\.[0-9]+\.[0-9]+$' <<<"$ips" || true)
[[ -z $bad ]] || fail "Pod IPs outside 198.18.0.0/15: $bad"
[[ $(sort -u <<<"$ips" | grep -c .) == 50 ]] || fail "Pod IPs are not unique"
pass "50 unique Pod IPs in 198.18.0.0/15"

say "PASS"
