#!/usr/bin/env python3
"""Coefficient fit for the avx2_fma float64 erf kernel (src/core/kernels/erf.hpp, erf_abs_avx2).

The AVX2 kernel reads every lane's coefficients as one 64-byte table row (8 doubles: two
row loads + 4x4 transposes serve them all), so the interval count costs nothing at run
time and the degree is what costs: many narrow intervals at low degree.

  * ax = min(|x|, XMAX); k = round(64 ax) - N0 clamped at 0 (the low mantissa bits of
    max(fma(ax, 64, 2^52 - N0), 2^52)); rows 0..K, K = 64 XMAX - N0.
  * Interval 0 = [0, (N0 + 1/2)/64]: y = x + x * (c1 + u*(c2 + ... + c6 u^4)), u = x^2, a
    near-minimax fit of erf(x)/x - 1 in u (relative accuracy down to the subnormals).
  * Interval k >= 1 = [(k + N0 - 1/2)/64, (k + N0 + 1/2)/64]: y = c0 + t*(c1 + t*(c2 + ...
    + c6 t^5)), t = ax - m exact (Sterbenz), m a double near the centre (k + N0)/64
    (pick_center; the last rows, erf within ulps of 1, share m ~ 5.87) with erf(m) within
    2^-10 ulp of the double c0, P
    the Chebyshev interpolant of (erf(m + t) - erf(m))/t on the interval widened by MARGIN.
  * Row k = m, c0, c1, ..., c6 (interval 0: m = c0 = 0).

The error of the rounded polynomial (exact arithmetic, mpmath) is measured on a grid of
each interval and stored with the row. Runtime ~1 minute:

    .venv/bin/python tools/erf_avx2_coeffs.py      # writes tools/data/erf_avx2_coefficients.json
    make regen                                       # -> generated/erf_avx2_coefficients.hpp
"""

import json
import pathlib

import mpmath as mp
from erf_coeffs import horner, interp  # tools/erf_coeffs.py (the script's own folder)

mp.mp.dps = 40
SCALE = 64  # intervals per unit of x
N0 = 8  # interval 0 covers [0, (N0 + 1/2) / SCALE]
XMAX = 6.0  # erf(6) rounds to 1 by 0.19 ulp: the clamped lanes give 1 exactly
DEGREE = 6  # c1..c6
K = int(SCALE * XMAX) - N0  # last row
MARGIN = mp.mpf(2) ** -30  # widening: index rounding slop and m's distance from the centre
GRID = 64  # error samples per interval

OUT = pathlib.Path(__file__).resolve().parent / "data" / "erf_avx2_coefficients.json"


def ulp(y):
    e = int(mp.floor(mp.log(abs(mp.mpf(y)), 2)))
    return mp.mpf(2) ** (e - 52)


def pick_center(center):
    """m near center whose erf(m) is within 2^-10 ulp of the double c0 = RN(erf(m)).

    First m = RN(erf^-1(D)), D = RN(erf(center)) below 1 (Newton in mpmath): right wherever
    erf'(m) ulp(m) is far below ulp(erf(m)), x >~ 1; taken within 1/64 of the centre, and
    beyond x = 5.5 at any distance (erf is within a few ulps of 1 there: the last intervals
    share D = 1 - 2^-53, m ~ 5.87, t up to 0.13, where the polynomial is still far below an
    ulp off). Else steps of 0.618 ulp(erf) / erf'(m) (at least 2^-40) outwards, within 1/256
    of the centre."""
    e = mp.erf(mp.mpf(center))
    D = min(mp.mpf(float(e)), 1 - mp.mpf(2) ** -53)
    m = mp.mpf(center)
    for _ in range(60):
        m -= (mp.erf(m) - D) / (2 / mp.sqrt(mp.pi) * mp.exp(-m * m))
    m = float(m)
    em = mp.erf(mp.mpf(m))
    if (abs(m - center) <= 1 / 64 or center > 5.5) and abs(em - D) <= ulp(D) * mp.mpf(2) ** -10:
        return m, float(D)
    slope = 2 / mp.sqrt(mp.pi) * mp.exp(-(mp.mpf(center) ** 2))
    step = max(2.0**-40, float(mp.mpf(0.618) * ulp(e) / slope))
    for j in range(4000):
        if j * step > 1 / 256:
            break
        for m in (center + j * step, center - j * step) if j else (center,):
            e = mp.erf(mp.mpf(m))
            c0 = float(e)
            if abs(e - mp.mpf(c0)) <= ulp(c0) * mp.mpf(2) ** -10:
                return m, c0
    raise RuntimeError(f"no center near {center}")


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
    return {"lo": 0.0, "hi": float(hi), "m": 0.0, "c0": 0.0, "c": cs, "fit_error_ulp": float(err)}


def interval(k):
    center = (k + N0) / SCALE
    m, c0 = pick_center(center)
    M = mp.mpf(m)
    em = mp.erf(M)
    a = mp.mpf(k + N0 - 0.5) / SCALE - MARGIN - M
    b = mp.mpf(k + N0 + 0.5) / SCALE + MARGIN - M

    def g(t):  # (erf(m + t) - erf(m)) / t, smooth through t = 0
        if t == 0:
            return 2 / mp.sqrt(mp.pi) * mp.exp(-M * M)
        return (mp.erf(M + t) - em) / t

    cs = [float(c) for c in interp(g, a, b, DEGREE)]
    mc = [mp.mpf(c) for c in cs]
    err = 0
    for i in range(GRID + 1):
        t = a + (b - a) * i / GRID
        y = mp.mpf(c0) + t * horner(mc, t)
        ref = mp.erf(M + t)
        err = max(err, abs(y - ref) / ulp(ref))
    return {
        "lo": float(M + a),
        "hi": float(M + b),
        "m": m,
        "c0": c0,
        "c": cs,
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
            "m": r["m"].hex(),
            "c0": r["c0"].hex(),
            "c": [c.hex() for c in r["c"]],
            "fit_error_ulp": round(r["fit_error_ulp"], 5),
        }
        for r in rows
    ]
    data = {"scale": SCALE, "n0": N0, "xmax": XMAX.hex(), "degree": DEGREE, "intervals": hexed}
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
