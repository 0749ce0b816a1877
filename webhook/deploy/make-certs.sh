#!/usr/bin/env bash
# make-certs.sh: a CA and a serving certificate for ripple-webhook, with the
# OpenSSL CLI.
#
#   webhook/deploy/make-certs.sh DIR [SAN...]
#
# SANs default to the in-cluster Service name
# (DNS:ripple-webhook.ripple-system.svc); for the lab use IP:127.0.0.1 (the lab
# already makes one: $RIPPLE_LAB_WEBHOOK_CERT). Writes DIR/ca.crt, ca.key,
# tls.crt, tls.key; then, for a cluster:
#   kubectl -n ripple-system create secret tls ripple-webhook-tls \
#     --cert DIR/tls.crt --key DIR/tls.key
# and register it: registration.sh --service ripple-system/ripple-webhook \
#   --ca-file DIR/ca.crt | kubectl apply -f -
set -euo pipefail
dir=${1:?usage: make-certs.sh DIR [SAN...]}; shift
sans=("$@")
((${#sans[@]})) || sans=(DNS:ripple-webhook.ripple-system.svc DNS:ripple-webhook.ripple-system.svc.cluster.local)
mkdir -p "$dir"
san=$(IFS=,; echo "${sans[*]}")
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=ripple-webhook-ca" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=ripple-webhook" \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' \
  "$san" >"$dir/ext.cnf"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days 825 -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null
rm -f "$dir/tls.csr" "$dir/ext.cnf" "$dir/ca.srl"
chmod 600 "$dir"/*.key
echo "wrote $dir/ca.crt $dir/tls.crt $dir/tls.key (SAN $san)"
