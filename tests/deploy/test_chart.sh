#!/usr/bin/env bash
# test_chart.sh - the Helm chart (deploy/helm/ripple) on the lab, through Helm itself
# (lab/build.sh --helm, built from the Go module proxy):
#  1. it lints (strict) with its defaults, every ci/*-values.yaml and the lab's
#     real-node values (lab/node/ripple-values.yaml), and values that are wrong (a
#     misspelt key, a bad URL, a port out of range) are refused;
#     cert-manager makes the certificate exactly when the cluster serves it;
#  2. for each of those value sets, every object it renders is accepted by the lab's
#     API server in a server-side dry run (CEL match conditions compiled, RBAC,
#     probes, the Job, all of it); cert-manager's and the Prometheus Operator's kinds
#     are left out there, since the lab serves no such CRDs, and only rendered;
#  1b. the Grafana dashboard's ConfigMap (grafana.dashboard.*): none by default, the
#     dashboard's JSON as it is, with the sidecar's label;
#  3. the committed manifests (deploy/manifests/ripple.yaml) are what the chart
#     renders today;
#  3b. least privilege, by the lab's authorizer: the rendered RBAC objects applied
#     for real, then `kubectl auth can-i` as each ServiceAccount: none may read
#     Secrets; the webhook may list and watch Pods and every owner kind, the
#     custom resources of webhook.ownerKinds included;
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
  [[ ! -s $work/rbac.yaml ]] || kubectl delete -f "$work/rbac.yaml" --ignore-not-found \
    --wait=false >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# The lab's real-node values (lab/node/ripple-values.yaml) too: every part placed.
values_sets=("" "$chart"/ci/*-values.yaml "$src/lab/node/ripple-values.yaml")
vflag() { [[ -z $1 ]] || printf -- '--values\n%s\n' "$1"; }

# 1. Lint.
for v in "${values_sets[@]}"; do
  mapfile -t vf < <(vflag "$v")
  name=${v##*/}
  if out=$("$helm" lint --strict "$chart" "${vf[@]}" 2>&1); then ok "lint ${name:-defaults}"
  else fail "helm lint ${v:-(defaults)}: $out"; fi
done
for bad in webhook.replica=3 server.otlpEndpoint=ftp://x guard.port=70000 logLevel=loud \
  webhook.maxAncestors=64 webhook.readRules=x 'webhook.ownerKinds[0].kind=widget' \
  certs.renewBeforeDays=0 webhook.clientAuth.caBundle=not-pem grafana.dashboard.enable=true \
  grafana.dashboard.namespace=Monitoring; do
  if "$helm" lint --strict "$chart" --set "$bad" >/dev/null 2>&1; then
    fail "helm lint accepted --set $bad"
  else ok "lint refuses --set $bad"; fi
done

# cert-manager by default exactly when the cluster serves it (certs.certManager.enabled
# auto): a Certificate and the CA injector's annotation, and no certificate from the hook.
cm() { "$helm" template "$rel" "$chart" "$@" | grep -c "$pattern" || true; }
pattern='^kind: Certificate$'
if [[ $(cm) == 0 && $(cm --api-versions cert-manager.io/v1) == 3 &&
  $(cm --api-versions cert-manager.io/v1 --set certs.certManager.enabled=false) == 0 ]]; then
  ok "cert-manager used when served (auto)"
else fail "certs.certManager.enabled=auto does not follow cert-manager.io/v1"; fi
pattern='^        - --tls-secret='
if [[ $(cm) == 2 && $(cm --api-versions cert-manager.io/v1) == 0 ]]; then
  ok "the hook makes the certificate only without cert-manager"
else fail "the hook's --tls-secret does not follow cert-manager"; fi
if "$helm" lint --strict "$chart" --set certs.certManager.enabled=maybe >/dev/null 2>&1; then
  fail "helm lint accepted certs.certManager.enabled=maybe"
else ok "lint refuses certs.certManager.enabled=maybe"; fi

# Values the schema cannot compare are refused when rendering (helm lint only logs a
# template's fail), before any install hook runs, saying what to change.
refuses() { # refuses WORDS --set ...: helm template fails and says WORDS
  local words=$1 out
  shift
  if out=$("$helm" template "$rel" "$chart" "$@" 2>&1); then fail "helm template accepted $*"
  elif [[ $out != *"$words"* ]]; then fail "helm template $*: no \"$words\" in: $out"
  else ok "template refuses $*"; fi
}
refuses "must be less than certs.days" --set certs.days=20
refuses "must be less than certs.days" --set certs.days=60 --set certs.renewBeforeDays=60
refuses "needs webhook.clientAuth.caBundle or" --set webhook.clientAuth.enabled=true
refuses "needs webhook.clientAuth.guardCertSecret" --set webhook.clientAuth.enabled=true \
  --set webhook.clientAuth.caSecret=apiserver-ca
if "$helm" template "$rel" "$chart" --set certs.days=20 --set certs.renewBeforeDays=5 >/dev/null; then
  ok "certs.days=20 with certs.renewBeforeDays=5 renders"
else fail "certs.days=20 certs.renewBeforeDays=5 refused"; fi

# Every Secret volume is 0440 (288), never the kubelet's default 0644.
"$helm" template "$rel" "$chart" --set watch.enabled=true \
  --set webhook.clientAuth.enabled=true --set webhook.clientAuth.caSecret=apiserver-ca \
  --set webhook.clientAuth.guardCertSecret=guard-client >"$work/all.yaml"
vols=$(grep -cE '^ +(secret|projected):$' "$work/all.yaml" || true)
modes=$(grep -cE '^ +defaultMode: 288 # 0440' "$work/all.yaml" || true)
if [[ $vols -gt 0 && $vols == "$modes" ]]; then ok "$vols Secret volumes, all 0440"
else fail "$vols Secret volumes, $modes of them with defaultMode 0440"; fi

# The Grafana dashboard (grafana.dashboard.enabled; its queries are checked against the
# programs' metrics by test_dashboard.sh): none by default; enabled, one ConfigMap with
# the sidecar's label and the folder annotation, holding dashboards/ripple.json as it is,
# in grafana.dashboard.namespace when given.
dashdoc() { # the rendered dashboard ConfigMap, with these --set/--values
  "$helm" template "$rel" "$chart" --namespace "$ns" "$@" | { echo; echo "---"; cat; } |
    awk 'BEGIN { RS = "\n---\n" } /\nkind: ConfigMap\n/ && /component: dashboard\n/'
}
if [[ -z $(dashdoc) ]]; then ok "no dashboard ConfigMap by default"
else fail "a dashboard ConfigMap by default"; fi
doc=$(dashdoc --values "$chart/ci/grafana-values.yaml")
json=$(awk '/^  ripple.json: \|-$/ { on = 1; next } on && /^    / { print substr($0, 5); next }
            on && /^$/ { print; next } on { exit }' <<<"$doc")
if [[ -n $json && $(jq -S . <<<"$json") == "$(jq -S . "$chart/dashboards/ripple.json")" ]]; then
  ok "the dashboard ConfigMap holds dashboards/ripple.json"
else fail "the dashboard ConfigMap's ripple.json differs from dashboards/ripple.json: $doc"; fi
if [[ $doc == *$'\n    grafana_dashboard: "1"\n'* && $doc == *$'\n    grafana_folder: ripple\n'* &&
  $doc == *$'\n  namespace: '"$ns"$'\n'* ]]; then
  ok "the dashboard ConfigMap has the sidecar's label and the folder annotation"
else fail "the dashboard ConfigMap lacks its label, annotation or namespace: $doc"; fi
doc=$(dashdoc --set grafana.dashboard.enabled=true --set grafana.dashboard.namespace=monitoring)
if [[ $doc == *$'\n  namespace: monitoring\n'* ]]; then
  ok "grafana.dashboard.namespace places the ConfigMap"
else fail "grafana.dashboard.namespace=monitoring: $doc"; fi

# docs/certs.md names exactly the Secrets the chart's hook makes (release ripple): in
# the hook's command it shows and in its Role's resourceNames.
hook=$("$helm" template ripple "$chart" -n ripple-system |
  sed -n 's/^ *- --\(tls\|token\)-secret=\(.*\)$/\2/p' | sort -u | tr '\n' ' ')
cmd=$(sed -n '/^ripple certs --namespace/,/^```/p' "$src/docs/certs.md" |
  grep -oE -- '--(tls|token)-secret [a-z0-9-]+' | awk '{ print $2 }' | sort -u | tr '\n' ' ')
role=$(sed -n '/resourceNames: \[/,/\]/p' "$src/docs/certs.md" | tr -d '[],' |
  sed 's/resourceNames://' | tr -s ' \n' '\n' | grep . | sort -u | tr '\n' ' ')
if [[ $cmd == "$hook" && $role == "$hook" ]]; then ok "docs/certs.md names the hook's Secrets: $hook"
else fail "docs/certs.md: command [$cmd], Role [$role]; the chart's hook makes [$hook]"; fi

# The install hook's Job is placed like every other part (certs.nodeSelector,
# .tolerations, .affinity): on a cluster where only some nodes can run ripple (the
# lab's real node beside KWOK's), a hook Job scheduled elsewhere never completes and
# the install waits on it. Matched at the Job's pod spec indentation.
cat >"$work/placed.yaml" <<'EOF2'
certs:
  nodeSelector: {type: real}
  tolerations: [{key: ripple.lab/real-node, operator: Exists, effect: NoSchedule}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
EOF2
job=$("$helm" template "$rel" "$chart" -f "$work/placed.yaml" |
  awk 'BEGIN { RS = "\n---\n" } /\nkind: Job\n/')
if [[ $job == *$'\n      nodeSelector:\n        type: real\n'* &&
  $job == *$'\n      tolerations:\n        - effect: NoSchedule\n          key: ripple.lab/real-node\n          operator: Exists\n'* &&
  $job == *$'\n      affinity:\n        nodeAffinity:\n'* ]]; then
  ok "the certs hook's Job takes certs.nodeSelector, .tolerations and .affinity"
else fail "the certs hook's Job lacks its placement values: $job"; fi

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

# 3b. Least privilege, by the lab's own authorizer: the rendered ServiceAccounts,
# roles and bindings of a release of their own (its ClusterRoles are the cluster's
# until the end), with an owner kind of an operator's.
prel=${rel}p
pdoc() { # the rendered documents of RBAC kinds only
  "$helm" template "$prel" "$chart" --namespace "$ns" --set watch.enabled=true \
    --set 'webhook.ownerKinds[0].group=example.com,webhook.ownerKinds[0].resource=widgets' \
    --set 'webhook.ownerKinds[0].kind=Widget' | { echo; echo "---"; cat; } |
    awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" }
         /\nkind: (ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)\n/'
}
pdoc >"$work/rbac.yaml"
rbac_cleanup() {
  kubectl delete -f "$work/rbac.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
if ! out=$(kubectl apply -f "$work/rbac.yaml" 2>&1); then fail "applying the RBAC objects: $out"
else
  can() { # can WANT SA VERB RESOURCE [NS]: kubectl auth can-i answers WANT
    local want=$1 sa=$2 verb=$3 res=$4 where=(-A) got
    [[ -z ${5:-} ]] || where=(-n "$5")
    got=$(kubectl auth can-i "$verb" "$res" "${where[@]}" \
      --as="system:serviceaccount:$ns:$prel-$sa" 2>/dev/null || true)
    if [[ $got == "$want" ]]; then ok "$sa: can-i $verb $res ${where[*]}: $got"
    else fail "$sa: can-i $verb $res ${where[*]}: $got, want $want"; fi
  }
  # The authorizer's cache follows new RBAC objects within moments.
  for _ in $(seq 50); do
    [[ $(kubectl auth can-i watch pods -A --as="system:serviceaccount:$ns:$prel-webhook" \
      2>/dev/null) == yes ]] && break
    sleep 0.2
  done
  for sa in webhook server guard watch; do
    for verb in get list watch; do
      can no "$sa" "$verb" secrets
      can no "$sa" "$verb" secrets "$ns"
      can no "$sa" "$verb" secrets default
    done
    can no "$sa" get configmaps
  done
  for res in pods services endpoints replicationcontrollers deployments.apps replicasets.apps \
    statefulsets.apps daemonsets.apps jobs.batch cronjobs.batch; do
    can yes webhook list "$res"
    can yes webhook watch "$res"
  done
  # A kind the lab does not serve: asked of the authorizer by group and resource.
  sar() { # sar WANT SA VERB GROUP RESOURCE
    local got
    got=$(kubectl create -o 'jsonpath={.status.allowed}' -f - <<EOF 2>&1
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "system:serviceaccount:$ns:$prel-$2",
          "groups": ["system:serviceaccounts", "system:serviceaccounts:$ns"],
          "resourceAttributes": {"verb": "$3", "group": "$4", "resource": "$5"}}}
EOF
    )
    [[ $got == true ]] && got=yes || got=no
    if [[ $got == "$1" ]]; then ok "$2: may $3 $5.$4: $got"
    else fail "$2: may $3 $5.$4: $got, want $1"; fi
  }
  sar yes webhook list example.com widgets
  sar yes webhook watch example.com widgets
  sar no webhook list example.com gadgets
  sar no server list example.com widgets
  can no webhook create pods default
  can yes webhook update leases.coordination.k8s.io/"$prel"-webhook-decider "$ns"
  can no webhook update leases.coordination.k8s.io/other "$ns"
fi
rbac_cleanup

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
