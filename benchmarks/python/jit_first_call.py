"""First calls of numfuse.jit (trace + compile + one run), measured reproducibly.

Each measured call is the first call of a fresh ``numfuse.jit`` of a *distinct* function:
the benchmark formula (numfuse.bench.jit's) with one constant moved by a few ULPs, so that
no cache keyed by the expression text (the engine's plan cache) answers it. Every function
is written to its own source file and imported, as user code is. A warm-up function with
the same operations runs first, so the process-wide caches keyed by operation types
(the engine's verdicts, NumPy's result types) are filled, as in a program past its first
jitted function; ``--cold`` measures the very first function of the process instead.

    python benchmarks/python/jit_first_call.py time [--formula twenty_ops] [--count 30]
    python benchmarks/python/jit_first_call.py profile [--formula ...]   # cProfile
    python benchmarks/python/jit_first_call.py calls --count N --calls K # for callgrind

``time``: the median (and quartiles) of `count` first calls, gc disabled around each.
``calls``: warm-up, then K of the N functions' first calls and nothing else: run it
under ``valgrind --tool=callgrind`` with K=0 and K=N (N functions made either way); the
difference of the "Collected" lines over N is the instructions of one first call.
``split --file FILE`` (a callgrind output file of such a run, written with
--compress-strings=no --compress-pos=no) prints the exclusive instructions per shared
object (the interpreter, numfuse's _core, NumPy, the C and C++ libraries).

``processes``: the cold case, a process's *first* jitted function with these operation
types, as a fresh program meets it. Each of `count` samples is a fresh Python process
(``child`` mode) that imports numpy and numfuse, writes and imports its function, runs the
warm-up chosen by ``--warmup`` and then times, gc off, the first call of
``numfuse.jit(f)`` and nothing else; the parent prints the median and quartiles.
``--warmup unrelated`` (the default) first calls a jitted ``x + 1`` on a float32 array of
another length: what a program has paid before it reaches the measured function (the lazy
imports of numfuse.jit's first trace, the engine's first compile and call, NumPy's first
ufunc dispatch), with no operation type in common with the formulas (their inputs are
float64, so no cached answer, verdict or plan applies). ``--warmup none`` times the very
first call of the process (those one-time costs included); ``--warmup same`` first calls
another function of the formula (the ``time`` mode's warm case). ``--profile`` prints the
cProfile of the first call in each child instead of timing (CPU time). Beside the wall
time each child reports the calling thread's CPU time (``time.thread_time``; a call at 1e3
elements runs on that thread), which a loaded machine disturbs less. For instructions,
run one child under callgrind counting only the call (it runs inside a ``divmod`` call,
as nothing else does):

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=builtin_divmod \\
        --callgrind-out-file=/dev/null python jit_first_call.py child --count 1
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# name -> (source with {k} where a distinct constant goes, the constant's base value,
# argument count, input shape)
FORMULAS = {
    "twenty_ops": (
        """
import numpy as np

def f(x):
    a = x * {k} + 2
    b = np.exp(-a)
    c = np.log1p(b) * a
    d = np.sqrt(c * c + 1)
    e = np.tanh(d) - np.sin(a)
    f = e / (1 + b)
    g = np.maximum(f, 0.1) ** 2 + c
    return np.where(g > 1, g, -g) * 0.5 + np.cos(d) - np.arctan(e)
""",
        1.5,
        1,
        (1000,),
    ),
    "five_ops": (
        """
import numpy as np

def f(x, y):
    return np.exp(x) * {k} + y - x * y
""",
        2.0,
        2,
        (1000,),
    ),
    "layer_norm": (
        """
import numpy as np

def f(x):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + {k})
""",
        1e-5,
        1,
        (31, 32),
    ),
    "softmax_rows": (
        """
import numpy as np

def f(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True) * {k})
    return e / e.sum(axis=-1, keepdims=True)
""",
        1.0,
        1,
        (31, 32),
    ),
}


def _functions(name: str, count: int, folder: str, start: int = 0):
    """`count` distinct functions of formula `name`, each imported from its own file."""
    source, base, _, _ = FORMULAS[name]
    functions = []
    for i in range(start, start + count):
        constant = base
        for _ in range(i + 1):  # a few ULPs apart: distinct text, the same formula
            constant = float(np.nextafter(constant, np.inf))
        path = os.path.join(folder, f"jit_first_{name}_{i}.py")
        with open(path, "w") as handle:
            handle.write(source.format(k=repr(constant)))
        spec = importlib.util.spec_from_file_location(f"jit_first_{name}_{i}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        functions.append(module.f)
    return functions


def _inputs(name: str):
    _, _, arity, shape = FORMULAS[name]
    rng = np.random.default_rng(0)
    return [rng.random(shape) + 0.5 for _ in range(arity)]


def _first_call(jit, function, args) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        jit(function)(*args)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("time", "profile", "calls", "split", "processes", "child"))
    parser.add_argument("--formula", default="twenty_ops", choices=sorted(FORMULAS))
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument(
        "--calls", type=int, default=0, help="calls mode: how many of the functions to call"
    )
    parser.add_argument("--cold", action="store_true", help="no warm-up function")
    parser.add_argument("--file", help="callgrind output file (split mode)")
    parser.add_argument("--sort", default="tottime", help="profile mode: pstats sort key")
    parser.add_argument(
        "--warmup",
        default="unrelated",
        choices=("unrelated", "none", "same"),
        help="processes mode: what each fresh process runs before the measured first call",
    )
    parser.add_argument(
        "--profile", action="store_true", help="processes mode: cProfile each child's call"
    )
    options = parser.parse_args(argv)
    if options.mode == "split":
        for line in _split(options.file):
            print(line)
        return 0
    if options.mode == "processes":
        return _processes(options)
    if options.mode == "child":
        return _child(options)
    import numfuse

    args = _inputs(options.formula)
    with tempfile.TemporaryDirectory() as folder:
        sys.dont_write_bytecode = True
        functions = _functions(options.formula, options.count + 1, folder)
        warm, functions = functions[0], functions[1:]
        if options.cold:
            functions = [warm] + functions[: options.count - 1]
        else:
            numfuse.jit(warm)(*args)  # verdicts and result types of these operations
        if options.mode == "time":
            times = [_first_call(numfuse.jit, f, args) for f in functions]
            q = statistics.quantiles(times, n=4)
            print(
                f"{options.formula}: first call median {statistics.median(times) * 1e3:.3f} ms "
                f"(quartiles {q[0] * 1e3:.3f}-{q[2] * 1e3:.3f} ms, min {min(times) * 1e3:.3f}, "
                f"{len(times)} functions{', cold' if options.cold else ''}; "
                f"load {os.getloadavg()[0]:.1f})"
            )
        elif options.mode == "profile":
            profile = cProfile.Profile(time.thread_time)  # CPU time: preemption not counted
            for f in functions:
                profile.enable()
                numfuse.jit(f)(*args)
                profile.disable()
            stats = pstats.Stats(profile)
            stats.sort_stats(options.sort).print_stats(30)
        else:  # calls: nothing but the first calls (callgrind counts the difference)
            for f in functions[: options.calls]:
                numfuse.jit(f)(*args)
    return 0


def _processes(options) -> int:
    """Median over `count` fresh processes of one first call each (see the docstring)."""
    command = [sys.executable, os.path.abspath(__file__), "child", "--formula", options.formula]
    command += ["--warmup", options.warmup, "--sort", options.sort]
    command += ["--profile"] if options.profile else []
    walls, cpus = [], []
    for i in range(options.count):
        # a distinct constant per process, as in the other modes
        done = subprocess.run(
            [*command, "--count", str(i + 1)], capture_output=True, text=True, check=True
        )
        if options.profile:
            print(done.stdout)
        else:
            wall, cpu = done.stdout.split()[-2:]
            walls.append(float(wall))
            cpus.append(float(cpu))
    for what, times in (("wall", walls), ("thread CPU", cpus)):
        if times:
            q = statistics.quantiles(times, n=4) if len(times) > 1 else (times[0],) * 3
            print(
                f"{options.formula}: a process's first call, {what}: median "
                f"{statistics.median(times) * 1e3:.3f} ms (quartiles {q[0] * 1e3:.3f}-"
                f"{q[2] * 1e3:.3f} ms, min {min(times) * 1e3:.3f}, {len(times)} processes, "
                f"warm-up {options.warmup}; load {os.getloadavg()[0]:.1f})"
            )
    return 0


def _child(options) -> int:
    """One sample of ``processes``: prints the first call's seconds (or its profile)."""
    import numfuse

    args = _inputs(options.formula)
    with tempfile.TemporaryDirectory() as folder:
        sys.dont_write_bytecode = True
        # the count-th distinct function (its constant), imported before anything is timed
        (function,) = _functions(options.formula, 1, folder, start=options.count - 1)
        if options.warmup == "unrelated":
            numfuse.jit(lambda x: x + 1)(np.ones(7, np.float32))
        elif options.warmup == "same":  # another function of the formula: the warm case
            (other,) = _functions(options.formula, 1, folder, start=options.count)
            numfuse.jit(other)(*args)
        gc.collect()
        if options.profile:
            profile = cProfile.Profile(time.thread_time)
            profile.enable()
            numfuse.jit(function)(*args)
            profile.disable()
            pstats.Stats(profile).sort_stats(options.sort).print_stats(25)
            return 0
        # the call runs inside divmod() of a marker (and nothing else does): callgrind's
        # --collect-atstart=no --toggle-collect=builtin_divmod counts exactly the call
        region = _Region(lambda: numfuse.jit(function)(*args))
        gc.disable()
        divmod(region, 0)
        gc.enable()
        wall, cpu = region.wall, region.cpu
        print(f"{wall:.9f} {cpu:.9f}")
    return 0


class _Region:
    """``divmod(_Region(work), 0)`` runs `work` once, timed by wall clock and thread CPU."""

    def __init__(self, work):
        self.work = work
        self.wall = self.cpu = 0.0

    def __divmod__(self, _):
        start, start_cpu = time.perf_counter(), time.thread_time()
        self.work()
        self.cpu, self.wall = time.thread_time() - start_cpu, time.perf_counter() - start
        return 0, 0


def _split(path: str) -> list:
    """Exclusive instructions per shared object of a callgrind output file written with
    --compress-strings=no --compress-pos=no."""
    per_object: dict = {}
    objects_of_fn: dict = {}
    current_ob = current_fn_ob = None
    skip_next_cost = False
    with open(path) as handle:
        for line in handle:
            if line.startswith("ob="):
                current_ob = line[3:].strip()
            elif line.startswith("fn="):
                current_fn_ob = current_ob
                objects_of_fn[line[3:].strip()] = current_ob
            elif line.startswith("calls="):
                skip_next_cost = True
            elif line[:1].isdigit():
                if skip_next_cost:  # a call's inclusive cost, counted in the callee
                    skip_next_cost = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    per_object[current_fn_ob] = per_object.get(current_fn_ob, 0) + int(parts[1])
            elif line.startswith(("cob=", "cfn=", "cfi=", "cfl=")):
                continue
    total = sum(per_object.values())
    lines = [f"total {total:,}"]
    for ob, count in sorted(per_object.items(), key=lambda kv: -kv[1])[:12]:
        lines.append(f"{count:>14,} {count / total:6.1%}  {ob}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
