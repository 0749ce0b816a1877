#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The network rule: every lab process listens only on 127.0.0.1 and has TCP connections
# only to loopback addresses; fake nodes' InternalIP is 127.0.0.1; Pod IPs are fake
# (198.18.0.0/15) and the Service range is 10.96.0.0/16 with no proxy behind it.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v ss >/dev/null || fail "ss (iproute2) is needed for this test"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}

pids=$(cat "$LAB_DIR"/run/*.pid)
check "lab processes ($(echo "$pids" | tr '\n' ' ')) listen on 127.0.0.1 only"
for p in $pids; do
  listen=$(ss -Htlnp | grep "pid=$p," | awk '{print $4}' || true)
  [[ -n $listen ]] || fail "pid $p listens nowhere?"
  bad=$(grep -v '^127\.0\.0\.1:' <<<"$listen" || true)
  [[ -z $bad ]] || fail "pid $p ($(cat "/proc/$p/comm")) listens on $bad"
  pass "$(cat "/proc/$p/comm"): $(echo "$listen" | tr '\n' ' ')"
done

check "every TCP connection of a lab process is to a loopback address"
conns=$(ss -Htanp | grep -E "pid=($(echo "$pids" | paste -sd'|'))," | awk '$1!="LISTEN" {print $5}')
bad=$(grep -Ev '^(127\.[0-9.]+|\[::1\]|\[::ffff:127\.[0-9.]+\]):' <<<"$conns" || true)
[[ -z $bad ]] || fail "connections to non-loopback peers: $bad"
pass "$(grep -c . <<<"$conns") connections, all to loopback"

check "no lab process has a UDP socket to a non-loopback peer (e.g. DNS)"
udp=$(ss -Huanp | grep -E "pid=($(echo "$pids" | paste -sd'|'))," | awk '{print $4" -> "$5}' || true)
bad=$(grep -Ev -- '-> (127\.[0-9.]+|\[::1\]|\*|0\.0\.0\.0):' <<<"$udp" | grep . || true)
[[ -z $bad ]] || fail "UDP sockets with non-loopback peers: $bad"
pass "no such UDP socket"

check "fake nodes have InternalIP 127.0.0.1 and a podCIDR in 198.18.0.0/15"
addrs=$(k get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.addresses[?(@.type=="InternalIP")].address}{" "}{.spec.podCIDR}{"\n"}{end}')
bad=$(grep -Ev '^127\.0\.0\.1 198\.(18|19)\.[0-9]+\.0/24$' <<<"$addrs" || true)
[[ -z $bad ]] || fail "unexpected node addresses: $bad"
pass "$(grep -c . <<<"$addrs") nodes"

check "the kubernetes Service has no Endpoints (endpoint reconciler off): nothing can reach it"
n=$(k -n default get endpointslices -l kubernetes.io/service-name=kubernetes -o name 2>/dev/null | grep -c .) || true
[[ $n == 0 ]] || fail "the kubernetes Service has $n EndpointSlice(s)"
pass "no EndpointSlice for the kubernetes Service"
say "PASS"
