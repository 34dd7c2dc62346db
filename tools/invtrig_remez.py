#!/usr/bin/env python3
"""Minimax fits for numfuse's float64 inverse trigonometric kernels (kernels/invtrig.hpp:
arcsin, arccos, arctan; kernels/atan2.hpp reuses arctan's).

Written for numfuse from scratch (mpmath only, deterministic; reuses tools/explog_remez.py's
Remez exchange). The coefficients are rounded to float64 one at a time, lowest degree first,
each rounding followed by a refit of the higher ones with the rounded ones held fixed. Prints
each fit as hex-float literals with a decimal comment and its max weighted error measured on
a dense grid. Run:

    .venv/bin/python tools/invtrig_remez.py          # all fits (a few minutes)
    .venv/bin/python tools/invtrig_remez.py asin64   # one fit (asin64:11: another degree)

Fits (z is the square of the reduced argument):
  asin64: (asin s - s) / s^3 in z = s^2 on [0, 1/4], degree 12; the weight is the larger of
          the term's share of asin s (|x| <= 1/2) and of pi/2 - 2 asin s (|x| > 1/2)
  atan64: (atan u - u) / u^3 in z = u^2 on [0, 0.0173], degree 4, relative to atan u (the
          table lanes' |u| <= 1/8, the others' 1/|x| < 1/7.625)
  atan32_oct: the same in float32 on [0, 1/225] (|u| < 1/15: atan_f32_lanes on AVX-512, c the
          midpoint of a quarter of an octave), degree 1, float coefficients
  atan2_32: the same in float32 on [0, 0.01573] (|u| <= 0.1254: kernels/atan2.hpp's AVX-512
          float32 arctan2, c = k/4), degree 3, float coefficients
"""

import sys

import mpmath as mp
from explog_remez import fit_rounded, hexf, to_double, to_float

mp.mp.dps = 100


def _asin_weight(z):
    s = mp.sqrt(z)
    far = mp.pi / 2 - 2 * mp.asin(s)
    return s * z * max(1 / mp.asin(s), 2 / far)


def _atan_weight(z):
    u = mp.sqrt(z)
    return u * z / mp.atan(u)


def _odd_rest(f):
    def g(z):
        t = mp.sqrt(z)
        return (f(t) - t) / (t * z)

    return g


FITS = {
    "asin64": (mp.asin, _asin_weight, mp.mpf(1) / 4, 12, "(asin s - s)/s^3"),
    "atan64": (mp.atan, _atan_weight, mp.mpf("0.0173"), 4, "(atan u - u)/u^3"),
    "atan32_oct": (mp.atan, _atan_weight, mp.mpf(1) / 225, 1, "(atan u - u)/u^3"),
    "atan2_32": (mp.atan, _atan_weight, mp.mpf("0.01573"), 3, "(atan u - u)/u^3"),
}
SINGLE = {"atan2_32", "atan32_oct"}


def main() -> None:
    names = sys.argv[1:] or list(FITS)
    for arg in names:
        name, _, degree = arg.partition(":")  # name:degree tries another degree
        f, w, b, deg, note = FITS[name]
        deg = int(degree) if degree else deg
        a = (
            mp.mpf(2) ** -24
        )  # below: z P(z) is below 2^-24 of the term, itself far below the result
        single = name in SINGLE
        coefs, err = fit_rounded(_odd_rest(f), w, a, b, deg, to_float if single else to_double)
        print(f"// {name}: {note}, z in [0, {mp.nstr(b, 8)}], degree {deg}")
        print(
            f"//   max weighted error with the {'float32' if single else 'float64'} coefficients: "
            f"2^{float(mp.log(err, 2)):.2f}"
        )
        for i, c in enumerate(coefs):
            print(f"    {hexf(c, single)},  // c{i} = {mp.nstr(c, 20)}")
        print()


if __name__ == "__main__":
    main()
