"""softmax / log_softmax against their memory and pass floors (issue 29).

For each case of compare_softmax_xla.py (float32 and float64; 1e6 1-d, (1000, 1000) over
axis 0 and axis 1), numfuse's softmax and log_softmax into a preallocated ``out`` beside the
floors of the passes they are made of, timed the same way (compare_softmax_xla.measure:
each in its own block, rotating rounds, each one's best round):

- copy: ``np.copyto(out, x)`` (one read of x, one write of out: the least any softmax moves);
- max: ``np.max(x, axis)`` (one read of x: the maximum pass);
- fold: ``numfuse.logsumexp(x, axis)`` (one read of x with an exp per element: the online
  fold, max and rescaled sum together; log_softmax's fold pass over strips);
- exp: ``numfuse.exp(x, out=out)`` (an exp per element, one read and one write: the
  arithmetic of the pass that stores the numerators).

Prints a Markdown table with each floor's time and softmax's / log_softmax's time over
``copy``. For a before / after comparison run it once per build (PYTHONPATH), back to back,
and compare each build's own ratios as well as its times: the floors show how loaded the
machine was during each run.

    python benchmarks/python/softmax_floors.py [--threads 2] [--time 0.4] [--min] [--rounds 3]
"""

from __future__ import annotations

import os
import sys

import numpy as np

import numfuse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_softmax_xla as cmp  # noqa: E402  (the shared timing and CPU name)

CASES = [("1e6", (10**6,), -1), ("1000x1000", (1000, 1000), 0), ("1000x1000", (1000, 1000), 1)]


def contenders(x: np.ndarray, axis: int) -> dict:
    """The two functions and the four floors for one case, each writing into `out` where
    it has an output of x's shape (no allocation inside the timed call)."""
    out = np.empty_like(x)
    return {
        "softmax": lambda: numfuse.softmax(x, axis=axis, out=out),
        "log_softmax": lambda: numfuse.log_softmax(x, axis=axis, out=out),
        "copy": lambda: np.copyto(out, x),
        "max": lambda: np.max(x, axis=axis),
        "fold": lambda: numfuse.logsumexp(x, axis=axis),
        "exp": lambda: numfuse.exp(x, out=out),
    }


def main() -> None:
    args = cmp.parse_timing_args(__doc__.splitlines()[0])
    print(
        f"{cmp.cpu_name()}, numfuse level {numfuse.get_level()}, threads {args.threads}, "
        f"load average {os.getloadavg()[0]:.2f} at start\n"
    )
    print(
        "| dtype | case | axis | softmax ms | log_softmax ms | copy ms | max ms | fold ms "
        "| exp ms | softmax/copy | log_softmax/copy |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for label, shape, axis in CASES:
            x = (rng.standard_normal(shape) * 3).astype(dtype)
            got = cmp.measure(contenders(x, axis), args.time)
            ms = {name: seconds * 1e3 for name, seconds in got.items()}
            print(
                f"| {np.dtype(dtype).name} | {label} | {axis} | {ms['softmax']:.3f} "
                f"| {ms['log_softmax']:.3f} | {ms['copy']:.3f} | {ms['max']:.3f} "
                f"| {ms['fold']:.3f} | {ms['exp']:.3f} | {ms['softmax'] / ms['copy']:.2f} "
                f"| {ms['log_softmax'] / ms['copy']:.2f} |"
            )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
