# shellcheck shell=bash
# What lab/lab does to a running lab besides up and down: register a webhook,
# restart one component, compact etcd. Sourced by lab/lab, whose globals and helpers
# (LAB_DIR, BIN, COMPONENTS, start, stop_pid, wait_for...) it uses.

do_webhook() {
  local name=ripple-lab resources='*/*' policy=Ignore del=0 url="" ca="" a
  while (($#)); do
    a=$1; shift
    case $a in
      --delete) del=1 ;;
      --name) name=$1; shift ;;
      --name=*) name=${a#*=} ;;
      --resources) resources=$1; shift ;;
      --resources=*) resources=${a#*=} ;;
      --failure-policy) policy=$1; shift ;;
      --failure-policy=*) policy=${a#*=} ;;
      -*) die "unknown option for webhook: '$a'" ;;
      *) if [[ -z $url ]]; then url=$a; elif [[ -z $ca ]]; then ca=$a; else die "webhook: unexpected argument '$a'"; fi ;;
    esac
  done
  if ((del)); then
    lab_kubectl delete mutatingwebhookconfiguration "$name" --ignore-not-found
    return
  fi
  [[ -n $url && -n $ca ]] || die "usage: lab/lab webhook URL CA_FILE [--name NAME] [--resources LIST] [--failure-policy Ignore|Fail]"
  [[ $url =~ ^https://(127\.[0-9]+\.[0-9]+\.[0-9]+|localhost|\[::1\]):[0-9]+(/.*)?$ ]] ||
    die "the webhook URL must be https on loopback (https://127.0.0.1:PORT/...), got '$url'"
  [[ -r $ca ]] || die "cannot read CA file '$ca'"
  [[ $policy == Ignore || $policy == Fail ]] || die "--failure-policy must be Ignore or Fail"
  # The one registration of ripple's webhook (deploy/helm/ripple/files/registration.yaml), for
  # every namespace: rules for every resource, the matchConditions that leave out
  # Leases, Events, reviews, tokens and node heartbeats, timeoutSeconds 1.
  "$LAB_ROOT/../webhook/deploy/registration.sh" --name "$name" --url "$url" --ca-file "$ca" \
    --resources "$resources" --failure-policy "$policy" | lab_kubectl apply -f -
}

# --- restart / compact -----------------------------------------------------------------------

# health_check COMPONENT: succeeds when the component answers its health endpoint.
health_check() {
  case $1 in
    etcd) http_ok "http://127.0.0.1:$LAB_ETCD_CLIENT_PORT/health" ;;
    kube-apiserver) https_ok "https://127.0.0.1:$LAB_APISERVER_PORT/readyz" ;;
    kube-apiserver-2) https_ok "https://127.0.0.1:$LAB_APISERVER2_PORT/readyz" ;;
    kube-controller-manager) https_ok "https://127.0.0.1:$LAB_KCM_PORT/healthz" ;;
    kube-scheduler) https_ok "https://127.0.0.1:$LAB_SCHEDULER_PORT/healthz" ;;
    kwok) http_ok "http://127.0.0.1:$LAB_KWOK_PORT/healthz" ;;
  esac
}

do_restart() {
  local c=${1:-} p known=0 x
  for x in "${COMPONENTS[@]}"; do [[ $x == "$c" ]] && known=1; done
  ((known)) || die "usage: lab/lab restart COMPONENT (one of: ${COMPONENTS[*]})"
  lab_is_up || die "the lab is not up (lab/lab up)"
  p=$(component_pid "$c") || die "$c is not running (see lab/lab status)"
  # The same arguments as the running process, exactly (NUL-separated, so spaces survive).
  local -a args
  mapfile -d '' args <"/proc/$p/cmdline"
  ((${#args[@]} > 0)) || die "cannot read the command line of $c (pid $p)"
  # shellcheck disable=SC2034 # start (lab/lab) runs the binary from BIN
  BIN=$(dirname "${args[0]}")
  local t0=$SECONDS
  # shellcheck disable=SC2034 # fail_up (lab/lab): a failed restart leaves the rest up
  NO_TEARDOWN=1
  stop_pid "$p" "$c"
  start "$c" "${args[@]:1}"
  wait_for "$c to be healthy" "$c" health_check "$c"
  case $c in etcd | kube-apiserver) settle ;; esac
  log "restarted $c in $((SECONDS - t0))s (pid $(read_pid "$c"))"
}

ensure_namespace() { lab_kubectl get namespace "$1" || lab_kubectl create namespace "$1"; }

# After the API server (or its store) comes back, the controllers' watches reconnect
# with backoff, and for a while a new namespace gets no "default" ServiceAccount (tests
# that ran right after a restart waited a minute for one). Return only once the
# ServiceAccount controller reacts to a new namespace again, so whatever runs next
# starts on a control plane that has caught up.
settle() {
  local ns="lab-settle-$$-$SECONDS"
  wait_for "the API server to accept a namespace" "" ensure_namespace "$ns"
  wait_for "the controllers to catch up after the restart" kube-controller-manager \
    lab_kubectl -n "$ns" get serviceaccount default
  lab_kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}

do_compact() {
  local url="http://127.0.0.1:$LAB_ETCD_CLIENT_PORT" ans rev
  lab_is_up || die "the lab is not up (lab/lab up)"
  # Any range answers with the store's current revision in its header.
  ans=$(curl -sf --max-time 5 -X POST "$url/v3/kv/range" -d '{"key":"AA=="}') ||
    die "etcd's JSON gateway at $url did not answer"
  rev=$(sed -n 's/.*"revision": *"\([0-9]*\)".*/\1/p' <<<"$ans")
  [[ -n $rev ]] || die "no revision in etcd's answer: $ans"
  ans=$(curl -s --max-time 30 -X POST "$url/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}") ||
    die "etcd's JSON gateway at $url did not answer"
  case $ans in
    *"required revision has been compacted"*) log "etcd is already compacted to revision $rev" ;;
    *'"code"'*) die "etcd refused the compaction: $ans" ;;
    *) log "compacted etcd to revision $rev" ;;
  esac
  echo "$rev"
}
