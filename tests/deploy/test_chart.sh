#!/usr/bin/env bash
# test_chart.sh - the Helm chart (deploy/helm/ripple) on the lab, through Helm itself
# (lab/build.sh --helm, built from the Go module proxy):
#  1. it lints (strict) with its defaults and every ci/*-values.yaml, and values that
#     are wrong (a misspelt key, a bad URL, a port out of range) are refused;
#     cert-manager makes the certificate exactly when the cluster serves it;
#  2. for each of those value sets, every object it renders is accepted by the lab's
#     API server in a server-side dry run (CEL match conditions compiled, RBAC,
#     probes, the Job, all of it); cert-manager's and the Prometheus Operator's kinds
#     are left out there, since the lab serves no such CRDs, and only rendered;
#  3. the committed manifests (deploy/manifests/ripple.yaml) are what the chart
#     renders today;
#  4. `helm install` and `helm uninstall` for real: the registration is created
#     last and disabled (ripple-guard-off), and deleted first on uninstall, judged by
#     the resourceVersions of the API server's own watch events. The lab's KWOK nodes
#     "run" the Pods (nothing starts; the install hook's Job is completed by KWOK), and
#     the registration points at a loopback port where nothing listens, so the API
#     server never calls anything.
# Needs the lab up and its environment (eval "$(lab/lab env)").
set -euo pipefail

src=${RIPPLE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
chart=$src/deploy/helm/ripple
helm=$("$src/lab/build.sh" --print-helm)
kubectl() { "$src/lab/lab" kubectl "$@"; }
work=$(mktemp -d /tmp/ripple-chart-test.XXXXXX)
# Helm's own caches and settings stay in the test's directory.
export HELM_CACHE_HOME=$work/cache HELM_CONFIG_HOME=$work/config HELM_DATA_HOME=$work/data
sfx=$(printf "%04x%04x" "$RANDOM" "$RANDOM")
ns=rt-helm-$sfx
rel=rt$sfx
fails=0
cleanup() {
  "$helm" uninstall "$rel" -n "$ns" >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

values_sets=("" "$chart"/ci/*-values.yaml)
vflag() { [[ -z $1 ]] || printf -- '--values\n%s\n' "$1"; }

# 1. Lint.
for v in "${values_sets[@]}"; do
  mapfile -t vf < <(vflag "$v")
  name=${v##*/}
  if out=$("$helm" lint --strict "$chart" "${vf[@]}" 2>&1); then ok "lint ${name:-defaults}"
  else fail "helm lint ${v:-(defaults)}: $out"; fi
done
for bad in webhook.replica=3 server.otlpEndpoint=ftp://x guard.port=70000 logLevel=loud \
  webhook.maxAncestors=64; do
  if "$helm" lint --strict "$chart" --set "$bad" >/dev/null 2>&1; then
    fail "helm lint accepted --set $bad"
  else ok "lint refuses --set $bad"; fi
done

# cert-manager by default exactly when the cluster serves it (certs.certManager.enabled
# auto): a Certificate and the CA injector's annotation, and no certificate from the hook.
cm() { "$helm" template "$rel" "$chart" "$@" | grep -c "$pattern" || true; }
pattern='^kind: Certificate$'
if [[ $(cm) == 0 && $(cm --api-versions cert-manager.io/v1) == 2 &&
  $(cm --api-versions cert-manager.io/v1 --set certs.certManager.enabled=false) == 0 ]]; then
  ok "cert-manager used when served (auto)"
else fail "certs.certManager.enabled=auto does not follow cert-manager.io/v1"; fi
pattern='^        - --tls-secret='
if [[ $(cm) == 1 && $(cm --api-versions cert-manager.io/v1) == 0 ]]; then
  ok "the hook makes the certificate only without cert-manager"
else fail "the hook's --tls-secret does not follow cert-manager"; fi
if "$helm" lint --strict "$chart" --set certs.certManager.enabled=maybe >/dev/null 2>&1; then
  fail "helm lint accepted certs.certManager.enabled=maybe"
else ok "lint refuses certs.certManager.enabled=maybe"; fi

# 2. Server-side dry run of everything rendered, per value set.
kubectl create namespace "$ns" >/dev/null
keep_served() { # drop documents of kinds the lab does not serve
  awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" }
       !/\napiVersion: (cert-manager\.io|monitoring\.coreos\.com)\// && /\nkind: /'
}
for v in "${values_sets[@]}"; do
  mapfile -t vf < <(vflag "$v")
  name=${v##*/}
  "$helm" template "$rel" "$chart" --namespace "$ns" "${vf[@]}" >"$work/all.yaml"
  # "---" at the start too, so every document is found by the record separator.
  { echo; echo "---"; cat "$work/all.yaml"; } | keep_served >"$work/served.yaml"
  want=$(grep -c '^kind: ' "$work/served.yaml")
  got=$(kubectl apply --dry-run=server -f "$work/served.yaml" -o name 2>"$work/err" | wc -l) || true
  if [[ $got -eq $want && ! -s $work/err ]]; then ok "dry run ${name:-defaults}: $got objects"
  else fail "dry run ${name:-defaults}: $got of $want accepted: $(cat "$work/err")"; fi
  if grep -q 'PRIVATE KEY\|^kind: Secret' "$work/all.yaml"; then
    fail "${name:-defaults} renders a Secret or a key"
  fi
done

# 3. The committed plain manifests are the chart's current rendering.
if diff -u "$src/deploy/manifests/ripple.yaml" <("$src/deploy/render-manifests" --stdout 2>/dev/null) \
  >"$work/diff"; then ok "deploy/manifests/ripple.yaml is up to date"
else fail "deploy/manifests/ripple.yaml differs from the chart (run deploy/render-manifests): $(head -40 "$work/diff")"; fi

# 4. Install and uninstall order, by the API server's watch events.
events() { # events KIND NAME NS OUT: ADDED/DELETED events with their resourceVersions
  local nsflag=()
  [[ -z $3 ]] || nsflag=(-n "$3")
  kubectl get "$1" "${nsflag[@]}" --field-selector "metadata.name=$2" --watch-only \
    --output-watch-events -o 'jsonpath={.type} {.object.metadata.resourceVersion}{"\n"}' \
    >"$4" 2>/dev/null &
}
rv_of() { awk -v t="$1" '$1 == t { print $2; exit }' "$2"; }
events mutatingwebhookconfigurations "$rel-webhook" "" "$work/reg.events"
events deployments "$rel-webhook" "$ns" "$work/dep.events"
events statefulsets "$rel-server" "$ns" "$work/sts.events"
sleep 2 # the watches are established
if ! out=$("$helm" install "$rel" "$chart" -n "$ns" --timeout 180s \
  --set webhook.url=https://127.0.0.1:1/mutate --set "webhook.namespaces={$ns-none}" 2>&1); then
  fail "helm install: $out"
else
  ok "helm install"
  conds=$(kubectl get mutatingwebhookconfiguration "$rel-webhook" \
    -o 'jsonpath={.webhooks[0].matchConditions[*].name}')
  if [[ " $conds " == *" ripple-guard-off "* ]]; then ok "registration installed disabled"
  else fail "registration installed without ripple-guard-off: $conds"; fi
  # Upgrade: unchanged values, nothing breaks, still disabled (no guard runs here).
  if out=$("$helm" upgrade "$rel" "$chart" -n "$ns" --reuse-values --timeout 180s 2>&1); then
    ok "helm upgrade"; else fail "helm upgrade: $out"; fi
  if out=$("$helm" uninstall "$rel" -n "$ns" --wait --timeout 180s 2>&1); then
    ok "helm uninstall"; else fail "helm uninstall: $out"; fi
  sleep 2
  reg_add=$(rv_of ADDED "$work/reg.events") reg_del=$(rv_of DELETED "$work/reg.events")
  dep_add=$(rv_of ADDED "$work/dep.events") dep_del=$(rv_of DELETED "$work/dep.events")
  sts_add=$(rv_of ADDED "$work/sts.events") sts_del=$(rv_of DELETED "$work/sts.events")
  echo "# resourceVersions: registration +$reg_add -$reg_del, webhook +$dep_add -$dep_del, server +$sts_add -$sts_del"
  if [[ -n $reg_add && -n $dep_add && -n $sts_add ]] && ((reg_add > dep_add && reg_add > sts_add)); then
    ok "registration created after the workloads"
  else fail "install order: registration $reg_add, webhook $dep_add, server $sts_add"; fi
  if [[ -n $reg_del && -n $dep_del && -n $sts_del ]] && ((reg_del < dep_del && reg_del < sts_del)); then
    ok "registration deleted before the workloads"
  else fail "uninstall order: registration $reg_del, webhook $dep_del, server $sts_del"; fi
fi

if ((fails)); then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all chart checks passed"
