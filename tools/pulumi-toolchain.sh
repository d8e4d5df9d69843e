#!/usr/bin/env bash
# Makes the Pulumi engine available: `pulumi` v3.248.0 and `pulumi-language-nodejs`.
#
# 1. A compatible `pulumi` already on PATH (same version, with a Node language host beside it) is used as is.
# 2. Otherwise both are built from Go modules into a cache outside the clone, keyed by version and by the
#    sources of our wrapper modules, and reused on later runs.
#
# The official language host module is not obtainable from the module proxy here, so the host is our own
# (tools/language-host, see its README). The engine wants `pulumi-resource-pulumi-nodejs` (the dynamic-provider
# plugin script of the npm package @pulumi/pulumi) beside them: it is copied in from node_modules.
# Progress goes to stderr; the last line on stdout is the folder holding all three.
set -euo pipefail

VERSION=3.248.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { printf '[toolchain] %s\n' "$*" >&2; }

if command -v pulumi >/dev/null 2>&1 && [ "$(pulumi version 2>/dev/null)" = "v$VERSION" ] &&
  command -v pulumi-language-nodejs >/dev/null 2>&1; then
  say "using pulumi v$VERSION from PATH ($(command -v pulumi))"
  dirname "$(command -v pulumi)"
  exit 0
fi

command -v go >/dev/null 2>&1 || { say "error: Go is needed to build the Pulumi CLI (no pulumi v$VERSION on PATH)"; exit 1; }

key=$(cat "$here"/pulumi-cli/go.mod "$here"/pulumi-cli/go.sum "$here"/language-host/go.mod "$here"/language-host/go.sum \
  "$here"/language-host/*.go | sha256sum | cut -c1-12)
cache_root=${GPU_RENTAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-rental}
dir="$cache_root/pulumi-v$VERSION-$key"

plugin_script="$here/../node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"
add_plugin_script() { # the script resolves the provider host from the program's folder: one copy serves all
  [ -f "$plugin_script" ] || { say "error: $plugin_script is missing: run npm ci first"; exit 1; }
  cmp -s "$plugin_script" "$1/pulumi-resource-pulumi-nodejs" || install -m 755 "$plugin_script" "$1/"
}

if [ -x "$dir/bin/pulumi" ] && [ -x "$dir/bin/pulumi-language-nodejs" ]; then
  say "using cached pulumi v$VERSION ($dir/bin)"
  add_plugin_script "$dir/bin"
  echo "$dir/bin"
  exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
say "taking the toolchain lock ($cache_root/.lock)"
flock 9
if [ -x "$dir/bin/pulumi" ] && [ -x "$dir/bin/pulumi-language-nodejs" ]; then
  say "built meanwhile by another run: $dir/bin"
  add_plugin_script "$dir/bin"
  echo "$dir/bin"
  exit 0
fi

work="$dir.partial.$$"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
# Pulumi's modules are fetched from the module proxy; the checksum database does not answer for them here,
# so their hashes are checked against the go.sum files committed beside the wrapper modules instead.
export GONOSUMDB=github.com/pulumi GOFLAGS=-mod=readonly CGO_ENABLED=0
flags=(-trimpath -tags osusergo,grpcnotrace)
started=$(date +%s)

build() { # build <module dir> <package> <output> <label>
  local module=$1 package=$2 out=$3 label=$4 count=0
  say "$label: downloading modules"
  (cd "$module" && go mod download)
  say "$label: compiling (a cold build takes several minutes on 2 cores)"
  if ! (cd "$module" && go build -v "${flags[@]}" \
    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION" -o "$out" "$package" 2>&1) |
    while IFS= read -r line; do
      count=$((count + 1))
      case "$line" in
        *.go:*) printf '%s\n' "$line" >&2 ;; # compiler messages, not package names
        *) [ $((count % 100)) -ne 0 ] || say "$label: $count packages compiled ($(($(date +%s) - started)) s)" ;;
      esac
    done || [ ! -x "$out" ]; then
    say "$label: build failed (see the messages above)"
    exit 1
  fi
}

build "$here/pulumi-cli" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$work/bin/pulumi" "pulumi CLI v$VERSION"
build "$here/language-host" . "$work/bin/pulumi-language-nodejs" "Node language host"

add_plugin_script "$work/bin"
[ "$("$work/bin/pulumi" version)" = "v$VERSION" ] || { say "error: built pulumi reports $("$work/bin/pulumi" version)"; exit 1; }
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
say "built in $(($(date +%s) - started)) s: $dir/bin"
echo "$dir/bin"
