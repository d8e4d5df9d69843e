"""gpu-rental's launcher of Python Pulumi programs: the language host (python.go) runs it with the program's own
Python as `python -c <this file> <job>`, on the `pulumi` package of the program's virtual environment.

  run      starts the program that the launch in GPU_RENTAL_PYTHON_LAUNCH (JSON, see pythonLaunch in python.go)
           describes: the engine's settings, the stack's config, the entry point and the program's arguments.
  plugins  prints, as JSON, each installed distribution's pulumi-plugin.json (the provider plugins that generated
           SDKs declare) with the distribution's version.
"""
import json
import os
import sys

# The exit code by which the host (and the engine) know the program already told the engine what went wrong.
TOLD_THE_ENGINE = 32

# Settings arrive as text; these of pulumi.runtime.Settings' arguments take other types.
TYPED_SETTINGS = {"dry_run": lambda text: text == "true", "parallel": int}


def list_plugins():
    from importlib import metadata

    declared = [
        {"file": str(dist.locate_file(path)), "version": dist.version}
        for dist in metadata.distributions()
        for path in (dist.files or [])
        if path.name == "pulumi-plugin.json"
    ]
    json.dump(declared, sys.stdout)


def leave_now(signum, frame):
    """The engine stops the program (a cancel, or an error it has already shown, such as a refused input): the
    program ends at once, without a traceback of wherever its threads were waiting on the engine."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(TOLD_THE_ENGINE)


def import_pulumi():
    try:
        import pulumi
        import pulumi.runtime
    except ImportError as missing:
        sys.stderr.write(
            f"This program's Python ({sys.executable}) cannot import pulumi: {missing}.\n"
            "Add pulumi to the program's requirements.txt and run `pulumi install` in its folder.\n"
        )
        sys.exit(1)
    return pulumi


def entry_file(program):
    """The file to run: the entry point itself, or a folder's __main__.py; None when there is none."""
    main = os.path.join(program, "__main__.py") if os.path.isdir(program) else program
    return main if os.path.isfile(main) else None


def run_as_main(path):
    """Runs the file at path as the __main__ module, as `python path` would."""
    import builtins
    import types

    module = types.ModuleType("__main__")
    module.__file__, module.__builtins__ = path, builtins
    sys.modules["__main__"] = module
    with open(path, "rb") as source:
        code = compile(source.read(), path, "exec")
    exec(code, module.__dict__)


class ProgramLoop:
    """The program's event loop. The SDK makes each engine call on the loop's executor, where a call holds a thread
    until the engine answers: a creation for as long as it takes. The pool is as wide as the engine's parallelism,
    with room for the reads and invokes beside it. Once the program has failed, asyncio's complaints about the
    futures nobody will await are dropped: they would bury the error."""

    def __init__(self, parallel):
        self.width = min(max(parallel, 1), 512) + 8
        self.failed = False

    def __enter__(self):
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        self.loop = asyncio.new_event_loop()
        self.pool = ThreadPoolExecutor(max_workers=self.width, thread_name_prefix="engine-call")
        self.loop.set_default_executor(self.pool)
        self.loop.set_exception_handler(self.on_stray_error)
        asyncio.set_event_loop(self.loop)
        return self

    def on_stray_error(self, loop, context):
        if not self.failed:
            loop.default_exception_handler(context)

    def __exit__(self, *error):
        self.pool.shutdown(wait=True)
        self.loop.close()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        return False


def own_frames_report(error, root):
    """An error the program raised and did not handle, with the traceback from the program's own first frame on
    (the frames of this launcher and of the SDK above it say nothing to the program's author)."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    venv = os.path.realpath(sys.prefix)

    def is_own(frame):
        where = os.path.realpath(frame.filename)
        return where.startswith(root) and not where.startswith(venv)

    first = next((i for i, frame in enumerate(frames) if is_own(frame)), 0)
    shown = "".join(traceback.format_list(frames[first:]))
    return f"The program raised {type(error).__name__} and did not handle it:\n{shown}{type(error).__name__}: {error}"


def run(launch):
    import signal

    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, leave_now)
    pulumi = import_pulumi()
    settings = {name: TYPED_SETTINGS.get(name, str)(text) for name, text in launch["settings"].items()}
    pulumi.runtime.set_all_config(launch["config"], launch["secretKeys"])
    pulumi.runtime.configure(pulumi.runtime.Settings(**settings))

    program = launch["program"]
    entry = entry_file(program)
    if entry is None:
        sys.stderr.write(f"There is no Python program to run at {program}: Pulumi.yaml's `main` names its file, or a folder with a __main__.py.\n")
        return 1
    sys.argv = [program, *launch["args"]]
    os.chdir(launch["dir"])
    # The program's folder first on the import path, as `python <program>` has it.
    sys.path.insert(0, program if os.path.isdir(program) else os.path.dirname(program))

    def program_body():
        run_as_main(entry)

    with ProgramLoop(settings.get("parallel", 1)) as program_loop:
        try:
            program_loop.loop.run_until_complete(pulumi.runtime.run_in_stack(program_body))
            return 0
        except pulumi.RunError as refused:  # the SDK's own errors say all there is to say
            program_loop.failed = True
            pulumi.log.error(str(refused))
        except Exception as error:
            program_loop.failed = True
            pulumi.log.error(own_frames_report(error, os.path.realpath(launch["root"])))
    return TOLD_THE_ENGINE


if __name__ == "__main__":
    if sys.argv[1] == "plugins":
        list_plugins()
    else:
        sys.exit(run(json.loads(os.environ.pop("GPU_RENTAL_PYTHON_LAUNCH"))))
