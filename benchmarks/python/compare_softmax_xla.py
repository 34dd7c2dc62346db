"""softmax / log_softmax: numfuse against jax.jit (XLA) and torch (issue 29's target).

Cases: float32 and float64; a 1-d array of 1e6 and a (1000, 1000) array over axis 0 and
axis 1. Contenders, each timed in its own block (see compare_reduce.measure: the OpenMP
runtimes of numfuse and torch spin after a parallel region), the same thread count for
numfuse and torch (--threads), XLA's own CPU pool:

- numfuse: ``numfuse.softmax(x, axis)`` / ``numfuse.log_softmax(x, axis)``;
- jax.jit: ``jax.jit(lambda x: jax.nn.softmax(x, axis))`` (log_softmax likewise) on the
  NumPy array, result copied back with ``np.asarray(...block_until_ready())`` as in
  numfuse-bench, ``jax_enable_x64`` on so float64 stays float64;
- torch: ``torch.softmax(t, dim)`` / ``torch.log_softmax(t, dim)`` on ``torch.from_numpy(x)``.

Then the per-call cost at 1e3 (float32 and float64, 1-d): ``numfuse.softmax(x)`` against
``numfuse.compile("exp(t)/sum(exp(t))")(t=x)``.

Prints Markdown tables and a PASS/FAIL line per target (>= 1.3x jax.jit, >= 1.5x torch,
softmax at 1e3 no slower than the compiled formula). JAX is optional: install it into a
separate folder and put that on PYTHONPATH (docs/jit.md).

    python benchmarks/python/compare_softmax_xla.py [--threads 2] [--time 0.4] [--min] [--rounds 3]
        [--avx2]   # every contender at AVX2 on an AVX-512 CPU (avx2_proxy.py)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import avx2_proxy  # noqa: E402

AVX2 = avx2_proxy.apply(sys.argv)  # before NumPy's, torch's, JAX's imports (re-executes)

import numpy as np  # noqa: E402

import numfuse  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - optional peer
    torch = None
try:
    import jax

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - optional peer
    jax = None


FASTEST = False  # --min: the fastest call instead of the median (a busy machine)
ROUNDS = 3  # --rounds


def measure(contenders: dict, seconds: float) -> dict:
    """Median (or fastest) seconds per call, each contender in its own block after one
    warm-up call (numfuse, torch and XLA each keep a thread pool that spins after a call:
    alternating calls would time each against another's spinning threads). The blocks run
    ROUNDS times in rotating order, `seconds` split between them, and each contender's best
    round counts, so that a burst of load during one block does not decide a ratio."""
    names = list(contenders)
    result = dict.fromkeys(names, float("inf"))
    for r in range(ROUNDS):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn = contenders[name]
            fn()
            times = []
            deadline = time.perf_counter() + seconds / ROUNDS
            while len(times) < 5 or (time.perf_counter() < deadline and len(times) < 20000):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            value = min(times) if FASTEST else statistics.median(times)
            result[name] = min(result[name], value)
    return result


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or "unknown CPU"


def parse_timing_args(description: str) -> argparse.Namespace:
    """The timing options this script and softmax_floors.py share, parsed and applied
    (FASTEST, ROUNDS, numfuse's thread count)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--time", type=float, default=0.4, help="seconds per contender")
    parser.add_argument("--min", action="store_true", help="fastest call, not the median")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of blocks (best counts)")
    parser.add_argument(avx2_proxy.FLAG, action="store_true", help="every contender at AVX2")
    args = parser.parse_args()
    global FASTEST, ROUNDS
    FASTEST = args.min
    ROUNDS = max(1, args.rounds)
    numfuse.set_num_threads(args.threads)
    return args


def main() -> None:
    args = parse_timing_args(__doc__.splitlines()[0])
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(
        f"{cpu_name()}, numfuse level {numfuse.get_level()}, threads {args.threads}, "
        f"load average {os.getloadavg()[0]:.2f} at start; torch "
        f"{torch.__version__ if torch else 'absent'}, jax {jax.__version__ if jax else 'absent'}"
        + (f"\n{avx2_proxy.describe()}" if AVX2 else "")
        + "\n"
    )
    rng = np.random.default_rng(0)
    cases = [("1e6", (10**6,), -1), ("1000x1000", (1000, 1000), 0), ("1000x1000", (1000, 1000), 1)]
    targets = []
    print(
        "| function | dtype | case | axis | numfuse ms | jax.jit ms | torch ms "
        "| jax/nf | torch/nf |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for name in ("softmax", "log_softmax"):
        for dtype in (np.float32, np.float64):
            for label, shape, axis in cases:
                x = (rng.standard_normal(shape) * 3).astype(dtype)
                nf_fn = getattr(numfuse, name)
                contenders = {"numfuse": lambda f=nf_fn, x=x, a=axis: f(x, axis=a)}
                if jax is not None:
                    jfn = jax.jit(lambda v, a=axis, n=name: getattr(jax.nn, n)(v, axis=a))
                    contenders["jax"] = lambda j=jfn, x=x: np.asarray(j(x).block_until_ready())
                if torch is not None:
                    t = torch.from_numpy(x)
                    tfn = getattr(torch, name)
                    contenders["torch"] = lambda f=tfn, t=t, a=axis: f(t, dim=a)
                got = measure(contenders, args.time)
                nf_s = got["numfuse"]
                jax_s = got.get("jax", float("nan"))
                torch_s = got.get("torch", float("nan"))
                dt = np.dtype(dtype).name
                print(
                    f"| {name} | {dt} | {label} | {axis} | {nf_s * 1e3:.3f} | {jax_s * 1e3:.3f} "
                    f"| {torch_s * 1e3:.3f} | {jax_s / nf_s:.2f} | {torch_s / nf_s:.2f} |"
                )
                case = f"{name} {dt} {label} axis={axis}"
                if "jax" in got:
                    targets.append((f"{case}: >= 1.3x jax.jit", jax_s / nf_s, 1.3))
                if "torch" in got:
                    targets.append((f"{case}: >= 1.5x torch", torch_s / nf_s, 1.5))
    print("\n| 1e3, 1-d | dtype | numfuse.softmax us | compiled formula us | compiled/nf |")
    print("|---|---|---:|---:|---:|")
    compiled = numfuse.compile("exp(t)/sum(exp(t))")
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(1000) * 3).astype(dtype)
        got = measure(
            {"numfuse": lambda x=x: numfuse.softmax(x), "compiled": lambda x=x: compiled(x)},
            args.time,
        )
        ratio = got["compiled"] / got["numfuse"]
        dt = np.dtype(dtype).name
        print(
            f"| softmax | {dt} | {got['numfuse'] * 1e6:.2f} | {got['compiled'] * 1e6:.2f} "
            f"| {ratio:.2f} |"
        )
        targets.append((f"softmax {dt} 1e3: no slower than the compiled formula", ratio, 1.0))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end\n")
    for description, value, bound in targets:
        print(f"{'PASS' if value >= bound else 'FAIL'}: {description} (measured {value:.2f}x)")


if __name__ == "__main__":
    main()
