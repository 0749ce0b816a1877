#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `lab/lab up --node`: one real node (kubelet, containerd, runc, CNI, kube-proxy,
# CoreDNS) beside the KWOK nodes. Restarts the lab with it and checks that the node
# is Ready with its label and taint and the KWOK nodes keep theirs; that a Deployment
# of the lab's own image runs there, Running and Ready by the kubelet's own probes;
# that its Service answers from the host through kube-proxy and its name resolves
# through the lab's CoreDNS, which answers nothing outside the cluster; that the node
# has no way off the machine; that `node down` leaves nothing on the host (mounts,
# links, routes, nft tables, cgroups, the kernel settings the kubelet changes,
# processes) and `node up` brings it back. Then the chart, installed on it
# (test-node-chart.sh), and docs/install.md's quick start walked on it
# (test-node-install.sh). Needs root. Restarts the lab with the defaults at the end.
set -euo pipefail
LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB="$LAB_ROOT/lab"
# shellcheck source=../versions.env
. "$LAB_ROOT/versions.env"
LAB_DIR=${RIPPLE_LAB_DIR:-/tmp/ripple-lab}

((EUID == 0)) || { echo "[test-node] FAIL: needs root (a real node makes a network namespace, mounts and cgroups)" >&2; exit 1; }

# host_state: what a node may change on the host, in a form to compare.
host_state() {
  awk -v d="$LAB_DIR/" 'index($5, d) == 1 {print "mount", $5}' /proc/self/mountinfo | sort
  ip -o link show | awk -F': ' '{print "link", $2}' | sed 's/@.*//' | grep ' rln' || true
  ip route show | grep -E '^10\.(88|96)\.' | sed 's/^/route /' || true
  nft list tables | grep ripple-lab | sed 's/^/nft /' || true
  find /sys/fs/cgroup -maxdepth 2 -name 'ripple-lab-*' | sed 's/^/cgroup /' | sort
  local s
  for s in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do echo "sysctl $s $(cat "/proc/sys/$s")"; done
  find /var/log/containers -maxdepth 1 -lname "$LAB_DIR/*" 2>/dev/null | sed 's/^/log /' || true
  local d exe
  for d in /proc/[0-9]*; do
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    case ${exe##*/} in kubelet | kube-proxy | containerd | containerd-shim-runc-v2 | coredns | pause | hello) ;; *) continue ;; esac
    tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q "$LAB_DIR/" && echo "process ${exe##*/}"
  done
  return 0
}

"$LAB" down >/dev/null 2>&1 || true
before=$(host_state)
restore() { "$LAB" down >&2 || true; "$LAB" up >/dev/null 2>&1 || echo "[test-node] could not restore the default lab" >&2; }
trap restore EXIT
t0=$SECONDS
"$LAB" up --node --nodes 2
echo "[test-node] lab up --node took $((SECONDS - t0))s"

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'cleanup_namespaces; restore' EXIT
eval "$("$LAB" env | grep '^RIPPLE_LAB_NODE')"
node=${RIPPLE_LAB_NODE:?lab/lab env names no node}
node_ip=${RIPPLE_LAB_NODE_IP:?}
netns=$LAB_DIR/node/netns

check "node $node Ready, labelled type=real and tainted; the KWOK nodes keep 127.0.0.1"
[[ $(k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]] || fail "$node is not Ready"
[[ $(k get node "$node" -o jsonpath='{.metadata.labels.type}') == real ]] || fail "$node has no label type=real"
[[ $(k get node "$node" -o jsonpath='{.spec.taints[*].key}') == *ripple.lab/real-node* ]] || fail "$node lacks its taint"
[[ $(k get node "$node" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}') == "$node_ip" ]] || fail "$node's address"
[[ $(k get nodes -l type=kwok -o jsonpath='{.items[*].status.addresses[?(@.type=="InternalIP")].address}') == "127.0.0.1 127.0.0.1" ]] ||
  fail "the KWOK nodes' addresses changed"
[[ $(k get node "$node" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}') == containerd://2.* ]] || fail "no containerd 2"
pass "$node at $node_ip"

check "the node's namespace has no default route, and Pods none either (nothing leaves the machine)"
nsenter --net="$netns" ip route show | grep -q '^default' && fail "the node has a default route"
pass "$(nsenter --net="$netns" ip route show | tr '\n' ';')"

ns=$(new_namespace t-node)
check "a Deployment of the lab's hello image on the real node: every Pod Running and Ready by the kubelet's probe"
real_node_app 2 | k -n "$ns" apply -f - >/dev/null
real_ready() {
  local n
  n=$(k -n "$ns" get pods -l app=hello -o jsonpath='{range .items[*]}{.status.phase}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.nodeName}{"\n"}{end}' |
    awk -v node="$node" '$1=="Running" && $2=="True" && $3==node {n++} END {print n+0}')
  [[ $n == 2 ]]
}
wait_until "2 hello Pods Running and Ready on $node" real_ready
pass "$(k -n "$ns" get pods -l app=hello -o jsonpath='{.items[*].status.podIP}')"

check "the Service answers from the host (kube-proxy's nftables in the node), and its EndpointSlice names both Pods"
ip=$(k -n "$ns" get service hello -o jsonpath='{.spec.clusterIP}')
wait_until "the Service at $ip answers" curl -sf --max-time 2 "http://$ip/"
[[ $(curl -sf --max-time 2 "http://$ip/") == ok ]] || fail "the Service's answer"
[[ $(k -n "$ns" get endpointslices -l kubernetes.io/service-name=hello -o jsonpath='{.items[*].endpoints[*].conditions.ready}') == "true true" ]] ||
  fail "the EndpointSlice does not have two ready endpoints"
pass "http://$ip/ says ok"

# dns_query NAME: the A records the node's CoreDNS gives for NAME (RCODE on failure).
dns_query() {
  python3 - "$1" "$node_ip" <<'EOF'
import random, socket, struct, sys
name, server = sys.argv[1], sys.argv[2]
qid = random.randrange(65536)
q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (server, 53))
a = s.recv(4096)
rcode, an = a[3] & 15, struct.unpack(">H", a[6:8])[0]
if rcode or not an:
    print("rcode=%d answers=%d" % (rcode, an)); sys.exit(1)
print(".".join(str(b) for b in a[-4:]))
EOF
}
check "hello.$ns.svc.cluster.local resolves to the Service through the node's CoreDNS; example.com does not"
wait_until "the name resolves" dns_query "hello.$ns.svc.cluster.local"
[[ $(dns_query "hello.$ns.svc.cluster.local") == "$ip" ]] || fail "the name resolves to $(dns_query "hello.$ns.svc.cluster.local"), not $ip"
out=$(dns_query example.com) && fail "example.com resolved to $out: the lab's DNS must answer nothing outside the cluster"
pass "$ip; example.com: $out"

check "the kubelet's own writes: the Pods' status by system:node:$node"
mf=$(k -n "$ns" get pods -l app=hello -o jsonpath='{range .items[*]}{range .metadata.managedFields[*]}{.manager}{" "}{.subresource}{"\n"}{end}{end}')
grep -q '^kubelet status$' <<<"$mf" || fail "no status write by the kubelet in managedFields: $mf"
pass "managedFields: $(sort -u <<<"$mf" | tr '\n' ';')"

# The chart on this node, while it is here (its own file: it is long).
check "the chart, installed on the real node (test-node-chart.sh)"
bash "$TESTS_DIR/test-node-chart.sh" || fail "test-node-chart.sh failed"
pass "test-node-chart.sh"

check "docs/install.md's quick start on the real node (test-node-install.sh)"
bash "$TESTS_DIR/test-node-install.sh" || fail "test-node-install.sh failed"
pass "test-node-install.sh"

check "node down leaves nothing on the host; node up brings it back Ready"
k delete namespace "$ns" --wait=false >/dev/null
"$LAB" node down
after=$(host_state)
[[ $after == "$before" ]] || fail "the host differs after node down:
$(diff <(echo "$before") <(echo "$after") || true)"
t0=$SECONDS
"$LAB" node up
echo "[test-node] node up (warm) took $((SECONDS - t0))s"
[[ $(k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]] || fail "$node is not Ready again"
pass "nothing left; Ready again"

check "lab down (the whole lab) leaves nothing either"
"$LAB" down
after=$(host_state)
[[ $after == "$before" ]] || fail "the host differs after lab down:
$(diff <(echo "$before") <(echo "$after") || true)"
pass "nothing left"
