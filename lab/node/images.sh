#!/usr/bin/env bash
# Builds the two images the lab's real node runs besides ripple's, FROM scratch with
# buildah, each from one static C program of this directory, and writes them as OCI
# archives for the node's containerd to import (no registry is reachable here):
#   localhost/ripple-lab-pause:1   /pause (pause.c): the Pods' sandbox container
#   localhost/ripple-lab-hello:1   /hello (hello.c): the workload, HTTP on 8080
# The archives are cached by the contents of pause.c, hello.c and this script:
#   ${RIPPLE_LAB_CACHE:-$HOME/.cache/ripple-lab}/node-images-HASH/{pause,hello}.oci.tar
# and a directory that has both and its `complete` file is used as it is.
#
# Usage: lab/node/images.sh     build when needed; print the pause archive's path,
#                               then the hello archive's, one a line, on stdout
# Progress goes to stderr. Needs cc with a static glibc, and buildah as root;
# buildah's storage is chosen as scripts/build-image chooses it (overlay, else vfs
# in its store under ~/.cache/ripple-image), so both share one store.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pause_ref=localhost/ripple-lab-pause:1
hello_ref=localhost/ripple-lab-hello:1

die() { echo "images.sh: error: $*" >&2; exit 1; }
log() { echo "images.sh: $*" >&2; }

[ $# -eq 0 ] || die "no arguments (see the comment at the top of $0)"
hash=$(cat "$here/pause.c" "$here/hello.c" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
out="${RIPPLE_LAB_CACHE:-$HOME/.cache/ripple-lab}/node-images-$hash"

if [ -f "$out/complete" ] && [ -f "$out/pause.oci.tar" ] && [ -f "$out/hello.oci.tar" ]; then
  log "cached in $out"
  printf '%s\n' "$out/pause.oci.tar" "$out/hello.oci.tar"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "run as root (buildah builds as root here)"
command -v buildah >/dev/null || die "buildah is not installed (apt-get install buildah)"
command -v cc >/dev/null || die "no C compiler (cc)"

# As scripts/build-image does: overlay where the kernel lets a container be
# mounted, else vfs in that script's store (a store keeps one driver).
choose_storage() {
  local ctr ok=0 cache="${XDG_CACHE_HOME:-$HOME/.cache}/ripple-image"
  [ -z "${STORAGE_DRIVER:-}" ] || return 0
  if ctr=$(buildah from scratch 2>/dev/null); then
    buildah mount "$ctr" >/dev/null 2>&1 && ok=1
    buildah rm "$ctr" >/dev/null 2>&1 || true
  fi
  ((ok)) && return 0
  log "buildah's overlay storage cannot mount here; using the vfs driver in $cache/storage"
  export STORAGE_DRIVER=vfs CONTAINERS_STORAGE_CONF="$cache/storage.conf"
  mkdir -p "$cache/storage"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "/run/ripple-image-storage"\n' \
    "$cache/storage" >"$CONTAINERS_STORAGE_CONF"
}

# image REF PROGRAM USER [buildah config flags...]: /PROGRAM, static, as the only
# file of an image FROM scratch, run as USER; written to $out/PROGRAM.oci.tar.
image() {
  local ref=$1 prog=$2 user=$3 ctr
  shift 3
  log "building $ref (/$prog from $prog.c)"
  cc -std=c17 -Wall -Wextra -static -Os -s -o "$work/$prog" "$here/$prog.c"
  ctr=$(buildah from scratch)
  buildah copy --quiet --chmod 0755 "$ctr" "$work/$prog" "/$prog" >/dev/null
  buildah config --entrypoint "[\"/$prog\"]" --cmd '' --user "$user" --workingdir / \
    --os linux --arch "$(dpkg --print-architecture)" \
    --label org.opencontainers.image.title="ripple-lab-$prog" \
    --label org.opencontainers.image.description="ripple's lab: $prog.c (lab/node/images.sh)" \
    "$@" "$ctr"
  buildah commit --quiet --rm "$ctr" "$ref" >/dev/null
  rm -f "$work/$prog.oci.tar"
  buildah push --quiet "$ref" "oci-archive:$work/$prog.oci.tar:$ref" >&2
  mv "$work/$prog.oci.tar" "$out/$prog.oci.tar"
}

choose_storage
mkdir -p "$out"
rm -f "$out/complete"
work=$(mktemp -d "$out/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# 65535: the upstream pause image's user; 65532: "nonroot", as ripple's own image.
image "$pause_ref" pause 65535:65535
image "$hello_ref" hello 65532:65532 --port 8080/tcp
touch "$out/complete"
log "built in $out"
printf '%s\n' "$out/pause.oci.tar" "$out/hello.oci.tar"
