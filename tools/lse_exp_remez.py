#!/usr/bin/env python3
"""The polynomial of logsumexp's term exp (src/core/kernels/lse_exp.hpp).

Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12), degree 9, minimising the relative
error of e^r = 1 + r + r^2 Q(r); the coefficients rounded to double and the fit's error
measured with the rounded ones. Uses explog_remez.py's Remez exchange (mpmath). Run:

    .venv/bin/python tools/lse_exp_remez.py      # prints the literals for lse_exp.hpp
"""

import pathlib
import sys

import mpmath as mp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import explog_remez as er  # noqa: E402

DEGREE = 9


def main():
    mp.mp.dps = 40
    half = mp.log(2) / 2 * (1 + mp.mpf(2) ** -12)

    def g(r):
        return (mp.expm1(r) - r) / r**2

    def w(r):
        return r**2 / mp.exp(r)

    coefs, _ = er.remez(g, w, -half, half, DEGREE, grid=2000)
    rounded = [er.to_double(c) for c in coefs]
    err = er.check(lambda r: mp.polyval(rounded[::-1], r), g, w, -half, half, grid=8000)
    print(f"// relative error of e^r with the rounded coefficients: 2^{float(mp.log(err, 2)):.2f}")
    for c in rounded:
        print(f"    {er.hexf(c)},  // {mp.nstr(c, 20)}")


if __name__ == "__main__":
    main()
