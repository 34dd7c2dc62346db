#!/usr/bin/env python3
"""Minimax fits for numfuse's float32-lane inverse trigonometric kernels
(kernels/invtrig_f32.hpp: arctan, arcsin, arccos; kernels/atan2.hpp: arctan2).

Written for numfuse from scratch (mpmath only, deterministic; reuses tools/explog_remez.py's
Remez exchange). The coefficients are rounded to float32 one at a time, lowest degree
first: each rounding is followed by a refit of the higher coefficients with the rounded
ones held fixed, which keeps the rounded polynomial's error close to the unrounded one's
(rounding all at once loses about 2 bits here). Prints each fit as hex-float literals with
a decimal comment and its max weighted error measured on a dense grid. Run:

    .venv/bin/python tools/trig_f32_remez.py          # all fits (about a minute)
    .venv/bin/python tools/trig_f32_remez.py atan32   # one fit

Fits (z is the square of the reduced argument):
  atan32 : (atan(t) - t) / t^3 in z = t^2 on [0, 1], degree 8, error relative to atan t
  asin32 : (asin(s) - s) / s^3 in z = s^2 on [0, 1/4], degree 4, relative to asin s
  atan2_32: atan32 on [0, 0.2501] (arctan2's reduced |t| <= 1/2), degree 5
"""

import sys

import mpmath as mp
from explog_remez import fit_rounded, hexf, to_float

mp.mp.dps = 60


def _sqrt_fit(f):
    def g(z):
        t = mp.sqrt(z)
        return (f(t) - t) / (t * z)

    def w(z):
        t = mp.sqrt(z)
        return t * z / f(t)

    return g, w


FITS = {
    "atan32": (mp.atan, mp.mpf(0), mp.mpf(1), 8, "(atan t - t)/t^3, relative to atan t"),
    "asin32": (mp.asin, mp.mpf(0), mp.mpf(1) / 4, 4, "(asin s - s)/s^3, relative to asin s"),
    # arctan2's float32 lanes (kernels/atan2.hpp): |t| <= 1/2 (1 + 2^-23) after its reduction
    "atan2_32": (mp.atan, mp.mpf(0), mp.mpf("0.2501"), 5, "(atan t - t)/t^3, relative to atan t"),
}


def main() -> None:
    names = sys.argv[1:] or list(FITS)
    for name in names:
        f, a, b, deg, note = FITS[name]
        g, w = _sqrt_fit(f)
        a = max(a, mp.mpf(2) ** -14)  # below: the terms z P(z) are below 2^-14 relative
        coefs, err = fit_rounded(g, w, a, b, deg, to_float)
        print(f"// {name}: {note}, z in [0, {mp.nstr(b, 8)}], degree {deg}")
        print(
            f"//   max weighted error with the float32 coefficients: 2^{float(mp.log(err, 2)):.2f}"
        )
        for i, c in enumerate(coefs):
            print(f"    {hexf(c, True)},  // c{i} = {mp.nstr(c, 20)}")
        print()


if __name__ == "__main__":
    main()
