#!/usr/bin/env python3
"""Every numfuse ufunc against its NumPy / SciPy reference on its test domain (issue 29).

The inputs are the accuracy sweeps' arguments (tests/function_table.py: ordinary values,
log-uniform magnitudes from the smallest subnormal to the largest finite, values next to
domain edges), shuffled and tiled to n elements, non-finite values dropped: the "inputs
spanning many magnitudes" of issue 29's target, per function. Also ordinary inputs (the
first part of each domain alone). Each figure is the fastest of `--repeats` blocks of
calls into a preallocated out= array; the peer (the table's reference: NumPy, SciPy) is
timed in the same run on the same array. Ratio = reference time / numfuse time (> 1 means
numfuse is faster). With `--calls K` each figure is instead the fastest single call of K,
numfuse's and the peer's calls alternating: on a machine whose cores are busy with other
work, a call shorter than a scheduler slice (e.g. `--n 2e4`) often runs undisturbed, while
blocks of calls rarely do.

    python benchmarks/python/compare_domains.py [--n 1e5] [--threads 1] [--functions exp,cbrt]
    python benchmarks/python/compare_domains.py --n 2e4 --calls 400   # on a loaded machine
    python benchmarks/python/compare_domains.py --n 2e4 --calls 400 --avx2  # see avx2_proxy.py
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import avx2_proxy  # noqa: E402

AVX2 = avx2_proxy.apply(sys.argv)  # before NumPy's import: it re-executes with the variables

import numpy as np  # noqa: E402

import numfuse  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
from function_table import CORE, FUNCTIONS, Sweep  # noqa: E402


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _inputs(name, fn, dtype, n: int, rng) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(spanning, ordinary) argument lists of n elements each."""
    s = Sweep(rng, dtype, max(n // 4, 1000))
    if CORE[name].arity == 1:
        parts = [np.asarray(p, dtype=np.float64) for p in fn.domain(s)]
        span = np.concatenate(parts).astype(dtype)
        span = span[np.isfinite(span)]
        ordinary = parts[0].astype(dtype)
        ordinary = ordinary[np.isfinite(ordinary)]
        out = []
        for a in (span, ordinary):
            a = rng.permutation(np.resize(a, n))
            out.append([np.ascontiguousarray(a)])
        return out[0], out[1]
    args = fn.domain(s, dtype)
    keep = np.isfinite(args[0]) & np.isfinite(args[1])
    idx = rng.permutation(np.resize(np.flatnonzero(keep), n))
    span = [np.ascontiguousarray(np.asarray(a)[idx].astype(dtype)) for a in args]
    ordinary = [rng.uniform(-10, 10, n).astype(dtype) for _ in args]
    return span, ordinary


def _best(call, repeats: int, min_time: float) -> float:
    call()
    k, t0 = 1, time.perf_counter()
    call()
    one = time.perf_counter() - t0
    k = max(1, int(min_time / max(one, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(k):
            call()
        best = min(best, (time.perf_counter() - t0) / k)
    return best


def _fastest_calls(ours, theirs, calls: int) -> tuple[float, float]:
    """The fastest single call of each of `calls`, the two alternating."""
    ours()
    theirs()
    best_ours = best_theirs = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        theirs()
        t2 = time.perf_counter()
        best_ours = min(best_ours, t1 - t0)
        best_theirs = min(best_theirs, t2 - t1)
    return best_ours, best_theirs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=float, default=1e5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtypes", default="float64,float32")
    p.add_argument("--functions", default="")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.02)
    p.add_argument("--calls", type=int, default=0, help="fastest single call of this many")
    p.add_argument("--level", default="", help="numfuse.set_level() first (e.g. avx2_fma)")
    p.add_argument(avx2_proxy.FLAG, action="store_true", help="NumPy and numfuse at AVX2")
    args = p.parse_args()
    n = int(args.n)
    if args.level:
        numfuse.set_level(args.level)
    numfuse.set_num_threads(args.threads)
    wanted = [f for f in args.functions.split(",") if f]
    names = [f for f, row in FUNCTIONS.items() if CORE[f].is_ufunc and row.domain is not None]
    names = [f for f in names if not wanted or f in wanted]
    by_name = FUNCTIONS
    print(
        f"{_cpu()}, numfuse level {numfuse.get_level()}, numfuse threads {args.threads}, "
        f"n {n}, "
        + (f"fastest of {args.calls} alternating calls, " if args.calls else "")
        + f"load average {os.getloadavg()[0]:.2f} at start"
        + (f"\n{avx2_proxy.describe()}" if AVX2 else "")
        + "\n"
    )
    print("| function | dtype | inputs | numfuse µs | reference µs | reference/numfuse |")
    print("|---|---|---|---:|---:|---:|")
    rng = np.random.default_rng(29)
    for dname in args.dtypes.split(","):
        dtype = np.dtype(dname)
        for name in names:
            fn = by_name[name]
            ufunc = getattr(numfuse, name)
            for label, xs in zip(("spanning", "ordinary"), _inputs(name, fn, dtype, n, rng)):
                out = np.empty(n, dtype)
                ref = fn.reference

                def ours(f=ufunc, a=xs, o=out):
                    return f(*a, out=o)

                def theirs(f=ref, a=xs, o=out):
                    try:
                        return f(*a, out=o)
                    except TypeError:  # a SciPy reference without out=
                        return f(*a)

                with np.errstate(all="ignore"):
                    if args.calls:
                        t_nf, t_ref = _fastest_calls(ours, theirs, args.calls)
                    else:
                        t_nf = _best(ours, args.repeats, args.min_time)
                        t_ref = _best(theirs, args.repeats, args.min_time)
                print(
                    f"| {name} | {dname} | {label} | {t_nf * 1e6:.1f} | {t_ref * 1e6:.1f} | "
                    f"{t_ref / t_nf:.2f} |",
                    flush=True,
                )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
