#!/usr/bin/env bash
# test_dashboard.sh - the chart's Grafana dashboard (deploy/helm/ripple/dashboards/
# ripple.json) names only metrics that ripple's programs really emit.
#
# The emitted names come from the programs themselves, not from their sources: the real
# ripple-server, ripple-webhook and ripple-guard are started here, with no cluster, and
# their /metrics read. Every family is printed (its HELP and TYPE lines) before anything
# is observed, so an idle process shows them all:
#   - ripple-server on a fresh database, with --otlp-endpoint (a port where nothing
#     listens) so that the exporter's families are there too;
#   - ripple-webhook with --no-informers (as its unit tests run it), shipping to that
#     server, /metrics on --metrics-listen;
#   - ripple-guard with a kubeconfig whose API server does not answer (it retries, never
#     exits, and serves /metrics meanwhile).
# One family is printed only in some runs and is not on the dashboard for that reason:
# ripple_webhook_decider (only with --decider-lease, which needs a cluster).
#
# The names a dashboard uses are every metric of every panel's PromQL expression and of
# its query variables: string literals, label matchers ({...}), ranges ([...]), grouping
# clauses (by/without/on/ignoring/group_left/group_right (...)), function names,
# Grafana's $variables, durations, numbers and keywords are taken out, and what is left
# are metric names. A name ending in _bucket, _count or _sum passes when its base is a
# histogram family. As a check of that extraction itself, every ripple_* word of the
# expressions must be among the names extracted.
#
# Then the check must fail on a copy of the dashboard with a panel that names a metric
# nobody emits: the test shows it can fail.
#
# Usage: test_dashboard.sh [DASHBOARD.json]; the programs from $RIPPLE_SERVER_BIN,
# $RIPPLE_WEBHOOK_BIN, $RIPPLE_GUARD_BIN (ctest sets them). Needs curl and jq.
set -euo pipefail

src=${RIPPLE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
dash=${1:-$src/deploy/helm/ripple/dashboards/ripple.json}
: "${RIPPLE_SERVER_BIN:?RIPPLE_SERVER_BIN is needed (ctest sets it)}"
: "${RIPPLE_WEBHOOK_BIN:?RIPPLE_WEBHOOK_BIN is needed (ctest sets it)}"
: "${RIPPLE_GUARD_BIN:?RIPPLE_GUARD_BIN is needed (ctest sets it)}"
work=$(mktemp -d /tmp/ripple-dashboard-test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# port_of LOG EVENT: the port in "event=EVENT addr=127.0.0.1:PORT", once logged (the
# programs log it once listening; waited for up to 20 s).
port_of() {
  local p
  for _ in $(seq 200); do
    p=$(sed -n "s/.*event=$2 addr=127\.0\.0\.1:\([0-9]*\).*/\1/p" "$1" | head -1)
    [[ -z $p ]] || { echo "$p"; return 0; }
    sleep 0.1
  done
  echo "no event=$2 in $1: $(tail -5 "$1")" >&2
  return 1
}

# scrape URL NAME: its /metrics into $work/NAME.prom
scrape() {
  if curl -fsS --max-time 10 "$1" >"$work/$2.prom"; then
    ok "$2: $(grep -c '^# TYPE ' "$work/$2.prom") metric families"
  else fail "GET $1 ($2)"; fi
}

# 1. The programs, no cluster.
"$RIPPLE_SERVER_BIN" --listen 127.0.0.1:0 --db "$work/trace.db" --no-web \
  --otlp-endpoint http://127.0.0.1:9/v1/traces 2>"$work/server.log" &
pids+=($!)
sport=$(port_of "$work/server.log" listening)
scrape "http://127.0.0.1:$sport/metrics" server

"$RIPPLE_WEBHOOK_BIN" --listen 127.0.0.1:0 --no-informers --metrics-listen 127.0.0.1:0 \
  --trace-server "http://127.0.0.1:$sport" 2>"$work/webhook.log" &
pids+=($!)
wport=$(port_of "$work/webhook.log" metrics_listening)
scrape "http://127.0.0.1:$wport/metrics" webhook

cat >"$work/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: none, user: {token: not-a-cluster}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
EOF
"$RIPPLE_GUARD_BIN" --name ripple-webhook --listen 127.0.0.1:0 \
  --kubeconfig "$work/kubeconfig" 2>"$work/guard.log" &
pids+=($!)
gport=$(port_of "$work/guard.log" listening)
scrape "http://127.0.0.1:$gport/metrics" guard

# "name type" of every family emitted.
cat "$work"/*.prom | awk '$1 == "#" && $2 == "TYPE" { print $3, $4 }' | sort -u >"$work/families"

# 2. The dashboard's metric names.
# exprs DASHBOARD: one PromQL expression a line (panels' targets, rows' panels included,
# and query variables).
exprs() {
  jq -r '([.. | objects | select(has("targets")) | .targets[]? | .expr? | strings]
          + [.templating.list[]? | select(.type == "query")
             | .query | if type == "object" then .query else . end | strings])
         | .[] | gsub("\n"; " ")' "$1"
}
# names: the metric names of the expressions on stdin, one a line, sorted.
names() {
  sed -E \
    -e 's/"([^"\\]|\\.)*"//g' \
    -e 's/\{[^}]*\}//g' \
    -e 's/label_values\(([^,)]*)(,[^)]*)?\)/\1/g' \
    -e 's/\[[^]]*\]//g' \
    -e 's/\b(by|without|on|ignoring|group_left|group_right)[[:space:]]*\([^)]*\)//g' \
    -e 's/\$\{[A-Za-z0-9_:]*\}|\$[A-Za-z_][A-Za-z0-9_]*//g' \
    -e 's/\b[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(/(/g' \
    -e 's/\b[0-9]+(\.[0-9]+)?(ms|s|m|h|d|w|y)\b//g' \
    -e 's/\b[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?\b//g' |
    grep -oE '[A-Za-z_:][A-Za-z0-9_:]*' |
    grep -vxE 'and|or|unless|bool|offset|by|without|on|ignoring|group_left|group_right|inf|nan|Inf|NaN' |
    sort -u || true
}

# check DASHBOARD: 0 when every metric it names is emitted; prints the ones that are not.
check() {
  local name base bad=0
  exprs "$1" >"$work/exprs"
  names <"$work/exprs" >"$work/names"
  # The extraction itself: every ripple_* word of the expressions is a name found.
  grep -oE 'ripple_[a-z0-9_]+' "$work/exprs" | sort -u >"$work/words"
  if [[ -n $(comm -23 "$work/words" "$work/names") ]]; then
    echo "extraction lost: $(comm -23 "$work/words" "$work/names" | tr '\n' ' ')"
    bad=1
  fi
  while read -r name; do
    if grep -q "^$name " "$work/families"; then continue; fi
    base=${name%_bucket}
    base=${base%_count}
    base=${base%_sum}
    if [[ $base != "$name" ]] && grep -qx "$base histogram" "$work/families"; then continue; fi
    echo "not emitted: $name"
    bad=1
  done <"$work/names"
  return $bad
}

if out=$(check "$dash"); then
  ok "every metric of the dashboard's $(wc -l <"$work/exprs") queries is emitted ($(wc -l <"$work/names") names)"
else fail "$dash: $out"; fi
# Not a vacuous pass: the names are many, and each program's are among them.
n=$(wc -l <"$work/names")
if ((n >= 40)); then ok "$n metric names extracted"; else fail "only $n metric names extracted"; fi
for p in ripple_hop_seconds_bucket ripple_stalls_active ripple_records_total \
  ripple_webhook_request_duration_seconds_bucket ripple_details_lag_seconds_bucket \
  ripple_webhook_shipper_dropped_total ripple_guard_webhook_disabled; do
  if grep -qx "$p" "$work/names"; then ok "the dashboard shows $p"
  else fail "the dashboard does not show $p"; fi
done
# Families no panel shows (for whoever extends the dashboard; not a failure).
cut -d' ' -f1 "$work/families" | while read -r f; do
  grep -qE "^${f}(_bucket|_count|_sum)?$" "$work/names" || echo "$f"
done >"$work/unused"
echo "# emitted, not on the dashboard: $(tr '\n' ' ' <"$work/unused")"

# The dashboard's form: a Prometheus data source as the variable ${datasource}, used
# by every query.
if jq -e '.templating.list | any(.name == "datasource" and .type == "datasource"
            and .query == "prometheus")' "$dash" >/dev/null; then
  ok "data source variable \${datasource} of type prometheus"
else fail "no datasource variable of type prometheus"; fi
other=$(jq -r '[.. | objects | select(has("targets")) | .targets[]?
                | select(.datasource.uid != "${datasource}")] | length' "$dash")
if [[ $other == 0 ]]; then ok "every query uses \${datasource}"
else fail "$other queries use another data source"; fi

# 3. It fails on a panel that names a metric nobody emits, and says which.
jq '.panels += [{"type": "timeseries", "title": "bogus", "datasource": {"uid": "${datasource}"},
     "targets": [{"refId": "A", "datasource": {"uid": "${datasource}"},
                  "expr": "sum by (component) (rate(ripple_hops_seconds_bucket{component=\"x\"}[5m]))"}]}]' \
  "$dash" >"$work/bogus.json"
if out=$(check "$work/bogus.json"); then fail "a panel naming ripple_hops_seconds_bucket passed"
elif [[ $out == *"not emitted: ripple_hops_seconds_bucket"* && $out != *component* ]]; then
  ok "a panel naming a metric nobody emits fails: $out"
else fail "the bogus panel's failure does not name it alone: $out"; fi
# A counter is no histogram: its _bucket is not emitted either.
jq '.panels[0].targets = [{"refId": "A", "datasource": {"uid": "${datasource}"},
     "expr": "histogram_quantile(0.99, rate(ripple_records_total_bucket[5m]))"}]' \
  "$dash" >"$work/bogus.json"
if out=$(check "$work/bogus.json"); then fail "ripple_records_total_bucket passed"
else ok "a counter's _bucket fails: $out"; fi

for p in "${pids[@]}"; do
  kill -0 "$p" 2>/dev/null || fail "a program exited early (logs: $(tail -3 "$work"/*.log))"
done
if ((fails)); then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all dashboard checks passed"
