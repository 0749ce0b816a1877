# shellcheck shell=bash
# The lab's certificates and kubeconfigs: one CA for the cluster, one for the front
# proxy, a key and certificate per component and for the admin. Sourced by lab/lab,
# whose globals (PKI, SERVICE_IP, NODE, NODE_HOST_IP) it reads.

ossl() { openssl "$@" 2>>"$PKI/openssl.log" >/dev/null || die "openssl $1 failed (see $PKI/openssl.log)"; }

# cert NAME SUBJECT EKU [SAN]: key + certificate signed by the lab CA (or by $CA).
cert() {
  local name=$1 subj=$2 eku=$3 san=${4:-}
  ossl req -new -nodes -newkey rsa:2048 -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "$subj"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -z $san ]] || echo "subjectAltName=$san"
  } >"$PKI/$name.ext"
  local ca=${CA:-ca}
  ossl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" \
    -CAserial "$PKI/$ca.srl" -CAcreateserial -days 365 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt"
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

gen_pki() {
  mkdir -p "$PKI" && chmod 700 "$PKI"
  log "generating certificates in $PKI"
  ossl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 -sha256 \
    -subj "/CN=ripple-lab-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  local local_san="IP:127.0.0.1,DNS:localhost"
  cert apiserver "/CN=kube-apiserver" serverAuth \
    "$local_san,IP:$SERVICE_IP,$( ((NODE == 0)) || echo "IP:$NODE_HOST_IP,")DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # Front proxy (aggregation layer): without it, components that delegate authentication
  # keep logging a missing requestheader-client-ca-file.
  ossl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/front-proxy-ca.key" -out "$PKI/front-proxy-ca.crt" \
    -days 3650 -sha256 -subj "/CN=ripple-lab-front-proxy-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  CA=front-proxy-ca cert front-proxy-client "/CN=front-proxy-client" clientAuth
  cert admin "/O=system:masters/CN=kubernetes-admin" clientAuth
  cert controller-manager "/CN=system:kube-controller-manager" clientAuth
  cert scheduler "/CN=system:kube-scheduler" clientAuth
  cert kwok "/CN=kwok-controller" clientAuth
  # Serving certificates for the components' own HTTPS ports, and one for a webhook
  # (ripple's admission webhook may use webhook.crt/webhook.key on 127.0.0.1).
  cert controller-manager-serving "/CN=kube-controller-manager" serverAuth "$local_san"
  cert scheduler-serving "/CN=kube-scheduler" serverAuth "$local_san"
  cert webhook "/CN=ripple-webhook" serverAuth "$local_san"
  ossl genrsa -out "$PKI/sa.key" 2048
  ossl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
  chmod 600 "$PKI"/*.key
}

b64() { base64 -w0 <"$1"; }

# kubeconfig FILE USER CERTNAME [PORT]
write_kubeconfig() {
  local file=$1 user=$2 c=$3 port=${4:-$LAB_APISERVER_PORT}
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ripple-lab
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(b64 "$PKI/$c.crt")
    client-key-data: $(b64 "$PKI/$c.key")
contexts:
- name: ripple-lab
  context:
    cluster: ripple-lab
    user: $user
    namespace: default
current-context: ripple-lab
EOF
  chmod 600 "$file"
}
