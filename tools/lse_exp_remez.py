#!/usr/bin/env python3
"""The polynomial of logsumexp's term exp (src/core/kernels/lse_exp.hpp).

Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12), degree 9, minimising the relative
error of e^r = 1 + r + r^2 Q(r); the coefficients rounded to double and the fit's error
measured with the rounded ones. Uses explog_remez.py's Remez exchange (mpmath) and, like
it, stores the fit (entry lse_exp64) in tools/data/explog_coefficients.json; `make regen`
(tools/gen_explog_coefficients.py) then writes NUMFUSE_LSE_EXP64_C<i> into
src/core/kernels/generated/explog_coefficients.hpp, which lse_exp.hpp reads. Run:

    .venv/bin/python tools/lse_exp_remez.py      # prints the fit and stores it
"""

import pathlib
import sys

import mpmath as mp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import explog_remez as er  # noqa: E402

DEGREE = 9
NAME = "lse_exp64"


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
    er.emit(NAME, rounded, False, "Q(r) ~ (e^r - 1 - r)/r^2, relative error of e^r", err)
    er.write_shared((NAME,))


if __name__ == "__main__":
    main()
