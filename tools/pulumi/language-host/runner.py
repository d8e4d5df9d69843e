"""The Python side of gpu-rental's language host (python.go runs it with the program's virtual environment's
Python, as `python -c <this file> <job> [settings]`), on the `pulumi` package installed there. Two jobs:

  run <settings JSON>  runs the program: configures pulumi.runtime from the engine's settings, then runs the
                       program's entry point as __main__ inside the stack, errors reported to the engine.
  plugins              prints, as JSON, the pulumi-plugin.json files of the installed distributions (the provider
                       plugins that generated SDKs declare), each with its distribution's version.
"""
import json
import os
import signal
import sys

# The exit code by which the host knows the error was already reported to the engine.
REPORTED = 32


def plugins():
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        for file in dist.files or []:
            if file.name == "pulumi-plugin.json":
                found.append({"file": str(dist.locate_file(file)), "version": dist.version})
    print(json.dumps(found))


def stop_quietly(signum, frame):
    """The engine stops the program (Ctrl-C, or an error it reported, such as a refused input): at once, and without a
    traceback of wherever the program happened to wait (threads blocked on the engine's calls would hold an orderly
    exit for seconds)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(REPORTED)


def run(settings):
    signal.signal(signal.SIGINT, stop_quietly)
    signal.signal(signal.SIGTERM, stop_quietly)
    try:
        import pulumi
        import pulumi.runtime
    except ImportError as error:
        print(
            f"The pulumi package is not installed in this program's virtual environment ({sys.prefix}): {error}.\n"
            "Add pulumi to requirements.txt and run `pulumi install`.",
            file=sys.stderr,
        )
        sys.exit(1)
    import asyncio
    import logging
    import runpy
    import traceback
    from concurrent.futures import ThreadPoolExecutor

    pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env())
    parallel = max(int(settings.get("parallel") or 1), 1)
    pulumi.runtime.configure(
        pulumi.runtime.Settings(
            monitor=settings["monitor"],
            engine=settings.get("engine") or None,
            project=settings["project"],
            stack=settings["stack"],
            parallel=parallel,
            dry_run=settings["dryRun"],
            organization=settings.get("organization") or None,
            root_directory=settings.get("rootDirectory") or None,
        )
    )
    program = settings["program"]
    sys.argv = [program, *(settings.get("args") or [])]
    os.chdir(settings["pwd"])
    # The program's own folder first on the path, as `python <program>` would have it.
    sys.path.insert(0, program if os.path.isdir(program) else os.path.dirname(program))

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    executor = ThreadPoolExecutor(max_workers=parallel * 4)
    loop.set_default_executor(executor)
    # A failed program leaves futures nobody awaits; asyncio's complaints about them would bury the real error.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)

    def main():
        if os.path.isdir(program) and not os.path.exists(os.path.join(program, "__main__.py")):
            raise pulumi.RunError(f"no __main__.py in {program}: the program's entry point (Pulumi.yaml `main`)")
        runpy.run_path(program, run_name="__main__")

    code = 0
    try:
        loop.run_until_complete(pulumi.runtime.run_in_stack(main))
    except pulumi.RunError as error:
        pulumi.log.error(str(error))
        code = REPORTED
    except Exception:  # any error of the program's: reported with the program's part of the traceback
        frames = traceback.extract_tb(sys.exc_info()[2])
        mine = lambda f: f.startswith(settings["root"]) and not f.startswith(sys.prefix)  # the program's, not its venv's
        own = next((i for i, f in enumerate(frames) if mine(os.path.abspath(f.filename))), 0)
        pulumi.log.error("Program failed with an unhandled exception:\n" + traceback.format_exc(limit=-(len(frames) - own)))
        code = REPORTED
    finally:
        executor.shutdown(wait=True)
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(code)


if __name__ == "__main__":
    if sys.argv[1] == "plugins":
        plugins()
    else:
        run(json.loads(sys.argv[2]))
