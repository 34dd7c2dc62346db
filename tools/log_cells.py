"""Cells, tables and polynomial of the AVX-512 float64 log (src/core/kernels/log.hpp,
log_f64_avx512_bits): the integer reduction x = z 2^k, z in [OFF, 2 OFF), cell i = the top
4 bits of the fraction of bits(x) - bits(OFF).

Per cell, invc is the value on the 1/64 grid (or a coarser one) that minimises max |t|,
t = z invc - 1, subject to: t exact in one FMA (z's last bit times invc's last bit leaves
t at most 53 significant bits), |t| <= |log invc| (the kernel's fast two-sum of
k ln2_hi - log(invc) and t with k = 0) and invc = 1 on the cell holding z = 1. OFF is an
offset (on a 1/64 grid of the fraction) with the smallest max |t|.

    .venv/bin/python tools/log_cells.py            # tables, then the degree-7 fit (~40 s)
"""

import sys

import mpmath as mp

sys.path.insert(0, __import__("os").path.dirname(__file__))
import explog_remez as R  # noqa: E402  (remez, check, emit, hexf, to_double)


def layout(f0):
    """(z ranges with their lsb exponent) per cell for OFF fraction f0."""
    cells = []
    for i in range(16):
        lo_f, hi_f = i / 16, (i + 1) / 16
        zr = []
        a, b = max(lo_f + f0, f0), min(hi_f + f0, 1.0)  # lower binade: z = (1 + F)/2
        if a < b:
            zr.append(((1 + a) / 2, (1 + b) / 2, 53))
        a, b = max(lo_f - (1 - f0), 0.0), min(hi_f - (1 - f0), f0)  # upper binade: z = 1 + F
        if a < b:
            zr.append((1 + a, 1 + b, 52))
        cells.append(zr)
    return cells


def choose(zr):
    zlo, zhi = min(r[0] for r in zr), max(r[1] for r in zr)
    best = None
    for grid in (64, 32, 16, 8):
        for j in range(int(grid * 0.6), int(grid * 1.6) + 2):
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
            if c != 1 and worst > abs(float(mp.log(c))):
                ok = False
            if zlo <= 1 < zhi and c != 1:
                ok = False
            if ok and (best is None or worst < best[0]):
                best = (worst, c)
    return zlo, zhi, best


def main():
    mp.mp.prec = 200
    options = []
    for s in range(64):
        chosen = [choose(zr) for zr in layout(s / 64)]
        if all(c[2] is not None for c in chosen):
            options.append((max(c[2][0] for c in chosen), s / 64, chosen))
    best = min(o[0] for o in options)
    print(
        "// offsets with the smallest max |t|:",
        ", ".join(str(o[1]) for o in options if o[0] == best),
    )
    # They tie in steps of 1/16; the kernel uses 0.28125 (z in [0.640625, 1.28125)).
    worst, f0, chosen = next(o for o in options if o[1] == 0.28125)
    assert worst == best
    off = 0x3FE0000000000000 | int(f0 * 2**52)
    print(f"// OFF = 0x{off:016x} (z from {(1 + f0) / 2}), max |t| = {worst}")
    inv, his, los = [], [], []
    for zlo, zhi, (m, c) in chosen:
        v = -mp.log(mp.mpf(c))
        hi = mp.nint(v * mp.mpf(2) ** 42) / mp.mpf(2) ** 42
        inv.append(R.hexf(mp.mpf(c)))
        his.append(R.hexf(hi))
        los.append(R.hexf(R.to_double(v - hi)))
        print(f"//   z [{zlo:.6f}, {zhi:.6f})  invc {c}  max |t| {m:.5f}")
    print("invc:", ", ".join(inv))
    print("hi:  ", ", ".join(his))
    print("lo:  ", ", ".join(los))
    # R(t) ~ (log1p(t) - t + t^2/2)/t^3, error relative to the smallest |log x| a lane with
    # this t can have (k = 0: log1p(t) - log(invc) over the cells holding t).
    ts = [
        (mp.mpf(zlo) * mp.mpf(c) - 1, mp.mpf(zhi) * mp.mpf(c) - 1, mp.mpf(c))
        for zlo, zhi, (m, c) in chosen
    ]
    half = max(max(abs(a), abs(b)) for a, b, _ in ts) * (1 + mp.mpf(2) ** -12)

    def D(t):
        vals = [abs(mp.log1p(t) - mp.log(c)) for a, b, c in ts if a - 1e-12 <= t <= b + 1e-12]
        return min(vals) if vals else abs(mp.log1p(t))

    g = lambda t: (mp.log1p(t) - t + t**2 / 2) / t**3
    w = lambda t: t**3 / D(t) * mp.sign(mp.log1p(t))
    c, _ = R.remez(g, w, -half, half, 7)
    cr = [R.to_double(x) for x in c]
    err = R.check(lambda t: mp.polyval(cr[::-1], t), g, w, -half, half)
    R.emit(
        "log64_bits",
        cr,
        False,
        f"R(t) on [-{mp.nstr(half, 6)}, {mp.nstr(half, 6)}], weighted by the cells' smallest |log x|",
        err,
    )


if __name__ == "__main__":
    main()
