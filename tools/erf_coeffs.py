#!/usr/bin/env python3
"""Coefficient generator for numfuse's erf kernels (src/core/kernels/erf.hpp).

Method (same for both dtypes; float32 is evaluated in double precision):

  * Work on ax = min(|x|, XMAX); the sign is reapplied at the end.
  * A lane picks one of 16 intervals with k = round(B*ax + C*ax^2 - n), clamped
    below at 0 (computed in the kernel as max(fma(fma(C, ax, B), ax, 2^52 - n), 2^52),
    whose low mantissa bits are k). The quadratic makes intervals narrow where
    erf bends most (x ~ 1) and wide where erf is almost 1.
  * Interval 0 = [0, a0]: y = x + x * P0(x^2), P0 ~ erf(x)/x - 1 (odd, keeps
    relative accuracy down to the subnormals and makes erf(x) - x exact-ish).
  * Interval k >= 1: y = c0 + t * P(t), t = ax - m (exact by Sterbenz),
    c0 = erf(m) rounded, with m chosen so erf(m) is within 2^-62 of c0.
  * The kernel evaluates P = c1 + u*(c2 + u*(...)) by Horner in u (u = x^2 on
    interval 0, u = t elsewhere), base = x on interval 0, c0 elsewhere:
      f64: c1 = c1hi + c1lo; s = RN(base + t*c1hi) plus its rounding error, then
           y = s + (err + t*(c1lo + u*Q))  (only the last addition rounds by ~0.5 ulp);
      f32 (in double): y = base + t*(c1hi + u*Q), rounded once to float.
  * Interval 0 is kept short in f64 (a0max): x*u*Q there is a large part of
    erf(x) - x and its rounding error would otherwise show.
  * f64: c3..cD of interval k are rounded to the nearest double whose 4 lowest
    mantissa bits are k (force_row): the AVX-512 kernel uses each of them as the
    permute index of the next coefficient. Costs <= 0.002 ulp (the measured errors
    below include it).

Each P is the Chebyshev interpolant (near-minimax) of the exact function on the
interval widened by a small margin (index rounding); coefficients are rounded to
double (c1 to a double-double), and the error of the *rounded* polynomials is then
measured on a dense grid with mpmath and printed next to each interval. For f32,
c1 on interval 0 is pinned to 2/sqrt(pi) - 1 so that subnormal float results,
which have few bits, round correctly.

Rerunning the fit (slow: minutes, mpmath at 40 digits; the center searches are seeded,
so the result is reproducible):

    .venv/bin/python tools/erf_coeffs.py [f64|f32|all] [--scan]
    make regen        # tools/gen_erf_coefficients.py: JSON -> the generated header

It rewrites the named tables in tools/data/erf_coefficients.json (exact hex values plus each
interval's [lo, hi] and measured fit error); `make regen` then turns that file into
src/core/kernels/generated/erf_coefficients.hpp, which the SIMD kernels
(src/core/kernels/erf.hpp) and the scalar / GPU code (src/core/device_math/erf.hpp) include.
--scan searches the index quadratic (n, C) instead of using the chosen one.
"""

import json
import pathlib
import random
import sys

import mpmath as mp

mp.mp.dps = 40
TWO = mp.mpf(2)
NI = 16  # table entries (one AVX-512 permutex2var)


def rn(v):
    """Round an mpf to the nearest double, returned as a Python float (exact)."""
    return float(mp.mpf(v))  # mpmath rounds to nearest when converting


def derf(x):
    return 2 / mp.sqrt(mp.pi) * mp.exp(-x * x)


UNIT_BITS = [53]


def ulp(y):
    """ulp of y in the output format (UNIT_BITS[0] = 53 for f64, 24 for f32)."""
    y = abs(mp.mpf(y))
    e = int(mp.floor(mp.log(y, 2)))
    return TWO ** (e - UNIT_BITS[0] + 1)


class Cfg:
    def __init__(self, name, D, XMAX, tol_u, unit_bits, pin_c1):
        self.name, self.D, self.XMAX, self.pin_c1 = name, D, XMAX, pin_c1
        # Longest interval 0 allowed. On [0, a0] the kernel forms x + x*(c1 + u*Q) with
        # u*Q ~ -0.38 x^2; its rounding error (~x^3 2^-53) must stay well below an ulp of
        # erf(x), which limits a0 to ~0.5 in float64 (0.72 measured 0.78 ulp).
        self.a0max = 0.40 if unit_bits == 53 else 10.0
        self.tol = tol_u  # allowed approximation error, in output ulps
        self.unit_bits = unit_bits  # 53 for f64, 24 for f32
        # f64: intervals k >= 1 use a center m whose c1 is a double to ~2^-62, so the
        # kernel needs no c1lo there (one table lookup less); interval 0 keeps its c1lo
        # as a scalar constant (erf_table_f64::c1lo0) applied under the k = 0 mask.
        self.no_c1lo = unit_bits == 53


def boundaries(B, C, n, XMAX):
    """x where B x + C x^2 - n crosses k - 0.5, k = 1..15 (exact reals)."""
    out = []
    for k in range(1, NI):
        lvl = n + k - mp.mpf(0.5)
        # C x^2 + B x - lvl = 0, smallest positive root
        if C == 0:
            r = lvl / B
        else:
            disc = B * B + 4 * C * lvl
            if disc < 0:
                out.append(mp.inf)
                continue
            r = (-B + mp.sqrt(disc)) / (2 * C)
        out.append(r if r < XMAX else mp.inf)
    return out


def cheb_nodes(a, b, N):
    return [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (2 * j + 1) / (2 * N)) for j in range(N)]


def interp(fun, a, b, N):
    """Monomial coefficients (lowest first) of the degree N-1 interpolant at Chebyshev nodes."""
    xs = cheb_nodes(a, b, N)
    A = mp.matrix([[x**i for i in range(N)] for x in xs])
    v = mp.matrix([fun(x) for x in xs])
    sol = mp.lu_solve(A, v)
    return [sol[i] for i in range(N)]


def horner(cs, u):
    r = mp.mpf(0)
    for c in reversed(cs):
        r = r * u + c
    return r


MARGIN = mp.mpf(2) ** -36  # interval widening covering index-rounding slop


def split_c1(cs):
    """Round the coefficients to doubles; c1 is kept as hi + lo (returned as
    [c1hi, c1lo, c2, ..., cD])."""
    hi = rn(cs[0])
    lo = rn(cs[0] - hi)
    return [hi, lo] + [rn(v) for v in cs[1:]]


def force_low_bits(v, k):
    """The double nearest to v whose 4 lowest mantissa bits equal k (f64 chain lookups:
    the AVX-512 kernel uses c_j's low bits as the permute index of the next coefficient)."""
    import struct

    b = struct.unpack("<q", struct.pack("<d", v))[0]
    base = (b & ~15) | k
    cands = [struct.unpack("<d", struct.pack("<q", base + d))[0] for d in (-16, 0, 16)]
    return min(cands, key=lambda c: abs(mp.mpf(c) - mp.mpf(v)))


def force_row(cfg, cs, k):
    """f64: c3..cD carry the interval number k in their low 4 bits.

    cs = [c1hi, c1lo, c2, c3, ...]."""
    if cfg.unit_bits != 53:
        return cs
    return cs[:3] + [force_low_bits(v, k) for v in cs[3:]]


def coef_mp(cs):
    """[c1hi, c1lo, c2, ...] -> exact mp coefficients [c1, c2, ...]."""
    return [mp.mpf(cs[0]) + mp.mpf(cs[1])] + [mp.mpf(v) for v in cs[2:]]


def fit_interval0(cfg, a0, samples=300):
    D = cfg.D  # coefficients c1..cD of P0(u)
    c = 2 / mp.sqrt(mp.pi)

    def g(u):
        if u == 0:
            return c - 1
        s = mp.sqrt(u)
        return mp.erf(s) / s - 1

    if not cfg.pin_c1:
        cs = force_row(cfg, split_c1(interp(g, mp.mpf(0), (a0 + MARGIN) ** 2, D)), 0)
        return cs, measure0(cs, a0, samples)
    # c1 pinned to 2/sqrt(pi) - 1 (so tiny x get x*2/sqrt(pi) to ~2^-52 relative in the
    # double evaluation of float32, where the subnormal results must round correctly);
    # the rest interpolates (g(u) - c1)/u = -2/(3 sqrt(pi)) + ...
    c1 = c - 1

    def q(u):
        if u == 0:
            return -c / 3
        return (g(u) - c1) / u

    hi = (a0 + MARGIN) ** 2
    cs = split_c1([c1] + interp(q, mp.mpf(0), hi, D - 1))
    return cs, measure0(cs, a0, samples)


def measure0(cs, a0, samples):
    """max error (output ulps) of y = x + x*P0(x^2) on [0, a0]."""
    worst = mp.mpf(0)
    for j in range(samples + 1):
        x = (a0 + MARGIN) * j / samples if j else (a0 + MARGIN) * mp.mpf(1e-6)
        y = x + x * horner(coef_mp(cs), x * x)
        e = abs(y - mp.erf(x)) / ulp(mp.erf(x))
        worst = max(worst, e)
    return worst


def pick_center(cfg, lo, hi):
    mid = (lo + hi) / 2
    if cfg.unit_bits == 24:
        m = rn(mid)
        return m, rn(mp.erf(m))
    rng = random.Random(int(mid * 1e6))
    best = None
    for _ in range(20000):
        m = rn(mid + (hi - lo) * (rng.random() - 0.5) * 0.05)
        e = mp.erf(m)
        c0 = rn(e)
        d = abs(e - c0) / (ulp(c0) * 2 ** (cfg.unit_bits - 53))
        if best is None or d < best[0]:
            best = (d, m, c0)
        if d < mp.mpf(2) ** -9:
            break
    return best[1], best[2]


def fit_at(cfg, lo, hi, m):
    """Coefficients [c1hi, c1lo, c2, ...] of the interpolant for center m."""
    mm = mp.mpf(m)
    em = mp.erf(mm)

    def g(t):
        if t == 0:
            return derf(mm)
        return (mp.erf(mm + t) - em) / t

    a, b = lo - MARGIN - mm, hi + MARGIN - mm
    return split_c1(interp(g, a, b, cfg.D))


def c1_exact(cfg, lo, hi, m):
    mm = mp.mpf(m)
    em = mp.erf(mm)

    def g(t):
        if t == 0:
            return derf(mm)
        return (mp.erf(mm + t) - em) / t

    return interp(g, lo - MARGIN - mm, hi + MARGIN - mm, cfg.D)[0]


def pick_center_c1(cfg, lo, hi, count=400000):
    """float64 without c1lo: a center m near the usual one where both erf(m) and the
    interpolant's linear coefficient c1(m) lie within ~2^-62 (relative) of doubles, so
    that c1 = c1hi alone (c1lo = 0) loses nothing. In a 2^-30-wide neighbourhood of m0,
    erf(m) and c1(m) are predicted by Taylor expansions (c1's derivatives by central
    differences of exact fits); the winner is then refitted exactly."""
    m0, _ = pick_center(cfg, lo, hi)
    m0 = mp.mpf(m0)
    h = mp.mpf(2) ** -40
    c_m, c_0, c_p = (c1_exact(cfg, lo, hi, m0 + d) for d in (-h, 0, h))
    d1 = (c_p - c_m) / (2 * h)
    d2 = (c_p - 2 * c_0 + c_m) / (h * h)
    e0, f1 = mp.erf(m0), derf(m0)
    f2 = -2 * m0 * f1
    f3 = (4 * m0 * m0 - 2) * f1
    u0 = mp.mpf(2) ** (mp.floor(mp.log(m0, 2)) - 52)  # ulp(m0)
    # fixed point (2^S units) integer arithmetic: the scan is ~1 us per candidate
    S = 140

    def fx(v):
        return int(mp.nint(v * mp.mpf(2) ** S))

    E = (fx(e0), fx(f1 * u0), fx(f2 / 2 * u0**2), fx(f3 / 6 * u0**3))
    C = (fx(c_0), fx(d1 * u0), fx(d2 / 2 * u0**2))
    ue = fx(ulp(e0))  # ulp of erf(m) and of c1 (constant in the tiny neighbourhood)
    uc = fx(ulp(c_0))
    rng = random.Random(int(m0 * 1e9))
    best = None
    lim = 1 << 22
    for _ in range(count):
        i = rng.randint(-lim, lim)
        e = E[0] + i * (E[1] + i * (E[2] + i * E[3]))
        c1 = C[0] + i * (C[1] + i * C[2])
        re = abs((e + ue // 2) % ue - ue // 2)
        rc = abs((c1 + uc // 2) % uc - uc // 2)
        score = max(re * uc, rc * ue)  # max of the two residuals in ulps, times ue*uc
        if best is None or score < best[0]:
            best = (score, i)
            if score * 1024 < ue * uc:
                break
    sys.stderr.write("  center search: best residual %.3g ulp\n" % (best[0] / (ue * uc)))
    best = (best[0], u0 * best[1])
    m = rn(m0 + best[1])
    return m, rn(mp.erf(mp.mpf(m)))


def fit_generic(cfg, lo, hi, samples=200, k=0):
    if cfg.no_c1lo:
        m, c0 = pick_center_c1(cfg, lo, hi)
    else:
        m, c0 = pick_center(cfg, lo, hi)
    mm = mp.mpf(m)
    cs = fit_at(cfg, lo, hi, m)
    if cfg.no_c1lo:
        dropped = cs[1] / float(ulp(cs[0]) * 2 ** (53 - UNIT_BITS[0]))
        sys.stderr.write(
            f"  k-interval [{float(lo):.4f}, {float(hi):.4f}]: m={m!r}, dropped c1lo = "
            f"{cs[1]:.3g} ({dropped:.3g} ulp of c1hi)\n"
        )
        cs[1] = 0.0
    cs = force_row(cfg, cs, k)
    a, b = lo - MARGIN - mm, hi + MARGIN - mm
    worst = mp.mpf(0)
    for j in range(samples + 1):
        t = a + (b - a) * j / samples
        y = mp.mpf(c0) + t * horner(coef_mp(cs), t)
        ref = mp.erf(mm + t)
        worst = max(worst, abs(y - ref) / ulp(ref))
    return m, c0, cs, worst


def build(cfg, B, C, n, samples0=300, samples=200):
    bs = boundaries(B, C, n, cfg.XMAX)
    a0 = bs[0]
    edges = [mp.mpf(0)] + bs + [mp.mpf(cfg.XMAX)]
    rows = []
    cs0, w0 = fit_interval0(cfg, a0, samples0)
    rows.append((0.0, 0.0, [c for c in cs0], w0, mp.mpf(0), a0))
    for k in range(1, NI):
        lo, hi = edges[k], edges[k + 1]
        if lo == mp.inf:
            # unused entry: duplicate the last real one
            rows.append(rows[-1])
            continue
        hi = min(hi, mp.mpf(cfg.XMAX))
        m, c0, cs, w = fit_generic(cfg, lo, hi, samples, k)
        rows.append((m, c0, cs, w, lo, hi))
    return rows


def choose(cfg, ns, Cs):
    """Scan the index quadratic; B follows from B X + C X^2 = n + 15.45."""
    best = None
    X = mp.mpf(cfg.XMAX)
    for n in ns:
        for C in Cs:
            C = rn(C)
            B = rn((n + mp.mpf(15.45) - C * X * X) / X)
            if B + 2 * C * X <= 0.2:  # must stay monotone (and not too flat)
                continue
            a0 = boundaries(mp.mpf(B), mp.mpf(C), n, cfg.XMAX)[0]
            if a0 > cfg.a0max:  # see Cfg.a0max
                continue
            rows = build(cfg, mp.mpf(B), mp.mpf(C), n, 60, 40)
            w = max(r[3] for r in rows)
            sys.stderr.write(
                f"{cfg.name} n={n} C={C:+.4f} B={B:.5f} a0={float(rows[0][5]):.4f} "
                f"maxerr={float(w):.3g} ulp\n"
            )
            if best is None or w < best[0]:
                best = (w, n, B, C)
    return best


def table_json(cfg, n, B, C, rows):
    """The fitted table as written to tools/data/erf_coefficients.json (exact hex values)."""

    def hexf(v):
        return float(v).hex()

    return {
        "degree": cfg.D,
        "n": n,
        "xmax": hexf(cfg.XMAX),
        "qb": hexf(B),
        "qc": hexf(C),
        "c1lo0": hexf(rows[0][2][1]) if cfg.no_c1lo else None,
        "intervals": [
            {
                "lo": round(float(r[4]), 6),
                "hi": round(float(r[5]), 6),
                "fit_error_ulp": round(float(r[3]), 4),
                "m": hexf(r[0]),
                "c0": hexf(r[1]),
                "c1hi": hexf(r[2][0]),
                "c1lo": hexf(r[2][1]),
                "c": [hexf(v) for v in r[2][2:]],
            }
            for r in rows
        ],
    }


# name: (config, scan ranges for n and C, chosen (n, C) found by --scan)
CFGS = {
    # f64: degree 11 in t (x^21 on interval 0; 0.047 ulp), c1 a double (c1lo only on interval 0)
    "f64": (
        Cfg("f64", 11, 6.0, 0.02, 53, False),
        range(1, 4),
        [-0.6 + 0.04 * i for i in range(11)],
        (1, -0.32),
    ),
    # f32, evaluated in double: degree 5 in t (x^9 on interval 0); c1lo is unused
    "f32": (
        Cfg("f32", 5, 4.0, 0.005, 24, True),
        range(1, 6),
        [-0.9 + 0.1 * i for i in range(9)],
        (2, -0.7),
    ),
}

DATA = pathlib.Path(__file__).resolve().parent / "data" / "erf_coefficients.json"

if __name__ == "__main__":
    args = sys.argv[1:]
    scan = "--scan" in args
    args = [a for a in args if a != "--scan"]
    names = ["f64", "f32"] if not args or args[0] == "all" else [args[0]]
    data = json.loads(DATA.read_text())
    for nm in names:
        cfg, ns, Cs, chosen = CFGS[nm]
        UNIT_BITS[0] = cfg.unit_bits
        if scan:
            w, n, B, C = choose(cfg, ns, Cs)
        else:
            n, C = chosen
            C = rn(C)
        X = mp.mpf(cfg.XMAX)
        B = rn((n + mp.mpf(15.45) - mp.mpf(C) * X * X) / X)
        rows = build(cfg, mp.mpf(B), mp.mpf(C), n)
        sys.stderr.write(
            f"{nm}: n={n} B={B!r} C={C!r} max approximation error "
            f"{float(max(r[3] for r in rows)):.4g} ulp\n"
        )
        data[nm] = table_json(cfg, n, B, C, rows)
    DATA.write_text(json.dumps(data, indent=1) + "\n")
