# shellcheck shell=bash
# bench/jaeger.sh - what the benchmarks that talk to the lab's Jaeger v2 share:
# free loopback ports and Jaeger's configuration. Sourced, not run.
#
# Jaeger runs without a batch processor or exporter queue, so that its 200,
# like ripple's, means the spans are stored and visible to its query API
# (docs/lab.md, "Jaeger").

# A free loopback port, picked by the kernel: nothing fixed to collide with.
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

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
