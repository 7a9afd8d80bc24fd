#!/usr/bin/env bash
# Builds kots-render (test tooling: KOTS's template rendering, see main.go) into the same cache as
# the control plane's binaries, named by a hash of its sources, so an unchanged renderer is never
# rebuilt and a changed one never reused. Prints the binary's path as its last line.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${HELM_INSTALLER_CACHE:-$HOME/.cache/helm-installer}"
BIN="$CACHE/bin"
export GOFLAGS="${GOFLAGS:--mod=readonly}" CGO_ENABLED=0
export GOMODCACHE="${GOMODCACHE:-$CACHE/gomod}" GOCACHE="${GOCACHE:-$CACHE/gobuild}" GOWORK=off

command -v go >/dev/null || { echo "[kots-render] go not found: kots-render is built from Go modules (Go >= 1.24)" >&2; exit 1; }

hash=$(cd "$HERE" && cat go.mod go.sum $(ls *.go | sort) | sha256sum | cut -c1-16)
out="$BIN/kots-render-$hash"
if [[ ! -x "$out" ]]; then
  echo "[kots-render] building $out" >&2
  mkdir -p "$BIN"
  (cd "$HERE" && go build -trimpath -ldflags "-s -w" -o "$out.tmp.$$" .)
  mv "$out.tmp.$$" "$out"
  # Builds of older sources pile up as the renderer changes: those built over a week ago go
  # (a checkout that still needs one rebuilds it here).
  find "$BIN" -maxdepth 1 -name 'kots-render-*' ! -name "kots-render-$hash" -mtime +7 -delete 2>/dev/null || true
fi
printf '%s\n' "$out"
