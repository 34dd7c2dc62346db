#!/usr/bin/env python3
"""Cells, tables and minimax fits for numfuse's AVX-512 float32 log2 / log10 kernels
(kernels/logpair_avx512.hpp, log_base_f32_avx512).

Written for numfuse from scratch (mpmath only, deterministic; reuses tools/explog_remez.py's
Remez exchange and rounding helpers). Run:

    .venv/bin/python tools/logbase_f32_remez.py      # both bases (about a minute)
    .venv/bin/python tools/logbase_f32_remez.py 10   # one base

Method the numbers serve: x = m 2^e with m = getmant(x) in [1, 2), e = getexp(x); the cell
i = the top 5 fraction bits of m (m in [1 + i/32, 1 + (i + 1)/32)); invc_i = j/64 (so that
t = m invc_i - 1 is exact in one FMA: m has 23 fraction bits, invc 6, and |t| < 2^-5), chosen
per cell to minimise max |t|, with invc = 1 on cell 0 (x next to 1 from above: the result is
t's alone) and invc = 1/2 on cell 31 (x next to 1 from below, e = -1: e + T_hi = 0 exactly).
T = -log_b(invc) split as T_hi on the 2^-16 grid (e + T_hi exact for |e| <= 149; log10: e
log10(2)_hi + T_hi exact, log10(2)_hi on the 2^-18 grid) and T_lo = RN_f(T - T_hi).
log_b(1 + t) = c_hi t + t R(t), c_hi = RN_f(1/ln b), R of degree 4 fitted to
(log_b(1 + t) - c_hi t)/t (R(0) = 1/ln b - c_hi) on the cells' t range, float coefficients.
"""

import sys

import mpmath as mp
from explog_remez import fit_rounded, hexf, to_float

mp.mp.dps = 60

CELLS = 32
DEG = 4  # degree of R (3 gives 0.83 ULP instead of 0.75 for one operation fewer)


def cells():
    """Per cell: (invc, tmin, tmax)."""
    out = []
    for i in range(CELLS):
        lo = 1 + mp.mpf(i) / CELLS
        hi = 1 + mp.mpf(i + 1) / CELLS - mp.mpf(2) ** -23
        if i == 0:
            j = 64
        elif i == CELLS - 1:
            j = 32
        else:
            j = min(range(32, 65), key=lambda k: max(abs(lo * k / 64 - 1), abs(hi * k / 64 - 1)))
        invc = mp.mpf(j) / 64
        out.append((invc, lo * invc - 1, hi * invc - 1))
    return out


def split(v, grid_exp):
    h = mp.nint(v * mp.mpf(2) ** grid_exp) / mp.mpf(2) ** grid_exp
    return h, to_float(v - h)


def main() -> None:
    cs = cells()
    a = min(c[1] for c in cs)
    b = max(c[2] for c in cs)
    assert max(abs(a), abs(b)) < mp.mpf(2) ** -5, "t must stay below 2^-5 to be exact"
    print(f"// t in [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}]")
    print("alignas(64) inline constexpr float logb_f32_invc[32] = {")
    print("    " + ", ".join(hexf(c[0], True) for c in cs) + ",\n};")
    l2h = mp.nint(mp.log10(2) * 2**18) / 2**18
    l2l = to_float(mp.log10(2) - l2h)
    print(f"// log10(2) = {hexf(l2h, True)} + {hexf(l2l, True)}")
    for base in sys.argv[1:] or ["2", "10"]:
        lnb = mp.log(int(base))
        his, los = [], []
        for invc, _, _ in cs:
            v = -mp.log(invc) / lnb
            if base == "10" and invc == mp.mpf(1) / 2:
                h, lo = l2h, l2l  # e = -1: e l2h + T_hi = 0 and e l2l + T_lo = 0 exactly
            else:
                h, lo = split(v, 16)
            his.append(h)
            los.append(lo)
        print(f"alignas(64) inline constexpr float log{base}_f32_thi[32] = {{")
        print("    " + ", ".join(hexf(h, True) for h in his) + ",\n};")
        print(f"alignas(64) inline constexpr float log{base}_f32_tlo[32] = {{")
        print("    " + ", ".join(hexf(h, True) for h in los) + ",\n};")
        ch = to_float(1 / lnb)

        def g(t, lnb=lnb, ch=ch):
            return (mp.log1p(t) / lnb - ch * t) / t

        coefs, err = fit_rounded(g, lambda t: 1, a, b, DEG, to_float, grid=600)
        e2 = float(mp.log(err, 2))
        print(f"// log{base}: c_hi = {hexf(ch, True)}; R degree {DEG}, max abs error 2^{e2:.2f}")
        print(f"//   (relative to 1/ln{base}: 2^{float(mp.log(err * lnb, 2)):.2f})")
        for i, c in enumerate(coefs):
            print(f"    {hexf(c, True)},  // r{i} = {mp.nstr(c, 12)}")


if __name__ == "__main__":
    main()
