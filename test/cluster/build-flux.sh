# Flux's source-controller and kustomize-controller, and the HelmRelease CRD, built from their Go
# modules for the Flux proof of `export`. Sourced by build-binaries.sh (`build-binaries.sh flux`),
# which sets the versions, BIN, CACHE, log and wrapper.
# Outputs: $BIN/<controller>-<version>, and the CRDs in $CACHE/flux-crds/<name>-<version>/.

# Module dir in the (read-only) module cache; $1 = module@version.
module_dir() { go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'; }

# Copies a finished directory into place last, so an interrupted copy never looks complete.
install_dir() { # $1 = source dir, $2 = destination
  rm -rf "$2.tmp" && mkdir -p "$2.tmp" && cp -r "$1/." "$2.tmp/" && chmod -R u+w "$2.tmp"
  rm -rf "$2" && mv "$2.tmp" "$2"
}

# $1 = source-controller | kustomize-controller, $2 = version, $3 = `go mod edit -replace` specs
# (space separated) for dependency versions the proxy does not serve.
build_flux_controller() {
  local name=$1 version=$2 pins=${3:-} pin out="$BIN/$1-$2" crds="$CACHE/flux-crds/$1-$2"
  [[ -x "$out" && -d "$crds" ]] && { log "$name $version cached"; return; }
  local started=$SECONDS src dir
  log "building $name $version (slow the first time: Go $FLUX_GOTOOLCHAIN and all its modules)"
  src=$(module_dir "github.com/fluxcd/$name@$version")
  # go.mod has `replace .../api => ./api`, a nested module that the module zip leaves out, so
  # `go install pkg@version` fails; building a writable copy without that replace uses the
  # published api module of the version go.mod requires.
  dir=$(wrapper "$name-$version")
  cp -r "$src/." "$dir/" && chmod -R u+w "$dir"
  (cd "$dir" && go mod edit -dropreplace="github.com/fluxcd/$name/api")
  for pin in $pins; do (cd "$dir" && go mod edit -replace="$pin"); done
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -tags netgo,osusergo -o "$out.tmp" .)
  mv "$out.tmp" "$out"
  install_dir "$src/config/crd/bases" "$crds"
  log "$name $version built in $((SECONDS - started))s"
}

build_controller_gen() {
  local out="$BIN/controller-gen-$CONTROLLER_GEN_VERSION"
  [[ -x "$out" ]] && return
  log "building controller-gen $CONTROLLER_GEN_VERSION"
  GOBIN="$CACHE/gobin-controller-gen" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
  mv "$CACHE/gobin-controller-gen/controller-gen" "$out"
}

# The HelmRelease CRD (all served versions), generated as helm-controller's Makefile does.
build_helmrelease_crd() {
  local out="$CACHE/flux-crds/helm-controller-api-$FLUX_HELM_API_VERSION"
  [[ -d "$out" ]] && { log "HelmRelease CRD $FLUX_HELM_API_VERSION cached"; return; }
  build_controller_gen
  local started=$SECONDS src dir
  log "generating the HelmRelease CRD from helm-controller/api $FLUX_HELM_API_VERSION"
  src=$(module_dir "github.com/fluxcd/helm-controller/api@$FLUX_HELM_API_VERSION")
  dir=$(wrapper "helm-controller-api-$FLUX_HELM_API_VERSION")
  cp -r "$src/." "$dir/" && chmod -R u+w "$dir"
  (cd "$dir" && "$BIN/controller-gen-$CONTROLLER_GEN_VERSION" crd:crdVersions=v1 paths=./... \
    output:crd:artifacts:config="$dir/crds")
  install_dir "$dir/crds" "$out"
  log "HelmRelease CRD generated in $((SECONDS - started))s"
}

build_flux() {
  # Only here: the control plane keeps building with the machine's Go.
  local GOTOOLCHAIN=$FLUX_GOTOOLCHAIN; export GOTOOLCHAIN
  build_flux_controller source-controller "$FLUX_SOURCE_VERSION" "$FLUX_SOURCE_PINS"
  build_flux_controller kustomize-controller "$FLUX_KUSTOMIZE_VERSION"
  build_helmrelease_crd
}
