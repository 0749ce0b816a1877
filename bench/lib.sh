# shellcheck shell=bash
# bench/lib.sh - what the benchmark scripts share. Sourced, not run:
#   free_port, port_of        a loopback port to listen on; the one a ripple
#                             program says it listens on
#   hist_quantiles            p50/p99 of a Prometheus histogram between scrapes
#   jaeger_config, jaeger_wait  the lab's Jaeger v2 as the benchmarks run it
#
# Jaeger runs without a batch processor or exporter queue, so that its 200,
# like ripple's, means the spans are stored and visible to its query API
# (docs/lab.md, "Jaeger").

# A free loopback port, picked by the kernel: nothing fixed to collide with.
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# port_of LOG [PID]: the port of a ripple program's "event=listening
# addr=127.0.0.1:PORT" line in LOG, waiting up to 30 s (less if PID, when
# given, exits first); on failure LOG goes to stderr and the status is 1.
port_of() {
  local log=$1 pid=${2:-} p="" _
  for _ in $(seq 600); do
    p=$(sed -n 's/.*event=listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null | head -1)
    [[ -n $p ]] && { echo "$p"; return 0; }
    [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.05
  done
  echo "$log says no port:" >&2
  cat "$log" >&2 2>/dev/null || true
  return 1
}

# jaeger_config STORE DIR OTLP_PORT HEALTH_PORT: DIR/jaeger.yaml, an OTLP/HTTP
# receiver on OTLP_PORT into memory or badger (DIR/badger, its defaults: no
# fsync per write) storage, the query API on free ports, and a health check on
# HEALTH_PORT (GET /status).
jaeger_config() {
  local store=$1 dir=$2 otlp=$3 health=$4 backend
  if [[ $store == memory ]]; then
    backend="        memory:
          max_traces: 100000000"
  else
    backend="        badger:
          directories:
            keys: $dir/badger
            values: $dir/badger
          ephemeral: false"
  fi
  cat >"$dir/jaeger.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      store:
$backend
  jaeger_query:
    storage:
      traces: store
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:$(free_port)
    grpc:
      endpoint: 127.0.0.1:$(free_port)
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$health
      status:
        enabled: true
        path: /status
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$otlp
exporters:
  jaeger_storage_exporter:
    trace_storage: store
    queue:
      enabled: false
YAML
}

# jaeger_wait HEALTH_PORT: 0 once Jaeger answers its health check (30 s at most).
jaeger_wait() {
  local _
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$1/status" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# hist_quantiles NAME BEFORE AFTER: the p50 and p99 of the observations NAME
# gained between two scrapes (files; BEFORE may be /dev/null for all of them),
# linear within a bucket, printed as "P50 P99 COUNT" (seconds with three
# decimals). A quantile in the bucket above the last bound prints as ">BOUND";
# with no observations both print as "-".
hist_quantiles() {
  awk -v m="$1" -v first="$2" '
    index($1, m "_bucket{") == 1 {
      le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
      if (FILENAME == first) { base[le] = $2; next }
      n++; b[n] = le; c[n] = $2 - base[le] }
    $1 == m "_count" { if (FILENAME == first) base_count = $2; else total = $2 - base_count }
    END {
      if (total <= 0) { print "- - 0"; exit }
      split("0.5 0.99", qs, " ")
      for (qi = 1; qi <= 2; qi++) {
        want = qs[qi] * total; prev = 0; lo = 0
        for (i = 1; i <= n; i++) {
          if (c[i] >= want) {
            if (b[i] == "+Inf") { out[qi] = sprintf(">%g", lo); break }
            hi = b[i] + 0
            v = (c[i] == prev) ? hi : lo + (hi - lo) * (want - prev) / (c[i] - prev)
            out[qi] = sprintf("%.3f", v)
            break
          }
          prev = c[i]; lo = (b[i] == "+Inf") ? lo : b[i] + 0
        }
      }
      printf "%s %s %d\n", out[1], out[2], total
    }' "$2" "$3"
}
