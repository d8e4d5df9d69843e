"""A fork server for the `vastai` console script, so that each call of the tests does not pay for loading
Python's and the client's third-party libraries again (0.48 s of the 0.57 s CPU of a call).

Usage: <venv>/bin/python vastai-forkserver.py <venv>/bin/vastai, started with the environment the calls use.
At start it imports what `from vastai.cli.main import main` loads besides vastai's own modules (aiohttp,
requests, pkg_resources, distutils, ...: found by importing it in a throwaway child), never vastai itself.
Then, for each request line on stdin, {"id", "argv", "env", "cwd", "stdin", "timeout"}, it forks a child
that becomes the call's process: environment, cwd, fds 0/1/2 (UNIX socket pairs, which are what execFile
gives a process), sys.argv, then the console script itself run as __main__ (`from vastai.cli.main import main;
sys.exit(main())`), which imports vastai fresh, and the interpreter's exit. Its reply line is {"id", "code",
"stdout", "stderr"}; `code` is null for a child killed by a signal, as for one outliving its timeout (SIGTERM,
as execFile's). Calls run concurrently. VastaiCli starts it as execFile starts the script (same environment,
stdio socket pairs), so the sys.stdin/stdout/stderr objects a child keeps from it are the script's own.
"""
import atexit
import importlib
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import threading
import time

SCRIPT = os.path.abspath(sys.argv[1])
# The script's folder first on sys.path, as for `python <script>`; not this file's.
sys.path[0] = os.path.dirname(SCRIPT)


def read_all(fd):
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def preload():
    """Imports the modules importing vastai's entry point loads, other than vastai's own (listed by a child)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:  # a failure leaves the list empty; the calls then show it
            os.close(r)
            before = set(sys.modules)
            from vastai.cli.main import main  # noqa: F401
            names = [n for n in sys.modules if n not in before and n.split(".")[0] != "vastai"]
            with os.fdopen(w, "w") as out:
                out.write("\n".join(names))
        finally:
            os._exit(0)
    os.close(w)
    names = read_all(r).decode().split("\n")
    os.waitpid(pid, 0)
    # And those main() imports with the command modules (whose import cannot be done here: it fetches the GPU
    # names from the emulator and caches them in the home, a call's work).
    names += ["argcomplete", "rich.console", "rich.table", "rich.panel", "rich.padding", "rich.prompt", "rich.tree", "statistics"]
    for name in names:  # in the order they were loaded
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # not importable by name (cython_runtime and the like: loaded again by what needs them)
    if any(n.split(".")[0] == "vastai" for n in sys.modules):
        sys.exit("vastai-forkserver: a preloaded module imported vastai")
    if threading.active_count() > 1 or len(os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []) > 1:
        sys.exit("vastai-forkserver: a preloaded module started a thread, which forking would not copy")


class Call:
    def __init__(self, request):
        self.id = request["id"]
        self.deadline = time.monotonic() + request["timeout"] / 1000
        self.stdin = request["stdin"].encode()
        self.out, self.err = bytearray(), bytearray()
        self.open = 2  # stdout and stderr not at EOF yet
        self.status = None  # the wait status, once reaped
        self.fds = []  # this server's ends of the child's stdio, still open


def become(request, fds):
    """In the child: the call's process, about to run the console script."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = [SCRIPT, *request["argv"]]


def socket_pair():
    """A connected pair of fds, the child's and ours, as libuv (so execFile) makes for each stdio of a process."""
    child, server = socket.socketpair()
    return child.detach(), server.detach()


def serve():
    """Runs calls until stdin ends; returns only in a forked child, with its request."""
    sel = selectors.DefaultSelector()
    # SIGCHLD wakes the select loop through this pipe: a child's exit is reaped at once, with no polling.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    sel.register(0, selectors.EVENT_READ, "requests")
    calls = {}  # pid -> Call
    pending = b""
    reading = True

    def reply(pid):
        call = calls[pid]
        if call.open or call.status is None:
            return
        del calls[pid]
        code = os.waitstatus_to_exitcode(call.status)
        line = {"id": call.id, "code": code if code >= 0 else None,
                "stdout": call.out.decode("utf-8", "replace"), "stderr": call.err.decode("utf-8", "replace")}
        data = (json.dumps(line) + "\n").encode()
        while data:
            data = data[os.write(1, data):]

    while reading or calls:
        now = time.monotonic()
        for pid, call in calls.items():
            if call.status is None and now >= call.deadline:
                os.kill(pid, signal.SIGTERM)
                call.deadline = float("inf")
        timeout = min((c.deadline for c in calls.values()), default=now + 3600) - now
        for key, _ in sel.select(max(timeout, 0)):
            what = key.data
            if what == "wake":
                os.read(wake_r, 4096)
                for pid in [pid for pid, call in calls.items() if call.status is None]:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        calls[pid].status = status
                        reply(pid)
            elif what == "requests":
                chunk = os.read(0, 1 << 16)
                if not chunk:  # no more requests: exit once the calls running are answered
                    reading = False
                    sel.unregister(0)
                    continue
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    request = json.loads(line)
                    theirs, ours = zip(*(socket_pair() for _ in range(3)))  # for fds 0, 1, 2
                    sys.stdout.flush()
                    sys.stderr.flush()
                    pid = os.fork()
                    if pid == 0:
                        sel.close()
                        become(request, [*theirs, *ours, wake_r, wake_w, *(fd for c in calls.values() for fd in c.fds)])
                        return request
                    for fd in theirs:
                        os.close(fd)
                    call = calls[pid] = Call(request)
                    call.fds = list(ours)
                    os.set_blocking(ours[0], False)
                    for fd, stream in zip(ours, ("stdin", "out", "err")):
                        sel.register(fd, selectors.EVENT_WRITE if stream == "stdin" else selectors.EVENT_READ, (pid, stream))
            else:
                pid, stream = what
                call = calls[pid]
                if stream == "stdin":
                    try:
                        call.stdin = call.stdin[os.write(key.fd, call.stdin):] if call.stdin else b""
                    except BrokenPipeError:
                        call.stdin = b""  # the child closed its stdin: what it did not read is dropped
                    if not call.stdin:
                        sel.unregister(key.fd)
                        os.close(key.fd)
                        call.fds.remove(key.fd)
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    (call.out if stream == "out" else call.err).extend(chunk)
                    continue
                sel.unregister(key.fd)
                os.close(key.fd)
                call.fds.remove(key.fd)
                call.open -= 1
                reply(pid)
    sys.exit(0)


preload()
request = serve()
# Only a forked child gets here, as the call's process: the console script, as `python bin/vastai` runs it.
try:
    runpy.run_path(SCRIPT, run_name="__main__")
    code = 0
except SystemExit as stop:
    # The exit status the interpreter makes of it: None is 0, an int itself, anything else printed and 1.
    code = stop.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
except BaseException as error:
    # What the interpreter prints for an uncaught exception, without this server's and runpy's frames.
    tb = error.__traceback__
    while tb and tb.tb_frame.f_code.co_filename != SCRIPT:
        tb = tb.tb_next
    sys.excepthook(type(error), error, tb or error.__traceback__)
    code = 1
# The interpreter's exit as far as it shows (Py_FinalizeEx): it waits for the threads not daemonic, runs the
# atexit functions, flushes stdout and stderr (120 if that fails). Then os._exit skips the teardown of every
# module's objects: CPU on every call (the server's pages copied on write to free them), and nothing this
# client's calls show (no finalizer of theirs prints; the test comparing with bin/vastai checks their output).
threading._shutdown()
atexit._run_exitfuncs()
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except Exception:
        code = 120
os._exit(code)

