# shellcheck shell=bash
# The lab's real node (`lab/lab up --node`, `lab/lab node up|down|status`): one kubelet
# with containerd, runc, the CNI bridge, kube-proxy and CoreDNS on this machine, beside
# the KWOK nodes. Sourced by lab/lab, whose globals (LAB_DIR, PKI, BIN, LOGS, RUN,
# SERVICE_CIDR...) it reads. See docs/lab.md, "A real node".
#
# Every node process runs in one network namespace of the lab's own (a file under
# NODE_DIR, entered with nsenter, which execs in place so pids stay trackable), joined
# to the host by one veth pair. The host gets only what cannot live in that namespace:
# the veth and its routes, one nft table, cgroups under one root, and three kernel
# sysctls that the kubelet rewrites (saved here and put back by `node down`).
#
# Nothing can leave the machine: the namespace has no default route (a Pod's packet to
# anywhere but the node, its Pods and the host's end of the veth is unreachable), the
# host does not forward, Pods get a resolv.conf naming only the cluster's DNS, and that
# DNS has no forwarder.

NODE_DIR="$LAB_DIR/node"
NODE_NAME=ripple-node
NODE_COMPONENTS=(containerd kube-proxy coredns kubelet)
NODE_LOCK=/run/ripple-lab-node.lock
NODE_SHARED=/run/ripple-lab-node
# The kernel settings the kubelet sets whatever it is told (container_manager_linux.go).
NODE_SYSCTLS=(vm/overcommit_memory kernel/panic kernel/panic_on_oops)

# node_index: this lab's number N, which names the veth, the /24 of its addresses
# (10.88.N.0/24) and its service range (10.96.N.0/24), so that several labs' nodes
# live side by side. From LAB_APISERVER_PORT unless LAB_NODE_INDEX says otherwise.
node_index() {
  local n=${LAB_NODE_INDEX:-$(((LAB_APISERVER_PORT % 251) + 1))}
  [[ ! -s $NODE_DIR/index ]] || n=$(cat "$NODE_DIR/index")
  if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1 || n > 252)); then die "LAB_NODE_INDEX must be 1..252, got '$n'"; fi
  echo "$n"
}

# node_vars: the addresses of this lab's node (globals).
node_vars() {
  local n
  n=$(node_index)
  NODE_N=$n
  NODE_VETH="rln${n}h"
  NODE_HOST_IP="10.88.$n.1"
  REAL_NODE_IP="10.88.$n.2"
  NODE_POD_CIDR="10.88.$n.128/25"
  NODE_SERVICE_CIDR="10.96.$n.0/24"
  # shellcheck disable=SC2034 # lab/lab's do_up reads it
  NODE_SERVICE_IP="10.96.$n.1"
  NODE_DNS_IP="10.96.$n.10"
  NODE_CGROUP="ripple-lab-$n"
  NODE_NFT_TABLE="ripple-lab-$n"
  NODE_NETNS="$NODE_DIR/netns"
  NODE_SOCK="$NODE_DIR/containerd/containerd.sock"
}

node_enabled() { [[ -f $RUN/options ]] && grep -q '^node=1' "$RUN/options"; }

NODE_BIN=""
node_bin() { # build if needed
  [[ -n $NODE_BIN ]] || NODE_BIN=$("$LAB_ROOT/build.sh" --node) || die "building the node's binaries failed (see above)"
}

# in_node CMD...: run CMD in the node's network namespace.
in_node() { nsenter --net="$NODE_NETNS" -- "$@"; }

node_ctr() { in_node "$NODE_BIN/ctr" --address "$NODE_SOCK" -n k8s.io "$@"; }

# node_start NAME ARGS...: start a node component in the namespace, detached.
node_start() {
  local name=$1; shift
  local exe=$NODE_BIN/$name p
  [[ -x $exe ]] || die "missing binary $exe"
  log "starting $name (node)"
  printf '=== %s: %s %s\n' "$(date -u +%FT%TZ)" "$exe" "$*" >>"$LOGS/$name.log"
  setsid nsenter --net="$NODE_NETNS" -- "$exe" "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  p=$!
  echo "$p" >"$(pidfile "$name")"
  sleep 0.2
  if ! pid_alive "$p"; then
    tail -n 20 "$LOGS/$name.log" >&2 || true
    fail_up "$name exited at once (log: $LOGS/$name.log)"
  fi
}

# --- the machine-wide part: a lock, and the kernel settings the kubelet changes ------

# node_sysctls_take / node_sysctls_give: the first lab with a node saves the settings,
# the last one to leave puts them back. Several labs on one machine share them.
node_sysctls_take() {
  local s
  mkdir -p "$NODE_SHARED/users"
  if [[ ! -f $NODE_SHARED/sysctls ]]; then
    for s in "${NODE_SYSCTLS[@]}"; do echo "$s $(cat "/proc/sys/$s")"; done >"$NODE_SHARED/sysctls.tmp"
    mv "$NODE_SHARED/sysctls.tmp" "$NODE_SHARED/sysctls"
  fi
  echo "$LAB_DIR" >"$NODE_SHARED/users/$NODE_N"
}

node_sysctls_give() {
  local s v
  rm -f "$NODE_SHARED/users/$NODE_N"
  [[ -f $NODE_SHARED/sysctls ]] || return 0
  [[ -z $(ls -A "$NODE_SHARED/users" 2>/dev/null) ]] || return 0
  while read -r s v; do
    echo "$v" >"/proc/sys/$s" || log "warning: could not restore $s to $v"
  done <"$NODE_SHARED/sysctls"
  rm -f "$NODE_SHARED/sysctls"
  log "restored ${NODE_SYSCTLS[*]}"
}

# --- up ------------------------------------------------------------------------------

node_prereqs() {
  ((EUID == 0)) || die "a real node needs root (it makes a network namespace, mounts and cgroups)"
  local c missing=()
  for c in nsenter unshare ip nft runc buildah; do have "$c" || missing+=("$c"); done
  ((${#missing[@]} == 0)) || die "missing ${missing[*]}: apt-get install util-linux iproute2 nftables runc buildah"
  ip link show "$NODE_VETH" >/dev/null 2>&1 &&
    die "$NODE_VETH exists already (another lab's node, or a leftover): 'lab/lab node down' in that lab, or set LAB_NODE_INDEX"
  local h
  for h in cpu cpuacct cpuset memory pids; do
    [[ -d /sys/fs/cgroup/$h ]] || die "cgroup v1 hierarchy /sys/fs/cgroup/$h is not mounted (docs/lab.md, \"A real node\")"
  done
}

# node_network: the namespace, the veth, routes, and the host's way to the API server.
node_network() {
  mkdir -p "$NODE_DIR"
  echo "$NODE_N" >"$NODE_DIR/index"
  touch "$NODE_NETNS"
  unshare --net="$NODE_NETNS" true || fail_up "cannot make a network namespace at $NODE_NETNS"
  ip link add "$NODE_VETH" type veth peer name eth0 netns "$NODE_NETNS" || fail_up "cannot make the veth $NODE_VETH"
  ip addr add "$NODE_HOST_IP/30" dev "$NODE_VETH"
  ip link set "$NODE_VETH" up
  in_node ip link set lo up
  in_node ip addr add "$REAL_NODE_IP/30" dev eth0
  in_node ip link set eth0 up
  # No default route: unreachable means unreachable, at once.
  in_node sysctl -qw net.ipv4.ip_forward=1
  # The host reaches Pods (the API server's service proxy) and Services (its calls to
  # webhooks by Service) through the node.
  ip route add "$NODE_POD_CIDR" via "$REAL_NODE_IP" dev "$NODE_VETH"
  ip route add "$NODE_SERVICE_CIDR" via "$REAL_NODE_IP" dev "$NODE_VETH"
  # The API server listens on 127.0.0.1 only; the node reaches it at the host's end
  # of the veth, translated to loopback (which needs route_localnet on that veth).
  sysctl -qw "net.ipv4.conf.$NODE_VETH.route_localnet=1"
  nft -f - <<EOF || fail_up "cannot add the nft table $NODE_NFT_TABLE"
table ip $NODE_NFT_TABLE {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "$NODE_VETH" ip daddr $NODE_HOST_IP tcp dport $LAB_APISERVER_PORT dnat to 127.0.0.1:$LAB_APISERVER_PORT
  }
}
EOF
}

node_pki() {
  local dir=$NODE_DIR/pki
  [[ -f $PKI/$NODE_NAME.crt ]] || {
    cert "$NODE_NAME" "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
    cert "$NODE_NAME-serving" "/CN=$NODE_NAME" serverAuth "IP:$REAL_NODE_IP,DNS:$NODE_NAME"
    cert kube-proxy "/CN=system:kube-proxy" clientAuth
    cert coredns "/CN=ripple-lab-coredns" clientAuth
    chmod 600 "$PKI"/*.key
  }
  mkdir -p "$dir"
  node_kubeconfig "$dir/kubelet.kubeconfig" "system:node:$NODE_NAME" "$NODE_NAME"
  node_kubeconfig "$dir/kube-proxy.kubeconfig" system:kube-proxy kube-proxy
  node_kubeconfig "$dir/coredns.kubeconfig" ripple-lab-coredns coredns
}

# node_kubeconfig FILE USER CERT: a kubeconfig for the API server as the node sees it.
node_kubeconfig() {
  write_kubeconfig "$1" "$2" "$3"
  sed -i "s#server: https://127.0.0.1:$LAB_APISERVER_PORT#server: https://$NODE_HOST_IP:$LAB_APISERVER_PORT#" "$1"
}

node_cgroups() {
  local h
  for h in /sys/fs/cgroup/*/; do
    [[ -f $h/cgroup.procs ]] || continue
    mkdir -p "$h$NODE_CGROUP"
  done
}

node_start_all() {
  node_write_configs
  node_start containerd --config "$NODE_DIR/containerd.toml"
  wait_for "containerd" containerd node_ctr version
  node_import_images
  node_start coredns -conf "$NODE_DIR/Corefile"
  node_start kube-proxy --config="$NODE_DIR/kube-proxy.yaml" --hostname-override="$NODE_NAME" --v=1
  node_start kubelet --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$NODE_DIR/pki/kubelet.kubeconfig" \
    --root-dir="$NODE_DIR/kubelet" --hostname-override="$NODE_NAME" --node-ip="$REAL_NODE_IP" \
    --node-labels=type=real --v=1
}

# node_import_images: the pause image and the workload image (lab/node/images.sh), and
# the ripple image when `make image` has made one, into the node's containerd.
node_import_images() {
  local a
  while read -r a; do
    [[ -n $a ]] || continue
    node_ctr images import "$a" >/dev/null 2>>"$LOGS/containerd.log" ||
      fail_up "cannot import $a into the node's containerd"
  done < <("$LAB_ROOT/node/images.sh") || fail_up "building the node's images failed"
  if a=$("$LAB_ROOT/../scripts/build-image" --print 2>/dev/null) && [[ -f $a ]]; then
    node_ctr images import "$a" >/dev/null 2>>"$LOGS/containerd.log" || fail_up "cannot import $a"
  fi
}

# node_import ARCHIVE...: OCI archives into the node's containerd (`lab/lab node import`).
node_import() {
  node_vars
  node_bin
  local a
  (($#)) || die "usage: lab/lab node import ARCHIVE..."
  for a in "$@"; do
    [[ -r $a ]] || die "cannot read $a"
    node_ctr images import "$a" >&2 || die "cannot import $a into the node's containerd"
  done
}

# node_tag IMAGE NAME: another name for an image of the node's (`lab/lab node tag`).
node_tag() {
  (($# == 2)) || die "usage: lab/lab node tag IMAGE NAME"
  node_vars
  node_bin
  node_ctr images tag --force "$1" "$2" >&2 || die "cannot tag $1 as $2 in the node's containerd"
}

# The cluster side of the node: RBAC for CoreDNS, the Services and endpoints that the
# API server's own reconciler would write (the lab runs it with none), a default
# StorageClass of local volumes.
node_cluster_objects() {
  # shellcheck disable=SC2016
  sed -e "s#@NODE_HOST_IP@#$NODE_HOST_IP#g; s#@APISERVER_PORT@#$LAB_APISERVER_PORT#g" \
    -e "s#@DNS_IP@#$NODE_DNS_IP#g; s#@NODE_IP@#$REAL_NODE_IP#g; s#@NODE_NAME@#$NODE_NAME#g" \
    -e "s#@VOLUMES@#$NODE_DIR/volumes#g" "$LAB_ROOT/node/cluster.yaml" >"$NODE_DIR/cluster.yaml"
  mkdir -p "$NODE_DIR/volumes/server"
  lab_kubectl apply -f "$NODE_DIR/cluster.yaml" >/dev/null || fail_up "cannot create the node's cluster objects"
}

node_ready() {
  [[ $(lab_kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

node_up() {
  node_vars
  node_prereqs
  node_bin
  local t0=$SECONDS
  exec 8>"$NODE_LOCK"
  flock 8
  node_sysctls_take
  node_network
  node_pki
  node_cgroups
  node_cluster_objects
  node_start_all
  wait_for "node $NODE_NAME Ready" kubelet node_ready
  flock -u 8
  touch "$RUN/node-up"
  log "node $NODE_NAME Ready in $((SECONDS - t0))s (IP $REAL_NODE_IP, Pods $NODE_POD_CIDR, Services $NODE_SERVICE_CIDR)"
}

# --- down ----------------------------------------------------------------------------

# node_kill_cgroup: every process left in the node's cgroups (containers), killed.
node_kill_cgroup() {
  local i f p any
  for ((i = 0; i < 50; i++)); do
    any=0
    while read -r f; do
      # A Pod's cgroup may go between find and the read (the kubelet or runc removes it).
      local procs
      procs=$(cat "$f" 2>/dev/null) || continue
      while read -r p; do
        if [[ -n $p ]] && kill -KILL "$p" 2>/dev/null; then any=1; fi
      done <<<"$procs"
    done < <(find "/sys/fs/cgroup/pids/$NODE_CGROUP" -name cgroup.procs 2>/dev/null)
    ((any)) || return 0
    sleep 0.1
  done
  log "warning: processes left in /sys/fs/cgroup/pids/$NODE_CGROUP"
}

# node_own_pids NAME: this lab's processes whose executable is NAME.
node_own_pids() {
  local d exe
  for d in /proc/[0-9]*; do
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    exe=${exe##*/}; exe=${exe% (deleted)}
    [[ $exe == "$1" ]] && pid_alive "${d#/proc/}" && pid_is_ours "${d#/proc/}" && echo "${d#/proc/}"
  done
}

node_stop() {
  local c=$1 p
  p=$(read_pid "$c" || true)
  if [[ -n $p ]] && pid_alive "$p" && pid_is_ours "$p"; then stop_pid "$p" "$c"; fi
  rm -f "$(pidfile "$c")"
  for p in $(node_own_pids "$c"); do stop_pid "$p" "leftover $c"; done
}

# node_unmount: every mount under the node's directory, deepest first: container root file systems, shm, Pods' namespaces, volumes.
node_unmount() {
  local m
  while read -r m; do
    umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
  done < <(awk -v a="$NODE_DIR/" 'index($5, a) == 1 { print length($5), $5 }' /proc/self/mountinfo |
    sort -rn | cut -d' ' -f2-)
}

node_down() {
  node_vars
  [[ -d $NODE_DIR ]] || { node_sysctls_give_locked; return 0; }
  exec 8>"$NODE_LOCK"
  flock 8
  node_stop kubelet
  node_kill_cgroup
  node_stop containerd
  for p in $(node_own_pids containerd-shim-runc-v2); do stop_pid "$p" "containerd shim"; done
  node_stop kube-proxy
  node_stop coredns
  node_unmount
  umount "$NODE_NETNS" 2>/dev/null || true
  rm -f "$NODE_NETNS"
  ip link del "$NODE_VETH" 2>/dev/null || true
  nft delete table ip "$NODE_NFT_TABLE" 2>/dev/null || true
  find /sys/fs/cgroup/*/"$NODE_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null || true
  node_logs_clean
  node_sysctls_give
  flock -u 8
  rm -f "$RUN/node-up"
  rm -rf "${NODE_DIR:?}/containerd" "${NODE_DIR:?}/kubelet"
  log "node down"
}

node_sysctls_give_locked() {
  [[ -f $NODE_SHARED/users/$NODE_N ]] || return 0
  exec 8>"$NODE_LOCK"
  flock 8
  node_sysctls_give
  flock -u 8
}

# The kubelet links every container's log into /var/log/containers (not configurable);
# the links to this node's logs go, and the directory too if nothing else is left in it.
node_logs_clean() {
  local l
  for l in /var/log/containers/*; do
    [[ -L $l && $(readlink "$l") == "$NODE_DIR/"* ]] && rm -f "$l"
  done
  rmdir /var/log/containers 2>/dev/null || true
  for l in /var/lib/cni/results/"$NODE_CGROUP"-*; do [[ -e $l ]] && rm -f "$l"; done
  rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
  return 0
}

node_status() {
  node_vars
  local c p
  for c in "${NODE_COMPONENTS[@]}"; do
    p=$(component_pid "$c" || true)
    printf '%-25s %-8s %-12s %s\n' "$c" "${p:--}" "$([[ -n $p ]] && echo alive || echo stopped)" "node $REAL_NODE_IP"
  done
  if node_ready; then echo "node:       $NODE_NAME Ready ($REAL_NODE_IP)"; else echo "node:       $NODE_NAME not Ready"; fi
}
