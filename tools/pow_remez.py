#!/usr/bin/env python3
"""Minimax fits for the AVX-512 power kernels (src/core/kernels/power_avx512.hpp).

Written for numfuse from scratch on tools/explog_remez.py's Remez exchange (mpmath only;
deterministic; about a minute). The kernels share the AVX-512 float64 log's cells
(explog_remez.py log64_bits: x = z 2^k, z in [0.640625, 1.28125), 16 cells, invc on a
1/64 grid, |t| = |z invc - 1| <= 0.0342) and exp's 2^(j/16) tables. Prints each fit's
coefficients as exact hex-float literals with the max weighted error of the rounded
polynomial on a dense grid; the kernels hold them as literals.

    .venv/bin/python tools/pow_remez.py            # all fits
    .venv/bin/python tools/pow_remez.py pow64_log  # one fit

Fits:
  pow64_log : R(t) ~ (log1p(t) - t + t^2/2)/t^3 on the cells' t, degree 9, error weighted
              by the cells' smallest |log x| (the float64 power needs log|x| to ~2^-68
              relative: y log|x| reaches 746, and its error is the result's)
  pow32_log : P(t) ~ log2(1 + t)/t on the cells' t, degree 6, float64 coefficients, error
              weighted as pow64_log (the float32 power's log2 in float64 lanes)
  pow32_exp : Q(f) ~ (2^f - 1)/f on |f| <= 1/32 (+margin), degree 3, relative error of
              2^f (the float32 power's exp2 after the 2^(j/16) table)
"""

import sys

import explog_remez as er
import mpmath as mp

mp.mp.dps = 60


def cells():
    """(t_lo, t_hi, invc) per cell of the log64_bits reduction."""
    chosen = [er.choose(zr) for zr in er.layout(0.28125)]
    return [
        (mp.mpf(zlo) * mp.mpf(c) - 1, mp.mpf(zhi) * mp.mpf(c) - 1, mp.mpf(c))
        for zlo, zhi, (m, c) in chosen
    ]


def smallest_log(ts):
    """D(t): the smallest |log x| a lane with reduced argument t can have (k = 0)."""

    def D(t):
        vals = [abs(mp.log1p(t) - mp.log(c)) for a, b, c in ts if a - 1e-12 <= t <= b + 1e-12]
        return min(vals) if vals else abs(mp.log1p(t))

    return D


def fit_pow64_log(deg):
    ts = cells()
    half = max(max(abs(a), abs(b)) for a, b, _ in ts) * (1 + mp.mpf(2) ** -12)
    D = smallest_log(ts)

    def g(t):
        return (mp.log1p(t) - t + t**2 / 2) / t**3

    def w(t):
        return t**3 / D(t) * mp.sign(mp.log1p(t))

    c, _ = er.remez(g, w, -half, half, deg)
    cr = [er.to_double(x) for x in c]
    err = er.check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half)
    er.emit(
        "pow64_log",
        cr,
        False,
        f"R(t) on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], "
        "weighted by the cells' smallest |log x|",
        err,
    )


def fit_pow32_log(deg):
    ts = cells()
    half = max(max(abs(a), abs(b)) for a, b, _ in ts) * (1 + mp.mpf(2) ** -12)
    D = smallest_log(ts)

    def g(t):
        return mp.log1p(t) / (t * er.LN2)

    def w(t):
        return abs(t) / D(t)

    c, _ = er.remez(g, w, -half, half, deg)
    cr = [er.to_double(x) for x in c]
    err = er.check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half)
    er.emit(
        "pow32_log",
        cr,
        False,
        f"P(t) ~ log2(1+t)/t on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], weighted by the "
        "cells' smallest |log x|",
        err,
    )


def fit_pow32_exp(deg):
    half = mp.mpf(1) / 32 * (1 + mp.mpf(2) ** -12)

    def g(f):
        return mp.expm1(f * er.LN2) / f

    def w(f):
        return abs(f) / mp.power(2, f)

    c, _ = er.remez(g, w, -half, half, deg)
    cr = [er.to_double(x) for x in c]
    err = er.check(lambda f: mp.polyval(cr[::-1], f), g, w, -half, half)
    er.emit(
        "pow32_exp",
        cr,
        False,
        f"Q(f) ~ (2^f-1)/f on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], relative error of 2^f",
        err,
    )


def main():
    which = sys.argv[1:] or ["all"]
    degrees = {"pow64_log": 9, "pow32_log": 6, "pow32_exp": 3}
    for arg in which:
        if "=" in arg:  # name=degree, to compare degrees
            name, deg = arg.split("=")
            degrees[name] = int(deg)
    names = [a.split("=")[0] for a in which]
    run = lambda n: "all" in names or n in names  # noqa: E731
    if run("pow64_log"):
        fit_pow64_log(degrees["pow64_log"])
    if run("pow32_log"):
        fit_pow32_log(degrees["pow32_log"])
    if run("pow32_exp"):
        fit_pow32_exp(degrees["pow32_exp"])


if __name__ == "__main__":
    main()
