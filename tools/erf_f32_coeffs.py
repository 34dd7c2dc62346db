#!/usr/bin/env python3
"""Coefficient fit for the float32-lane erf kernel (src/core/kernels/erf.hpp, AVX2).

Method (evaluated in float32 with FMA, 8 lanes per AVX2 register):

  * ax = min(|x|, XMAX); erf(XMAX) and everything above rounds to 1 in float32.
  * Eight intervals [k/2, (k+1)/2]: k = floor(2 ax) (vcvttps2dq of the exact 2 ax; the
    fits cover each interval widened by MARGIN all the same). Each coefficient is one
    vpermps from an 8-entry table.
  * Interval 0 = [0, 1/2]: y = x + x * P0(x^2), P0 ~ erf(x)/x - 1 (odd; the rounding
    of P0 reaches y scaled by |x P0 / y| <= 0.12). Interval 1 starts at 1/2, where
    erf > 1/2: a t * P(t) comparable to y there (from a narrower interval 0) would pass
    the rounding of P to y almost unscaled.
  * Interval k >= 1: y = c0 + t * P(t), t = ax - m exact by Sterbenz (m/2 <= ax <= 2m);
    m is a float near the interval's center whose erf is close to a float (c0 = erf(m)
    rounded) and whose fitted c1 also rounds well (the rounding of c1 reaches y as
    t * dc1).
  * P has DEGREE coefficients c1..cDEGREE (P0 the same count, in u = x^2).

Each P is the Chebyshev interpolant of the exact function (mpmath, 40 digits) on the
widened interval; the coefficients are rounded to float one at a time from c1 up, and
after each rounding the higher ones are refitted to the remaining function (so the
later coefficients absorb the rounding of the earlier ones where they can). The error
of the rounded polynomial (exact arithmetic) is measured on a dense grid and recorded.

    .venv/bin/python tools/erf_f32_coeffs.py     # rewrites tools/data/erf_f32_coefficients.json
    make regen                                   # tools/gen_erf_f32_coefficients.py -> header
"""

from __future__ import annotations

import json
import pathlib

import mpmath as mp
import numpy as np

mp.mp.dps = 40
ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "erf_f32_coefficients.json"

NI = 8  # intervals (one vpermps table each)
WIDTH = 0.5  # interval k = [k WIDTH, (k + 1) WIDTH]
DEGREE = 7  # c1..c7
XMAX = 3.9375  # float; erfc(XMAX) = 0.25 output ulp (2^-24): erf rounds to 1 here and above
MARGIN = 2.0**-20  # fits cover [lo - MARGIN, hi + MARGIN]
POINTS = 400  # least-squares points per fit


def f32(v) -> float:
    """The nearest float32 to v (mpf or float), as a Python float."""
    return float(np.float32(float(v)))


def f32_exact(v: mp.mpf) -> float:
    """The nearest float32 to the mpf v (double rounding through float64 is harmless at
    the accuracy used here, but round exactly anyway)."""
    d = float(v)
    f = float(np.float32(d))
    lo, hi = (
        np.nextafter(np.float32(f), np.float32(-np.inf)),
        np.nextafter(np.float32(f), np.float32(np.inf)),
    )
    best = min((f, float(lo), float(hi)), key=lambda c: abs(mp.mpf(c) - v))
    return best


def fit_rounded(g, a: float, b: float, weight) -> list[float]:
    """c1..cDEGREE (floats) approximating g(s) = c1 + s*(c2 + ...) on [a, b]: least
    squares on POINTS Chebyshev-distributed points (near-minimax), each residual scaled by
    weight(s) (what an error in P costs in output ulps there), rounded to float one
    coefficient at a time (c1 first), the higher ones refitted to what is left. g is
    evaluated in mpmath; the fits run in float64 on its values, which is ample for
    float32 coefficients."""
    n = POINTS
    s = np.array(
        [float((a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (2 * i + 1) / (2 * n))) for i in range(n)]
    )
    gs = np.array([float(g(mp.mpf(v))) for v in s])
    w = np.array([weight(v) for v in s])
    out: list[float] = []
    for j in range(DEGREE):
        rest = gs - sum(c * s**i for i, c in enumerate(out))
        scale = max(abs(a), abs(b))
        cols = np.stack([(s / scale) ** i for i in range(j, DEGREE)], axis=1)
        sol = np.linalg.lstsq(cols * w[:, None], rest * w, rcond=None)[0]
        out.append(f32_exact(mp.mpf(float(sol[0]) / scale**j)))
    return out


def horner(c: list[float], s):
    acc = mp.mpf(0)
    for v in reversed(c):
        acc = acc * s + v
    return acc


def ulp_f32(y) -> mp.mpf:
    e = mp.floor(mp.log(abs(y), 2))
    return mp.mpf(2) ** (max(e, -126) - 23)


def bounds(k: int) -> tuple[float, float]:
    return k * WIDTH, (k + 1) * WIDTH


def pick_center(k: int) -> float:
    """A float m near the center of interval k with erf(m) close to a float and the
    fitted slope c1 close to a float (both weighted in output ulps)."""
    lo, hi = bounds(k)
    mc = np.float32((lo + hi) / 2)
    best = None
    ulp_y = 2.0**-24
    from scipy.special import erf  # float64 screening only; the final values are mpmath

    # erf is nearly flat on the last interval: search a wider window there.
    reach = 0.1 if k == NI - 1 else 2**13 * float(np.spacing(mc))
    c64 = np.unique(np.linspace(mc - reach, mc + reach, 2**14).astype(np.float32)).astype(
        np.float64
    )
    e = erf(c64)
    d0 = np.abs(e - e.astype(np.float32).astype(np.float64)) / ulp_y
    keep = np.argsort(d0)[:64]
    for i in keep:
        m = float(c64[i])
        t = np.linspace(lo - m, hi - m, 201)
        t = t[np.abs(t) > 1e-9]
        slope = np.polynomial.polynomial.polyfit(t, (erf(m + t) - erf(m)) / t, DEGREE - 1)[0]
        d1 = abs(slope - float(np.float32(slope))) * (hi - lo) / 2 / ulp_y
        score = 4 * d0[i] + d1
        if best is None or score < best[0]:
            best = (score, m)
    return best[1]


def measure(k: int, m: float, c0: float, c: list[float]) -> float:
    """Max error (output ulps, exact arithmetic) of the rounded polynomial on interval k."""
    lo, hi = bounds(k)
    hi = min(hi, XMAX)
    worst = mp.mpf(0)
    for i in range(401):
        x = mp.mpf(max(lo, 2.0**-30)) + (mp.mpf(hi) - max(lo, 2.0**-30)) * i / 400
        ex = mp.erf(x)
        if k == 0:
            y = x + x * horner(c, x * x)
        else:
            t = x - m
            y = c0 + t * horner(c, t)
        worst = max(worst, abs(y - ex) / ulp_f32(ex))
    return float(worst)


def main() -> None:
    rows = []
    for k in range(NI):
        lo, hi = bounds(k)
        if k == 0:
            m, c0 = 0.0, 0.0

            def g(u):
                if u == 0:
                    return 2 / mp.sqrt(mp.pi) - 1
                x = mp.sqrt(u)
                return mp.erf(x) / x - 1

            c = fit_rounded(g, 0.0, (hi + MARGIN) ** 2, lambda u: 1.0)
        else:
            m = pick_center(k)
            em = mp.erf(m)
            c0 = f32_exact(em)

            def g(t, m=m, em=em):
                if abs(t) < 1e-15:  # a Chebyshev node at ~0: the difference quotient cancels
                    return 2 / mp.sqrt(mp.pi) * mp.exp(-(mp.mpf(m) ** 2)) * (1 - m * t)
                return (mp.erf(mp.mpf(m) + t) - em) / t

            # y's error is t (P - g), in ulps of erf(m + t)
            c = fit_rounded(
                g,
                lo - MARGIN - m,
                hi + MARGIN - m,
                lambda t, m=m: (abs(t) + 1e-3) / float(ulp_f32(mp.erf(m + t))),
            )
        err = measure(k, m, c0, c)
        d0 = float(abs(mp.erf(m) - c0) / mp.mpf(2.0**-24)) if k else 0.0
        print(f"{k}: [{lo}, {hi}] m={m!r} c0 err {d0:.5f} ulp, fit err {err:.4f} ulp", flush=True)
        rows.append(
            {
                "lo": lo,
                "hi": hi,
                "m": m.hex(),
                "c0": c0.hex(),
                "c": [v.hex() for v in c],
                "fit_error_ulp": round(err, 5),
            }
        )
    DATA.write_text(
        json.dumps(
            {"degree": DEGREE, "width": WIDTH, "xmax": XMAX.hex(), "intervals": rows},
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
