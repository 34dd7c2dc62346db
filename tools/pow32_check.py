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

--random N: N random pairs (in chunks) over five families: x log-uniform over every
positive float32 (subnormals included) with y = T / log2 x, T in [-160, 140] (results
from 0 to inf); x uniform in [0, 10] and y in [-30, 30]; x = 1 +- 2^-k with |y| up to
2^30; x and |y| log-uniform (|y| in [2^-30, 2^30]); negative x with integer y. Besides
the max error it counts the results that are not the float64 reference rounded to
float32, apart (the reference rounds correctly except within 2^-29 relative of a float32
midpoint: those are counted separately).
--exhaustive: every positive float32 x (subnormals included) for y in 2.5, -1.5, 1/3,
1e-3, 100.5.

    NUMFUSE_ARCH=avx512 PYTHONPATH=build/dev/pkg python tools/pow32_check.py [--full]
    PYTHONPATH=build/pkg python tools/pow32_check.py --random 100000000 --exhaustive
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


def misrounded(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """(results other than RN(float64 reference) away from midpoints, those near one)."""
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
        rounded = ref.astype(np.float32)
        diff = (got != rounded) & ~(np.isnan(got) & np.isnan(rounded))
        if not diff.any():
            return 0, 0
        # distance of ref from the midpoint between got and rounded, relative
        mid = (got[diff].astype(np.float64) + rounded[diff].astype(np.float64)) / 2
        near = np.abs(ref[diff] - mid) <= np.abs(ref[diff]) * 2.0**-29
    return int((~near).sum()), int(near.sum())


def random_pairs(rng: np.random.Generator, family: int, n: int):
    tiny = np.log2(float(np.finfo(np.float32).smallest_subnormal))
    if family == 0:
        x = np.exp2(rng.uniform(tiny, 127.99, n)).astype(np.float32)
        t = rng.uniform(-160, 140, n)
        with np.errstate(divide="ignore"):
            y = (t / np.log2(x.astype(np.float64))).astype(np.float32)
    elif family == 1:
        x = rng.uniform(0, 10, n).astype(np.float32)
        y = rng.uniform(-30, 30, n).astype(np.float32)
    elif family == 2:
        k = rng.integers(1, 24, n)
        x = (1.0 + rng.choice([-1.0, 1.0], n) * np.exp2(-k.astype(np.float64))).astype(np.float32)
        y = (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(0, 30, n))).astype(np.float32)
    elif family == 3:
        x = np.exp2(rng.uniform(tiny, 127.99, n)).astype(np.float32)
        y = (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-30, 30, n))).astype(np.float32)
    else:
        x = -np.exp2(rng.uniform(-20, 20, n)).astype(np.float32)
        y = rng.integers(-40, 40, n).astype(np.float32)
    return x, y


def check_random(total: int) -> float:
    rng = np.random.default_rng(20)
    chunk = 1 << 22
    worst, away, near, done = 0.0, 0, 0, 0
    while done < total:
        n = min(chunk, total - done)
        x, y = random_pairs(rng, (done // chunk) % 5, n)
        with np.errstate(all="ignore"):
            got = numfuse.power(x, y)
        err = ulp_error(got, x, y)
        worst = max(worst, float(err.max()))
        a, b = misrounded(got, x, y)
        away, near = away + a, near + b
        done += n
    print(
        f"random    {total:>10d} pairs  max {worst:.4f} ULP  not RN(ref): {away} "
        f"(+ {near} within 2^-29 of a midpoint)",
        flush=True,
    )
    return worst


def check_exhaustive() -> float:
    worst = 0.0
    for yv in (2.5, -1.5, 1 / 3, 1e-3, 100.5):
        w, away, near = 0.0, 0, 0
        for start in range(1, 0x7F800000, 1 << 24):
            bits = np.arange(start, min(start + (1 << 24), 0x7F800000), dtype=np.uint32)
            x = bits.view(np.float32)
            y = np.full(x.size, yv, np.float32)
            with np.errstate(all="ignore"):
                got = numfuse.power(x, y)
            w = max(w, float(ulp_error(got, x, y).max()))
            a, b = misrounded(got, x, y)
            away, near = away + a, near + b
        print(
            f"every x, y = {yv:.6g}: max {w:.4f} ULP  not RN(ref): {away} (+ {near} near)",
            flush=True,
        )
        worst = max(worst, w)
    return worst


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="every x of [0.5, 2), larger samples")
    p.add_argument("--random", type=int, default=0, help="N random pairs over five families")
    p.add_argument("--exhaustive", action="store_true", help="every positive x, five y")
    args = p.parse_args()
    if args.random or args.exhaustive:
        worst = check_random(args.random) if args.random else 0.0
        if args.exhaustive:
            worst = max(worst, check_exhaustive())
        print(f"max: {worst:.4f} ULP")
        return
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
