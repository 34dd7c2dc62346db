#!/usr/bin/env python3
"""Minimax rational fit for numfuse's AVX-512 float32 tan (kernels/trig_f32.hpp,
tan_f32_rational).

Written for numfuse from scratch (mpmath and numpy; deterministic). The kernel computes
tan r ~ r P(z) / Q(z) on the reduced argument |r| <= pi/4 (plus margin), z = r^2, with
P = 1 + p1 z and Q = 1 + q1 z + q2 z^2 (P(0) = Q(0) = 1: tiny r returns r). The fit is
Lawson's iteratively reweighted least squares on the linearized error (P - f Q) / (f Q),
f = tan(r) / r from mpmath, which converges to the minimax fit of the relative error of
r P / Q against tan r. The kernel evaluates the same function in the form r w / D(w) with
w = c - z, c = -1/p1 (so r P = r w / c) and D(w) = c Q(c - w) = d0 + d1 w + d2 w^2, which
takes one operation less (w = c - r^2 in one fused operation replaces z = r^2, and r w is
the numerator) and keeps r P / Q's value at r = 0 (D(c) = c). The kernel takes w = c - r1^2
with r1 = x - k C1, the exact first step of the reduction (r = r1 - k C2), so that w waits
for one step less; the script also prints the largest relative change that makes to r w /
D(w) for |x| < 2^17 (|k C2| <= 83443 C2). Prints c, d2, d1, d0 (rounded to double) as
hex-float literals with a decimal comment and the max relative error of r w / D(w) with those
rounded coefficients, measured at 50 digits on a grid of 20001 points. Run (a few seconds):

    .venv/bin/python tools/tan_f32_rational.py
"""

import mpmath as mp
import numpy as np

mp.mp.dps = 50
R = float(mp.pi / 4) * 1.0001  # |r| <= pi/4 (1 + 2^-40) in the kernel; margin for the fit
NUM_DEGREE, DEN_DEGREE = 1, 2


def lawson(iters=80, points=6000):
    r = np.sort(
        np.concatenate(
            [np.cos(np.linspace(0, np.pi / 2, points)) * R, np.linspace(1e-6, R, points)]
        )
    )
    z = r * r
    f = np.array([float(mp.tan(mp.mpf(x)) / mp.mpf(x)) for x in r])
    w = np.ones_like(z)
    q = np.ones_like(z)
    for _ in range(iters):
        cols = [z**j for j in range(1, NUM_DEGREE + 1)] + [
            -f * z**j for j in range(1, DEN_DEGREE + 1)
        ]
        a = np.stack(cols, axis=1)
        scale = np.sqrt(w) / (f * q)
        c, *_ = np.linalg.lstsq(a * scale[:, None], (f - 1) * scale, rcond=None)
        p = 1 + sum(c[j - 1] * z**j for j in range(1, NUM_DEGREE + 1))
        q = 1 + sum(c[NUM_DEGREE + j - 1] * z**j for j in range(1, DEN_DEGREE + 1))
        err = np.abs(p / q / f - 1)
        w = w * err
        w /= w.sum()
    return [float(v) for v in c]


def shifted_form(c):
    """(c, d2, d1, d0) of r w / D(w), w = c - r^2, from p1, q1, q2, each rounded to double."""
    p1, q1, q2 = (mp.mpf(v) for v in c)
    shift = -1 / p1
    d2 = shift * q2
    d1 = shift * (-q1 - 2 * q2 * shift)
    d0 = shift * (1 + q1 * shift + q2 * shift**2)
    return [float(v) for v in (shift, d2, d1, d0)]


def max_error(form, grid=20001):
    shift, d2, d1, d0 = (mp.mpf(v) for v in form)
    worst = mp.mpf(0)
    for i in range(1, grid + 1):
        x = mp.mpf(R) * i / grid
        w = shift - x * x
        worst = max(worst, abs(x * w / (d0 + w * (d1 + w * d2)) / mp.tan(x) - 1))
    return worst


def max_w_from_r1_change(form, grid=2001):
    """max |ln(r w1 / D(w1)) - ln(r w / D(w))| with w1 = c - (r + e)^2, |e| = 83443 C2."""
    shift, d2, d1, d0 = (mp.mpf(v) for v in form)
    c2 = mp.mpf(float.fromhex("0x1.1a62633145c07p-54"))  # trig.hpp's trig_pio2_c2
    e = 83443 * c2  # largest |k| for |x| < 2^17: round(2^17 2/pi)
    worst = mp.mpf(0)
    for i in range(grid + 1):
        r = mp.mpf(R) * i / grid
        for s in (e, -e):
            w, w1 = shift - r * r, shift - (r + s) ** 2
            q, q1 = w / (d0 + w * (d1 + w * d2)), w1 / (d0 + w1 * (d1 + w1 * d2))
            worst = max(worst, abs(q1 / q - 1))
    return worst


def main():
    form = shifted_form(lawson())
    for name, v in zip(("c", "d2", "d1", "d0"), form):
        print(f"{name} = {v.hex()}  // {v!r}")
    err = max_error(form)
    print(
        f"max relative error of r w / D(w) vs tan r on |r| <= {R!r}: 2^{float(mp.log(err, 2)):.2f}"
    )
    change = max_w_from_r1_change(form)
    print(f"max relative change from w = c - r1^2 (|x| < 2^17): 2^{float(mp.log(change, 2)):.2f}")


if __name__ == "__main__":
    main()
