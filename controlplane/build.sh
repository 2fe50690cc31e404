#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl into a cache outside the repository,
# keyed by the module's hash, and prints the directory holding the binaries. A cached build
# is reused. KUBERNETES_VERSION picks the release (default: the one go.mod pins); another served
# release gets its own generated module in the cache.
#   JOBGUARD_CONTROLPLANE_CACHE  cache root (default ~/.cache/jobguard/controlplane)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  # Debian's Go is older than Kubernetes needs; it fetches the pinned toolchain from the module
  # proxy (GOTOOLCHAIN) and builds with that.
  echo "controlplane: no Go on this machine; installing Debian's golang-go" >&2
  { apt-get update -qq && apt-get install -y -qq golang-go >/dev/null; } >&2 ||
    { echo "controlplane: Go is needed to build the control plane and could not be installed" >&2; exit 1; }
  export GOTOOLCHAIN=go1.26.8
fi
export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
cache="${JOBGUARD_CONTROLPLANE_CACHE:-$HOME/.cache/jobguard/controlplane}"
pinned="$(sed -n 's|^\tk8s.io/kubernetes v\(.*\)$|\1|p' "$here/go.mod")"
version="${KUBERNETES_VERSION:-$pinned}"
version="${version#v}"
mkdir -p "$cache"
# One build of a release at a time (parallel test runs, make cluster): the others wait, then
# find it cached.
exec 9>"$cache/.lock-$version"
flock 9
src="$here"
if [ "$version" != "$pinned" ]; then
  src="$cache/src-$version"
  if [ ! -f "$src/go.sum" ]; then
    rm -rf "$src" && mkdir -p "$src"
    cp -r "$here/cmd" "$src/"
    "$here/gomod.sh" "$version" "$src" >&2
  fi
fi
key="$( { cat "$src/go.mod" "$src/go.sum" "$here/build.sh"; find "$here/cmd" -name '*.go' -print0 | sort -z | xargs -0 cat; go version; } | sha256sum | cut -c1-16)"
out="$cache/$version-$key"
if [ -x "$out/bin/kube-apiserver" ] && [ -x "$out/bin/kube-controller-manager" ] && [ -x "$out/bin/etcd" ] && [ -x "$out/bin/kubectl" ]; then
  echo "$out/bin"
  exit 0
fi
staging="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$staging"' EXIT
major="${version%%.*}"; rest="${version#*.}"; minor="${rest%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=v$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
start=$(date +%s)
echo "controlplane: building Kubernetes v$version (etcd, kube-apiserver, kube-controller-manager) into $out" >&2
(cd "$src" && go build -trimpath -pgo=off -tags=selinux,notest -ldflags "$ldflags" \
  -o "$staging/bin/" ./cmd/etcd ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kubectl) >&2
echo "controlplane: built in $(( $(date +%s) - start )) s" >&2
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
# Builds of this release from other module hashes, made over a week ago, are not kept.
find "$cache" -mindepth 1 -maxdepth 1 -name "$version-*" ! -path "$out" -mtime +7 -exec rm -rf {} +
echo "$out/bin"
