"""Where logaddexp's time goes on compare_domains.py's spanning inputs, per class of lane.

The spanning float64 inputs (compare_domains.py's, same seed) are timed as they are and
with one class of lanes replaced by ordinary pairs (uniform(-10, 10), the ordinary row's)
at the same places: the difference is that class's cost. Classes, as the kernel routes
them (kernels/logaddexp.hpp): near-zero lanes (max m < 0 and |result| < |m| / 64, pass
1's test), split into those of tiny max (|m| < 2^-110, pass 2's tiny-max queue, which
leaves out e^m) and the others. Each figure is the fastest single call of `--calls`,
numfuse's and the reference's alternating (compare_domains.py --calls), in ns per element.

    python benchmarks/python/logaddexp_lane_classes.py [--n 2e4] [--calls 400]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import numfuse

sys.path.insert(0, os.path.dirname(__file__))
from compare_domains import FUNCTIONS, _cpu, _fastest_calls, _inputs  # noqa: E402


def _classes(name: str, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    m, s = np.maximum(a, b), np.minimum(a, b)
    with np.errstate(all="ignore"):
        r = getattr(numfuse, name)(a, b)
    near = (m < 0) & (np.abs(r) < -m / 64)
    if name == "logaddexp2":
        near &= m != s  # equal arguments are not near-zero lanes in base 2
    tiny = near & (-m < 2.0**-110)
    return {"near-zero": near, "near-zero, tiny max": tiny, "near-zero, other": near & ~tiny}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=float, default=2e4)
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--functions", default="logaddexp,logaddexp2")
    args = p.parse_args()
    n = int(args.n)
    numfuse.set_num_threads(1)
    print(
        f"{_cpu()}, numfuse level {numfuse.get_level()}, 1 thread, n {n}, fastest of "
        f"{args.calls} alternating calls, load average {os.getloadavg()[0]:.2f} at start\n"
    )
    print(
        "| function | inputs | share | numfuse ns/element | reference ns/element | "
        "numfuse ns per lane of the class |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for name in args.functions.split(","):
        rng = np.random.default_rng(29)
        (a, b), (oa, ob) = _inputs(name, FUNCTIONS[name], np.dtype(np.float64), n, rng)
        ufunc, ref = getattr(numfuse, name), FUNCTIONS[name].reference
        out = np.empty(n)

        def timed(x, y, f=ufunc, g=ref, o=out):
            return _fastest_calls(lambda: f(x, y, out=o), lambda: g(x, y, out=o), args.calls)

        t_all, r_all = timed(a, b)
        print(f"| {name} | spanning | 1 | {t_all / n * 1e9:.2f} | {r_all / n * 1e9:.2f} | |")
        for label, mask in _classes(name, a, b).items():
            x, y = np.where(mask, oa, a), np.where(mask, ob, b)
            t, r = timed(x, y)
            share = mask.mean()
            per_lane = (t_all - t) / max(mask.sum(), 1) * 1e9
            print(
                f"| {name} | spanning without {label} | {share:.3f} | {t / n * 1e9:.2f} | "
                f"{r / n * 1e9:.2f} | {per_lane:.1f} |",
                flush=True,
            )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
