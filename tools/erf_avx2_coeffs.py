#!/usr/bin/env python3
"""Coefficient fit for the avx2_fma float64 erf kernel (src/core/kernels/erf.hpp, erf_abs_avx2).

The AVX2 kernel reads every lane's coefficients as one 48-byte table row, 6 doubles: a
32-byte half (one 4x4 transpose for the four lanes) and a 16-byte half (one 2-column pair).
What costs at run time is the number of columns (loads and shuffles) and the degree, not
the number of intervals: many narrow intervals at degree 5, and no column for the point
the polynomial is expanded around (the origin follows from the index).

  * ax = min(|x|, XMAX); k = round(128 ax) - N0 clamped at 0 (the low mantissa bits of
    r = max(fma(ax, 128, 2^52 - N0), 2^52)); rows 0..K, K = 128 XMAX - N0.
  * Interval 0 = [0, (N0 + 1/2)/128]: y = x + x * (c1 + u*(c2 + ... + c5 u^4)), u = x^2, a
    near-minimax fit of erf(x)/x - 1 in u (relative accuracy down to the subnormals).
  * Interval k >= 1 = [(k + N0 - 1/2)/128, (k + N0 + 1/2)/128]: y = c0 + t*(c1 + t*(c2 +
    ... + c5 t^4)), t = ax - o exact (Sterbenz), o = (k + N0 - 1)/128 = r/128 - C (one
    exact fma): the grid point one step below the interval's centre, so that t lies in
    [1/256, 3/256] (widened by MARGIN) and the origin outside the interval. c0..c5 are
    the degree-5 Chebyshev interpolant of erf(o + t) on that interval (in powers of t),
    rounded one at a time from c0 up: the rounding error d of c_j leaves the residual
    d t^j = t^(j+1) (d/t), and d/t is smooth on the interval (its pole at t = 0 lies two
    half-widths from the interval's centre), so its interpolant of the remaining degree
    is added to c_{j+1}..c5 (it reproduces d/t to ~2^-9 of its size). Hence c0 needs no
    low part (its half-ulp rounding is absorbed by c1..c5), c1's rounding (~0.1 ulp of y
    at x ~ 0.1 in a centred fit) is absorbed by c2..c5, and the rounded polynomial stays
    at the interpolation error. No column for the origin: 6 columns per row.
  * Row k = c0, c1, c2, c3 (32-byte half) and c4, c5 (16-byte half); interval 0: c0 = 0.

The error of the rounded polynomial (exact arithmetic, mpmath) is measured on a grid of
each interval and stored with the row. Runtime ~2 minutes:

    .venv/bin/python tools/erf_avx2_coeffs.py      # writes tools/data/erf_avx2_coefficients.json
    make regen                                       # -> generated/erf_avx2_coefficients.hpp
"""

import json
import pathlib

import mpmath as mp
from erf_coeffs import horner, interp  # tools/erf_coeffs.py (the script's own folder)

mp.mp.dps = 40
SCALE = 128  # intervals per unit of x
N0 = 9  # interval 0 covers [0, (N0 + 1/2) / SCALE]
SHIFT = 1  # the origin of interval k >= 1 lies SHIFT grid steps below its centre
XMAX = 6.0  # erf(6) rounds to 1 by 0.19 ulp: the clamped lanes give 1 exactly
DEGREE = 5  # c1..c5
K = int(SCALE * XMAX) - N0  # last row
MARGIN = mp.mpf(2) ** -30  # widening: index rounding slop
GRID = 64  # error samples per interval

OUT = pathlib.Path(__file__).resolve().parent / "data" / "erf_avx2_coefficients.json"


def ulp(y):
    e = int(mp.floor(mp.log(abs(mp.mpf(y)), 2)))
    return mp.mpf(2) ** (e - 52)


def interval0():
    hi = mp.mpf(N0 + 0.5) / SCALE + MARGIN
    umax = hi * hi

    def g(u):  # erf(x)/x - 1 as a function of u = x^2
        if u == 0:
            return 2 / mp.sqrt(mp.pi) - 1
        x = mp.sqrt(u)
        return mp.erf(x) / x - 1

    cs = [float(c) for c in interp(g, mp.mpf(0), umax, DEGREE)]
    err = 0
    for i in range(1, GRID + 1):
        x = hi * i / GRID
        y = x + x * horner([mp.mpf(c) for c in cs], x * x)
        err = max(err, abs(y - mp.erf(x)) / ulp(mp.erf(x)))
    return {"lo": 0.0, "hi": float(hi), "c0": 0.0, "c": cs, "fit_error_ulp": float(err)}


def interval(k):
    o = mp.mpf(k + N0 - SHIFT) / SCALE  # exact: the kernel's r/128 - C
    a = mp.mpf(k + N0 - 0.5) / SCALE - MARGIN - o
    b = mp.mpf(k + N0 + 0.5) / SCALE + MARGIN - o
    c = list(interp(lambda t: mp.erf(o + t), a, b, DEGREE + 1))
    # Round c0, c1, ... in turn; the rounding error d of c_j is the residual d t^j =
    # t^(j+1) (d/t), and d/t (smooth on [a, b], 0 < a) is interpolated into c_{j+1}..c_D.
    for j in range(DEGREE):
        r = mp.mpf(float(c[j]))
        d = c[j] - r
        c[j] = r
        for i, q in enumerate(interp(lambda t, d=d: d / t, a, b, DEGREE - j)):
            c[j + 1 + i] += q
    c[DEGREE] = mp.mpf(float(c[DEGREE]))
    err = 0
    for i in range(GRID + 1):
        t = a + (b - a) * i / GRID
        ref = mp.erf(o + t)
        err = max(err, abs(horner(c, t) - ref) / ulp(ref))
    return {
        "lo": float(o + a),
        "hi": float(o + b),
        "c0": float(c[0]),
        "c": [float(v) for v in c[1:]],
        "fit_error_ulp": float(err),
    }


def main():
    rows = [interval0()] + [interval(k) for k in range(1, K + 1)]
    worst = max(r["fit_error_ulp"] for r in rows)
    print(f"{len(rows)} rows, worst fit error {worst:.4f} ulp")
    hexed = [
        {
            "lo": r["lo"],
            "hi": r["hi"],
            "c0": r["c0"].hex(),
            "c": [c.hex() for c in r["c"]],
            "fit_error_ulp": round(r["fit_error_ulp"], 5),
        }
        for r in rows
    ]
    data = {
        "scale": SCALE,
        "n0": N0,
        "shift": SHIFT,
        "xmax": XMAX.hex(),
        "degree": DEGREE,
        "intervals": hexed,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
