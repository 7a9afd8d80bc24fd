# Troubleshoot's `preflight` and `support-bundle` CLIs, built from the Go module for the proof that
# the specs `troubleshoot-specs` writes run as Troubleshoot runs them. Sourced by build-binaries.sh
# (`build-binaries.sh troubleshoot`), which sets BIN, CACHE, log, wrapper; module_dir is build-flux.sh's.
# Outputs: $BIN/preflight-<version>, $BIN/support-bundle-<version>.

# go.mod has a `replace` block, so `go install ...@version` refuses; a writable copy of the module
# source builds both commands with the release's own build tags (no cgo, no graph drivers).
TROUBLESHOOT_TAGS="netgo containers_image_ostree_stub exclude_graphdriver_devicemapper exclude_graphdriver_btrfs containers_image_openpgp"

build_troubleshoot() {
  local version=$TROUBLESHOOT_VERSION pf="$BIN/preflight-$TROUBLESHOOT_VERSION" sb="$BIN/support-bundle-$TROUBLESHOOT_VERSION"
  [[ -x "$pf" && -x "$sb" ]] && { log "troubleshoot $version cached"; return; }
  local started=$SECONDS src dir
  log "building troubleshoot $version (slow the first time: about 25 min and 1.5 GiB of modules on 2 busy cores)"
  src=$(module_dir "github.com/replicatedhq/troubleshoot@$version")
  dir=$(wrapper "troubleshoot-$version")
  cp -r "$src/." "$dir/" && chmod -R u+w "$dir"
  local ld="-s -w -X github.com/replicatedhq/troubleshoot/pkg/version.version=$version"
  (cd "$dir" && go build -trimpath -ldflags "$ld" -tags "$TROUBLESHOOT_TAGS" -o "$pf.tmp" ./cmd/preflight)
  mv "$pf.tmp" "$pf"
  (cd "$dir" && go build -trimpath -ldflags "$ld" -tags "$TROUBLESHOOT_TAGS" -o "$sb.tmp" ./cmd/troubleshoot)
  mv "$sb.tmp" "$sb"
  log "troubleshoot $version built in $((SECONDS - started))s"
}
