#!/usr/bin/env python3
"""Cells, tables and the minimax fit of the float32 natural log that numfuse's AVX-512 float32
arcsinh / arccosh / arctanh share (kernels/logpair_avx512.hpp, log_f32_ge1).

Written for numfuse from scratch (numpy and mpmath only, deterministic; reuses
tools/explog_remez.py's Remez exchange and rounding helpers). Run (about a minute):

    .venv/bin/python tools/logpair_f32_remez.py

Method the numbers serve: y >= 1 (the argument of the log is 1 + something >= 0 in all three
functions), y = m 2^e with m = getmant(y) in [1, 2), e = getexp(y) >= 0; the cell i = the top 5
fraction bits of m; invc_i = j/64, so that t = m invc_i - 1 is exact in one FMA (m has 23
fraction bits, invc 6, |t| < 2^-5); log y = (e ln2_hi + T_hi) + (t + (t^2 W(t) + e ln2_lo +
T_lo + c)) with T = -log(invc) = T_hi (2^-16 grid: e ln2_hi + T_hi is exact) + T_lo, c the
caller's first-order term of the pair's low part, and two roundings. Where e = 0 and i = 0
(invc = 1, T = 0) the result is the last rounding alone; elsewhere the inner sum p = t + ...
is rounded once more, which costs ulp(p) / 2: j is chosen per cell so that p's binade stays
below the result's at every m of the cell (ulp(p) <= ulp(result) / 2: at most 1/4 ULP more,
the worst in cell 1 where log m crosses 2^-5), then the smallest max |t|.
W(t) ~ (log1p(t) - t) / t^2 of degree 3 on the cells' t range, fitted with the error weighted
by t^2 / max(|t|, 0.0305) (relative to the smallest result a lane with this t can have).
"""

import sys

import mpmath as mp
import numpy as np
from explog_remez import fit_rounded, hexf, to_float

mp.mp.dps = 50
CELLS = 32


def cells():
    """Per cell: (j, tmin, tmax, ulp(p)/ulp(result) worst) over every float32 m of the cell."""
    out = []
    for i in range(CELLS):
        first = np.array([1 + i / CELLS], np.float32).view(np.int32)[0]
        m = np.arange(first, first + 2 ** (23 - 5), dtype=np.int32).view(np.float32)
        m = m.astype(np.float64)
        logm = np.log(m)
        best = None
        for j in [64] if i == 0 else range(32, 65):
            t = m * j / 64 - 1  # exact in float64
            if np.max(np.abs(t)) >= 2.0**-5:
                continue
            if i == 0:
                ratio = 0.0
            else:
                ep = np.floor(np.log2(np.abs(np.log1p(t)) + 1e-300))
                ratio = float(np.max(2.0 ** (ep - np.floor(np.log2(logm)))))
            key = (ratio, float(np.max(np.abs(t))))
            if best is None or key < best[0]:
                best = (key, j, float(t.min()), float(t.max()))
        out.append((best[1], best[2], best[3], best[0][0]))
    return out


def main() -> None:
    cs = cells()
    a = mp.mpf(min(c[1] for c in cs))
    b = mp.mpf(max(c[2] for c in cs))
    print(f"// t in [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}]; worst ulp(p)/ulp(result) per cell:")
    print("// " + " ".join(f"{c[3]:g}" for c in cs))
    invc = [mp.mpf(c[0]) / 64 for c in cs]
    print("alignas(64) inline constexpr float logn_f32_invc[32] = {")
    print("    " + ", ".join(hexf(v, True) for v in invc) + ",\n};")
    his, los = [], []
    for v in invc:
        T = -mp.log(v)
        h = mp.nint(T * 2**16) / 2**16
        his.append(h)
        los.append(to_float(T - h))
    print("alignas(64) inline constexpr float logn_f32_thi[32] = {")
    print("    " + ", ".join(hexf(v, True) for v in his) + ",\n};")
    print("alignas(64) inline constexpr float logn_f32_tlo[32] = {")
    print("    " + ", ".join(hexf(v, True) for v in los) + ",\n};")
    g = lambda t: (mp.log1p(t) - t) / t**2  # noqa: E731
    w = lambda t: t**2 / max(abs(t), mp.mpf("0.0305"))  # noqa: E731
    coefs, err = fit_rounded(g, w, a, b, 3, to_float, grid=800)
    print(f"// W: max weighted error 2^{float(mp.log(err, 2)):.2f}")
    for c in coefs:
        print(f"//   {hexf(c, True)}  // {mp.nstr(c, 20)}")


if __name__ == "__main__":
    sys.exit(main())
