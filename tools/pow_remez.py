#!/usr/bin/env python3
"""Minimax fits for the power kernels (src/core/kernels/power_avx512.hpp, and power.hpp's
lean float32 kernel).

Written for numfuse from scratch on tools/explog_remez.py's Remez exchange (mpmath only;
deterministic; about a minute). The float64 kernel shares the AVX-512 float64 log's cells
(explog_remez.py log64_bits: x = z 2^k, z in [0.640625, 1.28125), 16 cells, invc on a
1/64 grid, |t| = |z invc - 1| <= 0.0342) and exp's 2^(j/16) tables; the float32 kernel
has its own reduction (r = z c - 1, c = 1/z on the 1/32 grid, |r| < 0.0222) and exp's
float32 2^(j/16) tables. Prints each fit's coefficients as exact hex-float literals with
the max weighted error of the rounded polynomial on a dense grid (every fit is one
fit_tail: leading coefficients given, the rest by Remez, then rounded); the AVX-512 kernels
hold them as literals. The lean kernel's two polynomials are also stored in
tools/data/explog_coefficients.json (make regen: kernels/generated/explog_coefficients.hpp).

    .venv/bin/python tools/pow_remez.py               # all fits and tables
    .venv/bin/python tools/pow_remez.py pow64_log     # one fit

Fits:
  pow64_log   : R(t) ~ (log1p(t) - t + t^2/2)/t^3 on the cells' t, degree 9, error weighted
                by the cells' smallest |log x| (the float64 power needs log|x| to ~2^-68
                relative: y log|x| reaches 746, and its error is the result's)
  pow32_log   : P(r) ~ (log2(1 + r) - A r)/r, A = RN(1/ln2) in float32, degree 4, float32
                coefficients, absolute error of r P(r) (the float32 power's log2 tail;
                c0 and c1 chosen first: c1 r^2 is where float32 rounding costs most)
  pow32_exp   : Q(f) ~ (2^f - 1)/f on |f| <= 1/32 + 2^-8, degree 3, float32, relative
                error of 2^f (the float32 power's exp2 after the 2^(j/16) table)
  pow32_tables: -log2(c) as a 2^-16-grid high part and a float32 low part per c
  pow32_lean_log : (2/ln2)/(2j + 1), j = 0..7: log2 z = s P(s^2), s = (z - 1)/(z + 1), the
                AVX2 float32 power's lean kernel (power.hpp pow_f32_lean_kernel; Taylor:
                truncation 2^-44.8 relative for |s| <= 0.1716)
  pow32_lean_exp2: 2^f on [-1/2, 1/2], degree 8 (mpmath's Chebyshev fit, float64
                coefficients; relative error of the rounded polynomial), the same kernel's
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


def fit_tail(g, w, half, lead, deg, rnd, grid=6000, check_grid=20000):
    """P ~ g on [-half, half] of degree deg, its leading coefficients `lead` given: the
    others by Remez on (g - lead)/t^len(lead) (weight w |t|^len(lead)), each rounded by
    `rnd`. Returns (coefficients, max weighted error of the rounded polynomial)."""
    m = len(lead)

    def gt(t):
        return (g(t) - sum(c * t**i for i, c in enumerate(lead))) / t**m

    def wt(t):
        return w(t) * abs(t) ** m

    c, _ = er.remez(gt, wt, -half, half, deg - m, grid=grid)
    cr = list(lead) + [rnd(x) for x in c]
    err = er.check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half, grid=check_grid)
    return cr, err


def fit_pow64_log(deg):
    ts = cells()
    half = max(max(abs(a), abs(b)) for a, b, _ in ts) * (1 + mp.mpf(2) ** -12)
    D = smallest_log(ts)

    def g(t):
        return (mp.log1p(t) - t + t**2 / 2) / t**3

    def w(t):
        return t**3 / D(t) * mp.sign(mp.log1p(t))

    cr, err = fit_tail(g, w, half, [], deg, er.to_double)
    er.emit(
        "pow64_log",
        cr,
        False,
        f"R(t) on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], "
        "weighted by the cells' smallest |log x|",
        err,
    )


# The float32 kernel's reduction: z in [0.70703125, 1.4140625), c = 1/z on the 1/32 grid
# (vrcp14ps: 2^-14 relative), r = z c - 1: |r| <= 1.4140625 2^-6 + 2^-14 < 0.0222.
R32 = mp.mpf("0.0225")
A32 = er.to_float(1 / er.LN2)  # the kernel's A


def fit_pow32_log(deg):
    def g(r):
        return (mp.log1p(r) / er.LN2 - A32 * r) / r

    def w(r):  # the absolute error of log2 x (y log2 x multiplies it by |y| < 256)
        return abs(r)

    # c0 = g(0) = 1/ln2 - A rounded; c1 ~ -1/(2 ln2) is the one whose rounding matters
    # (c1 r^2 at 2^-11): the best of RN and its four float neighbours, the rest refitted
    c0 = er.to_float(1 / er.LN2 - A32)
    c1 = er.to_float(-1 / (2 * er.LN2))
    ulp = mp.mpf(2) ** -24
    fits = [
        fit_tail(g, w, R32, [c0, c1 + k * ulp], deg, er.to_float, 600, 3000) for k in range(-2, 3)
    ]
    cr, err = min(fits, key=lambda f: f[1])
    er.emit(
        "pow32_log",
        cr,
        True,
        f"P(r) ~ (log2(1+r) - A r)/r on [-{mp.nstr(R32, 6)}, {mp.nstr(R32, 6)}], A = "
        f"{er.hexf(A32, True)}, absolute error of r P(r)",
        err,
    )


def fit_pow32_exp(deg):
    # |f| <= 1/32 + |tl|, |tl| <= 2^-8.05 (the kernel's bound)
    half = mp.mpf(1) / 32 + mp.mpf(2) ** -8

    def g(f):
        return mp.expm1(f * er.LN2) / f

    def w(f):
        return abs(f) / mp.power(2, f)

    cr, err = fit_tail(g, w, half, [er.to_float(er.LN2)], deg, er.to_float, 600, 3000)
    er.emit(
        "pow32_exp",
        cr,
        True,
        f"Q(f) ~ (2^f-1)/f on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], relative error of 2^f",
        err,
    )


def pow32_tables():
    """-log2(c) = hi + lo at the float32 kernel's index bits(c) >> 18 (low 5 bits)."""
    his, los = [], []
    for i in range(32):
        if i <= 13:
            c = 1 + mp.mpf(i) / 32
        elif i % 2 == 0:
            c = (32 + mp.mpf(i)) / 64
        else:
            his.append(mp.mpf(0))
            los.append(mp.mpf(0))
            continue
        v = -mp.log(c, 2)
        hi = mp.nint(v * 2**16) / 2**16
        his.append(hi)
        los.append(er.to_float(v - hi))
    print("// pow32_tables: -log2(c) = hi (2^-16 grid) + lo, index bits(c) >> 18 (low 5 bits)")
    for name, vals in (("hi", his), ("lo", los)):
        print(f"// {name}:")
        print("    " + ", ".join(er.hexf(v, True) for v in vals) + ",")
    print()


def pow32_lean_log():
    """(2/ln2)/(2j + 1), j = 0..7, and the truncation error of s P(s^2) against log2 z
    where |s| is largest (the rounded coefficients' error is far below it)."""
    coefs = [er.to_double(2 / er.LN2 / (2 * j + 1)) for j in range(8)]
    s = mp.mpf("0.1716")
    p = mp.polyval(coefs[::-1], s * s)
    worst = abs(s * p / (2 * mp.atanh(s) / er.LN2) - 1)
    er.emit("pow32_lean_log2", coefs, False, "log2 z = s P(s^2), Taylor", worst)


def pow32_lean_exp2(deg=8):
    with mp.workprec(200):
        coeffs = mp.chebyfit(lambda f: mp.power(2, f), [-0.5, 0.5], deg + 1)[::-1]
        rounded = [er.to_double(c) for c in coeffs]
        worst = mp.mpf(0)
        for i in range(4001):
            f = mp.mpf(i - 2000) / 4000
            worst = max(worst, abs(mp.polyval(rounded[::-1], f) / mp.power(2, f) - 1))
    er.emit("pow32_lean_exp2", rounded, False, "2^f on [-1/2, 1/2], Chebyshev", worst)


def main():
    which = sys.argv[1:] or ["all"]
    degrees = {"pow64_log": 9, "pow32_log": 4, "pow32_exp": 3}
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
    if run("pow32_tables"):
        pow32_tables()
    if run("pow32_lean_log"):
        pow32_lean_log()
    if run("pow32_lean_exp2"):
        pow32_lean_exp2()
    er.write_shared(("pow32_lean_log2", "pow32_lean_exp2"))


if __name__ == "__main__":
    main()
