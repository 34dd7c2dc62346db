#!/usr/bin/env python3
"""Minimax (Remez exchange) fits and tables for numfuse's exp/log kernels.

Written for numfuse from scratch (mpmath only; deterministic). Rerunning every fit takes
minutes (mpmath at 90 digits); then `make regen` to rewrite the generated header. Run:

    .venv/bin/python tools/explog_remez.py           # all fits + tables
    .venv/bin/python tools/explog_remez.py exp64_t16 # one fit

For every fit it prints the coefficients as exact hex-float literals (rounded
to double or float), with a decimal comment, and the max weighted error of the
rounded polynomial measured on a dense grid in high precision. The fits shared by the
SIMD kernels and the scalar / GPU code (exp64_gen, exp32_gen, log64_gen, log32_gen) are
also written to tools/data/explog_coefficients.json; `make regen` then rewrites
src/core/kernels/generated/explog_coefficients.hpp from it. The AVX-512-only fits and
tables are used once, as literals in src/core/kernels/{exp,log}.hpp.

Fits (r, t, z are the reduced arguments of the kernels):
  exp64_t16  : (e^r - 1 - r)/r^2 on |r| <= ln2/32 (+margin), degree 5
               -> exp f64 AVX-512 (table 2^(j/16))
  exp64_gen  : (e^r - 1 - r)/r^2 on |r| <= ln2/2 (+margin), degree 10
               -> exp f64 SSE2/AVX2 (no table)
  exp32_t16  : (e^r - 1 - r)/r^2 on |r| <= ln2/32, degree 2, float
  exp32_t8   : (e^r - 1 - r)/r^2 on |r| <= ln2/16, degree 2, float
               -> exp f32 AVX2+FMA (table 2^(j/8))
  exp32_gen  : (e^r - 1 - r)/r^2 on |r| <= ln2/2, degree 4, float
  log64_t16  : (log1p(t) - t + t^2/2)/t^3 on |t| <= 0.0437, degree 7,
               error weighted by the smallest |log x| per t
               (former log f64 AVX-512: m in [0.75, 1.5), invc = j/16)
  log64_t32  : the same on |t| <= 0.0306, degree 6
               (former log f64 AVX-512: m in [1, 2), invc = j/32, j = 16..32;
               the current one's cells, tables and R: log64_bits)
  log64_gen  : (2 atanh(s) - 2 s)/s as a polynomial in z = s^2 on
               s in [0, (sqrt2-1)/(sqrt2+1)], z * (degree 6), fdlibm-style
               -> log f64 SSE2/AVX2
  log32_t16  : as log64_t16, degree 3, float
  log32_gen  : as log64_gen for float, z * (degree 2)
  log2_32_f64: log2(1+f)/f on [1/sqrt2-1, sqrt2-1], degree 11 (float64 lanes)
               -> the float32 log2 below AVX-512 (logbase_f32.hpp)
  expm1_f32  : (e^r - 1 - r)/r^2 on |r| <= ln2/2, degree 5, relative to e^r - 1
               -> the float32 tanh (hyperbolic.hpp)
  expit_f32  : (e^r - 1 - r)/r^2 on |r| <= ln2/2 (+margin), degree 6, relative error of
               e^r, float64 coefficients -> the float32 expit (hyperbolic.hpp, as Q(-w))
  tanh64_small: (tanh(a)/a - 1)/u in u = a^2 on [0, 1/16] (|a| <= 0.25), degree 8, relative
               error of tanh -> the float64 tanh's small arguments (hyperbolic.hpp)
  tanh32_small: the same on [0, 0.375^2], degree 4, float -> the float32 tanh (AVX-512)
  sinh32_small: (sinh(a)/a - 1)/u in u = a^2 on [0, 0.5^2], degree 3, float, relative
               error of sinh -> the float32 sinh (AVX-512)
  recip16_32 : 16/m on [0.75, 1.5], degree 3, float, absolute error -> the neon64 float32
               log's cell j = round(J(m)) (log.hpp: no reciprocal estimate)
  sin32/cos32: (sin r - r)/r^3, (cos r - 1 + r^2/2)/r^4 in z = r^2 <= (1.01 pi/4)^2,
               degree 2, float -> the float32 sin / cos lanes (trig.hpp)
  log64_bits : the AVX-512 float64 log's cells (invc per cell, -log(invc) as hi + lo)
               and R(t) of degree 7, weighted by the cells' smallest |log x| (~40 s)
  log64_bits128: the same for the AVX2+FMA float64 log's 128 cells (top 7 fraction bits,
               invc on grids down to 2^-10, |t| <= 0.00528), R(t) of degree 4; prints
               the rows of src/core/kernels/log_rows128.hpp (~1 min idle, 5 at load)
Tables:
  exp_tab16  : 2^(j/16) split hi (double) + lo (double); float hi/lo too
  log_tab16  : for invc = j/16, -log(invc) split into hi (a multiple of
               2^-42 for f64 so that E*ln2_hi + hi is exact; 2^-16 grid
               for f32) and lo.
  log_tab32  : former f64 AVX-512 (with log64_t32): slot s = 0..15 (top mantissa
               bits of invc = j/32) -> -log(1 + s/16) as hi (2^-42 grid) + lo.
"""

import json
import math
import pathlib
import sys

import mpmath as mp

mp.mp.dps = 90

LN2 = mp.log(2)


def to_double(x):
    """Round an mpf to the nearest IEEE double, return mpf."""
    return mp.mpf(float(mp.mpf(x)))  # float() rounds to nearest (53 bits)


def to_float(x):

    float(mp.mpf(x))
    # round double -> float with RN: do it in mpmath to avoid double rounding
    m, e = mp.frexp(mp.mpf(x))  # x = m * 2^e, 0.5 <= |m| < 1
    q = mp.nint(m * 2**24)
    return mp.ldexp(q, e - 24) if x != 0 else mp.mpf(0)


def hexf(x, single=False):
    x = mp.mpf(x)
    if x == 0:
        return "0x0p+0f" if single else "0x0p+0"
    sign = "-" if x < 0 else ""
    x = abs(x)
    m, e = mp.frexp(x)  # x = m 2^e, m in [0.5, 1)
    m *= 2
    e -= 1
    bits = 52 if not single else 23
    f = int(mp.nint((m - 1) * 2**bits))
    assert mp.ldexp(f + 2**bits, e - bits) == x, "not representable"
    if single:
        # print float mantissa as 6 hex digits (24 bits, last bit padded)
        f <<= 1
        digits = 6
    else:
        digits = 13
    s = format(f, f"0{digits}x").rstrip("0") or "0"
    return f"{sign}0x1.{s}p{e:+d}{'f' if single else ''}"


def remez(g, w, a, b, n, iters=30, grid=6000, skip_zero=True):
    """Minimise max |w(x) (g(x) - P(x))| over [a, b], P of degree n."""
    # dense Chebyshev-like grid
    xs = [
        (a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (grid - 1 - i) / (grid - 1)) for i in range(grid)
    ]
    if skip_zero:
        xs = [x if abs(x) > mp.mpf(10) ** -30 else mp.mpf(10) ** -25 for x in xs]
    gv = [g(x) for x in xs]
    wv = [w(x) for x in xs]
    # initial reference: Chebyshev extrema
    m = n + 2
    ref = [int(round((grid - 1) * (1 - mp.cos(mp.pi * k / (m - 1))) / 2)) for k in range(m)]
    best = None
    for _it in range(iters):
        # solve sum c_j x^j + (-1)^i E / w(x_i) = g(x_i)
        A = mp.matrix(m, m)
        rhs = mp.matrix(m, 1)
        for i, k in enumerate(ref):
            x = xs[k]
            for j in range(n + 1):
                A[i, j] = x**j
            A[i, n + 1] = (-1) ** i / wv[k]
            rhs[i] = gv[k]
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n + 1)]
        E = abs(sol[n + 1])
        err = [wv[k] * (gv[k] - mp.polyval(c[::-1], xs[k])) for k in range(grid)]
        # find alternating extrema
        segs = []
        start = 0
        for k in range(1, grid + 1):
            if k == grid or mp.sign(err[k]) != mp.sign(err[start]):
                seg = max(range(start, k), key=lambda q: abs(err[q]))
                segs.append(seg)
                start = k
        while len(segs) > m:
            # drop the smaller end or merge
            if abs(err[segs[0]]) < abs(err[segs[-1]]):
                segs.pop(0)
            else:
                segs.pop()
        maxerr = max(abs(e) for e in err)
        best = (c, maxerr)
        if len(segs) < m:
            break
        ref = segs
        if maxerr <= E * (1 + mp.mpf(10) ** -6):
            break
    return best


def check(poly_eval, g, w, a, b, grid=20000):
    mx = mp.mpf(0)
    for i in range(grid):
        x = a + (b - a) * (i + mp.mpf(0.5)) / grid
        e = abs(w(x) * (g(x) - poly_eval(x)))
        mx = max(mx, e)
    return mx


# Fits whose coefficients the SIMD kernels and the scalar / GPU code share: their results
# are written to tools/data/explog_coefficients.json (make regen turns that into
# src/core/kernels/generated/explog_coefficients.hpp; tools/pow_remez.py stores its lean
# float32 kernel's fits there the same way); the others are printed for the AVX-512
# kernels, which hold them as literals.
SHARED = ("exp64_gen", "exp32_gen", "log64_gen", "log32_gen")
DATA = pathlib.Path(__file__).resolve().parent / "data" / "explog_coefficients.json"
RESULTS = {}


def fit_rounded(g, w, a, b, deg, round_to, grid=1500):
    """Coefficients c_0..c_deg of P ~ g, each rounded by `round_to` (to_double, to_float)
    in turn, the remaining ones refitted to what the rounded ones leave (the error that
    the kernels' stored coefficients actually give, not the unrounded fit's)."""
    fixed = []
    for k in range(deg + 1):

        def gk(z, k=k):
            return (g(z) - sum(c * z**i for i, c in enumerate(fixed))) / z**k

        def wk(z, k=k):
            return w(z) * z**k

        c, _ = remez(gk, wk, a, b, deg - k, grid=grid)
        fixed.append(round_to(c[0]))
    err = check(lambda z: mp.polyval(fixed[::-1], z), g, w, a, b, grid=4 * grid)
    return fixed, err


def emit(name, coefs, single, note, maxerr):
    RESULTS[name] = (coefs, single, maxerr)
    print(f"// {name}: {note}")
    print(f"//   max weighted error with rounded coefficients: 2^{float(mp.log(maxerr, 2)):.2f}")
    for i, c in enumerate(coefs):
        print(f"    {hexf(c, single)},  // c{i} = {mp.nstr(c, 20)}")
    print()


def fit_exp(name, half, deg, single):
    # Q(r) ~ (e^r - 1 - r)/r^2; error of the final e^r is r^2 (Q - g) / e^r
    def g(r):
        return (mp.expm1(r) - r) / r**2

    def w(r):
        return r**2 / mp.exp(r)

    c, _ = remez(g, w, -half, half, deg)
    rnd = to_float if single else to_double
    cr = [rnd(x) for x in c]
    err = check(lambda r: mp.polyval(cr[::-1], r), g, w, -half, half)
    emit(
        name,
        cr,
        single,
        f"Q(r) ~ (e^r-1-r)/r^2 on [-{mp.nstr(half, 8)}, {mp.nstr(half, 8)}], relative error of e^r",
        err,
    )


def fit_log_t(name, half, deg, single, inner=None, outer_result=None):
    # R(t) ~ (log1p(t) - t + t^2/2)/t^3, error relative to log1p(t).
    # With inner/outer_result: for |t| > inner the error is relative to a
    # result of magnitude >= outer_result instead (there only cells with a
    # large -log(c) reach; see log.hpp), which frees the minimax near 0.
    def g(t):
        return (mp.log1p(t) - t + t**2 / 2) / t**3

    if inner == "cells":
        # Error relative to the smallest |log m| any cell reaches at this t:
        # cell j (invc = j/16, j = 11..21, m in [0.75, 1.5)) holds
        # t in (-0.5/(j+0.5), 0.5/(j-0.5)) and log m = log1p(t) - log(j/16).
        def D(t):
            best = None
            for j in range(11, 22):
                lo_t, hi_t = mp.mpf(-0.5) / (j + 0.5), mp.mpf(0.5) / (j - 0.5)
                if j == 11:
                    hi_t = mp.mpf(1.5) * j / 16 - 1
                if j == 21:
                    lo_t = mp.mpf(0.75) * j / 16 - 1
                slack = mp.mpf(2) ** -13  # rcp14 moves the cell edges
                if lo_t - slack <= t <= hi_t + slack:
                    v = abs(mp.log1p(t) - mp.log(mp.mpf(j) / 16))
                    best = v if best is None else min(best, v)
            return best if best is not None else abs(mp.log1p(t))

        def w(t):
            return t**3 / D(t) * mp.sign(mp.log1p(t))
    elif inner == "cells32":
        # m in [1, 2), invc = j/32 (j = 16..32): with e = 0 the result is
        # log1p(t) - log(j/16) for j = 17..31 (x in [0.5, 1) or [1, 2)), and
        # log1p(t) itself for j = 16 (m near 2) and j = 32 (m near 1).
        def D(t):
            best = None
            slack = mp.mpf(2) ** -12  # rcp14 moves the cell edges
            for j in range(16, 33):
                lo_t, hi_t = mp.mpf(-0.5) / (j + 0.5), mp.mpf(0.5) / (j - 0.5)
                if j == 16:
                    hi_t = mp.mpf(0)
                if j == 32:
                    lo_t = mp.mpf(0)
                if lo_t - slack <= t <= hi_t + slack:
                    v = (
                        abs(mp.log1p(t))
                        if j in (16, 32)
                        else abs(mp.log1p(t) - mp.log(mp.mpf(j) / 16))
                    )
                    best = v if best is None else min(best, v)
            return best if best is not None else abs(mp.log1p(t))

        def w(t):
            return t**3 / D(t) * mp.sign(mp.log1p(t))
    elif inner is None:

        def w(t):
            return t**3 / mp.log1p(t)
    else:

        def w(t):
            return t**3 / (mp.log1p(t) if abs(t) <= inner else mp.mpf(outer_result))

    c, _ = remez(g, w, -half, half, deg)
    rnd = to_float if single else to_double
    cr = [rnd(x) for x in c]
    err = check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half)
    emit(
        name,
        cr,
        single,
        f"R(t) ~ (log1p(t)-t+t^2/2)/t^3 on [-{mp.nstr(half, 8)}, {mp.nstr(half, 8)}], "
        "relative error of log1p",
        err,
    )


def fit_log_gen(name, deg, single):
    # log(1+f) = 2 atanh(s), s = f/(2+f); 2 atanh(s) = 2 s + s R(z), z = s^2
    # R(z) = z * P(z); fit P(z) ~ (2atanh(s) - 2s)/(s z), error relative to 2 atanh(s)
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * (1 + mp.mpf(2) ** -20)
    zmax = smax**2

    def g(z):
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / (s * z)

    def w(z):
        s = mp.sqrt(z)
        return s * z / (2 * mp.atanh(s))

    c, _ = remez(g, w, mp.mpf(10) ** -30, zmax, deg)
    rnd = to_float if single else to_double
    cr = [rnd(x) for x in c]
    err = check(lambda z: mp.polyval(cr[::-1], z), g, w, mp.mpf(10) ** -30, zmax)
    emit(
        name,
        cr,
        single,
        f"P(z) ~ (2atanh(s)-2s)/s^3, z=s^2 in [0, {mp.nstr(zmax, 8)}], relative error of log1p",
        err,
    )


def fit_f32_extra(name, deg):
    """The float32 kernels' own fits (literals in log.hpp, hyperbolic.hpp, trig.hpp)."""
    if name == "log2_32_f64":
        # P(f) ~ log2(1+f)/f on [1/sqrt2 - 1, sqrt2 - 1] (+2^-20), relative error, float64
        a = mp.sqrt(2) / 2 - 1 - mp.mpf(2) ** -20
        b = mp.sqrt(2) - 1 + mp.mpf(2) ** -20

        def g(f):
            return mp.log(1 + f) / LN2 / f

        def w(f):
            return 1 / g(f)

        single, note = False, "P(f) ~ log2(1+f)/f, relative error of log2(1+f)"
    elif name == "expm1_f32":
        # Q(r) ~ (e^r - 1 - r)/r^2 on |r| <= ln2/2 (1 + 2^-12), relative to e^r - 1
        b = LN2 / 2 * (1 + mp.mpf(2) ** -12)
        a = -b

        def g(r):
            return (mp.expm1(r) - r) / r**2

        def w(r):
            return r**2 / abs(mp.expm1(r))

        single, note = False, "Q(r) ~ (e^r-1-r)/r^2, relative error of e^r - 1"
    elif name == "sin32":
        # S(z) ~ (sin r - r)/r^3, z = r^2 <= (1.01 pi/4)^2, relative to sin r
        a, b = mp.mpf(10) ** -30, (mp.pi / 4 * mp.mpf("1.01")) ** 2

        def g(z):
            return (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (mp.sqrt(z) * z)

        def w(z):
            return mp.sqrt(z) * z / mp.sin(mp.sqrt(z))

        single, note = True, "S(z) ~ (sin r - r)/r^3, error relative to sin r"
    elif name == "recip16_32":
        # J(m) ~ 16/m on [0.75, 1.5], absolute error: the neon64 float32 log's cell choice
        # j = round(J(m)) (log.hpp, log_f32_neon), a polynomial where avx2_fma takes rcpps
        a, b = mp.mpf(0.75), mp.mpf(1.5)

        def g(m):
            return 16 / m

        def w(m):
            return mp.mpf(1)

        single, note = True, "J(m) ~ 16/m on [0.75, 1.5], absolute error"
    else:  # cos32
        # C(z) ~ (cos r - 1 + z/2)/z^2, relative to cos r (from 1e-12: cancellation below)
        a, b = mp.mpf(10) ** -12, (mp.pi / 4 * mp.mpf("1.01")) ** 2

        def g(z):
            return (mp.cos(mp.sqrt(z)) - 1 + z / 2) / (z * z)

        def w(z):
            return z * z / mp.cos(mp.sqrt(z))

        single, note = True, "C(z) ~ (cos r - 1 + z/2)/z^2, error relative to cos r"
    c, _ = remez(g, w, a, b, deg, grid=2000)
    rnd = to_float if single else to_double
    cr = [rnd(x) for x in c]
    err = check(lambda t: mp.polyval(cr[::-1], t), g, w, a, b, grid=4000)
    emit(name, cr, single, note, err)


def fit_tanh_small(name, top, deg, single, fn=mp.tanh):
    """G(u) ~ (f(a)/a - 1)/u, u = a^2 in [0, top^2], f = tanh or sinh: f(a) = a + a u G(u),
    error relative to f (hyperbolic.hpp's small-argument polynomials)."""
    a, b = mp.mpf(10) ** -30, top**2 * (1 + mp.mpf(2) ** -12)

    def g(u):
        t = mp.sqrt(u)
        return (fn(t) / t - 1) / u

    def w(u):
        t = mp.sqrt(u)
        return u * t / fn(t)

    c, _ = remez(g, w, a, b, deg, grid=2000)
    rnd = to_float if single else to_double
    cr = [rnd(x) for x in c]
    err = check(lambda t: mp.polyval(cr[::-1], t), g, w, a, b, grid=4000)
    what = "tanh" if fn is mp.tanh else "sinh"
    emit(name, cr, single, f"G(u) ~ ({what}(a)/a - 1)/u, u = a^2 <= {mp.nstr(top**2, 8)}", err)


def split_grid(v, grid_exp):
    hi = mp.nint(v * mp.mpf(2) ** grid_exp) / mp.mpf(2) ** grid_exp
    return hi, v - hi


def tables():
    print("// exp: 2^(j/16), j = 0..15: hi = RN_double, lo = RN_double(2^(j/16) - hi)")
    for j in range(16):
        v = mp.mpf(2) ** (mp.mpf(j) / 16)
        hi = to_double(v)
        lo = to_double(v - hi)
        print(f"    /* {j:2d} */ {hexf(hi)}, {hexf(lo)},")
    print("// exp f32: 2^(j/16): hi = RN_float, lo = RN_float(2^(j/16) - hi)")
    print("//   (the even entries j = 2 i are 2^(i/8)'s, exp f32 AVX2+FMA's table)")
    for j in range(16):
        v = mp.mpf(2) ** (mp.mpf(j) / 16)
        hi = to_float(v)
        lo = to_float(v - hi)
        print(f"    /* {j:2d} */ {hexf(hi, True)}, {hexf(lo, True)},")
    # log: invc = j/16 = round(16 rcp(m)) / 16 with m in [0.75, 1.5) -> j in 11..21.
    # f64 slot = top 4 mantissa bits of j/16 (j >= 16: j - 16, j < 16: 2 (j - 8)).
    print("// log f64: slot -> (hi on 2^-42 grid, lo) of -log(j/16), j = 11..21")
    rows = {}
    for j in range(11, 22):
        v = -mp.log(mp.mpf(j) / 16)
        hi, lo = split_grid(v, 42)
        slot = j - 16 if j >= 16 else 2 * (j - 8)
        rows[slot] = (j, hi, to_double(lo))
    for idx in range(16):
        if idx in rows:
            j, hi, lo = rows[idx]
            print(f"    /* {idx:2d}: j={j:2d} */ {hexf(hi)}, {hexf(lo)},")
        else:
            print(f"    /* {idx:2d}: unused */ 0x0p+0, 0x0p+0,")
    print("// log f64 (invc = j/32): slot s -> (hi on 2^-42 grid, lo) of -log(1 + s/16)")
    for idx in range(16):
        v = -mp.log(1 + mp.mpf(idx) / 16)
        hi, lo = split_grid(v, 42)
        print(f"    /* {idx:2d} */ {hexf(hi)}, {hexf(to_double(lo))},")
    print("// log f32: j & 15 -> (hi on 2^-16 grid, lo float) of -log(j/16)")
    for idx in range(16):
        js = [j for j in range(11, 22) if j & 15 == idx]
        if js:
            j = js[0]
            v = -mp.log(mp.mpf(j) / 16)
            hi, lo = split_grid(v, 16)
            print(f"    /* {idx:2d}: j={j:2d} */ {hexf(hi, True)}, {hexf(to_float(lo), True)},")
        else:
            print(f"    /* {idx:2d}: unused */ 0x0p+0f, 0x0p+0f,")
    l2hi, l2lo = split_grid(LN2, 42)
    print("// ln2 hi (2^-42 grid) / lo:", hexf(l2hi), hexf(to_double(l2lo)))
    l2hi32, l2lo32 = split_grid(LN2, 16)
    print("// ln2 hi (2^-16 grid) / lo float:", hexf(l2hi32, True), hexf(to_float(l2lo32), True))
    # exp Cody-Waite constants: ln2/16 with 42-bit hi (k*hi exact for |k| < 2^11 * 16)
    for N, gexp, single in ((16, 46, False), (1, 42, False), (16, 20, True), (1, 16, True)):
        hi, lo = split_grid(LN2 / N, gexp)
        rnd = to_float if single else to_double
        kind = "float" if single else "double"
        print(
            f"// ln2/{N} hi (2^-{gexp} grid) / lo {kind}: "
            f"{hexf(hi, single)} {hexf(rnd(lo), single)}"
        )


# ---- log64_bits (the current AVX-512 float64 log) and log64_bits128 (AVX2+FMA):
# Cells, tables and polynomial of the float64 table logs (src/core/kernels/log.hpp,
# log_f64_avx512_pair and log_f64_avx2): the integer reduction x = z 2^k, z in [OFF, 2 OFF),
# cell i = the top 4 (7) bits of the fraction of bits(x) - bits(OFF).
# Per cell, invc is the value on the finest grid given (1/64 for 16 cells, 1/1024 for 128)
# or a coarser one that minimises max |t|, t = z invc - 1, subject to: t exact in one FMA
# (z's last bit times invc's last bit leaves t at most 53 significant bits), |t| <= |log
# invc| (the kernel's fast two-sum of k ln2_hi - log(invc) and t with k = 0) and invc = 1
# on the cell holding z = 1. OFF is an offset (on a 1/64 grid of the fraction; 1/512 for
# 128 cells) with the smallest max |t|.


def layout(f0, bits=4):
    """(z ranges with their lsb exponent) per cell for OFF fraction f0, 2^bits cells."""
    n = 1 << bits
    cells = []
    for i in range(n):
        lo_f, hi_f = i / n, (i + 1) / n
        zr = []
        a, b = max(lo_f + f0, f0), min(hi_f + f0, 1.0)  # lower binade: z = (1 + F)/2
        if a < b:
            zr.append(((1 + a) / 2, (1 + b) / 2, 53))
        a, b = max(lo_f - (1 - f0), 0.0), min(hi_f - (1 - f0), f0)  # upper binade: z = 1 + F
        if a < b:
            zr.append((1 + a, 1 + b, 52))
        cells.append(zr)
    return cells


def choose(zr, grids=(64, 32, 16, 8)):
    zlo, zhi = min(r[0] for r in zr), max(r[1] for r in zr)
    best = None
    for grid in grids:
        # invc near 1/z over the cell (the best one lies between 1/zhi and 1/zlo)
        for j in range(max(1, int(grid / zhi) - 2), int(grid / zlo) + 3):
            c = j / grid
            odd, lsb_c = j, 1 / grid
            while odd % 2 == 0:
                odd //= 2
                lsb_c *= 2
            ok, worst = True, 0.0
            for a, b, zb in zr:
                m = max(abs(a * c - 1), abs(b * c - 1))
                worst = max(worst, m)
                if m / (2.0**-zb * lsb_c) >= 2.0**53:
                    ok = False  # t not exact
            if c != 1 and worst > abs(math.log(c)):
                ok = False
            if zlo <= 1 < zhi and c != 1:
                ok = False
            if ok and (best is None or worst < best[0]):
                best = (worst, c)
    return zlo, zhi, best


def fit_log_bits(name, bits, offsets, pick, grids, deg):
    """The cells, tables and R of a float64 table log (see log64_bits at the top): 2^bits
    cells, OFF's fraction among `offsets` (the kernel uses `pick`, which must be one with
    the smallest max |t|), invc on the first of `grids` that keeps t exact, R of degree deg."""
    saved = mp.mp.prec
    mp.mp.prec = 200
    options = []
    for f0 in offsets:
        chosen = [choose(zr, grids) for zr in layout(f0, bits)]
        if all(c[2] is not None for c in chosen):
            options.append((max(c[2][0] for c in chosen), f0, chosen))
    best = min(o[0] for o in options)
    print(
        f"// {name}: offsets with the smallest max |t|:",
        ", ".join(str(o[1]) for o in options if o[0] == best),
    )
    worst, f0, chosen = next(o for o in options if o[1] == pick)
    assert worst == best
    off = 0x3FE0000000000000 | int(f0 * 2**52)
    print(f"// OFF = 0x{off:016x} (z from {(1 + f0) / 2}), max |t| = {worst}")
    inv, his, los = [], [], []
    for zlo, zhi, (m, c) in chosen:
        v = -mp.log(mp.mpf(c))
        hi = mp.nint(v * mp.mpf(2) ** 42) / mp.mpf(2) ** 42
        inv.append(hexf(mp.mpf(c)))
        his.append(hexf(hi))
        los.append(hexf(to_double(v - hi)))
        print(f"//   z [{zlo:.6f}, {zhi:.6f})  invc {c}  max |t| {m:.5f}")
    if bits == 4:  # log.hpp's three 16-entry tables (AVX-512's in-register permutes)
        print("invc:", ", ".join(inv))
        print("hi:  ", ", ".join(his))
        print("lo:  ", ", ".join(los))
    else:  # rows {invc, hi, lo, 0} for AVX2's row loads (kernels/log_rows128.hpp)
        for i, (zlo, zhi, _) in enumerate(chosen):
            print(
                f"    {{{inv[i]}, {his[i]}, {los[i]}, 0x0p+0}},  // {i}: z [{zlo:.6f}, {zhi:.6f})"
            )
    # R(t) ~ (log1p(t) - t + t^2/2)/t^3, error relative to the smallest |log x| a lane with
    # this t can have (k = 0: log1p(t) - log(invc) over the cells holding t).
    ts = [
        (mp.mpf(zlo) * mp.mpf(c) - 1, mp.mpf(zhi) * mp.mpf(c) - 1, mp.log(mp.mpf(c)))
        for zlo, zhi, (m, c) in chosen
    ]
    half = max(max(abs(a), abs(b)) for a, b, _ in ts) * (1 + mp.mpf(2) ** -12)

    def D(t):
        l1p = mp.log1p(t)
        vals = [abs(l1p - lc) for a, b, lc in ts if a - 1e-12 <= t <= b + 1e-12]
        return min(vals) if vals else abs(l1p)

    def g(t):
        return (mp.log1p(t) - t + t**2 / 2) / t**3

    def w(t):
        return t**3 / D(t) * mp.sign(mp.log1p(t))

    c, _ = remez(g, w, -half, half, deg)
    cr = [to_double(x) for x in c]
    err = check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half)
    emit(
        name,
        cr,
        False,
        f"R(t) on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], "
        "weighted by the cells' smallest |log x|",
        err,
    )
    mp.mp.prec = saved


def main():
    which = sys.argv[1:] or ["all"]

    def run(n):
        return "all" in which or n in which

    m = 1 + mp.mpf(2) ** -12  # margin for the reduced range
    if run("exp64_t16"):
        fit_exp("exp64_t16", LN2 / 32 * m, 5, False)
    if run("exp64_gen"):
        fit_exp("exp64_gen", LN2 / 2 * m, 10, False)
    if run("exp32_t16"):
        fit_exp("exp32_t16", LN2 / 32 * m, 2, True)
    if run("exp32_t8"):
        fit_exp("exp32_t8", LN2 / 16 * m, 2, True)
    if run("exp32_gen"):
        fit_exp("exp32_gen", LN2 / 2 * m, 4, True)
    if run("expit_f32"):
        fit_exp("expit_f32", LN2 / 2 * m, 6, False)
    if run("log64_t16"):
        # weighted by the smallest result each t can belong to (see fit_log_t)
        fit_log_t("log64_t16", mp.mpf(0.0437), 7, False, inner="cells")
    if run("log64_t32"):
        fit_log_t(
            "log64_t32", mp.mpf(0.5) / mp.mpf(16.5) + mp.mpf(2) ** -12, 6, False, inner="cells32"
        )
    if run("log64_gen"):
        fit_log_gen("log64_gen", 6, False)
    if run("log32_t16"):
        fit_log_t("log32_t16", mp.mpf(0.0476), 3, True)
    if run("log32_gen"):
        fit_log_gen("log32_gen", 2, True)
    for name, deg in (
        ("log2_32_f64", 11),
        ("expm1_f32", 5),
        ("sin32", 2),
        ("cos32", 2),
        ("recip16_32", 3),
    ):
        if run(name):
            fit_f32_extra(name, deg)
    if run("tanh64_small"):
        fit_tanh_small("tanh64_small", mp.mpf(0.25), 8, False)
    if run("tanh32_small"):
        fit_tanh_small("tanh32_small", mp.mpf(0.375), 4, True)
    if run("sinh32_small"):
        fit_tanh_small("sinh32_small", mp.mpf(0.5), 3, True, fn=mp.sinh)
    if run("tables"):
        tables()
    if run("log64_bits"):
        # 16 cells; the offsets tie in steps of 1/16, the kernel uses 0.28125
        # (z in [0.640625, 1.28125))
        fit_log_bits("log64_bits", 4, [s / 64 for s in range(64)], 0.28125, (64, 32, 16, 8), 7)
    if run("log64_bits128"):
        # 128 cells (AVX2+FMA); offsets on the 1/512 grid near 0.28 (the whole range takes
        # minutes; these hold the smallest max |t|, 0.00528, first at 0.27734375)
        fit_log_bits(
            "log64_bits128",
            7,
            [s / 512 for s in range(136, 152)],
            0.27734375,
            (1024, 512, 256, 128, 64),
            4,
        )
    write_shared()


def write_shared(names=SHARED):
    """Stores the fits `names` that ran (emit) in tools/data/explog_coefficients.json."""
    ran = [name for name in names if name in RESULTS]
    if not ran:
        return
    data = json.loads(DATA.read_text())
    for name in ran:
        coefs, single, maxerr = RESULTS[name]
        data[name]["coefficients"] = [hexf(c, single).rstrip("f") for c in coefs]
        data[name]["max_error"] = f"2^{float(mp.log(maxerr, 2)):.2f}"
    DATA.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
