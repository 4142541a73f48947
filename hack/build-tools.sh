#!/usr/bin/env bash
# Builds the real components kumo's quick start and tests run (etcd, kube-apiserver,
# kube-controller-manager, and the versitygw S3 server) from the Go module proxy,
# through the wrapper modules under hack/tools (etcd; kubernetes, one module for both
# Kubernetes commands; versitygw, whose go.mod pins it as a tool), and caches
# each binary by version under $HOME/.cache/kumo/bin ($KUMO_TOOLS_BIN) so a warm run
# costs nothing. internal/localcluster runs this script when a binary is missing and
# names the binaries by the same versions (a test keeps them in sync); so does
# internal/s3test for versitygw.
#
# Usage: hack/build-tools.sh [etcd|kube-apiserver|kube-controller-manager|versitygw]...   (default: all)
# Prints nothing for a tool already cached.
set -euo pipefail

ETCD_VERSION=v3.6.8
KUBE_VERSION=v1.36.3
VERSITYGW_VERSION=v1.8.0

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KUMO_TOOLS_BIN:-$HOME/.cache/kumo/bin}
mkdir -p "$bin"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

build() { # name version module-dir package ldflags
  local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5 out="$bin/$1-$2"
  [[ -x $out ]] && return 0
  echo "building $name $version (first time only; cached at $out)" >&2
  local start=$SECONDS
  (cd "$root/hack/tools/$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  echo "built $name $version in $((SECONDS - start))s" >&2
}

kube_ldflags() {
  local v=${KUBE_VERSION#v} pkg=k8s.io/component-base/version
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%.*}
  echo "-X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
}

tools=("$@")
((${#tools[@]})) || tools=(etcd kube-apiserver kube-controller-manager versitygw)
for t in "${tools[@]}"; do
  case $t in
    etcd) build etcd "$ETCD_VERSION" etcd . "" ;;
    kube-apiserver | kube-controller-manager)
      build "$t" "$KUBE_VERSION" kubernetes "./cmd/$t" "$(kube_ldflags)" ;;
    versitygw) build versitygw "$VERSITYGW_VERSION" versitygw github.com/versity/versitygw/cmd/versitygw "" ;;
    *) echo "unknown tool $t (want etcd, kube-apiserver, kube-controller-manager or versitygw)" >&2; exit 2 ;;
  esac
done
