#!/usr/bin/env bash
# register-lab.sh: register ripple-webhook with the lab (by loopback URL), with the
# one registration (registration.sh, from registration.yaml).
#
#   webhook/deploy/register-lab.sh [--name N] [--port P] NAMESPACE...
#   webhook/deploy/register-lab.sh --delete [--name N]
#
# The webhook must serve with the lab's $RIPPLE_LAB_WEBHOOK_CERT/_KEY on
# 127.0.0.1:P (default 8443). Only the given namespaces are traced.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lab="$here/../../lab/lab"
name=ripple-webhook port=8443 del=0 ns=()
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --delete) del=1; shift ;;
    -*) echo "register-lab.sh: unknown option $1" >&2; exit 2 ;;
    *) ns+=("$1"); shift ;;
  esac
done
if ((del)); then exec "$lab" kubectl delete mutatingwebhookconfiguration "$name" --ignore-not-found; fi
((${#ns[@]})) || { echo "register-lab.sh: name the namespaces to trace" >&2; exit 2; }
eval "$("$lab" env)"
list=$(IFS=,; echo "${ns[*]}")
"$here/registration.sh" --name "$name" --url "https://127.0.0.1:$port/mutate" \
  --ca-file "$RIPPLE_LAB_CA" --namespaces "$list" | "$lab" kubectl apply -f -
