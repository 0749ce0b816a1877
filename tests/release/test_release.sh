#!/usr/bin/env bash
# test_release.sh: scripts/release's local part, as a maintainer runs it but without
# the image (--no-image: root, buildah and minutes; `make image` and
# deploy/image/check test the image) and without publishing (no network), in a clone
# of the source tree (its tracked and new files as they are now, committed there, so
# the clone is clean). Checks:
#  - the release is refused on an unclean tree, and on each version disagreement
#    (Chart.yaml's appVersion, CHANGELOG.md's top entry, the chart's image);
#  - every artifact is there; checksums.txt names them all and `sha256sum -c` passes;
#  - the packaged chart's values name ghcr.io/ripple-k8s/ripple and it renders
#    ghcr.io/ripple-k8s/ripple:VERSION for every container;
#  - the krew manifest passes deploy/krew/validate, its sha256 is the tarball's, and a
#    manifest with a wrong sum is refused; krew itself (lab/build.sh --krew, when
#    built) installs kubectl-ripple from it and the tarball;
#  - the tarballs hold what they should, kubectl-ripple runs from one and needs no
#    jansson, yajl or libyaml of the system's, and a second run gives the same bytes
#    (reproducible tarballs);
#  - without --publish nothing is pushed, and what would be is printed.
# The clone is RIPPLE_RELEASE_TEST_CLONE (CTest: one in the build tree, kept, so its
# Release build is incremental), else a temporary one. Skipped (77) without the lab's
# Helm (lab/build.sh --helm).
set -euo pipefail

src=${RIPPLE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
helm=$("$src/lab/build.sh" --print-helm 2>/dev/null) ||
  { echo "skip: Helm is not built (lab/build.sh --helm)"; exit 77; }
work=$(mktemp -d /tmp/ripple-release-test.XXXXXX)
clone=${RIPPLE_RELEASE_TEST_CLONE:-$work/clone}
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME=$work/helm HELM_CONFIG_HOME=$work/helm HELM_DATA_HOME=$work/helm
export JOBS=${JOBS:-2}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
g() { git -C "$clone" -c user.name=ripple-test -c user.email=test@ripple.invalid "$@"; }

# The clone: the source's files copied with their times (tar keeps them), so make
# rebuilds only what changed since the last run; files gone from the source go too.
mkdir -p "$clone"
[[ -d $clone/.git ]] || g init -q
files() { # the source's tracked and new (not ignored) files that exist, NUL-separated
  git -C "$src" ls-files -z -c -o --exclude-standard |
    while IFS= read -r -d '' f; do [[ ! -f $src/$f ]] || printf '%s\0' "$f"; done
}
files >"$work/files"
comm -23 <(g ls-files | sort) <(tr '\0' '\n' <"$work/files" | sort) >"$work/gone"
(cd "$clone" && xargs -r -d '\n' rm -f -- <"$work/gone")
tar -C "$src" --null -T "$work/files" -cf - | tar -C "$clone" -xf -
g add -A
g diff --cached --quiet || g commit -qm "test snapshot"
version=$(sed -n 's/^project(ripple VERSION \([0-9][0-9.]*\).*/\1/p' "$clone/CMakeLists.txt")
out=$clone/build/release-artifacts
rel() { (cd "$clone" && scripts/release "$@"); }

# 1. Refusals, before anything is built.
refused() { # refused WORDS ARGS...: scripts/release fails and says WORDS
  local words=$1 o
  shift
  if o=$(rel "$@" 2>&1); then fail "release ran with $words expected: $o"
  elif [[ $o != *"$words"* ]]; then fail "release refused without \"$words\": $o"
  else ok "refused: $words"; fi
}
touch "$clone/stray-file"
refused "not clean" --no-image
rm -f "$clone/stray-file"
edit_refused() { # edit_refused FILE SED WORDS: the edit committed, refused, undone
  sed -i "$2" "$clone/$1"
  g commit -qam "test: $1"
  refused "$3" --no-image
  g reset -q --hard HEAD~1
}
edit_refused deploy/helm/ripple/Chart.yaml 's/^appVersion: .*/appVersion: "9.9.9"/' "appVersion '9.9.9'"
edit_refused CHANGELOG.md "0,/^## \[$version\]/s//## [9.9.9]/" "the top entry is 9.9.9"
edit_refused deploy/helm/ripple/values.yaml 's|^  repository: .*|  repository: localhost/ripple|' \
  "image.repository is 'localhost/ripple'"
refused "tag the release first" --publish --no-image

# 2. The release, twice (the second from the build's cache): same bytes.
t0=$(date +%s)
if ! rel --no-image >"$work/run1.out" 2>"$work/run1.err"; then
  fail "scripts/release --no-image: $(tail -20 "$work/run1.err")"
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "# scripts/release --no-image: $(($(date +%s) - t0))s"
mkdir -p "$work/first" && cp -a "$out/." "$work/first/"
rel --no-image >"$work/run2.out" 2>"$work/run2.err" || fail "second run: $(tail -5 "$work/run2.err")"
# Our tarballs and the manifest made from them (not Helm's package: its times are
# Helm's business).
for f in "$work/first"/*.tar.gz "$work/first/ripple.krew.yaml"; do
  if cmp -s "$f" "$out/${f##*/}"; then ok "reproducible: ${f##*/}"
  else fail "${f##*/} differs between two runs"; fi
done

# 3. The artifacts.
kt=kubectl-ripple_${version}_linux_amd64.tar.gz rt=ripple_${version}_linux_amd64.tar.gz
for f in "$kt" "$rt" "ripple-$version.tgz" ripple.krew.yaml checksums.txt; do
  if [[ -s $out/$f ]]; then ok "artifact $f"; else fail "no artifact $f"; fi
done
if (cd "$out" && sha256sum --quiet -c checksums.txt); then ok "checksums.txt verifies"
else fail "sha256sum -c checksums.txt"; fi
listed=$(awk '{ print $2 }' "$out/checksums.txt" | sort | tr '\n' ' ')
present=$(cd "$out" && find . -maxdepth 1 -type f ! -name checksums.txt -printf '%P\n' | sort | tr '\n' ' ')
if [[ $listed == "$present" ]]; then ok "checksums.txt names every artifact"
else fail "checksums.txt names '$listed', the artifacts are '$present'"; fi

# The chart: its values and what it renders name the release's image.
tar -C "$work" -xzf "$out/ripple-$version.tgz" ripple/values.yaml ripple/Chart.yaml
repo=$(sed -n '/^image:/,/^[^ ]/s/^  repository: *//p' "$work/ripple/values.yaml")
tag=$(sed -n '/^image:/,/^[^ ]/s/^  tag: *//p' "$work/ripple/values.yaml")
app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$work/ripple/Chart.yaml")
if [[ $repo == ghcr.io/ripple-k8s/ripple && $tag == '""' && $app == "$version" ]]; then
  ok "packaged values: image ghcr.io/ripple-k8s/ripple, tag appVersion $version"
else fail "packaged values: repository '$repo', tag '$tag', appVersion '$app'"; fi
images=$("$helm" template r "$out/ripple-$version.tgz" --set watch.enabled=true |
  sed -n 's/^ *image: *"\{0,1\}\([^" ]*\)"\{0,1\}$/\1/p' | sort | uniq -c)
if [[ $(wc -l <<<"$images") == 1 && $images == *" ghcr.io/ripple-k8s/ripple:$version" ]]; then
  ok "packaged chart renders$images"
else fail "packaged chart renders images: $images"; fi

# The krew manifest: valid, its sum the tarball's; a wrong sum refused.
if "$src/deploy/krew/validate" "$out/ripple.krew.yaml" --archives "$out"; then
  ok "ripple.krew.yaml passes deploy/krew/validate"
else fail "deploy/krew/validate ripple.krew.yaml"; fi
sum=$(sha256sum "$out/$kt" | cut -d' ' -f1)
if grep -qx "    sha256: $sum" "$out/ripple.krew.yaml" &&
  grep -qx "    uri: https://github.com/ripple-k8s/ripple/releases/download/v$version/$kt" "$out/ripple.krew.yaml" &&
  grep -qx "  version: v$version" "$out/ripple.krew.yaml"; then
  ok "krew manifest: v$version, $kt's URI and sha256"
else fail "krew manifest lacks v$version, $kt's URI or its sha256 $sum"; fi
if [[ $(grep -c '^  - selector:' "$out/ripple.krew.yaml") == 1 ]]; then
  ok "krew manifest: one platform (the one built)"
else fail "krew manifest: platforms without tarballs kept"; fi
mkdir -p "$work/bad"
cp "$out/$kt" "$work/bad/"
sed "s/$sum/$(printf '%064d' 0)/" "$out/ripple.krew.yaml" >"$work/bad/ripple.krew.yaml"
if "$src/deploy/krew/validate" "$work/bad/ripple.krew.yaml" --archives "$work/bad" 2>/dev/null; then
  fail "deploy/krew/validate accepted a wrong sha256"
else ok "deploy/krew/validate refuses a wrong sha256"; fi

# krew itself (lab/build.sh --krew) installs the plugin from the manifest and the
# tarball, in a KREW_ROOT of the test's, and refuses the manifest with a wrong sum.
if krew=$("$src/lab/build.sh" --print-krew 2>/dev/null); then
  kr=$work/krew-root
  if KREW_ROOT=$kr "$krew" install --manifest="$out/ripple.krew.yaml" --archive="$out/$kt" \
    >"$work/krew.log" 2>&1 && [[ $("$kr/bin/kubectl-ripple" version) == "kubectl-ripple $version" ]]; then
    ok "krew install --manifest --archive: kubectl-ripple $version in KREW_ROOT/bin"
  else fail "krew install: $(tail -5 "$work/krew.log")"; fi
  if KREW_ROOT=$work/krew-bad "$krew" install --manifest="$work/bad/ripple.krew.yaml" \
    --archive="$work/bad/$kt" >"$work/krew-bad.log" 2>&1; then
    fail "krew installed from a manifest with a wrong sha256"
  else ok "krew refuses the manifest with a wrong sha256"; fi
else echo "# krew is not built (lab/build.sh --krew): installing with krew not checked"; fi

# The tarballs' contents.
if [[ $(tar -tzf "$out/$kt") == kubectl-ripple ]]; then ok "$kt holds kubectl-ripple alone"
else fail "$kt holds: $(tar -tzf "$out/$kt" | head)"; fi
mkdir -p "$work/r"
tar -C "$work/r" -xzf "$out/$rt"
d=$work/r/ripple_${version}_linux_amd64
for f in bin/ripple bin/ripple-server bin/ripple-webhook bin/ripple-guard bin/kubectl-ripple \
  share/ripple/web/index.html share/ripple/runtime-packages; do
  if [[ -s $d/$f ]]; then ok "$rt: $f"; else fail "$rt lacks $f"; fi
done
needed=$(objdump -p "$d/bin/kubectl-ripple" | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
if [[ $needed == *libcurl* && $needed != *jansson* && $needed != *yajl* && $needed != *yaml* ]]; then
  ok "kubectl-ripple links statically all but libcurl and glibc: $needed"
else fail "kubectl-ripple needs: $needed"; fi
if [[ $("$d/bin/kubectl-ripple" version) == "kubectl-ripple $version" ]]; then
  ok "kubectl-ripple from the tarball: version $version"
else fail "kubectl-ripple from the tarball does not run"; fi

# 4. Nothing published; what would be, printed.
# The log on stderr, the commands on stdout.
if grep -q "not published" "$work/run1.err" &&
  grep -q "^  helm push .*/ripple-$version.tgz oci://ghcr.io/ripple-k8s/charts$" "$work/run1.out" &&
  grep -q "^  gh release create v$version --verify-tag --repo ripple-k8s/ripple .*/checksums.txt" "$work/run1.out" &&
  ! grep -q buildah "$work/run1.out"; then
  ok "without --publish: the chart's push and the GitHub release printed (no image), not run"
else fail "what --publish would do is not printed: $(cat "$work/run1.out")"; fi

if ((fails)); then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all release checks passed"
