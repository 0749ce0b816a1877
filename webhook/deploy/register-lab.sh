#!/usr/bin/env bash
# register-lab.sh: register ripple-webhook with the lab (by loopback URL).
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
list=$(printf '"%s",' "${ns[@]}")
sed -e "s|@NAME@|$name|g" -e "s|@URL@|https://127.0.0.1:$port/mutate|" \
    -e "s|@CA_BUNDLE@|$(base64 -w0 <"$RIPPLE_LAB_CA")|" -e "s|@NAMESPACES@|${list%,}|" \
    "$here/webhook-lab.yaml" | "$lab" kubectl apply -f -
