#!/usr/bin/env bash
# Builds the real components kumo's quick start and tests run from the Go module
# proxy and caches each binary by version under $HOME/.cache/kumo/bin
# ($KUMO_TOOLS_BIN) so a warm run costs nothing:
#   - etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and the
#     versitygw S3 server, through the wrapper modules under hack/tools (etcd;
#     kubernetes, one module for the three Kubernetes commands; kwok, which adds
#     kwok's default stages; versitygw, whose go.mod pins it as a tool);
#   - terraform and the terraform-provider-local provider, with go install as they are;
#     tofu (OpenTofu, not built by default), through its wrapper module, which carries
#     OpenTofu's replace of HCL;
#   - terraform-provider-kumotest, kumo's test provider (hack/tools), cached by version
#     and a hash of its sources, so an edit rebuilds it;
#   - hydra (ory/hydra, an OpenID Connect provider the identity tests log in
#     with), through its wrapper module, which carries Hydra's replace of pop; it
#     needs cgo (gcc) for its SQLite store, the only one that runs in memory;
#   - vault (HashiCorp Vault, BUSL-1.1, run as a separate process only), through its
#     wrapper module, which carries Vault's two replaces; the secret-store tests run
#     it in dev mode on loopback (internal/vaulttest);
#   - temporal-server and temporal-sql-tool (go.temporal.io/server's cmd/server and
#     cmd/tools/sql, at the server version kumo's go.mod requires), through their wrapper
#     module; internal/temporaltest runs the server's services as separate processes
#     on PostgreSQL, created and migrated with the SQL tool (not built by default);
#   - terraform-mirror: a provider filesystem mirror of those two providers next to the
#     bin directory, and a CLI configuration (terraform.tfrc) that installs providers
#     from it only, for offline tests (TF_CLI_CONFIG_FILE).
# internal/localcluster, internal/s3test, internal/terraformtest, internal/hydratest and internal/vaulttest run this script
# when a binary is missing and name the binaries by the same versions (tests keep
# them in sync).
#
# Usage: hack/build-tools.sh [etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok|versitygw|terraform|
#                             terraform-provider-local|terraform-provider-kumotest|terraform-mirror|hydra|vault|tofu|
#                             temporal-server|temporal-sql-tool|kubectl|helm]...
# (default: all but tofu, the two temporal tools and make bench's peers kubectl and helm).
# Prints nothing for a tool already cached.
set -euo pipefail

ETCD_VERSION=v3.6.8
KUBE_VERSION=v1.36.3
KWOK_VERSION=v0.8.0
VERSITYGW_VERSION=v1.8.0
TERRAFORM_VERSION=v1.5.7
TOFU_VERSION=v1.12.6
PROVIDER_LOCAL_VERSION=v1.4.0
PROVIDER_KUMOTEST_VERSION=0.1.0
HYDRA_VERSION=v2.3.0
VAULT_VERSION=v1.21.0
TEMPORAL_VERSION=v1.32.1 # go.temporal.io/server in go.mod and hack/tools/temporal-server/go.mod
HELM_VERSION=v3.21.4      # helm.sh/helm/v3 in go.mod: the SDK kumo renders charts with

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KUMO_TOOLS_BIN:-$HOME/.cache/kumo/bin}
mkdir -p "$bin"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

build() { # name version module-dir package ldflags [build tags]
  local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5 tags=${6:-} out="$bin/$1-$2"
  [[ -x $out ]] && return 0
  echo "building $name $version (first time only; cached at $out)" >&2
  local start=$SECONDS
  (cd "$root/hack/tools/$dir" && go build -trimpath ${tags:+-tags "$tags"} -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  echo "built $name $version in $((SECONDS - start))s" >&2
}

# install name version module: go install module@version as name-version.
install() {
  local name=$1 version=$2 module=$3 out="$bin/$1-$2"
  [[ -x $out ]] && return 0
  echo "building $name $version (first time only; cached at $out)" >&2
  local start=$SECONDS tmp
  tmp=$(mktemp -d)
  GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$module@$version"
  mv "$tmp/$(basename "$module")" "$out"
  rm -rf "$tmp"
  echo "built $name $version in $((SECONDS - start))s" >&2
}

# kumotest_tag is the test provider's cache tag: its version and a hash of its
# sources (internal/terraformtest computes the same).
kumotest_tag() {
  local dir=$root/hack/tools/terraform-provider-kumotest
  echo "$PROVIDER_KUMOTEST_VERSION-$(cd "$dir" && cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum | cut -c1-12)"
}

# mirror links the providers into an unpacked filesystem mirror (one tree per
# registry host, so terraform and tofu both find them) and writes a CLI
# configuration that installs providers from that mirror only.
mirror() {
  local cache mirror os_arch
  cache=$(dirname "$bin")
  mirror=$cache/terraform-mirror
  os_arch=$(go env GOOS)_$(go env GOARCH)
  local local_v=${PROVIDER_LOCAL_VERSION#v} tag
  tag=$(kumotest_tag)
  for host in registry.terraform.io registry.opentofu.org; do
    local d=$mirror/$host/hashicorp/local/$local_v/$os_arch
    mkdir -p "$d"
    ln -sfn "$bin/terraform-provider-local-$PROVIDER_LOCAL_VERSION" "$d/terraform-provider-local_v$local_v"
    d=$mirror/$host/kumoproj/kumotest/$PROVIDER_KUMOTEST_VERSION/$os_arch
    mkdir -p "$d"
    ln -sfn "$bin/terraform-provider-kumotest-$tag" "$d/terraform-provider-kumotest_v$PROVIDER_KUMOTEST_VERSION"
  done
  local config=$cache/terraform.tfrc
  printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" >"$config.tmp"
  mv "$config.tmp" "$config"
}

kube_ldflags() {
  local v=${KUBE_VERSION#v} pkg=k8s.io/component-base/version
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%.*}
  echo "-X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
}

tools=("$@")
((${#tools[@]})) || tools=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok versitygw terraform terraform-mirror hydra vault)
for t in "${tools[@]}"; do
  case $t in
    etcd) build etcd "$ETCD_VERSION" etcd . "" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl)
      build "$t" "$KUBE_VERSION" kubernetes "./cmd/$t" "$(kube_ldflags)" ;;
    kwok) build kwok "$KWOK_VERSION" kwok . "" ;;
    versitygw) build versitygw "$VERSITYGW_VERSION" versitygw github.com/versity/versitygw/cmd/versitygw "" ;;
    terraform) install terraform "$TERRAFORM_VERSION" github.com/hashicorp/terraform ;;
    terraform-provider-local)
      install "$t" "$PROVIDER_LOCAL_VERSION" github.com/terraform-providers/terraform-provider-local ;;
    terraform-provider-kumotest) build "$t" "$(kumotest_tag)" "$t" . "" ;;
    terraform-mirror)
      install terraform-provider-local "$PROVIDER_LOCAL_VERSION" github.com/terraform-providers/terraform-provider-local
      build terraform-provider-kumotest "$(kumotest_tag)" terraform-provider-kumotest . ""
      mirror ;;
    hydra) CGO_ENABLED=1 build hydra "$HYDRA_VERSION" hydra github.com/ory/hydra/v2 \
      "-X github.com/ory/hydra/v2/driver/config.Version=$HYDRA_VERSION" sqlite,sqlite_omit_load_extension ;;
    vault) build vault "$VAULT_VERSION" vault . "" ;;
    temporal-server) build "$t" "$TEMPORAL_VERSION" temporal-server go.temporal.io/server/cmd/server "" ;;
    temporal-sql-tool) build "$t" "$TEMPORAL_VERSION" temporal-server go.temporal.io/server/cmd/tools/sql "" ;;
    helm) install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm ;;
    tofu) build tofu "$TOFU_VERSION" opentofu github.com/opentofu/opentofu/cmd/tofu "-X github.com/opentofu/opentofu/version.dev=no" ;;
    *) echo "unknown tool $t (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
