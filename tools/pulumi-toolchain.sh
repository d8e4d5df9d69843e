#!/usr/bin/env bash
# Makes the Pulumi engine available: `pulumi`, the language hosts a run needs and the dynamic-provider plugin
# script, all in one folder, from published modules and this project's own code only.
#
# Where each piece comes from, best first:
#   1. a `pulumi` v3 on PATH with the asked hosts beside it (a user's own install): used as is, nothing is built;
#   2. otherwise, built with the machine's Go from the Go module proxy and cached:
#      - `pulumi`: the CLI (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi), through our wrapper module tools/pulumi;
#      - the Node.js, Python and Go hosts: our own language host (tools/pulumi/language-host, one binary linked
#        under the three names), in the same module, so it shares the CLI's modules and build cache;
#      - the YAML host: Pulumi's published github.com/pulumi/pulumi-yaml, through our wrapper module
#        tools/pulumi-yaml (its own module: it needs older Pulumi modules than the CLI's), built only when asked.
# Every piece is cached outside the clone (~/.cache/gpu-rental, or $GPU_RENTAL_CACHE), keyed by version and by
# the files it is built from, and reused; a lock keeps two runs from building at once. Progress goes to stderr.
#
# Usage: pulumi-toolchain.sh [LANGUAGE...]   the hosts to provide besides Node.js's: python, go, yaml, or all
#                                            (default: nodejs only, what a TypeScript program needs)
# Prints one line: the folder holding `pulumi`, the hosts and the dynamic-provider script.
set -euo pipefail

VERSION=3.248.0
YAML_VERSION=1.25.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${GPU_RENTAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-rental}
say() { printf '[toolchain] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - ${1:-$started})) s"; }

# The hosts asked for: Node.js's always (the engine's dynamic providers run through it).
languages=(nodejs)
for language in "$@"; do
  case "$language" in
    all) languages=(nodejs python go yaml) ;;
    nodejs | python | go | yaml) [[ " ${languages[*]} " == *" $language "* ]] || languages+=("$language") ;;
    *) die "no language host for runtime \"$language\" here: gpu-rental's toolchain provides nodejs, python, go and yaml (for another runtime, install Pulumi with its host: https://www.pulumi.com/docs/install/)" ;;
  esac
done
wants() { [[ " ${languages[*]} " == *" $1 "* ]]; }

# The plugin the engine starts for a Node.js program's dynamic providers: ours (provider/dynamic-host.ts, built
# into dist/, with the server it serves with, provider-server.js), which loads far less than @pulumi/pulumi's own
# before it serves.
dynamic_host="$here/../dist/provider/dynamic-host.js"
provider_server="$here/../dist/provider/provider-server.js"
install_dynamic_host() {
  install -m 644 "$dynamic_host" "$1/dynamic-host.js"
  install -m 644 "$provider_server" "$1/provider-server.js"
  cat >"$1/pulumi-resource-pulumi-nodejs" <<'EOF'
#!/bin/sh
# gpu-rental's plugin for dynamic providers: see dynamic-host.js beside it.
dir=$(dirname "$0")
exec node "$dir/dynamic-host.js" "$@"
EOF
  chmod 755 "$1/pulumi-resource-pulumi-nodejs"
}

# 1. A user's own Pulumi, with every host asked for beside it.
if [ "${GPU_RENTAL_BUILD_PULUMI:-}" != 1 ] && command -v pulumi >/dev/null 2>&1; then
  bin=$(dirname "$(command -v pulumi)")
  missing=()
  for language in "${languages[@]}"; do [ -x "$bin/pulumi-language-$language" ] || missing+=("$language"); done
  if [ ${#missing[@]} -eq 0 ]; then
    say "using $(pulumi version 2>/dev/null) from PATH ($bin)"
    echo "$bin"
    exit 0
  fi
  say "the pulumi on PATH ($bin) has no host for ${missing[*]} beside it: building the toolchain instead"
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9 || die "could not take the lock $cache_root/.lock"

# Pulumi's modules come from the module proxy; the checksum database does not answer for them here, so their
# hashes are checked against the go.sum files committed beside our wrapper modules instead.
export GONOSUMDB=github.com/pulumi CGO_ENABLED=0 GOFLAGS=-mod=readonly
version_flag="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION"

# A short hash of the given files (folders: their files), in order: a change to them builds the piece again.
key_of() { find "$@" -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-12; }

# go_build <label> <module dir> <package> <output> [go build flags...]: prints a line every 100 packages.
go_build() {
  local label=$1 module=$2 package=$3 out=$4 count=0 from
  shift 4
  # Go is needed only to build what the cache does not have yet.
  command -v go >/dev/null 2>&1 ||
    die "no pulumi with the hosts asked for (${languages[*]}) is on PATH, and no Go to build $label: install the Pulumi CLI (https://www.pulumi.com/docs/install/), or Go 1.25 or later (https://go.dev/dl/)"
  from=$(date +%s)
  say "$label: compiling (minutes on 2 cores when Go's build cache is cold)"
  (cd "$module" && go build -v -trimpath -tags osusergo,grpcnotrace "$@" -o "$out" "$package" 2>&1) | while IFS= read -r line; do
    count=$((count + 1))
    case "$line" in
      *" "*) printf '%s\n' "$line" >&2 ;; # a message (package names have no spaces)
      *) [ $((count % 100)) -ne 0 ] || say "$label: $count packages compiled ($(elapsed "$from"))" ;;
    esac
  done
  [ -x "$out" ] || return 1
  say "$label: built in $(elapsed "$from")"
}

# cached <name> <key> <builder>: the folder holding a built piece, building it (atomically) when missing. Its time
# says when it was last used (pieces unused for two hours are removed by cli/cache-folders.ts).
cached() {
  local name=$1 key=$2 builder=$3 dir="$cache_root/$1-$2"
  if [ -e "$dir/.complete" ]; then touch "$dir"; else
    local work="$dir.partial.$$"
    rm -rf "$work" && mkdir -p "$work"
    if ! "$builder" "$work"; then rm -rf "$work"; return 1; fi
    touch "$work/.complete" && rm -rf "$dir" && mv "$work" "$dir"
  fi
  echo "$dir"
}

module="$here/pulumi"
build_cli() { go_build "pulumi CLI v$VERSION" "$module" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$1/pulumi" -ldflags "$version_flag"; }
build_host() {
  go_build "language host (Node.js, Python, Go)" "$module" ./language-host "$1/pulumi-language-host" -ldflags "-X main.version=$VERSION" &&
    install_dynamic_host "$1"
}
build_yaml() {
  go_build "YAML host (pulumi-yaml v$YAML_VERSION)" "$here/pulumi-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml \
    "$1/pulumi-language-yaml" -ldflags "-X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$YAML_VERSION"
}

cli=$(cached pulumi-cli-v$VERSION "$(key_of "$module/go.mod" "$module/go.sum" "$module/tools.go" "$module/zxcvbn")" build_cli) ||
  die "the Pulumi CLI did not build (see above)"
for built in "$dynamic_host" "$provider_server"; do [ -f "$built" ] || die "$built is missing: build gpu-rental first (npm run build)"; done
host=$(cached language-host-v$VERSION "$(key_of "$module/go.mod" "$module/go.sum" "$module/language-host" "$dynamic_host" "$provider_server")" build_host) ||
  die "the language host did not build (see above)"

# The engine looks for its language hosts and the dynamic-provider script beside the `pulumi` it runs, so all go
# in one folder (hard links where the file system allows, copies otherwise).
bin="$cache_root/toolchain-v$VERSION-$(basename "$cli" | rev | cut -d- -f1 | rev)-$(basename "$host" | rev | cut -d- -f1 | rev)/bin"
mkdir -p "$bin" && touch "$(dirname "$bin")"
place() { [ "$1" -ef "$bin/$2" ] || ln -f "$1" "$bin/$2" 2>/dev/null || cp -f "$1" "$bin/$2"; }
place "$cli/pulumi" pulumi.bin
# `pulumi` itself starts the CLI with Go's collector set for short runs, unless the environment sets GOGC: most
# commands live well under a second, much of it building tables at start, and collecting at five times the live
# heap instead of twice takes a sixth to a quarter off each command's CPU (`pulumi config set`, `up`).
cat >"$bin/pulumi.next" <<'EOF'
#!/bin/sh
# gpu-rental's toolchain: Pulumi's CLI (pulumi.bin, beside this script), with Go's collector set for short runs.
GOGC=${GOGC:-400} exec "$(dirname "$0")/pulumi.bin" "$@"
EOF
chmod 755 "$bin/pulumi.next" && mv -f "$bin/pulumi.next" "$bin/pulumi"
for language in nodejs python go; do place "$host/pulumi-language-host" "pulumi-language-$language"; done
if wants yaml; then
  yaml=$(cached language-yaml-v$YAML_VERSION "$(key_of "$here/pulumi-yaml")" build_yaml) || die "the YAML host did not build (see above)"
  place "$yaml/pulumi-language-yaml" pulumi-language-yaml
fi
for file in dynamic-host.js provider-server.js pulumi-resource-pulumi-nodejs; do place "$host/$file" "$file"; done
[ "$("$bin/pulumi" version)" = "v$VERSION" ] || die "the built pulumi reports $("$bin/pulumi" version)"
hosts=$(cd "$bin" && ls pulumi-language-* | sed 's/pulumi-language-//' | paste -sd, -)
say "ready in $(elapsed): pulumi v$VERSION with the language hosts for $hosts in $bin"
echo "$bin"
