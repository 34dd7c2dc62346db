#!/usr/bin/env python3
"""Dense accuracy check of numfuse.power for float32 (the AVX-512 float32 kernel of
src/core/kernels/power_avx512.hpp, and whatever the active level runs).

The reference is x**y in float64 (NumPy's float64 power, within ~1 float64 ULP: 2^-29 of
a float32 ULP), the error |got - ref| / ulp(ref) in float32 ULPs (the ULP of ref's binade;
2^-149 below the smallest normal). Prints the max per case with its worst pair. Cases:

  grid    every float32 x in [0.5, 2) (every 16th without --full) times fixed y up to
          +-255.9 (the fast lanes' |y| < 256) and 1/3, 3
  near1   x uniform in [0.9, 1.1] (the cells next to 1), |y| < 256
  spread  x log-uniform over the normal float32 range, y = T / log2 x, T uniform in
          [-125, 125] (the fast lanes' whole domain)
  beyond  as spread with T in [-155, 135] and |y| up to 1e4 (the float64 path's lanes,
          subnormal and overflowing results included)
  ordinary x uniform in [0.1, 10], y uniform in [-3, 3] (benchmarks/python/compare_power.py)

    NUMFUSE_ARCH=avx512 PYTHONPATH=build/dev/pkg python tools/pow32_check.py [--full]
"""

from __future__ import annotations

import argparse

import numpy as np

import numfuse


def ulp_error(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    finite = np.isfinite(ref) & (np.abs(ref) <= np.finfo(np.float32).max)
    ref = np.where(finite, ref, 1.0)
    _, e = np.frexp(ref)  # ref = m 2^e, m in [0.5, 1)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    err = np.abs(got.astype(np.float64) - ref) / ulp
    return np.where(finite, err, 0.0)


def report(name: str, x: np.ndarray, y: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        got = numfuse.power(x, y)
    err = ulp_error(got, x, y)
    i = int(np.argmax(err))
    print(
        f"{name:9s} {x.size:>10d} pairs  max {err[i]:.4f} ULP  "
        f"(x = {float(x[i]).hex()}, y = {float(y[i]).hex()})",
        flush=True,
    )
    return float(err[i])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="every x of [0.5, 2), larger samples")
    args = p.parse_args()
    rng = np.random.default_rng(2026)
    n = 1 << (24 if args.full else 22)
    print(f"numfuse level {numfuse.get_level()}")
    bits = np.arange(0x3F000000, 0x40000000, 1 if args.full else 16, dtype=np.uint32)
    x = bits.view(np.float32)
    worst = 0.0
    for yv in (1.5, -1.5, 7.3, -7.3, 31.7, -63.1, 100.3, 255.9, -255.9, 1 / 3, 3.0):
        y = np.full(x.size, yv, np.float32)
        worst = max(worst, report(f"grid {yv:g}"[:9], x, y))
    x = rng.uniform(0.9, 1.1, n).astype(np.float32)
    y = rng.uniform(-255.9, 255.9, n).astype(np.float32)
    worst = max(worst, report("near1", x, y))
    for name, (t_lo, t_hi), ycap in (("spread", (-125, 125), 255.9), ("beyond", (-155, 135), 1e4)):
        x = np.exp2(rng.uniform(-125.9, 127.9, n)).astype(np.float32)
        t = rng.uniform(t_lo, t_hi, n)
        with np.errstate(divide="ignore"):
            y = np.clip(t / np.log2(x.astype(np.float64)), -ycap, ycap).astype(np.float32)
        worst = max(worst, report(name, x, y))
    x = rng.uniform(0.1, 10, n).astype(np.float32)
    y = rng.uniform(-3, 3, n).astype(np.float32)
    worst = max(worst, report("ordinary", x, y))
    print(f"max over the cases: {worst:.4f} ULP")


if __name__ == "__main__":
    main()
