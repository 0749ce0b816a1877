# shellcheck shell=bash
# The configuration files of the lab's real node (lab/node.sh): containerd, the CNI
# network, the kubelet, kube-proxy and CoreDNS, written into NODE_DIR by
# node_write_configs. Each setting that this machine needs, or that keeps the node off
# the host's and other labs' toes, says why; docs/lab.md ("A real node") sums them up.

node_write_configs() {
  mkdir -p "$NODE_DIR/containerd" "$NODE_DIR/cni" "$NODE_DIR/cni-ipam" "$NODE_DIR/kubelet" \
    "$NODE_DIR/pod-logs" "$NODE_DIR/certs.d"
  node_containerd_config >"$NODE_DIR/containerd.toml"
  node_cni_config >"$NODE_DIR/cni/10-ripple-lab.conflist"
  node_kubelet_config >"$NODE_DIR/kubelet.yaml"
  node_kube_proxy_config >"$NODE_DIR/kube-proxy.yaml"
  node_coredns_config >"$NODE_DIR/Corefile"
  # The kubelet gives Pods the cluster's DNS and this file's search list and options;
  # it names no name server, so a Pod never learns the host's (off the machine).
  echo "# the lab's real node: no upstream name server (lab/node-config.sh)" >"$NODE_DIR/resolv.conf"
}

# containerd 2 (config version 3). Its root and state live under NODE_DIR, so `node
# down` removes every image and snapshot with it. restrict_oom_score_adj: this machine
# withholds CAP_SYS_RESOURCE, so runc may not lower a score below its own (the sandbox's
# -998). netns_mounts_under_state_dir keeps Pods' namespaces out of /run/netns.
# The registry's config_path is an empty directory: images are imported, never pulled.
node_containerd_config() {
  cat <<EOF
version = 3
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing", "io.containerd.snapshotter.v1.erofs"]

[grpc]
  address = "$NODE_SOCK"

[ttrpc]
  address = "$NODE_SOCK.ttrpc"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "localhost/ripple-lab-pause:1"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "$NODE_DIR/certs.d"

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$NODE_BIN/cni"]
    conf_dir = "$NODE_DIR/cni"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
EOF
}

# The Pods' bridge: no masquerade (nothing leaves the machine), the host-local
# allocator's state under NODE_DIR.
node_cni_config() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NODE_CGROUP",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$NODE_DIR/cni-ipam",
        "ranges": [[{"subnet": "$NODE_POD_CIDR"}]],
        "routes": [{"dst": "$NODE_HOST_IP/32"}, {"dst": "$NODE_SERVICE_CIDR"}]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
}

# The kubelet. failCgroupV1: this machine's cgroups are v1 (hybrid), which 1.36 refuses
# by default. cgroupfs: no systemd here. cgroupRoot: Pods under a tree of this lab's
# own. oomScoreAdj 0 and makeIPTablesUtilChains false: nothing it may not or need not
# do to the host. No image GC (imported images cannot be pulled back) and eviction
# thresholds that a shared disk does not cross. A taint keeps every other test's
# Pods on the KWOK nodes.
node_kubelet_config() {
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$NODE_CGROUP
containerRuntimeEndpoint: unix://$NODE_SOCK
address: $REAL_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $PKI/$NODE_NAME-serving.crt
tlsPrivateKeyFile: $PKI/$NODE_NAME-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$NODE_DNS_IP]
resolvConf: $NODE_DIR/resolv.conf
podLogsDir: $NODE_DIR/pod-logs
registerWithTaints:
- {key: ripple.lab/real-node, effect: NoSchedule}
makeIPTablesUtilChains: false
oomScoreAdj: 0
protectKernelDefaults: false
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMaximumGCAge: 0s
mergeDefaultEvictionSettings: false
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
kubeReserved: {cpu: 100m, memory: 256Mi}
maxPods: 30
serializeImagePulls: false
EOF
}

# kube-proxy in nftables mode, its table inside the node's namespace. The conntrack
# settings are zero: they are the machine's, not the namespace's, and stay as they are.
node_kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: $NODE_DIR/pki/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
bindAddress: $REAL_NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: $NODE_POD_CIDR
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# CoreDNS: the cluster's names and nothing else (no forward plugin is built in).
node_coredns_config() {
  cat <<EOF
cluster.local:53 in-addr.arpa:53 {
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $NODE_DIR/pki/coredns.kubeconfig ripple-lab
    }
    cache 30
}
EOF
}
