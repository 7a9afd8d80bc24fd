#!/usr/bin/env bash
# Builds the local control plane's binaries from Go modules, once per version, into a cache
# outside the repo. Kubernetes' own go.mod replaces its staging modules with local paths, so
# `go install k8s.io/kubernetes/cmd/...` fails; a wrapper module that replaces each staging
# module with its published version builds them. The replace list is read from the downloaded
# go.mod, not hard-coded, so bumping K8S_VERSION is the only change a new version needs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
# Only for `npm run bench` (post-render against mikefarah's yq): `build-binaries.sh yq`.
# v4.54.x needs a go.yaml.in/yaml/v4 release candidate the module proxy does not serve.
YQ_VERSION="${YQ_VERSION:-v4.53.6}"
# Only for the Flux proof of `export` (test/cluster/flux.ts): `build-binaries.sh flux`.
# The newest versions whose dependencies the module proxy serves: v1.10.x need fluxcd/pkg and
# sigstore releases it answers 403 for. source-controller v1.9.6 builds with one pin, see
# FLUX_SOURCE_PINS. Go 1.27 (FLUX_GOTOOLCHAIN) comes through the proxy as a module.
FLUX_SOURCE_VERSION="${FLUX_SOURCE_VERSION:-v1.9.6}"
FLUX_KUSTOMIZE_VERSION="${FLUX_KUSTOMIZE_VERSION:-v1.9.6}"
# v1.9.6 asks for fluxcd/pkg/artifact v0.18.3, not served; v0.18.0 is, a patch release apart.
FLUX_SOURCE_PINS="${FLUX_SOURCE_PINS:-github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.0}"
# The HelmRelease CRD is generated from helm-controller's API module (the controller's own module
# is not served, so it never runs here). The newest: HelmReleases are only validated against it,
# and it is what `export --format helmrelease` writes for. It imports source-controller/api v1.10.0.
FLUX_HELM_API_VERSION="${FLUX_HELM_API_VERSION:-v1.7.1}"
# The controller-gen the Flux controllers' Makefiles pin.
CONTROLLER_GEN_VERSION="${CONTROLLER_GEN_VERSION:-v0.21.0}"
FLUX_GOTOOLCHAIN="${FLUX_GOTOOLCHAIN:-go1.27.0}"
# Only for the proof of `troubleshoot-specs` (test/cluster/troubleshoot.ts): `build-binaries.sh troubleshoot`.
TROUBLESHOOT_VERSION="${TROUBLESHOOT_VERSION:-v0.133.0}"
CACHE="${HELM_INSTALLER_CACHE:-$HOME/.cache/helm-installer}"
BIN="$CACHE/bin"
export GOFLAGS="${GOFLAGS:--mod=mod}" CGO_ENABLED=0
export GOMODCACHE="${GOMODCACHE:-$CACHE/gomod}" GOCACHE="${GOCACHE:-$CACHE/gobuild}" GOWORK=off
mkdir -p "$BIN"
cd "$CACHE" # never inside some other Go module, whose go.mod -mod=mod could rewrite

log() { printf '[build] %s\n' "$*" >&2; }

command -v go >/dev/null || { log "go not found: these binaries are built from Go modules (Go >= 1.26 for kwok $KWOK_VERSION and etcd $ETCD_VERSION)"; exit 1; }

# go build inside a throwaway wrapper module; $1 = module dir name, rest = commands.
wrapper() { local dir="$CACHE/wrappers/$1"; rm -rf "$dir"; mkdir -p "$dir"; printf '%s' "$dir"; }

build_kubernetes() {
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local staging="v0.${K8S_VERSION#v1.}"
  # kubelet runs the real node's pods; it needs cgo (the rest is built static).
  local want=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
  local missing=0
  for c in "${want[@]}"; do [[ -x "$BIN/$c-$K8S_VERSION" ]] || missing=1; done
  [[ $missing == 0 ]] && { log "kubernetes $K8S_VERSION cached"; return; }
  local dir; dir=$(wrapper "kubernetes-$K8S_VERSION")
  log "kubernetes $K8S_VERSION: reading its go.mod"
  local gomod; gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module local/k8s-wrapper"; echo; echo "go 1.24"; echo
    echo "require k8s.io/kubernetes $K8S_VERSION"; echo
    # Every `k8s.io/x => ./staging/...` line becomes `k8s.io/x => k8s.io/x v0.34.N`.
    grep -E '^\s*k8s\.io/[^ ]+ => \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } > "$dir/go.mod"
  printf 'package tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n)\n' > "$dir/tools.go"
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$dir" && log "kubernetes: resolving modules" && go mod tidy >/dev/null 2>&1 || true)
  for c in "${want[@]}"; do
    [[ -x "$BIN/$c-$K8S_VERSION" ]] && continue
    log "building $c $K8S_VERSION (slow the first time)"
    local cgo=0; [[ $c == kubelet ]] && cgo=1
    (cd "$dir" && CGO_ENABLED=$cgo go build -trimpath -ldflags "$ld" -o "$BIN/$c-$K8S_VERSION.tmp" "k8s.io/kubernetes/cmd/$c")
    mv "$BIN/$c-$K8S_VERSION.tmp" "$BIN/$c-$K8S_VERSION"
  done
}

build_etcd() {
  [[ -x "$BIN/etcd-$ETCD_VERSION" ]] && { log "etcd $ETCD_VERSION cached"; return; }
  local dir; dir=$(wrapper "etcd-$ETCD_VERSION")
  printf 'module local/etcd-wrapper\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$dir/go.mod"
  printf 'package tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > "$dir/tools.go"
  log "building etcd $ETCD_VERSION"
  (cd "$dir" && go mod tidy >/dev/null 2>&1 || true; go build -trimpath -ldflags "-s -w" -o "$BIN/etcd-$ETCD_VERSION.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN/etcd-$ETCD_VERSION.tmp" "$BIN/etcd-$ETCD_VERSION"
}

build_kwok() {
  local stages="$CACHE/kwok-stages-$KWOK_VERSION"
  if [[ -x "$BIN/kwok-$KWOK_VERSION" ]]; then
    log "kwok $KWOK_VERSION cached"
  else
    log "building kwok $KWOK_VERSION"
    GOBIN="$CACHE/gobin-kwok" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
    mv "$CACHE/gobin-kwok/kwok" "$BIN/kwok-$KWOK_VERSION"
  fi
  [[ -f "$stages/pod/fast/pod-ready.yaml" ]] && return
  # v0.8 wants its stages by --config; they ship in the module source. Copied to a temp dir
  # first, so an interrupted copy is never mistaken for a complete one.
  local src; src=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$stages.tmp" && mkdir -p "$stages.tmp"
  cp -r "$src/kustomize/stage/." "$stages.tmp/"
  chmod -R u+w "$stages.tmp"
  rm -rf "$stages" && mv "$stages.tmp" "$stages"
}

build_yq() {
  [[ -x "$BIN/yq-$YQ_VERSION" ]] && { log "yq $YQ_VERSION cached"; return; }
  log "building yq $YQ_VERSION"
  GOBIN="$CACHE/gobin-yq" go install -trimpath -ldflags "-s -w" "github.com/mikefarah/yq/v4@$YQ_VERSION"
  mv "$CACHE/gobin-yq/yq" "$BIN/yq-$YQ_VERSION"
}

# Flux's controllers and CRDs: see build-flux.sh, sourced so it shares log, wrapper and the cache.
source "$HERE/build-flux.sh"
# Troubleshoot's preflight and support-bundle: see build-troubleshoot.sh (uses build-flux.sh's module_dir).
source "$HERE/build-troubleshoot.sh"

# No argument: the control plane's binaries. Otherwise only the ones named (etcd kwok kubernetes yq flux troubleshoot).
if [[ $# -eq 0 ]]; then set -- etcd kwok kubernetes; fi
for component in "$@"; do
  case "$component" in
    etcd|kwok|kubernetes|yq|flux|troubleshoot) "build_$component" ;;
    *) log "unknown component $component (etcd, kwok, kubernetes, yq, flux, troubleshoot)"; exit 2 ;;
  esac
done
log "binaries in $BIN"
