"""numfuse.patch_numpy(): unmodified NumPy/SciPy code, patched against unpatched, in one run.

Each case is timed three ways in the same process, in interleaved blocks (unpatched,
patched, and where it exists the direct numfuse call), so that drift of the machine
hits all of them alike; the table gives medians and the speed-ups, and a PASS/FAIL line
per target of issue 16:

- ``np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)`` on 1e6 float64: patched >= 2x;
- ``scipy.special.softmax(x)`` on 1e6 float64: patched >= 1.15x;
- patched ``np.exp(x)`` within 15 % of ``numfuse.exp(x)`` (1e6 float64).

    python benchmarks/python/compare_patch.py [--threads 2] [--rounds 5] [--repeats 15]
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


def _block(fn, repeats: int) -> list[float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def measure(fn, direct, rounds: int, repeats: int) -> dict:
    """Median seconds of fn unpatched, fn patched and direct (when given), interleaved."""
    times = {"unpatched": [], "patched": [], "numfuse": []}
    for _ in range(rounds):
        times["unpatched"] += _block(fn, repeats)
        with numfuse.patched(scipy=True):
            times["patched"] += _block(fn, repeats)
        if direct is not None:
            times["numfuse"] += _block(direct, repeats)
    return {k: statistics.median(v) for k, v in times.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--n", type=float, default=1e6)
    args = parser.parse_args()
    numfuse.set_num_threads(args.threads)
    n = int(args.n)
    x = np.random.default_rng(0).standard_normal(n) * 10

    cases = [
        (
            "np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)",
            lambda: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
            None,
            "patched/unpatched",
            2.0,
        ),
        ("np.exp(x)", lambda: np.exp(x), lambda: numfuse.exp(x), "patched vs numfuse.exp", 0.15),
    ]
    if scipy_special is not None:
        cases.insert(
            1,
            (
                "scipy.special.softmax(x)",
                lambda: scipy_special.softmax(x),
                None,
                "patched/unpatched",
                1.15,
            ),
        )
    patched_names = numfuse.patch_numpy(scipy=True)
    numfuse.restore_numpy()
    print(f"float64, n = {n:.0e}, {args.threads} threads; patched: {', '.join(patched_names)}")
    print(f"level {numfuse.get_level()}; medians of {args.rounds} x {args.repeats} calls\n")
    print("| code | unpatched | patched | numfuse direct | speed-up |")
    print("|---|---:|---:|---:|---:|")
    verdicts = []
    for label, fn, direct, kind, target in cases:
        t = measure(fn, direct, args.rounds, args.repeats)
        speedup = t["unpatched"] / t["patched"]
        direct_text = f"{t['numfuse'] * 1e3:.3f} ms" if "numfuse" in t else ""
        print(
            f"| `{label}` | {t['unpatched'] * 1e3:.3f} ms | {t['patched'] * 1e3:.3f} ms | "
            f"{direct_text} | {speedup:.2f}x |"
        )
        if kind == "patched/unpatched":
            ok = speedup >= target
            verdicts.append(
                f"{'PASS' if ok else 'FAIL'}: {label} patched {speedup:.2f}x (target >= {target}x)"
            )
        else:
            over = t["patched"] / t["numfuse"] - 1
            ok = over <= target
            verdicts.append(
                f"{'PASS' if ok else 'FAIL'}: patched np.exp {over * 100:+.1f} % "
                f"vs numfuse.exp (target <= +{target * 100:.0f} %)"
            )
    print()
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
