"""``python -m numfuse run [--scipy] [--functions a,b] script.py [args...]`` (or
``... run [options] -m module [args...]``): run an unmodified program with NumPy's ufuncs
patched to numfuse's loops (numfuse.patch_numpy), as ``python -m cProfile`` runs one under the
profiler. The program sees ``sys.argv`` as if it had been started directly; numfuse's own
options come before the script or ``-m`` and everything after belongs to the program."""

from __future__ import annotations

import os
import runpy
import sys

USAGE = """usage: python -m numfuse run [--scipy] [--functions NAMES] script.py [args...]
       python -m numfuse run [--scipy] [--functions NAMES] -m module [args...]

Runs the program with NumPy's ufuncs patched to numfuse's loops (numfuse.patch_numpy).
  --scipy            also patch scipy.special (erf, erfc, expit)
  --functions NAMES  comma-separated functions to patch (default: every one numfuse has)"""


def _fail(message: str) -> int:
    print(f"{USAGE}\n\npython -m numfuse: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if args[:1] != ["run"]:
        return _fail("the only command is 'run'")
    args.pop(0)
    scipy, functions = False, None
    while args and args[0].startswith("-") and args[0] != "-m":
        option = args.pop(0)
        if option in ("-h", "--help"):
            print(USAGE)
            return 0
        if option == "--scipy":
            scipy = True
        elif option == "--functions" and args:
            functions = args.pop(0).split(",")
        elif option.startswith("--functions="):
            functions = option.partition("=")[2].split(",")
        else:
            return _fail(f"unknown option {option!r}")
    module = None
    if args[:1] == ["-m"]:
        if len(args) < 2:
            return _fail("-m needs a module name")
        module = args[1]
        args = args[2:]
    elif not args:
        return _fail("give a script (script.py [args...]) or -m module [args...]")

    if module is None and not os.path.isfile(args[0]):
        return _fail(f"no such file: {args[0]!r}")
    if module is not None:
        import importlib.util

        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # a parent package that is missing; '' or '.x'
            found = None
        if found is None:
            return _fail(f"no module named {module!r}")

    from . import patch_numpy

    try:
        patch_numpy(functions=functions, scipy=scipy)
    except (ValueError, ImportError) as error:  # unknown names; --scipy without SciPy
        return _fail(str(error))
    if module is not None:
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
