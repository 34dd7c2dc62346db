#!/usr/bin/env python3
"""Coefficient generator for numfuse's float64 erfc kernel (erfc_kernel, src/core/kernels/erfc.hpp).

Method:

  * erfc(a) = exp(-a^2) * erfcx(a) for a = |x| in [0, AMAX]; negative x use
    erfc(x) = 2 - erfc(|x|). Above AMAX = 27.5 erfc rounds to +0 (erfc(27.5) < 2^-1096).
  * erfcx is approximated by one polynomial per interval, R = c0 + t*(c1 + t*(c2 + ...)),
    t = a - m (m the interval's midpoint; the subtraction is exact by Sterbenz except on
    interval 0, where its error is below 2^-58 absolute), c0 = c0hi + c0lo a double-double.
  * Intervals: the kernel takes key = (bit pattern of a) >> 49, i.e. the biased exponent
    and the 3 leading mantissa bits, so every binade [2^e, 2^(e+1)) is cut into 8
    intervals of equal width (erfcx ~ 1/(a sqrt(pi)) for large a: equal relative widths
    keep the degree constant). k = clamp(key - KEY0, 0, 63): interval 0 is [0, 1/8],
    intervals 1..63 cover [1/8, 28) in eighths of binades.

Each polynomial is the Chebyshev interpolant (near-minimax) of erfcx on its interval,
computed in mpmath at 60 digits and converted to powers of t; c1..cD are rounded to double,
c0 to a double-double. The relative error of the rounded polynomial is then measured on a
dense grid (plus both endpoints) and written next to each interval, in units of 2^-53
(float64 ulps of a value whose mantissa is 1; the error in ulps of erfcx itself is at
most this).

Rerunning the fit (about a minute; deterministic):

    .venv/bin/python tools/erfc_coeffs.py
    make regen        # tools/gen_erfc_coefficients.py: JSON -> the generated header

It rewrites tools/data/erfc_coefficients.json (exact hex values, each interval's
[lo, hi] and measured fit error); `make regen` turns that file into
src/core/kernels/generated/erfc_coefficients.hpp, which src/core/kernels/erfc.hpp includes.
"""

from __future__ import annotations

import json
import pathlib
import struct

import mpmath as mp

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "erfc_coefficients.json"

DEGREE = 11  # c1..c11: with m, c0hi, c0lo a row of 14 doubles (padded to 16)
ENTRIES = 64
AMAX = 27.5
GRID = 400  # error-measurement points per interval

mp.mp.dps = 60


def key_of(a: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", a))[0] >> 49


KEY0 = key_of(0.125) - 1  # 1/8 starts interval 1


def interval(k: int) -> tuple[float, float]:
    """[lo, hi) of interval k (in doubles; interval 0 is [0, 1/8))."""
    if k == 0:
        return 0.0, 0.125
    key = KEY0 + k
    lo = struct.unpack("<d", struct.pack("<Q", key << 49))[0]
    hi = struct.unpack("<d", struct.pack("<Q", (key + 1) << 49))[0]
    return lo, hi


def erfcx(a: mp.mpf) -> mp.mpf:
    return mp.erfc(a) * mp.exp(a * a)


def chebyshev_fit(lo: float, hi: float, m: float, degree: int) -> list[mp.mpf]:
    """Coefficients in powers of t = a - m of the degree-`degree` Chebyshev interpolant."""
    n = degree + 1
    half, mid = (mp.mpf(hi) - mp.mpf(lo)) / 2, (mp.mpf(hi) + mp.mpf(lo)) / 2
    nodes = [mid + half * mp.cos(mp.pi * (2 * i + 1) / (2 * n)) for i in range(n)]
    ts = [a - m for a in nodes]
    matrix = mp.matrix([[t**j for j in range(n)] for t in ts])
    values = mp.matrix([erfcx(a) for a in nodes])
    solution = mp.lu_solve(matrix, values)
    return [solution[j] for j in range(n)]


def measure(lo: float, hi: float, m: float, c0hi: float, c0lo: float, cs: list[float]) -> float:
    """Max relative error (units of 2^-53) of the rounded polynomial on [lo, hi]."""
    worst = mp.mpf(0)
    for i in range(GRID + 1):
        a = mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * i / GRID
        t = a - m
        p = mp.mpf(0)
        for c in reversed(cs):
            p = p * t + c
        p = p * t + mp.mpf(c0hi) + mp.mpf(c0lo)
        exact = erfcx(a)
        worst = max(worst, abs(p - exact) / exact)
    return float(worst * mp.mpf(2) ** 53)


def fit(k: int) -> dict:
    lo, hi = interval(k)
    m = (lo + hi) / 2  # exact: lo and hi are short dyadic numbers
    coefs = chebyshev_fit(lo, hi, m, DEGREE)
    c0hi = float(coefs[0])
    c0lo = float(coefs[0] - mp.mpf(c0hi))
    cs = [float(c) for c in coefs[1:]]
    err = measure(lo, hi, m, c0hi, c0lo, cs)
    return {
        "lo": lo,
        "hi": hi,
        "m": m.hex(),
        "c0hi": c0hi.hex(),
        "c0lo": c0lo.hex(),
        "c": [c.hex() for c in cs],
        "err": round(err, 4),
    }


def main() -> None:
    last_key = key_of(AMAX) - KEY0
    assert last_key <= ENTRIES - 1, last_key
    rows = []
    for k in range(ENTRIES):
        row = fit(k)
        print(f"{k:2d} [{row['lo']:.6f}, {row['hi']:.6f}] err {row['err']:.4f}", flush=True)
        rows.append(row)
    data = {
        "degree": DEGREE,
        "amax": AMAX,
        "key0": KEY0,
        "intervals": rows,
    }
    DATA.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
