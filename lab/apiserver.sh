# shellcheck shell=bash
# The lab's kube-apiservers: how `lab/lab up` starts one, or two on the same etcd
# (`--apiservers 2`), and what the second one needs of its own. Sourced by lab/lab,
# whose globals (LAB_DIR, PKI, BIN, APISERVERS, AUDIT..., APISERVER_TRACING,
# APISERVER_ARGS) it reads.
# See docs/lab.md, "Two API servers".
#
# A real control plane runs several API servers on one etcd, each answering
# whoever reaches it; admission webhooks are cluster state, so every API server
# calls them. The second one exists so that tests can write through one API
# server while the controllers write through the other, as on such a cluster.

# apiserver_port N: the secure port of API server N (1 or 2).
apiserver_port() {
  if [[ $1 == 2 ]]; then echo "$LAB_APISERVER2_PORT"; else echo "$LAB_APISERVER_PORT"; fi
}

# apiserver_component N: its name in run/, logs/ and `lab/lab status`.
apiserver_component() {
  if [[ $1 == 2 ]]; then echo kube-apiserver-2; else echo kube-apiserver; fi
}

# apiserver_audit_args N: the audit flags of API server N into the array AUDIT_ARGS.
# Both send to the same audit webhook backend (a trace server hears every write,
# whichever API server took it); a log file each, since two writers of one file
# would interleave their lines and rotate it under each other.
apiserver_audit_args() {
  local log=audit.log
  [[ $1 == 2 ]] && log=audit-2.log
  AUDIT_ARGS=()
  if ((AUDIT)) || ((!NO_AUDIT_WEBHOOK)); then
    mkdir -p "$LAB_DIR/audit"
    [[ -f $LAB_DIR/audit/policy.yaml ]] ||
      cp "${AUDIT_POLICY:-$LAB_ROOT/audit-policy.yaml}" "$LAB_DIR/audit/policy.yaml"
    AUDIT_ARGS=(--audit-policy-file="$LAB_DIR/audit/policy.yaml")
  fi
  if ((AUDIT)); then
    AUDIT_ARGS+=(--audit-log-path="$LAB_DIR/audit/$log" --audit-log-format=json --audit-log-maxsize=0)
  fi
  if ((!NO_AUDIT_WEBHOOK)); then
    if [[ -z $AUDIT_WEBHOOK ]]; then
      AUDIT_WEBHOOK=$LAB_DIR/audit/webhook.kubeconfig
      audit_kubeconfig "http://127.0.0.1:$LAB_AUDIT_PORT/v1/audit" >"$AUDIT_WEBHOOK"
    fi
    # Batch mode: kube-apiserver never waits on the receiver, and drops events when
    # it is away. Batches leave at most a second after their first event.
    AUDIT_ARGS+=(--audit-webhook-config-file="$AUDIT_WEBHOOK" --audit-webhook-mode=batch
      --audit-webhook-batch-max-wait=1s --audit-webhook-initial-backoff=1s)
  fi
}

# apiserver_tracing_args: with `up --apiserver-tracing`, kube-apiserver's own traces
# (KEP-647, --tracing-config-file) into TRACING_ARGS: OTLP over gRPC, which is all
# kube-apiserver exports (plaintext: its exporter is always insecure), to
# 127.0.0.1:$LAB_OTLP_PORT, where a test runs the lab's Jaeger with a gRPC receiver.
# Every request is sampled (samplingRatePerMillion 1000000): a lab setting, for tests
# that look for one write's spans; a cluster samples a fraction (docs/otlp.md). Both API
# servers send to the same receiver. Nothing listens there unless a test starts one;
# the exporter then drops its batches and retries, and requests are not slowed.
apiserver_tracing_args() {
  TRACING_ARGS=()
  ((APISERVER_TRACING)) || return 0
  mkdir -p "$LAB_DIR/tracing"
  cat >"$LAB_DIR/tracing/tracing.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
endpoint: 127.0.0.1:$LAB_OTLP_PORT
samplingRatePerMillion: 1000000
EOF
  TRACING_ARGS=(--tracing-config-file="$LAB_DIR/tracing/tracing.yaml")
}

# apiserver_admission_args: the admission configuration of both API servers into
# ADMISSION_ARGS. kube-apiserver authenticates to every admission webhook with a
# client certificate (user "*" of the webhooks' kubeconfig: any webhook, by URL or
# Service), signed by a CA of its own (webhook-client-ca, not the cluster's: a
# webhook that trusts it trusts API servers only, not every client of the
# cluster). ripple-webhook's --client-ca takes it ($RIPPLE_LAB_WEBHOOK_CLIENT_CA
# in `lab/lab env`); webhooks that ask for no certificate are not affected. Made
# on first use, so that a lab made before has it after its next restart.
apiserver_admission_args() {
  local dir=$LAB_DIR/admission
  if [[ ! -f $PKI/apiserver-webhook-client.crt ]]; then
    ossl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/webhook-client-ca.key" \
      -out "$PKI/webhook-client-ca.crt" -days 3650 -sha256 -subj "/CN=ripple-lab-webhook-client-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    CA=webhook-client-ca cert apiserver-webhook-client "/CN=kube-apiserver" clientAuth
    chmod 600 "$PKI"/*.key
  fi
  mkdir -p "$dir"
  cat >"$dir/webhooks.kubeconfig" <<EOF
apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: $PKI/apiserver-webhook-client.crt
    client-key: $PKI/apiserver-webhook-client.key
EOF
  cat >"$dir/config.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $dir/webhooks.kubeconfig
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $dir/webhooks.kubeconfig
EOF
  ADMISSION_ARGS=(--admission-control-config-file="$dir/config.yaml")
}

# start_apiserver N: start API server N and wait until it is ready.
#
# Both get the same flags but the port, the cert dir and the audit log: the same
# serving certificate (its SANs name 127.0.0.1), client CA, service-account keys
# and issuer (a token one signs, the other accepts), service range (each runs the
# ClusterIP repair loop; different ranges would make them fight).
# --endpoint-reconciler-type=none holds for both: neither publishes itself as an
# endpoint of the `kubernetes` Service (the network rule). The default lease
# reconciler would also be wrong here: it keeps one address list with one port, the
# port of whichever server wrote last, and two servers on one address with two
# ports would overwrite each other's. Their identity Lease (kube-system/apiserver-<hash>) is named
# after the hostname, which two processes on one machine share, so both renew one
# Lease; nothing the lab enables keys on it (docs/lab.md).
start_apiserver() {
  local n=$1 port name certs=$LAB_DIR/apiserver-certs
  port=$(apiserver_port "$n")
  name=$(apiserver_component "$n")
  [[ $n == 2 ]] && certs=$LAB_DIR/apiserver2-certs
  apiserver_audit_args "$n"
  apiserver_admission_args
  apiserver_tracing_args
  start "$name" \
    --etcd-servers="http://127.0.0.1:$LAB_ETCD_CLIENT_PORT" \
    --advertise-address=127.0.0.1 --bind-address=127.0.0.1 --secure-port="$port" \
    --endpoint-reconciler-type=none \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --authorization-mode=Node,RBAC \
    --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
    --enable-admission-plugins=NodeRestriction \
    --kubelet-preferred-address-types=InternalIP \
    --cert-dir="$certs" \
    --v=1 "${ADMISSION_ARGS[@]}" ${AUDIT_ARGS[@]+"${AUDIT_ARGS[@]}"} ${TRACING_ARGS[@]+"${TRACING_ARGS[@]}"} \
    ${APISERVER_ARGS[@]+"${APISERVER_ARGS[@]}"}
  wait_for "$name /readyz" "$name" https_ok "https://127.0.0.1:$port/readyz"
}

# start_apiservers: the first, then (with --apiservers 2) the second and its admin
# kubeconfig. The controllers keep the first; only people and tests use the second.
start_apiservers() {
  start_apiserver 1
  ((APISERVERS == 2)) || return 0
  start_apiserver 2
  write_kubeconfig "$LAB_DIR/kubeconfig-2" kubernetes-admin admin "$LAB_APISERVER2_PORT"
}
