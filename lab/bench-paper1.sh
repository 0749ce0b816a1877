#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The paper-1 scenario on the lab: create a Deployment with 10 replicas, then scale it to
# 20, 30, 40 and 50, each time waiting until all of its Pods are Ready; print each step's
# time (from the write to status.readyReplicas == N, watched by kubectl wait).
#
# Usage: lab/bench-paper1.sh [--steps "10 20 30 40 50"] [--patch] [--keep] [--timeout S]
#                            [--kubeconfig FILE] [--namespace NS] [--image IMAGE]
#   --patch       scale with a patch of spec.replicas on the Deployment itself instead of
#                 the scale subresource (kubectl scale)
#   --keep        leave the namespace behind (default: delete it)
#   --kubeconfig  any cluster (default: the lab's, lab/lab kubeconfig)
#   --image       the Pods' image (default ripple.invalid/noop:1: never pulled on KWOK nodes)
# Output: one line per step, "step N: create|scale to R replicas: S.sss s", then a total.
set -euo pipefail

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
steps="10 20 30 40 50" method=scale keep=0 timeout=300 kcfg="" ns="" image=ripple.invalid/noop:1
while (($#)); do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --patch) method="patch"; shift ;;
    --keep) keep=1; shift ;;
    --timeout) timeout=$2; shift 2 ;;
    --kubeconfig) kcfg=$2; shift 2 ;;
    --namespace) ns=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    -h | --help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-paper1: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $kcfg ]] || kcfg=$("$LAB_ROOT/lab" kubeconfig)
if bin=$("$LAB_ROOT/build.sh" --print 2>/dev/null); then kubectl="$bin/kubectl"; else kubectl=kubectl; fi
k() { "$kubectl" --kubeconfig "$kcfg" "$@"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }

[[ -n $ns ]] || ns="paper1-$(date +%s)-$$"
cleanup() { ((keep)) || k delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true; }
trap cleanup EXIT
k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns" >/dev/null
deadline=$((SECONDS + 60))
until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do
  ((SECONDS < deadline)) || { echo "bench-paper1: no default ServiceAccount in $ns after 60s" >&2; exit 1; }
  sleep 0.2
done

nodes=$(k get nodes --no-headers 2>/dev/null | grep -c ' Ready ') || true
echo "paper-1 scenario: deployment $ns/paper1, steps: $steps, scaling by $method, $nodes Ready node(s)"
i=0 total_start=$(now)
for r in $steps; do
  i=$((i + 1))
  t0=$(now)
  if ((i == 1)); then
    what="create"
    k -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: paper1
spec:
  replicas: $r
  selector:
    matchLabels: {app: paper1}
  template:
    metadata:
      labels: {app: paper1}
    spec:
      containers:
      - name: app
        image: $image
EOF
  elif [[ $method == patch ]]; then
    what="scale "
    k -n "$ns" patch deployment paper1 --type=merge -p "{\"spec\":{\"replicas\":$r}}" >/dev/null
  else
    what="scale "
    k -n "$ns" scale deployment paper1 --replicas="$r" >/dev/null
  fi
  if ! k -n "$ns" wait --for=jsonpath='{.status.readyReplicas}'="$r" deployment/paper1 --timeout="${timeout}s" >/dev/null; then
    echo "bench-paper1: step $i: timed out after ${timeout}s waiting for $r ready replicas" >&2
    k -n "$ns" get deployment paper1 -o wide >&2 || true
    exit 1
  fi
  t1=$(now)
  printf 'step %d: %s to %3d replicas: %s s\n' "$i" "$what" "$r" "$(elapsed "$t0" "$t1")"
done
printf 'total: %s s\n' "$(elapsed "$total_start" "$(now)")"
