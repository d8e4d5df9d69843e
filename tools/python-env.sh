#!/usr/bin/env bash
# The Python environment of Python Pulumi programs: the `pulumi` package of the engine's version (3.248.0) and what
# the SDKs that `pulumi package add` generates need, installed once from PyPI into a virtual environment cached
# outside the clone (~/.cache/gpu-rental, or $GPU_RENTAL_CACHE), keyed by that version and by the Python it runs on.
# A program's own environment reaches it through a .pth file (cli/python-env.ts), so each is made in seconds and
# stays the program's own. A lock keeps two runs from making it at once; progress goes to stderr.
#
# Usage: python-env.sh       prints the environment's site-packages folder
set -euo pipefail

VERSION=3.248.0
cache_root=${GPU_RENTAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-rental}
say() { printf '[python-env] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

command -v python3 >/dev/null 2>&1 || die "python3 (3.8 or newer, with venv) is needed for Python programs"
key=$(python3 -c 'import sys; print(sys.version, sys.executable)' | cat - <(echo "$VERSION") "$0" | sha256sum | cut -c1-12)
dir="$cache_root/python-pulumi-v$VERSION-$key"
mkdir -p "$cache_root"
exec 9>"$cache_root/.python-lock"
flock 9 || die "could not take the lock $cache_root/.python-lock"
if [ ! -e "$dir/.complete" ]; then
  started=$(date +%s)
  say "installing pulumi==$VERSION from PyPI into $dir"
  rm -rf "$dir"
  # Made in place (a virtual environment's scripts name its folder); complete only once .complete is written.
  python3 -m venv "$dir" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
    "pulumi==$VERSION" parver semver typing-extensions setuptools wheel >&2 || die "pip could not install pulumi==$VERSION (see above)"
  touch "$dir/.complete"
  say "ready in $(($(date +%s) - started)) s"
fi
"$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
