"""x**y in numfuse.evaluate against numexpr and NumPy (issue 29's power targets).

Cases at 1e6 elements (float64 and float32): x**3, x**-1, x**2.5, x**y (y an array), each
timed for numfuse.evaluate, numexpr.evaluate (same thread count) and NumPy's operator; x
spans many magnitudes in the `mixed` input (half ordinary values, half log-uniform between
1e-300 and 1). Prints a Markdown table of median times measured in this one run and the
ratios the targets are about: evaluate at least numexpr's speed, >= 1.5x np.power for
real exponents. A second table times the ufuncs numfuse.power and numfuse.float_power
against np.power and np.float_power (out= given, x**y with y an array) at n elements with
--threads threads and at 1e5 elements with one thread (targets: >= 2x and >= 1x).

    python benchmarks/python/compare_power.py [--threads 2] [--n 1000000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
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
    args = parser.parse_args()
    numfuse.set_num_threads(args.threads)
    if numexpr is not None:
        numexpr.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = args.n
    print(
        f"n={n}, threads={args.threads}, level={numfuse.get_level()}, load={os.getloadavg()[0]:.2f}"
    )
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
    ufunc_table(rng, args)


def ufunc_table(rng, args) -> None:
    print()
    print("| ufunc | dtype | n | threads | numfuse | NumPy | vs NumPy |")
    print("|---|---|---|---|---|---|---|")
    for n, threads in ((args.n, args.threads), (100_000, 1)):
        numfuse.set_num_threads(threads)
        for dtype in (np.float64, np.float32):
            x = rng.uniform(0.1, 10.0, n).astype(dtype)
            y = rng.uniform(-3.0, 3.0, n).astype(dtype)
            pairs = [("power", numfuse.power, np.power)]
            if dtype == np.float64:  # float_power computes in float64 whatever the input
                pairs.append(("float_power", numfuse.float_power, np.float_power))
            for name, ours, theirs in pairs:
                out = np.empty(n, np.float64 if name == "float_power" else dtype)
                t_nf = median_time(lambda f=ours, o=out, x=x, y=y: f(x, y, out=o), args.repeats)
                t_np = median_time(lambda f=theirs, o=out, x=x, y=y: f(x, y, out=o), args.repeats)
                print(
                    f"| `{name}` | {np.dtype(dtype).name} | {n} | {threads} | "
                    f"{t_nf * 1e3:.3f} ms | {t_np * 1e3:.3f} ms | {t_np / t_nf:.2f}x |"
                )
    numfuse.set_num_threads(args.threads)


if __name__ == "__main__":
    main()
