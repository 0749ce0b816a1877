#!/usr/bin/env bash
# registration.sh: print ripple-webhook's MutatingWebhookConfiguration (YAML) from
# the one template, deploy/helm/ripple/files/registration.yaml (the Helm chart fills in the
# same file). The lab's registrations come from here (register-lab.sh, `lab/lab webhook`,
# tests/support/wh_lab.c); a cluster's from the chart (docs/install.md).
#
#   webhook/deploy/registration.sh [--name N] (--url URL | --service NS/NAME[:PORT])
#       (--ca-file F | --ca-bundle BASE64) [--namespaces NS,... | --exclude-namespaces NS,...]
#       [--resources LIST] [--failure-policy Ignore|Fail]
#
# --name          the configuration's name (default ripple-webhook); its one webhook is
#                 N.ripple.dev
# --url           the webhook by URL (the lab: https://127.0.0.1:PORT/mutate)
# --service       the webhook by Service, path /mutate, port 443 unless given
# --namespaces    only these namespaces (namespaceSelector In, and a matchCondition that
#                 also leaves out cluster-scoped objects other than Namespaces, which a
#                 namespaceSelector does not filter)
# --exclude-namespaces  every namespace but these (NotIn); the default with --service is
#                 ripple-system,kube-system; with --url and neither option, everything
# --resources     comma-separated, default */* (every resource and subresource)
# --failure-policy  Ignore (default; never change it for ripple-webhook) or Fail (lab
#                 tests of other webhooks only)
#
# A cluster: install the Helm chart (deploy/helm/ripple, docs/install.md) instead; its
# registration starts disabled until ripple-guard has seen the webhook answer.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&&' in CEL must stay as it is
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "registration.sh: $*" >&2; exit 2; }
name=ripple-webhook url="" service="" ca_file="" ca_b64="" only="" exclude="" resources='*/*'
policy=Ignore
while (($#)); do
  (($# >= 2)) || die "option $1 needs a value"
  case $1 in
    --name) name=$2 ;;
    --url) url=$2 ;;
    --service) service=$2 ;;
    --ca-file) ca_file=$2 ;;
    --ca-bundle) ca_b64=$2 ;;
    --namespaces) only=$2 ;;
    --exclude-namespaces) exclude=$2 ;;
    --resources) resources=$2 ;;
    --failure-policy) policy=$2 ;;
    *) die "unknown option '$1'" ;;
  esac
  shift 2
done
[[ $name =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "--name '$name' is not a DNS name"
[[ -n $url || -n $service ]] || die "give --url URL or --service NS/NAME"
[[ -z $url || -z $service ]] || die "--url and --service exclude each other"
[[ -z $only || -z $exclude ]] || die "--namespaces and --exclude-namespaces exclude each other"
[[ $policy == Ignore || $policy == Fail ]] || die "--failure-policy must be Ignore or Fail"
if [[ -n $ca_file ]]; then
  [[ -r $ca_file ]] || die "cannot read CA file '$ca_file'"
  ca_b64=$(base64 -w0 <"$ca_file")
fi
[[ -n $ca_b64 ]] || die "give --ca-file F or --ca-bundle BASE64"

# "a,b" -> "'a', 'b'" (CEL) or "\"a\", \"b\"" (YAML); names are checked first.
list() {
  local q=$1 out="" x
  IFS=, read -r -a xs <<<"$2"
  for x in "${xs[@]}"; do
    [[ $x =~ ^[-a-z0-9.*/]+$ ]] || die "'$x' is not a name"
    out+="$q$x$q, "
  done
  echo "${out%, }"
}

if [[ -n $url ]]; then
  client="    url: \"$url\""
else
  [[ $service =~ ^([-a-z0-9]+)/([-a-z0-9]+)(:([0-9]+))?$ ]] || die "--service must be NS/NAME[:PORT]"
  client="    service: {namespace: ${BASH_REMATCH[1]}, name: ${BASH_REMATCH[2]}, path: /mutate, port: ${BASH_REMATCH[4]:-443}}"
  [[ -n $only || -n $exclude ]] || exclude=ripple-system,kube-system
fi
extra="" selector="  namespaceSelector: {}"
sel() {
  printf '  namespaceSelector:\n    matchExpressions:\n    - {key: kubernetes.io/metadata.name, operator: %s, values: [%s]}' \
    "$1" "$(list '"' "$2")"
}
if [[ -n $only ]]; then
  selector=$(sel In "$only")
  extra="  - name: only-listed-namespaces
    expression: \"request.namespace in [$(list "'" "$only")] || (request.resource.group == '' && request.resource.resource == 'namespaces')\""
elif [[ -n $exclude ]]; then
  selector=$(sel NotIn "$exclude")
fi

t=$(<"$here/../../deploy/helm/ripple/files/registration.yaml")
t=${t//@NAME@/"$name"}
t=${t//@CLIENT_CONFIG@/"$client"}
t=${t//@CA_BUNDLE@/"    caBundle: $ca_b64"}
t=${t//@RESOURCES@/"$(list '"' "$resources")"}
t=${t//@NAMESPACE_SELECTOR@/"$selector"}
t=${t//@EXTRA_CONDITIONS@/"$extra"}
t=${t//@FAILURE_POLICY@/"$policy"}
printf '%s\n' "$t"
