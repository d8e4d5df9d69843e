#!/usr/bin/env bash
# Makes the Pulumi engine available: `pulumi`, Pulumi's official Node.js language host and the dynamic-provider
# plugin script, all in one folder, plus the provider plugins that this machine cannot download.
#
# Where each piece comes from, best first:
#   engine + host  1. a `pulumi` v3 on PATH with `pulumi-language-nodejs` beside it (a user's own install): used
#                     as is, nothing is built, and plugins are downloaded by the engine as usual;
#                  2. otherwise the CLI is built from the Go module proxy (wrapper module tools/pulumi-cli), and
#                     the official host from its module on the proxy where the proxy serves it, else from its
#                     source (tools/third-party/pulumi-language-nodejs-*), built with the CLI's own Go modules.
#   plugins        the `command` provider (the plugin of @pulumi/command) from its source in tools/third-party,
#                  because the engine's own download fails on a machine like this one.
# Every piece is cached outside the clone (~/.cache/gpu-rental, or $GPU_RENTAL_CACHE), keyed by version and by
# the sources it is built from, and reused; a lock keeps two runs from building at once. Progress goes to stderr.
#
# Usage: pulumi-toolchain.sh              prints two lines: the folder holding pulumi and its host (a `bin`
#                                         folder when built here), then the folder of a provider plugin to install
#                                         into the Pulumi home in use (`<name>-v<version>-<key>`; empty if none)
set -euo pipefail

VERSION=3.248.0
COMMAND_VERSION=1.2.1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
third_party="$here/third-party"
cache_root=${GPU_RENTAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-rental}
say() { printf '[toolchain] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# A short hash of the files a piece is built from: a change to them builds it again.
key_of() { find "$@" -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' -o -name '*.sh' \) -print0 | sort -z |
  xargs -0 cat | sha256sum | cut -c1-12; }

# The plugin script the engine starts for dynamic providers; it ships in the npm package @pulumi/pulumi.
plugin_script() {
  local manifest
  manifest=$(node -p "require.resolve('@pulumi/pulumi/package.json', { paths: [process.cwd(), '$here'] })" 2>/dev/null) ||
    die "@pulumi/pulumi is not installed here (it is a peer dependency of gpu-rental): run npm install first"
  echo "$(dirname "$manifest")/pulumi-resource-pulumi-nodejs"
}

# 1. A user's own Pulumi.
if command -v pulumi >/dev/null 2>&1 && [ -x "$(dirname "$(command -v pulumi)")/pulumi-language-nodejs" ] &&
  [ "${GPU_RENTAL_BUILD_PULUMI:-}" != 1 ]; then
  bin=$(dirname "$(command -v pulumi)")
  say "using $(pulumi version 2>/dev/null) from PATH ($bin)"
  echo "$bin"
  # Plugin downloads are off in our workspaces: a command plugin built here before is still handed on.
  built=""
  for dir in "$cache_root"/command-v"$COMMAND_VERSION"-*; do
    if [ -f "$dir/.complete" ]; then built=$dir; break; fi
  done
  echo "$built"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go is needed to build the Pulumi CLI (no pulumi with a Node.js language host on PATH)"
mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9 || die "could not take the lock $cache_root/.lock"

# Pulumi's modules come from the module proxy; the checksum database does not answer for them here, so their
# hashes are checked against the go.sum files committed beside the modules instead.
export GONOSUMDB=github.com/pulumi CGO_ENABLED=0
ldflags="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION"
started=$(date +%s)

# go_build <label> <module dir> <package> <output> [go build flags...]: prints a line every 100 packages.
go_build() {
  local label=$1 module=$2 package=$3 out=$4 count=0
  shift 4
  say "$label: compiling (a cold build takes minutes on 2 cores)"
  (cd "$module" && go build -v -trimpath -tags osusergo,grpcnotrace "$@" -o "$out" "$package" 2>&1) | while IFS= read -r line; do
    count=$((count + 1))
    case "$line" in
      *" "*) printf '%s\n' "$line" >&2 ;; # a message (package names have no spaces)
      *) [ $((count % 100)) -ne 0 ] || say "$label: $count packages compiled ($(($(date +%s) - started)) s)" ;;
    esac
  done
  [ -x "$out" ]
}

# cached <name> <key> <builder>: the folder holding a built piece, building it (atomically) when missing.
cached() {
  local name=$1 key=$2 builder=$3 dir="$cache_root/$1-$2"
  if [ ! -e "$dir/.complete" ]; then
    local work="$dir.partial.$$"
    rm -rf "$work" && mkdir -p "$work"
    if ! "$builder" "$work"; then rm -rf "$work"; return 1; fi
    touch "$work/.complete" && rm -rf "$dir" && mv "$work" "$dir"
  fi
  echo "$dir"
}

build_cli() {
  say "pulumi CLI v$VERSION: downloading modules"
  (cd "$here/pulumi-cli" && GOFLAGS=-mod=readonly go mod download) &&
    GOFLAGS=-mod=readonly go_build "pulumi CLI v$VERSION" "$here/pulumi-cli" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$1/pulumi" -ldflags "$ldflags"
}

# The official host's module at the release commit, where the module proxy serves it (this one refuses it).
build_host_from_proxy() {
  local module=github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 commit=a88168d865b7 wrapper="$1/wrapper"
  cp -r "$here/pulumi-cli" "$wrapper" && chmod -R u+w "$wrapper"
  (cd "$wrapper" && GOFLAGS=-mod=mod go get "$module@$commit" >/dev/null 2>&1) || return 1
  GOFLAGS=-mod=mod go_build "official Node.js host (module proxy)" "$wrapper" "$module" "$1/pulumi-language-nodejs" -ldflags "$ldflags"
  local ok=$?
  rm -rf "$wrapper"
  return $ok
}

build_host_from_source() {
  local src
  src=$(ls -d "$third_party"/pulumi-language-nodejs-v"$VERSION" 2>/dev/null) || return 1
  GOFLAGS=-mod=readonly go_build "official Node.js host (source)" "$src" . "$1/pulumi-language-nodejs" -ldflags "$ldflags"
}

build_official_host() { build_host_from_proxy "$1" || build_host_from_source "$1"; }

build_command_plugin() {
  GOFLAGS=-mod=readonly go_build "command provider plugin v$COMMAND_VERSION" "$third_party/pulumi-command-v$COMMAND_VERSION/provider" \
    ./cmd/pulumi-resource-command "$1/pulumi-resource-command" \
    -ldflags "-X github.com/pulumi/pulumi-command/provider/pkg/version.Version=v$COMMAND_VERSION"
}

# --- Python and YAML programs ---------------------------------------------------------------------------------
# Pulumi's official hosts for them, built from their sources (tools/third-party) and cached like the Node.js one;
# they go beside `pulumi` in the same bin folder, where the engine looks for `pulumi-language-<runtime>`.
PYTHON_HOST=pulumi-language-python-v$VERSION
YAML_HOST=pulumi-language-yaml-v1.37.0-3-gde455163

# The key of a host: its Go sources and build script, plus the scripts that ship beside the binary (Python's).
host_key() { { key_of "$1"; find "$1" -maxdepth 1 -type f -name 'pulumi-*' -print0 | sort -z | xargs -0 -r cat; } | sha256sum | cut -c1-12; }

# build_language_host <source folder> <out>: the source's own build.sh, timed (it prints nothing while compiling).
build_language_host() {
  local from
  from=$(date +%s)
  say "$(basename "$1"): compiling (about 30 s once the CLI's modules are cached)"
  bash "$1/build.sh" "$2" >/dev/null || return 1
  say "$(basename "$1"): built in $(($(date +%s) - from)) s"
}
build_python_host() { build_language_host "$third_party/$PYTHON_HOST" "$1"; }
build_yaml_host() { build_language_host "$third_party/$YAML_HOST" "$1"; }

# other_language_hosts <bin>: builds (or takes from the cache) each host whose source is here and links its files
# into <bin>; prints what it placed ("Python and YAML hosts"). A host that fails to build stops the toolchain.
other_language_hosts() {
  local bin=$1 placed="" name source builder dir file
  for name in Python YAML; do
    if [ $name = Python ]; then source=$PYTHON_HOST builder=build_python_host; else source=$YAML_HOST builder=build_yaml_host; fi
    [ -d "$third_party/$source" ] || continue
    dir=$(cached "$(echo "$source" | cut -d- -f1-4)" "$(host_key "$third_party/$source")" $builder) ||
      die "Pulumi's $name language host did not build (see above)"
    for file in "$dir"/pulumi-*; do
      [ "$file" -ef "$bin/$(basename "$file")" ] || ln -f "$file" "$bin/" 2>/dev/null || cp -f "$file" "$bin/"
    done
    placed="${placed:+$placed and }$name"
  done
  echo "${placed:+$placed hosts}"
}

cli=$(cached pulumi-cli-v$VERSION "$(key_of "$here/pulumi-cli")" build_cli) || die "the Pulumi CLI did not build (see above)"
host=$(cached language-nodejs-v$VERSION "$(key_of "$third_party/pulumi-language-nodejs-v$VERSION")" build_official_host) ||
  die "the official Node.js language host did not build (see above)"
plugins=""
if [ -d "$third_party/pulumi-command-v$COMMAND_VERSION" ]; then
  plugins=$(cached command-v$COMMAND_VERSION "$(key_of "$third_party/pulumi-command-v$COMMAND_VERSION")" build_command_plugin) ||
    die "the command provider plugin did not build (see above)"
fi

# The engine looks for its language host and the dynamic-provider script beside the `pulumi` it runs, so the
# three go in one folder (hard links where the file system allows, copies otherwise).
bin="$cache_root/toolchain-v$VERSION-$(basename "$cli" | rev | cut -d- -f1 | rev)-$(basename "$host")/bin"
mkdir -p "$bin"
for file in "$cli/pulumi" "$host/pulumi-language-nodejs"; do
  [ "$file" -ef "$bin/$(basename "$file")" ] || ln -f "$file" "$bin/" 2>/dev/null || cp -f "$file" "$bin/"
done
script=$(plugin_script)
cmp -s "$script" "$bin/pulumi-resource-pulumi-nodejs" || install -m 755 "$script" "$bin/"
[ "$("$bin/pulumi" version)" = "v$VERSION" ] || die "the built pulumi reports $("$bin/pulumi" version)"
langs_ready=$(other_language_hosts "$bin")
say "ready in $(($(date +%s) - started)) s: pulumi v$VERSION with the official Node.js host${langs_ready:+, $langs_ready} in $bin${plugins:+; plugins in $plugins}"
echo "$bin"
echo "$plugins"
