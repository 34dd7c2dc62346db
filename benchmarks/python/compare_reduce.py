"""logsumexp / softmax / log_softmax: numfuse against SciPy, PyTorch and NumPy.

Prints a Markdown table of median times and speed-ups, measured side by side
in one run (each contender in its own block, see measure()), and a PASS/FAIL
line per performance target of issue 3.
numfuse and torch use the same thread count (--threads, default 2); NumPy's
x.sum(axis) is the memory-bound reference (single-threaded, as NumPy is).

    python benchmarks/python/compare_reduce.py [--threads 2] [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import numfuse

try:
    import scipy.special as scipy_special
except ImportError:  # pragma: no cover - optional peer
    scipy_special = None
try:
    import torch
except ImportError:  # pragma: no cover - optional peer
    torch = None


def measure(contenders: dict, repeats: int) -> dict:
    """Median seconds per contender, each timed in its own block.

    Blocks, not round-robin: numfuse and torch each bring an OpenMP runtime
    whose idle workers spin for a while after a parallel region; on a
    two-core machine, alternating calls would time each library against the
    other's spinning threads. The first call of each block (warm-up: page
    faults, thread start, the other runtime going idle) is not counted.
    """
    result = {}
    for name, fn in contenders.items():
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        result[name] = statistics.median(times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smaller arrays, fewer repeats")
    args = parser.parse_args()

    numfuse.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    repeats = 3 if args.quick else args.repeats
    side = 2000 if args.quick else 10_000
    rng = np.random.default_rng(0)

    print(
        f"numfuse {numfuse.__version__} level {numfuse.get_level()}, threads {args.threads} "
        f"(torch {torch.__version__ if torch else 'absent'}, "
        f"scipy {scipy_special and __import__('scipy').__version__}, numpy {np.__version__})\n"
    )
    rows = []  # (case, contender, seconds, reference name)
    targets = []  # (description, passed)

    # -- logsumexp, side x side float64, axis None / 0 / 1
    x = rng.standard_normal((side, side))
    tx = torch.from_numpy(x) if torch is not None else None
    for axis in (None, 0, 1):
        case = f"logsumexp {side}x{side} f64 axis={axis}"
        dims = tuple(range(x.ndim)) if axis is None else axis
        contenders = {
            "numfuse": lambda axis=axis, x=x: numfuse.logsumexp(x, axis=axis),
            "x.sum": lambda axis=axis, x=x: x.sum(axis=axis),
        }
        if scipy_special is not None:
            contenders["scipy"] = lambda axis=axis, x=x: scipy_special.logsumexp(x, axis=axis)
        if torch is not None:
            contenders["torch"] = lambda dims=dims, tx=tx: torch.logsumexp(tx, dim=dims)
        t = measure(contenders, repeats)
        rows.extend((case, name, seconds) for name, seconds in t.items())
        if "scipy" in t:
            targets.append((f"{case}: >= 5x scipy", t["scipy"] / t["numfuse"], 5.0, ">="))
        if "torch" in t:
            targets.append((f"{case}: >= 3x torch", t["torch"] / t["numfuse"], 3.0, ">="))
        targets.append((f"{case}: <= 1.2x x.sum", t["numfuse"] / t["x.sum"], 1.2, "<="))
    del x, tx, contenders  # the contenders hold x and tx too

    # -- softmax over the last axis of (1000, 1000, 5) float32
    shape = (200, 1000, 5) if args.quick else (1000, 1000, 5)
    y = rng.standard_normal(shape).astype(np.float32)
    ty = torch.from_numpy(y) if torch is not None else None
    case = f"softmax {shape} f32 axis=-1"

    def numpy_softmax():
        e = np.exp(y)
        return e / e.sum(-1, keepdims=True)

    contenders = {"numfuse": lambda: numfuse.softmax(y, axis=-1), "numpy": numpy_softmax}
    if torch is not None:
        contenders["torch"] = lambda: torch.softmax(ty, dim=-1)
    if scipy_special is not None:
        contenders["scipy"] = lambda: scipy_special.softmax(y, axis=-1)
    t = measure(contenders, repeats)
    rows.extend((case, name, seconds) for name, seconds in t.items())
    targets.append((f"{case}: >= 5x numpy exp/sum", t["numpy"] / t["numfuse"], 5.0, ">="))
    if "torch" in t:
        targets.append((f"{case}: >= 5x torch.softmax", t["torch"] / t["numfuse"], 5.0, ">="))

    # -- log_softmax of 1e6 float64
    z = rng.standard_normal(10**6)
    tz = torch.from_numpy(z) if torch is not None else None
    case = "log_softmax 1e6 f64"
    contenders = {"numfuse": lambda: numfuse.log_softmax(z)}
    if torch is not None:
        contenders["torch"] = lambda: torch.log_softmax(tz, dim=0)
    if scipy_special is not None:
        contenders["scipy"] = lambda: scipy_special.log_softmax(z)
    t = measure(contenders, max(repeats, 15))
    rows.extend((case, name, seconds) for name, seconds in t.items())
    if "torch" in t:
        targets.append((f"{case}: >= 3x torch", t["torch"] / t["numfuse"], 3.0, ">="))

    print("| case | contender | median ms | numfuse speed-up |")
    print("|---|---|---:|---:|")
    numfuse_time = {case: s for case, name, s in rows if name == "numfuse"}
    for case, name, seconds in rows:
        ratio = seconds / numfuse_time[case]
        print(f"| {case} | {name} | {seconds * 1e3:.2f} | {ratio:.2f}x |")
    print()
    for description, value, bound, op in targets:
        passed = value >= bound if op == ">=" else value <= bound
        print(f"{'PASS' if passed else 'FAIL'}: {description} (measured {value:.2f}x)")


if __name__ == "__main__":
    main()
