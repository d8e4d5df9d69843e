"""`gpu-rental`, the command of gpu-rental's Python SDK, for teams with no Node.js.

The release's self-contained executable of the provider plugin also serves the command (when its first argument
is `gpu-rental`: release/executable.ts). This runs that executable: the one the engine downloaded into
the Pulumi plugins, else one fetched from where the engine fetches it (the server this SDK's pulumi-plugin.json
names): by the Pulumi CLI where it is installed, so that the engine finds it there too, or straight from the
release's folder otherwise, into gpu-rental's cache. The release's tooling copies this file into the SDK as
pulumi_gpu_rental/_command.py (release/python-sdk.ts).
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from importlib import resources
from typing import NoReturn, Optional

COMMAND = "gpu-rental"
EXECUTABLE = "pulumi-resource-gpu-rental"


def main() -> None:
    manifest = json.loads(resources.files(__package__).joinpath("pulumi-plugin.json").read_text())
    version, server = manifest["version"], manifest.get("server")
    executable = _found(version) or _fetched(version, server)
    argv = [executable, COMMAND, *sys.argv[1:]]
    if os.name == "nt":
        sys.exit(subprocess.call(argv))
    os.execv(executable, argv)


def _found(version: str) -> Optional[str]:
    """The executable of `version` where the engine installs plugins, or where this command fetched one before."""
    plugins = os.path.join(os.environ.get("PULUMI_HOME") or os.path.join(os.path.expanduser("~"), ".pulumi"), "plugins")
    folder = os.path.join(plugins, f"resource-{COMMAND}-v{version}")
    for candidate in (folder, _cache_folder(version)):
        # The engine marks a plugin it is still unpacking with a .partial file beside its folder.
        if candidate == folder and os.path.exists(f"{folder}.partial"):
            continue
        for name in _executable_names():
            executable = os.path.join(candidate, name)
            if os.path.isfile(executable) and os.access(executable, os.X_OK):
                return executable
    return None


def _fetched(version: str, server: Optional[str]) -> str:
    pulumi = shutil.which("pulumi")
    if pulumi:
        args = [pulumi, "plugin", "install", "resource", COMMAND, f"v{version}", *(["--server", server] if server else [])]
        _say(f"fetching gpu-rental v{version}'s executable once: {' '.join(args[1:])}")
        done = subprocess.run(args, stdout=sys.stderr)
        if done.returncode != 0:
            _fail(f"`{' '.join(args[1:])}` failed (exit {done.returncode}; its messages are above)")
    else:
        _download(version, server)
    executable = _found(version)
    if not executable:
        _fail(f"gpu-rental v{version}'s executable was fetched, but no {EXECUTABLE} is where it was put")
    return executable


def _download(version: str, server: Optional[str]) -> None:
    """The release's archive for this platform from `server`, unpacked into gpu-rental's cache (no Pulumi CLI here)."""
    archive = f"{EXECUTABLE}-v{version}-{_platform()}.tar.gz"
    server = _mirrored(server) if server else server
    if server and server.startswith(("http://", "https://")):
        url = f"{server.rstrip('/')}/{archive}"
    elif server and server.startswith("github://api.github.com/"):
        owner_repository = server[len("github://api.github.com/"):].strip("/")
        url = f"https://github.com/{owner_repository}/releases/download/v{version}/{archive}"
    else:
        _fail(f"this SDK names no place to fetch gpu-rental's executable from that this command can read ({server!r}): install the Pulumi CLI (https://www.pulumi.com/docs/install/) and run it again")
    folder = _cache_folder(version)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    _say(f"fetching gpu-rental v{version}'s executable once, from {url} (there is no pulumi on PATH to fetch it)")
    stage = tempfile.mkdtemp(prefix=f"{os.path.basename(folder)}.partial-", dir=os.path.dirname(folder))
    try:
        with urllib.request.urlopen(url) as answer, tempfile.TemporaryFile() as file:
            shutil.copyfileobj(answer, file)
            file.seek(0)
            with tarfile.open(fileobj=file, mode="r:gz") as tar:
                tar.extractall(stage, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        if not os.path.exists(folder):  # else another run fetched it meanwhile
            os.replace(stage, folder)
    except OSError as error:
        _fail(f"could not fetch {url}: {error}")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _mirrored(server: str) -> str:
    """The place of `server` after PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES, read as the engine reads it (a team's mirror
    of plugin downloads): `regexp=URL` pairs, comma-separated; the first whose regexp matches gives the URL, its
    `$1` and `${name}` filled with what the groups matched."""
    for pair in filter(None, os.environ.get("PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES", "").split(",")):
        pattern, _, url = pair.partition("=")
        match = re.search(pattern, server)
        if match:
            for index in range(len(match.groups()), -1, -1):  # $10 before $1
                url = url.replace(f"${index}", match.group(index) or "")
            for name, group in match.groupdict().items():
                url = url.replace("${%s}" % name, group or "")
            return url
    return server


def _cache_folder(version: str) -> str:
    cache = os.environ.get("GPU_RENTAL_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gpu-rental")
    return os.path.join(cache, f"release-v{version}-{_platform()}")


def _platform() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(platform.system(), platform.system().lower())
    machine = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), platform.machine().lower())
    return f"{system}-{machine}"


def _executable_names() -> "list[str]":
    """The self-contained executable, or a launcher of the bundle (Windows: .exe, .cmd)."""
    return [f"{EXECUTABLE}.exe", f"{EXECUTABLE}.cmd"] if os.name == "nt" else [EXECUTABLE]


def _say(line: str) -> None:
    print(f"{COMMAND}: {line}", file=sys.stderr)


def _fail(line: str) -> NoReturn:
    _say(line)
    sys.exit(1)
