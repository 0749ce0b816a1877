#!/usr/bin/env bash
# bench-webhook-auth.sh: what checking the client's certificate (ripple-webhook
# --client-ca, --client-name; docs/webhook.md "Client authentication") costs an
# admission, on the lab's certificates (no cluster needed beyond `lab/lab up` once, which
# makes them).
#
# Usage: bench/bench-webhook-auth.sh [--requests N] [--runs R] [--build DIR]
#   --requests N  AdmissionReviews per run, on one kept-alive connection (default 2000)
#   --runs R      runs of each arm, interleaved (default 3); medians are printed
#   --build DIR   the build whose bin/ripple-webhook runs (default build/release)
#
# Three arms, each a fresh ripple-webhook --no-informers on 127.0.0.1:0: "off" (no
# client authentication), "ca" (--client-ca, the lab's webhook client CA) and "names"
# (--client-ca --client-name kube-apiserver). curl posts the same controller's
# ConfigMap update N times on one connection with the lab API servers' client
# certificate, as kube-apiserver keeps its connections to a webhook alive; each
# request's time_total is kept. Prints each arm's median of the runs' p50, p90 and mean.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
requests=2000 runs=3 build="$root/build/release"
while (($#)); do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-webhook-auth: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ $requests =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench-webhook-auth: --requests and --runs want positive numbers" >&2; exit 2; }
set -a
eval "$("$root/lab/lab" env)"
set +a
for v in RIPPLE_LAB_WEBHOOK_CLIENT_CA RIPPLE_LAB_WEBHOOK_CLIENT_CERT RIPPLE_LAB_WEBHOOK_CERT; do
  [[ -r ${!v} ]] || { echo "bench-webhook-auth: ${!v} is missing (lab/lab up once)" >&2; exit 1; }
done
bin=$build/bin/ripple-webhook
[[ -x $bin ]] || { echo "bench-webhook-auth: no $bin (build it)" >&2; exit 1; }

work=$(mktemp -d /tmp/ripple-bench-auth-XXXXXX)
pid=""
cleanup() {
  [[ -z $pid ]] || kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/body.json" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},"namespace":"d","name":"x","operation":"UPDATE","userInfo":{"username":"system:serviceaccount:kube-system:bench"},"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"d"}},"oldObject":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"d"}},"dryRun":false}}
JSON

# one_run ARM: p50 p90 mean in microseconds.
one_run() {
  local args=() port="" url
  case $1 in
    ca) args=(--client-ca "$RIPPLE_LAB_WEBHOOK_CLIENT_CA") ;;
    names) args=(--client-ca "$RIPPLE_LAB_WEBHOOK_CLIENT_CA" --client-name kube-apiserver) ;;
  esac
  "$bin" --listen 127.0.0.1:0 --no-informers --tls-cert "$RIPPLE_LAB_WEBHOOK_CERT" \
    --tls-key "$RIPPLE_LAB_WEBHOOK_KEY" ${args[@]+"${args[@]}"} 2>"$work/webhook.log" &
  pid=$!
  port=$(port_of "$work/webhook.log" "$pid") || { echo "bench-webhook-auth: the webhook did not start" >&2; exit 1; }
  url="https://127.0.0.1:$port/mutate"
  for ((i = 0; i < requests; i++)); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done >"$work/urls"
  curl -sS --cacert "$RIPPLE_LAB_CA" --cert "$RIPPLE_LAB_WEBHOOK_CLIENT_CERT" \
    --key "$RIPPLE_LAB_WEBHOOK_CLIENT_KEY" -H 'Content-Type: application/json' \
    --data-binary @"$work/body.json" -w '%{http_code} %{time_total}\n' \
    -K "$work/urls" >"$work/times"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  if grep -qv '^200 ' "$work/times"; then
    echo "bench-webhook-auth: $1: not every answer was 200: $(grep -v '^200 ' "$work/times" | sort | uniq -c | head -3)" >&2
    exit 1
  fi
  awk '{print $2 * 1e6}' "$work/times" | sort -n |
    awk '{v[NR] = $1; s += $1} END {printf "%.0f %.0f %.0f\n", v[int(NR / 2) + 1], v[int(NR * 0.9)], s / NR}'
}

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

for r in $(seq "$runs"); do
  for arm in off ca names; do one_run "$arm" >>"$work/$arm"; done
  echo "bench-webhook-auth: run $r of $runs done" >&2
done
printf '%-6s %8s %8s %8s   (us per AdmissionReview, %d on one connection, median of %d runs)\n' \
  arm p50 p90 mean "$requests" "$runs"
for arm in off ca names; do
  printf '%-6s %8s %8s %8s\n' "$arm" "$(cut -d' ' -f1 "$work/$arm" | median)" \
    "$(cut -d' ' -f2 "$work/$arm" | median)" "$(cut -d' ' -f3 "$work/$arm" | median)"
done
