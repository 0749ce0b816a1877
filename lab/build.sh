#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build the lab's upstream binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok) from their Go modules through the Go module proxy,
# and the lab's test operator (lab/build/operator, controller-runtime); on request,
# Jaeger v2 (github.com/jaegertracing/jaeger, the OTLP backend of lab tests).
#
# Versions come from lab/versions.env. Binaries are cached outside the work tree in
#   ${RIPPLE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ripple-lab}/<key>/bin
# where <key> names every version and the Go toolchain; a second build is skipped.
# The operator has a key of its own (a hash of its go.mod, go.sum and sources), so
# it is rebuilt only when it changes, and the upstream binaries not at all.
# Jaeger has its own key too (jaeger-<version>_<go version>_r<rev>/bin/jaeger) and is
# built only by --jaeger: its module has replace directives, so it is built inside a
# copy of its own module source (go mod download), not through a wrapper module.
#
# Usage: lab/build.sh            build if needed, print the bin directory on stdout
#        lab/build.sh --print    print the bin directory (no build; exit 1 if not built)
#        lab/build.sh --operator build if needed, print the operator's binary's path
#        lab/build.sh --print-operator  print it (no build; exit 1 if not built)
#        lab/build.sh --jaeger   build Jaeger if needed, print its binary's path
#        lab/build.sh --print-jaeger    print it (no build; exit 1 if not built)
#        lab/build.sh --helm     build Helm if needed (the chart's tests), print its path
#        lab/build.sh --print-helm      print it (no build; exit 1 if not built)
#        lab/build.sh --actionlint  build actionlint if needed (the GitHub workflows'
#                                linter, scripts/lint), print its path
#        lab/build.sh --print-actionlint  print it (no build; exit 1 if not built)
#        lab/build.sh --krew     build krew if needed (the release's krew manifest is
#                                installed with it in tests/release), print its path
#        lab/build.sh --print-krew      print it (no build; exit 1 if not built)
#        lab/build.sh --node     build the real node's binaries if needed (kubelet,
#                                kube-proxy, containerd, its shim, ctr, the CNI plugins,
#                                CoreDNS), print their directory
#        lab/build.sh --print-node      print it (no build; exit 1 if not built)
#        lab/build.sh --regen    regenerate the wrapper go.mod/go.sum files, then build
#        lab/build.sh --force    rebuild even if the cache has the binaries (not Jaeger:
#                                remove its cache directory to rebuild it)
# Progress goes to stderr; only the bin directory (or the one path asked for) goes
# to stdout.
set -euo pipefail

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$LAB_ROOT/versions.env"

# Bump when the build recipe (flags, tags, binary set) changes, to get a new cache key.
BUILD_REV=1
K8S_TAGS=selinux,notest,grpcnotrace
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
ALL_BINS=(etcd kwok "${K8S_CMDS[@]}")
# KWOK's own Stage definitions copied next to the binaries (KWOK needs them in its config):
# node: initialize + heartbeat with lease; pod: ready, complete (Jobs), delete.
KWOK_STAGES=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)

die() { echo "lab/build: error: $*" >&2; exit 1; }
log() { echo "lab/build: $*" >&2; }

mode=build
case "${1:-}" in
  "") ;;
  --print) mode=print ;;
  --operator) mode=operator ;;
  --print-operator) mode=print-operator ;;
  --jaeger) mode=jaeger ;;
  --print-jaeger) mode=print-jaeger ;;
  --helm) mode=helm ;;
  --print-helm) mode=print-helm ;;
  --actionlint) mode=actionlint ;;
  --print-actionlint) mode=print-actionlint ;;
  --krew) mode=krew ;;
  --print-krew) mode=print-krew ;;
  --node) mode=node ;;
  --print-node) mode=print-node ;;
  --regen) mode=regen ;;
  --force) mode=force ;;
  -h|--help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) die "unknown argument '$1' (try --help)" ;;
esac

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
command -v go >/dev/null || die "go not found in PATH (install Go or add /usr/local/go/bin to PATH)"

export GOTOOLCHAIN=$LAB_GOTOOLCHAIN
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
unset GOOS GOARCH GOWORK

go_version=$(cd "$LAB_ROOT/build" && go env GOVERSION) || die "'go env GOVERSION' failed (GOTOOLCHAIN=$GOTOOLCHAIN)"
key="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_${go_version}_r${BUILD_REV}"
cache_root=${RIPPLE_LAB_CACHE:-${XDG_CACHE_HOME:-${HOME:?set HOME or RIPPLE_LAB_CACHE}/.cache}/ripple-lab}
bin_dir="$cache_root/$key/bin"

OP_SRC="$LAB_ROOT/build/operator"
op_hash=$(cd "$OP_SRC" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16) || die "cannot read $OP_SRC"
op_key="operator-${op_hash}_${go_version}"
op_bin="$cache_root/$op_key/bin/ripple-lab-operator"

complete() {
  [[ -f "$cache_root/$key/complete" ]] || return 1
  local b
  for b in "${ALL_BINS[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
  [[ -s "$bin_dir/kwok-stages.yaml" ]]
}
op_complete() { [[ -f "$cache_root/$op_key/complete" && -x $op_bin ]]; }

# Bump when Jaeger's build recipe changes.
JAEGER_BUILD_REV=1
jaeger_key="jaeger-${JAEGER_VERSION}_${go_version}_r${JAEGER_BUILD_REV}"
jaeger_bin="$cache_root/$jaeger_key/bin/jaeger"
jaeger_complete() { [[ -f "$cache_root/$jaeger_key/complete" && -x $jaeger_bin ]]; }

HELM_BUILD_REV=1
HELM_MODULE=helm.sh/helm/${HELM_VERSION%%.*}
helm_key="helm-${HELM_VERSION}_${go_version}_r${HELM_BUILD_REV}"
helm_bin="$cache_root/$helm_key/bin/helm"
helm_complete() { [[ -f "$cache_root/$helm_key/complete" && -x $helm_bin ]]; }

ACTIONLINT_BUILD_REV=1
actionlint_key="actionlint-${ACTIONLINT_VERSION}_${go_version}_r${ACTIONLINT_BUILD_REV}"
actionlint_bin="$cache_root/$actionlint_key/bin/actionlint"
actionlint_complete() { [[ -f "$cache_root/$actionlint_key/complete" && -x $actionlint_bin ]]; }

KREW_BUILD_REV=1
krew_key="krew-${KREW_VERSION}_${go_version}_r${KREW_BUILD_REV}"
krew_bin="$cache_root/$krew_key/bin/krew"
krew_complete() { [[ -f "$cache_root/$krew_key/complete" && -x $krew_bin ]]; }

# The real node (lab/node.sh): a key of its own, so the control plane's binaries keep
# theirs. kubelet and kube-proxy from lab/build/k8s (the same module as the control
# plane), the rest from their wrapper modules lab/build/{containerd,cni,coredns}.
NODE_BUILD_REV=1
node_key="node-k8s-${K8S_VERSION}_containerd-${CONTAINERD_VERSION}_cni-${CNI_PLUGINS_VERSION}_coredns-${COREDNS_VERSION}_${go_version}_r${NODE_BUILD_REV}"
node_dir="$cache_root/$node_key/bin"
NODE_BINS=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr coredns cni/bridge cni/host-local cni/loopback)
node_complete() {
  [[ -f "$cache_root/$node_key/complete" ]] || return 1
  local b
  for b in "${NODE_BINS[@]}"; do [[ -x "$node_dir/$b" ]] || return 1; done
}

# fetch_module_src MODULE VERSION WORK: the module's source, downloaded through the
# module proxy, copied writable into WORK/src (the module cache is read-only; go build
# may write go.sum). Sets mod_dir (the cache's copy) and mod_time (the proxy's date).
# `go install module@version` refuses a module whose go.mod has replace directives
# (Jaeger's replaces sarama), so such modules are built inside this copy, where their
# go.mod (replaces included) is the main module.
fetch_module_src() {
  local module=$1 version=$2 work=$3 dl info
  log "downloading $module@$version"
  # Outside any module (in $work), so no go.mod around the caller is touched.
  dl=$(cd "$work" && go mod download -json "$module@$version") ||
    die "cannot download $module@$version: $dl"
  mod_dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$dl")
  info=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' <<<"$dl")
  [[ -d $mod_dir ]] || die "go mod download gave no source directory for $module@$version"
  mod_time=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info" 2>/dev/null || true)
  cp -R "$mod_dir" "$work/src" || die "cannot copy $mod_dir to $work/src"
  chmod -R u+w "$work/src" || die "cannot make $work/src writable"
}

# build_tool KEY NAME PKG LDFLAGS: go build WORK/src/PKG into the cache as KEY/bin/NAME
# (WORK is $work, filled by fetch_module_src), and mark KEY complete.
build_tool() {
  local key=$1 name=$2 pkg=$3 ldflags=$4 release=$5 t0=$6
  mkdir -p "$work/bin"
  log "go build $name $release ($(nproc) cores) into $cache_root/$key/bin/$name"
  (cd "$work/src" && go build -trimpath -ldflags "$ldflags" -o "$work/bin/$name" "$pkg") ||
    die "building $name ($release) failed"
  rm -rf "${cache_root:?}/$key/bin"
  mv "$work/bin" "$cache_root/$key/bin"
  printf 'key=%s\nrelease=%s\nbuilt=%s\nseconds=%s\n' "$key" "$release" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(( $(date +%s) - t0 ))" > "$cache_root/$key/complete"
  log "$name built in $(( $(date +%s) - t0 ))s"
}

# A scratch directory under the cache, removed on exit.
scratch() {
  mkdir -p "$cache_root/$1"
  work=$(mktemp -d "$cache_root/$1/build.tmp.XXXXXX")
  # shellcheck disable=SC2064 # expand now: $work is global but reassigned
  trap "rm -rf '$work'" EXIT
}

# Jaeger's version stamps are those of its scripts/makefiles/BuildInfo.mk: the v2
# release's tag from the module's CHANGELOG, the date from the module proxy.
build_jaeger() {
  local t0 v2 ldflags
  t0=$(date +%s)
  scratch "$jaeger_key"
  fetch_module_src github.com/jaegertracing/jaeger "$JAEGER_VERSION" "$work"
  [[ -d $work/src/cmd/jaeger ]] || die "github.com/jaegertracing/jaeger@$JAEGER_VERSION has no cmd/jaeger (in '$mod_dir')"
  v2=$(sed -n "s#^${JAEGER_VERSION//./\\.} / \(v2\.[0-9.]*\) .*#\1#p" "$work/src/CHANGELOG.md" | head -n1)
  [[ -n $v2 ]] || die "cannot find Jaeger's v2 release for $JAEGER_VERSION in $mod_dir/CHANGELOG.md"
  ldflags="-s -w"
  ldflags+=" -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$v2"
  ldflags+=" -X github.com/jaegertracing/jaeger/internal/version.date=${mod_time:-1970-01-01T00:00:00Z}"
  build_tool "$jaeger_key" jaeger ./cmd/jaeger "$ldflags" "$v2" "$t0"
}

# Helm (lab/build.sh --helm): the chart's lint and render in tests (deploy/helm/). Its
# version stamp is what its Makefile sets (internal/version.version).
build_helm() {
  local t0
  t0=$(date +%s)
  scratch "$helm_key"
  fetch_module_src "$HELM_MODULE" "$HELM_VERSION" "$work"
  build_tool "$helm_key" helm ./cmd/helm \
    "-s -w -X $HELM_MODULE/internal/version.version=$HELM_VERSION" "$HELM_VERSION" "$t0"
}

# actionlint (lab/build.sh --actionlint): .github/workflows/ checked by scripts/lint. Its
# version stamp is what its Makefile sets (the package variable version).
build_actionlint() {
  local t0
  t0=$(date +%s)
  scratch "$actionlint_key"
  fetch_module_src github.com/rhysd/actionlint "$ACTIONLINT_VERSION" "$work"
  build_tool "$actionlint_key" actionlint ./cmd/actionlint \
    "-s -w -X github.com/rhysd/actionlint.version=${ACTIONLINT_VERSION#v}" "$ACTIONLINT_VERSION" "$t0"
}

# krew (lab/build.sh --krew): `krew install --manifest --archive` of the release's
# manifest in tests/release. Its version stamp is its hack/make-binaries.sh's.
build_krew() {
  local t0
  t0=$(date +%s)
  scratch "$krew_key"
  fetch_module_src sigs.k8s.io/krew "$KREW_VERSION" "$work"
  build_tool "$krew_key" krew ./cmd/krew \
    "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" "$KREW_VERSION" "$t0"
}

# build_node: one go build per module, into a directory renamed when all succeeded.
build_node() {
  local t0 tmp k8s_ldflags
  t0=$(date +%s)
  mkdir -p "$cache_root/$node_key"
  tmp=$(mktemp -d "$cache_root/$node_key/bin.tmp.XXXXXX")
  # shellcheck disable=SC2064 # expand now
  trap "rm -rf '$tmp'" EXIT
  mkdir -p "$tmp/cni"
  k8s_ldflags=$(k8s_version_ldflags)
  log "go build kubelet kube-proxy"
  (cd "$LAB_ROOT/build/k8s" && go build -trimpath -tags "$K8S_TAGS" -ldflags "$k8s_ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy) || die "building kubelet and kube-proxy failed"
  log "go build containerd $CONTAINERD_VERSION"
  local cm=github.com/containerd/containerd/v2
  (cd "$LAB_ROOT/build/containerd" && go build -trimpath -ldflags "-s -w -X $cm/version.Version=$CONTAINERD_VERSION" \
    -o "$tmp/" "$cm/cmd/containerd" "$cm/cmd/containerd-shim-runc-v2" "$cm/cmd/ctr") || die "building containerd failed"
  log "go build the CNI plugins $CNI_PLUGINS_VERSION"
  local pm=github.com/containernetworking/plugins/plugins
  (cd "$LAB_ROOT/build/cni" && go build -trimpath -ldflags "-s -w" -o "$tmp/cni/" \
    "$pm/main/bridge" "$pm/ipam/host-local" "$pm/main/loopback") || die "building the CNI plugins failed"
  log "go build CoreDNS $COREDNS_VERSION"
  (cd "$LAB_ROOT/build/coredns" && go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .) || die "building CoreDNS failed"
  rm -rf "$node_dir"
  mv "$tmp" "$node_dir"
  trap - EXIT
  printf 'key=%s\nbuilt=%s\nseconds=%s\n' "$node_key" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(( $(date +%s) - t0 ))" > "$cache_root/$node_key/complete"
  log "node binaries built in $(( $(date +%s) - t0 ))s: $node_dir"
}

# k8s_version_ldflags: version stamping as in hack/lib/version.sh. The build date is the
# release's publication time from the module proxy, so builds are reproducible.
k8s_version_ldflags() {
  local info date minor kv flags="-s -w"
  info=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p')
  date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info")
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  for kv in "gitVersion=$K8S_VERSION" "gitMajor=1" "gitMinor=$minor" "gitTreeState=clean" \
            "buildDate=${date:-1970-01-01T00:00:00Z}"; do
    flags+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
  done
  echo "$flags"
}

case $mode in
  print-node)
    node_complete || die "the node's binaries ($node_key) are not built yet (run lab/build.sh --node)"
    echo "$node_dir"
    exit 0
    ;;
  node)
    if node_complete; then log "cached: $node_dir"; else build_node; fi
    echo "$node_dir"
    exit 0
    ;;
  print)
    complete || die "binaries for $key are not built yet (run lab/build.sh)"
    echo "$bin_dir"
    exit 0
    ;;
  print-operator)
    op_complete || die "the operator ($op_key) is not built yet (run lab/build.sh)"
    echo "$op_bin"
    exit 0
    ;;
  print-jaeger)
    jaeger_complete || die "Jaeger ($jaeger_key) is not built yet (run lab/build.sh --jaeger)"
    echo "$jaeger_bin"
    exit 0
    ;;
  jaeger)
    if jaeger_complete; then log "cached: $jaeger_bin"; else build_jaeger; fi
    echo "$jaeger_bin"
    exit 0
    ;;
  print-helm)
    helm_complete || die "Helm ($helm_key) is not built yet (run lab/build.sh --helm)"
    echo "$helm_bin"
    exit 0
    ;;
  helm)
    if helm_complete; then log "cached: $helm_bin"; else build_helm; fi
    echo "$helm_bin"
    exit 0
    ;;
  print-actionlint)
    actionlint_complete || die "actionlint ($actionlint_key) is not built yet (run lab/build.sh --actionlint)"
    echo "$actionlint_bin"
    exit 0
    ;;
  actionlint)
    if actionlint_complete; then log "cached: $actionlint_bin"; else build_actionlint; fi
    echo "$actionlint_bin"
    exit 0
    ;;
  print-krew)
    krew_complete || die "krew ($krew_key) is not built yet (run lab/build.sh --krew)"
    echo "$krew_bin"
    exit 0
    ;;
  krew)
    if krew_complete; then log "cached: $krew_bin"; else build_krew; fi
    echo "$krew_bin"
    exit 0
    ;;
esac
if [[ $mode == build || $mode == operator ]] && complete && op_complete; then
  log "cached: $bin_dir, $op_bin"
  if [[ $mode == operator ]]; then echo "$op_bin"; else echo "$bin_dir"; fi
  exit 0
fi

# The operator: one go build of lab/build/operator (its go.mod and go.sum are kept
# in the repo, written by hand), into a temporary directory renamed when done.
build_operator() {
  local t0 tmp
  t0=$(date +%s)
  mkdir -p "$cache_root/$op_key"
  tmp=$(mktemp -d "$cache_root/$op_key/bin.tmp.XXXXXX")
  log "go build the operator into $op_bin"
  if ! (cd "$OP_SRC" && go build -trimpath -ldflags "-s -w" -o "$tmp/ripple-lab-operator" .); then
    rm -rf "$tmp"
    die "building the operator ($OP_SRC) failed"
  fi
  rm -rf "${cache_root:?}/$op_key/bin"
  mv "$tmp" "$cache_root/$op_key/bin"
  printf 'key=%s\nbuilt=%s\nseconds=%s\n' "$op_key" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(( $(date +%s) - t0 ))" > "$cache_root/$op_key/complete"
  log "operator built in $(( $(date +%s) - t0 ))s"
}

if [[ $mode == build || $mode == operator ]] && complete; then
  op_complete || build_operator
  if [[ $mode == operator ]]; then echo "$op_bin"; else echo "$bin_dir"; fi
  exit 0
fi

# ---------------------------------------------------------------------------------
# Wrapper modules. Each lab/build/<name>/go.mod is generated from the pinned upstream
# go.mod (read from the module cache) and kept with its go.sum in the repo. It is
# regenerated when the pinned version changes (or on --regen).

mod_file() { # module@version -> path of its go.mod in the module cache
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p'
}

# True if lab/build/$1/go.mod exists and pins $2 at version $3.
pinned() { [[ -f "$LAB_ROOT/build/$1/go.mod" ]] && grep -qE "^(require)?[[:space:]]*$2 $3( |$)" "$LAB_ROOT/build/$1/go.mod"; }

tidy() { # dir
  (cd "$1" && rm -f go.sum && go mod tidy) || die "go mod tidy failed in $1"
}

gen_k8s() {
  local dir="$LAB_ROOT/build/k8s" upstream staging_ver go_line godebug
  log "generating $dir/go.mod for k8s.io/kubernetes $K8S_VERSION"
  upstream=$(mod_file "k8s.io/kubernetes@$K8S_VERSION")
  [[ -f $upstream ]] || die "cannot download k8s.io/kubernetes@$K8S_VERSION's go.mod"
  # v1.X.Y -> v0.X.Y: the published tag of every staging repo.
  staging_ver="v0.${K8S_VERSION#v1.}"
  go_line=$(grep -m1 '^go ' "$upstream")
  godebug=$(grep '^godebug ' "$upstream" || true)
  {
    echo "// Generated by lab/build.sh from k8s.io/kubernetes@$K8S_VERSION's go.mod. Do not edit."
    echo "// Each staging module that k8s.io/kubernetes requires as v0.0.0 (and replaces by"
    echo "// ./staging/src/...) is replaced here by its published version $staging_ver."
    echo "module ripple.local/lab/k8s"
    echo
    echo "$go_line"
    [[ -z $godebug ]] || { echo; echo "$godebug"; }
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    local c
    for c in "${K8S_CMDS[@]}" kubelet kube-proxy; do echo "tool k8s.io/kubernetes/cmd/$c"; done
    echo
    echo "replace ("
    # Lines like: k8s.io/api => ./staging/src/k8s.io/api
    sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*#\t\1 => \1 '"$staging_ver"'#p' "$upstream"
    echo ")"
  } > "$dir/go.mod"
  grep -q ' => k8s.io/api ' "$dir/go.mod" || die "found no staging replacements in $upstream"
  tidy "$dir"
}

gen_etcd() {
  local dir="$LAB_ROOT/build/etcd" upstream go_line
  log "generating $dir/go.mod for go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  upstream=$(mod_file "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
  [[ -f $upstream ]] || die "cannot download go.etcd.io/etcd/server/v3@$ETCD_VERSION's go.mod"
  go_line=$(grep -m1 '^go ' "$upstream")
  {
    echo "// Generated by lab/build.sh. Do not edit. etcd's own go.mod replaces its sibling"
    echo "// modules by relative paths; here they are required at the same published version."
    echo "module ripple.local/lab/etcd"
    echo
    echo "$go_line"
    echo
    echo "require ("
    local m
    for m in server/v3 api/v3 client/pkg/v3 client/v3 pkg/v3; do
      echo "	go.etcd.io/etcd/$m $ETCD_VERSION"
    done
    echo ")"
  } > "$dir/go.mod"
  tidy "$dir"
}

gen_kwok() {
  local dir="$LAB_ROOT/build/kwok" upstream go_line
  log "generating $dir/go.mod for sigs.k8s.io/kwok $KWOK_VERSION"
  upstream=$(mod_file "sigs.k8s.io/kwok@$KWOK_VERSION")
  [[ -f $upstream ]] || die "cannot download sigs.k8s.io/kwok@$KWOK_VERSION's go.mod"
  if grep -q '^replace' "$upstream"; then
    die "sigs.k8s.io/kwok@$KWOK_VERSION's go.mod has replace directives; lab/build.sh must copy them"
  fi
  go_line=$(grep -m1 '^go ' "$upstream")
  {
    echo "// Generated by lab/build.sh. Do not edit."
    echo "module ripple.local/lab/kwok"
    echo
    echo "$go_line"
    echo
    echo "require sigs.k8s.io/kwok $KWOK_VERSION"
    echo
    echo "tool sigs.k8s.io/kwok/cmd/kwok"
  } > "$dir/go.mod"
  tidy "$dir"
}

if [[ $mode == regen ]] || ! pinned k8s k8s.io/kubernetes "$K8S_VERSION"; then gen_k8s; fi
if [[ $mode == regen ]] || ! pinned etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"; then gen_etcd; fi
if [[ $mode == regen ]] || ! pinned kwok sigs.k8s.io/kwok "$KWOK_VERSION"; then gen_kwok; fi

# ---------------------------------------------------------------------------------
# Build into a temporary directory beside the final one; rename when all succeeded.
mkdir -p "$cache_root/$key"
tmp_bin=$(mktemp -d "$cache_root/$key/bin.tmp.XXXXXX")
trap 'rm -rf "$tmp_bin"' EXIT
log "building $key ($(nproc) cores) into $bin_dir"
start=$(date +%s)

k8s_ldflags=$(k8s_version_ldflags)

t0=$(date +%s)
pkgs=()
for c in "${K8S_CMDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
log "go build ${K8S_CMDS[*]} (one invocation)"
(cd "$LAB_ROOT/build/k8s" && go build -trimpath -tags "$K8S_TAGS" -ldflags "$k8s_ldflags" -o "$tmp_bin/" "${pkgs[@]}") \
  || die "building Kubernetes $K8S_VERSION failed"
log "kubernetes built in $(( $(date +%s) - t0 ))s"

t0=$(date +%s)
log "go build etcd"
(cd "$LAB_ROOT/build/etcd" && go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" -o "$tmp_bin/etcd" .) \
  || die "building etcd $ETCD_VERSION failed"
log "etcd built in $(( $(date +%s) - t0 ))s"

t0=$(date +%s)
log "go build kwok"
(cd "$LAB_ROOT/build/kwok" && go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" -o "$tmp_bin/kwok" sigs.k8s.io/kwok/cmd/kwok) \
  || die "building kwok $KWOK_VERSION failed"
log "kwok built in $(( $(date +%s) - t0 ))s"
kwok_src=$(cd "$LAB_ROOT/build/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) || die "cannot find kwok's source"
for f in "${KWOK_STAGES[@]}"; do
  [[ -f "$kwok_src/kustomize/stage/$f" ]] || die "kwok $KWOK_VERSION has no stage $f"
  echo "---"
  echo "# from sigs.k8s.io/kwok@$KWOK_VERSION kustomize/stage/$f"
  cat "$kwok_src/kustomize/stage/$f"
done > "$tmp_bin/kwok-stages.yaml"

rm -rf "$bin_dir"
mv "$tmp_bin" "$bin_dir"
trap - EXIT
{
  echo "key=$key"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "seconds=$(( $(date +%s) - start ))"
} > "$cache_root/$key/complete"
log "done in $(( $(date +%s) - start ))s: $bin_dir"
if [[ $mode == force ]] || ! op_complete; then build_operator; fi
if [[ $mode == operator ]]; then echo "$op_bin"; else echo "$bin_dir"; fi
