"""x**y in numfuse.evaluate against numexpr and NumPy (issue 29's power targets).

Cases at 1e6 elements (float64 and float32): x**3, x**-1, x**2.5, x**y (y an array), each
timed for numfuse.evaluate, numexpr.evaluate (same thread count) and NumPy's operator; x
spans many magnitudes in the `mixed` input (half ordinary values, half log-uniform between
1e-300 and 1). Prints a Markdown table of median times measured in this one run and the
ratios the targets are about: evaluate at least numexpr's speed, >= 1.5x np.power for
real exponents. A second table times the ufuncs numfuse.power and numfuse.float_power
against np.power and np.float_power (out= given, x**y with y an array) at n elements with
--threads threads and at 1e5 elements with one thread (targets: >= 2x and >= 1x).
With --fresh each row of the second table is timed in a process of its own (nothing
else ran before it there), after the in-process table: what a row measures after other
cases in the same process can differ (issue 29's order effect: float32 power at 2
threads timed after the float64 rows).

    python benchmarks/python/compare_power.py [--threads 2] [--n 1000000] [--repeats 15]
        [--fresh] [--ufunc-only] [--level avx2_fma]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import numfuse

try:
    import numexpr
except ImportError:  # pragma: no cover - optional peer
    numexpr = None


def median_time(fn, repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--fresh", action="store_true", help="also time each ufunc row in a fresh process"
    )
    parser.add_argument("--ufunc-only", action="store_true", help="only the ufunc table")
    parser.add_argument("--level", help="numfuse's level (numfuse.set_level), e.g. avx2_fma")
    # one ufunc row (NAME DTYPE N THREADS) alone: what --fresh runs in each child
    parser.add_argument("--row", nargs=4, metavar=("NAME", "DTYPE", "N", "THREADS"))
    args = parser.parse_args()
    if args.level:
        numfuse.set_level(args.level)
    if args.row:
        name, dtype, n, threads = args.row
        ufunc_row(np.random.default_rng(0), name, np.dtype(dtype), int(n), int(threads), args)
        return
    numfuse.set_num_threads(args.threads)
    if numexpr is not None:
        numexpr.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = args.n
    print(
        f"n={n}, threads={args.threads}, level={numfuse.get_level()}, load={os.getloadavg()[0]:.2f}"
    )
    if not args.ufunc_only:
        evaluate_table(rng, args)
    ufunc_table(rng, args)
    if args.fresh:
        fresh_table(args)


def evaluate_table(rng, args) -> None:
    n = args.n
    print("| case | dtype | input | numfuse | numexpr | NumPy | vs numexpr | vs NumPy |")
    print("|---|---|---|---|---|---|---|---|")
    for dtype in (np.float64, np.float32):
        ordinary = rng.uniform(0.1, 10.0, n)
        mixed = ordinary.copy()
        mixed[::2] = 10.0 ** rng.uniform(-300, 0, n - n // 2)
        y = rng.uniform(-3.0, 3.0, n).astype(dtype)
        for label, base in (("ordinary", ordinary), ("mixed", mixed)):
            x = base.astype(dtype)
            if dtype == np.float32:
                x = np.where(x == 0, np.float32(1e-30), x).astype(dtype)
            cases = [
                ("x**3", lambda x=x: x**3),
                ("x**-1", lambda x=x: x**-1),
                ("x**2.5", lambda x=x: x**2.5),
                ("x**y", lambda x=x, y=y: np.power(x, y)),
            ]
            for expression, numpy_fn in cases:
                local = {"x": x, "y": y}
                with np.errstate(all="ignore"):
                    t_nf = median_time(
                        lambda e=expression, v=local: numfuse.evaluate(e, local_dict=v),
                        args.repeats,
                    )
                    t_np = median_time(numpy_fn, args.repeats)
                    t_ne = (
                        median_time(
                            lambda e=expression, v=local: numexpr.evaluate(e, local_dict=v),
                            args.repeats,
                        )
                        if numexpr is not None
                        else None
                    )
                ne = f"{t_ne * 1e3:.3f} ms" if t_ne else "n/a"
                vs_ne = f"{t_ne / t_nf:.2f}x" if t_ne else "n/a"
                print(
                    f"| `{expression}` | {np.dtype(dtype).name} | {label} | {t_nf * 1e3:.3f} ms "
                    f"| {ne} | {t_np * 1e3:.3f} ms | {vs_ne} | {t_np / t_nf:.2f}x |"
                )


def ufunc_rows(args) -> list[tuple[str, np.dtype, int, int]]:
    rows = []
    for n, threads in ((args.n, args.threads), (100_000, 1)):
        for dtype in (np.dtype(np.float64), np.dtype(np.float32)):
            rows.append(("power", dtype, n, threads))
            if dtype == np.float64:  # float_power computes in float64 whatever the input
                rows.append(("float_power", dtype, n, threads))
    return rows


def ufunc_row(rng, name: str, dtype: np.dtype, n: int, threads: int, args) -> None:
    numfuse.set_num_threads(threads)
    x = rng.uniform(0.1, 10.0, n).astype(dtype)
    y = rng.uniform(-3.0, 3.0, n).astype(dtype)
    ours, theirs = getattr(numfuse, name), getattr(np, name)
    out = np.empty(n, np.float64 if name == "float_power" else dtype)
    t_nf = median_time(lambda: ours(x, y, out=out), args.repeats)
    t_np = median_time(lambda: theirs(x, y, out=out), args.repeats)
    print(
        f"| `{name}` | {dtype.name} | {n} | {threads} | "
        f"{t_nf * 1e3:.3f} ms | {t_np * 1e3:.3f} ms | {t_np / t_nf:.2f}x |",
        flush=True,
    )
    numfuse.set_num_threads(args.threads)


def ufunc_table(rng, args) -> None:
    print()
    print("| ufunc | dtype | n | threads | numfuse | NumPy | vs NumPy |")
    print("|---|---|---|---|---|---|---|")
    for row in ufunc_rows(args):
        ufunc_row(rng, *row, args)


def fresh_table(args) -> None:
    print()
    print("each row in a fresh process:")
    print()
    print("| ufunc | dtype | n | threads | numfuse | NumPy | vs NumPy |")
    print("|---|---|---|---|---|---|---|")
    for name, dtype, n, threads in ufunc_rows(args):
        command = [sys.executable, __file__, "--repeats", str(args.repeats), "--threads"]
        command += [str(args.threads), "--row", name, dtype.name, str(n), str(threads)]
        command += ["--level", args.level] if args.level else []
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
