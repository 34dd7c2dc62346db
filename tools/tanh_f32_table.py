#!/usr/bin/env python3
"""The tables of numfuse's float32 tanh (kernels/hyperbolic_f32.hpp): tanh_f32_avx512's 32
entries, and with --avx2 tanh_f32_avx2's 8 (see main_avx2).

Written for numfuse from scratch (numpy only, deterministic; float64 numpy.tanh as the
reference, ~2^-52 relative, far below the 2^-26 this fits to). Run by hand:

    .venv/bin/python tools/tanh_f32_table.py          # prints the rows (about a minute)
    .venv/bin/python tools/tanh_f32_table.py --avx2   # the AVX2 rows (about a minute)

The kernel clamps a = |x| to [2^-12, 9.25] and picks entry i = (max(bits(a), bits(2^-4))
>> 21) mod 32 (vpermt2ps reads the low 5 bits): four cells per binade from 2^-4 to 8 (the
binade exponent mod 8 and the top two mantissa bits), every a below 2^-4 in entry 12
(which also holds [2^-4, 5/64)), [8, 9.25] in entry 8; entries 9-11 are never reached
(the constant 1). Per entry: m, delta and c0..c5 with tanh(a) ~ c0 + delta t + t A(t),
t = a - m (exact: m lies in a's binade, or is 0), A(t) = c1 + c2 t + ... + c5 t^4.
  - entry 12: m = 0, delta = 1, c0 = 0, so the result t + t A(t) has a single rounding
    whose operand t A is below 2^-8 t.
  - the others: delta = 0 and m is the float32 nearest the cell's middle whose tanh lies
    within 2^-14 float32 ulp of a float32 (c0, its rounding), so that c0 carries no error
    the polynomial could not absorb (Gal's accurate tables).
The c_k are a minimax fit (Lawson's iteratively reweighted least squares on 1500 points)
of tanh(m + t) - c0 - delta t, weighted by 1/tanh, each rounded to float32 lowest degree
first with the higher ones refitted. Prints the max weighted error of every entry.
"""

import numpy as np

f32 = np.float32
DEG = 5  # c1..c5: A(t) of degree 4
CLAMP_LO, CLAMP_HI = 2.0**-12, 9.25
SMALL_BITS = 0x3D800000  # bits of 2^-4: every a below it takes 2^-4's entry


def bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def from_bits(b):
    return np.asarray(b, dtype=np.uint32).view(np.float32)


def minimax(t, f, w, fixed, free):
    """c_k (k in free) minimising max |w (f - sum_fixed - sum c_k t^k)| by Lawson's
    iteration (weighted least squares on the scaled basis (t/h)^k)."""
    r = f - sum(c * t**k for k, c in fixed.items())
    h = np.max(np.abs(t))
    basis = np.stack([w * (t / h) ** k for k in free], 1)
    rhs = w * r
    v = np.ones(len(t)) / len(t)
    for _ in range(300):
        sv = np.sqrt(v)
        a = np.linalg.lstsq(basis * sv[:, None], rhs * sv, rcond=None)[0]
        e = np.abs(rhs - basis @ a)
        v = v * e
        v /= v.sum()
    return {k: ak / h**k for k, ak in zip(free, a)}


def fit_entry(lo, hi):
    """(m, delta, [c0..c5], max weighted error, Gal error in ulps) for the cell [lo, hi]."""
    xs = np.linspace(lo, hi, 1500)
    if lo == CLAMP_LO:  # the small cell: t + t A(t)
        m, delta, c0, gal = 0.0, 1.0, 0.0, 0.0
        t = xs
        f = np.tanh(t) - t
    else:
        cand = from_bits(np.arange(int(bits(f32(lo))), int(bits(f32(hi))) + 1))
        th = np.tanh(cand.astype(np.float64))
        rn = th.astype(np.float32).astype(np.float64)
        ulps = np.abs(th - rn) / np.spacing(th.astype(np.float32)).astype(np.float64)
        good = ulps < 2.0**-14
        if not good.any():
            good = ulps <= np.sort(ulps)[10]
        j = int(np.argmin(np.where(good, np.abs(cand - (lo + hi) / 2), np.inf)))
        m, delta, c0, gal = float(cand[j]), 0.0, float(rn[j]), float(ulps[j])
        t = xs - m
        f = np.tanh(xs) - c0
    w = 1 / np.tanh(xs)
    fixed = {}
    for k in range(1, DEG + 1):
        fixed[k] = float(f32(minimax(t, f, w, fixed, list(range(k, DEG + 1)))[k]))
    err = float(np.max(np.abs(w * (f - sum(c * t**k for k, c in fixed.items())))))
    return m, delta, [c0] + [fixed[k] for k in range(1, DEG + 1)], err, gal


def literal(v):
    v = float(f32(v))
    if v == 0:
        return "0.0f"
    mant, ex = float.hex(v).split("p")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}p{ex}f"


def main():
    every = np.arange(int(bits(f32(CLAMP_LO))), int(bits(f32(CLAMP_HI))) + 1, dtype=np.int64)
    index = (np.maximum(every, SMALL_BITS) >> 21) & 31
    rows = {"m": [], "delta": []} | {f"c{k}": [] for k in range(DEG + 1)}
    for i in range(32):
        cell = every[index == i]
        if len(cell) == 0:  # never reached: the constant 1
            m, delta, c, err, gal = 11.0, 0.0, [1.0] + [0.0] * DEG, 0.0, 0.0
        else:
            lo, hi = float(from_bits(cell.min())), float(from_bits(cell.max()))
            m, delta, c, err, gal = fit_entry(lo, hi)
            print(
                f"// entry {i}: [{lo:.9g}, {hi:.9g}], m = {m:.9g}, tanh(m) - c0 = "
                f"{gal:.2g} ulp, max weighted error 2^{np.log2(err):.2f}"
            )
        rows["m"].append(m)
        rows["delta"].append(delta)
        for k in range(DEG + 1):
            rows[f"c{k}"].append(c[k])
    for name, vals in rows.items():
        print("    {" + ", ".join(literal(v) for v in vals) + "},  // " + name)


# The AVX2 table (tanh_f32_avx2): eight cells read by one vpermps each, from the low three
# bits of bits(RN(a + AVX2_SHIFT)) >> 22 (half binades of a + 3/4): [0, 1/4), [1/4, 3/4),
# [3/4, 5/4), [5/4, 9/4), [9/4, 13/4), [13/4, 21/4), [21/4, 29/4), [29/4, 9.25]. The same
# form as the AVX-512 table (m, delta, c0 and the c_k, the same fit, rounded the same way)
# with A of degree 7; the cells are the float32 sums' own, so a lane that RN(a + 3/4) moves
# across a boundary is in the cell fitted for it. Prints per entry the fit error and the
# bound with the kernel's roundings before the last, in ulps of the result.
AVX2_SHIFT = 0.75
AVX2_DEG = 8  # c1..c8: A(t) of degree 7


def ulp32(y):
    """float32 ulp of each y > 0 (as float64)."""
    return np.spacing(np.asarray(y, dtype=np.float64).astype(np.float32)).astype(np.float64)


def fit_avx2_entry(lo, hi, small):
    """(m, delta, [c0..c8], fit error in ulps, |t A| bound in ulps, Gal error) for the
    cell [lo, hi]: the fit minimax in units of the result's float32 ulp; m chosen so that
    |t A(t)| / ulp(tanh(a)), the scale of p's rounding error, is smallest over the cell,
    then moved to the nearest float32 whose tanh lies within 2^-14 ulp of a float32."""
    w_hi = hi + (hi - lo) * 2.0**-10  # RN(a + 3/4) may move a lane a few ulps across
    w_lo = lo if small else lo - (hi - lo) * 2.0**-10
    xs = np.linspace(w_lo, w_hi, 3000)
    th = np.tanh(xs)
    w = 1 / ulp32(th)
    if small:
        m, delta, c0, gal = 0.0, 1.0, 0.0, 0.0
    else:
        grid = np.linspace(lo, hi, 201)
        score = [np.max(np.abs(th - np.tanh(g)) * w) for g in grid]
        target = grid[int(np.argmin(score))]
        span = int(bits(f32(hi))) - int(bits(f32(lo)))
        cand = from_bits(
            np.arange(int(bits(f32(target))) - span // 64, int(bits(f32(target))) + span // 64)
        )
        tc = np.tanh(cand.astype(np.float64))
        rn = tc.astype(np.float32).astype(np.float64)
        ulps = np.abs(tc - rn) / ulp32(tc)
        good = ulps < 2.0**-14
        j = int(np.argmin(np.where(good, np.abs(cand - target), np.inf)))
        m, c0, gal = float(cand[j]), float(rn[j]), float(ulps[j])
        delta = 0.0
    t = xs - m
    f = th - c0 - delta * t
    fixed = {}
    for k in range(1, AVX2_DEG + 1):
        fixed[k] = float(f32(minimax(t, f, w, fixed, list(range(k, AVX2_DEG + 1)))[k]))
    ta = sum(c * t**k for k, c in fixed.items())
    err = np.abs(w * (f - ta))
    # the kernel's roundings before the last: p_k = RN(c_k + t p_(k+1)) (k < 8) is within
    # 2^-24 |p_k| and reaches the result as t^k times that
    pk, rounding = np.full_like(t, fixed[AVX2_DEG]), np.zeros_like(t)
    for k in range(AVX2_DEG - 1, 0, -1):
        pk = fixed[k] + t * pk
        rounding += np.abs(t) ** k * np.abs(pk) * 2.0**-24
    bound = float(np.max(err + rounding * w)) + gal
    c = [c0] + [fixed[k] for k in range(1, AVX2_DEG + 1)]
    return m, delta, c, float(np.max(err)), bound, gal


def main_avx2():
    every = np.arange(int(bits(f32(CLAMP_LO))), int(bits(f32(CLAMP_HI))) + 1, dtype=np.int64)
    a = from_bits(every)
    index = (bits(a + f32(AVX2_SHIFT)).astype(np.int64) >> 22) & 7
    first = int(index[0])
    rows = {"m": [], "delta": []} | {f"c{k}": [] for k in range(AVX2_DEG + 1)}
    entries = {}
    for i in range(8):
        cell = a[index == i]
        lo, hi = float(cell.min()), float(cell.max())
        m, delta, c, err, bound, gal = fit_avx2_entry(lo, hi, i == first)
        # t = a - m is exact: a and m are multiples of the smaller of their ulps, 2^(e - 23)
        # with e the smaller exponent, and |t| < 2^(e + 1) (checked at both ends of the cell,
        # |a - m| grows away from m)
        for end in (lo, hi) if m else ():
            e = np.floor(np.log2(min(end, m)))
            assert abs(end - m) < 2.0 ** (e + 1), (i, end, m)
        print(
            f"// entry {i}: [{lo:.9g}, {hi:.9g}], m = {m:.9g}, tanh(m) - c0 = {gal:.2g} ulp, "
            f"fit error {err:.3f} ulp, with p's roundings {bound:.3f} ulp (+ 0.5 the last)"
        )
        entries[i] = (m, delta, c)
    for i in range(8):
        m, delta, c = entries[i]
        rows["m"].append(m)
        rows["delta"].append(delta)
        for k in range(AVX2_DEG + 1):
            rows[f"c{k}"].append(c[k])
    for name, vals in rows.items():
        print("    {" + ", ".join(literal(v) for v in vals) + "},  // " + name)


if __name__ == "__main__":
    import sys

    main_avx2() if "--avx2" in sys.argv else main()
