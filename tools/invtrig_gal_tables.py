#!/usr/bin/env python3
"""Gal's accurate tables of the AVX-512 arctan kernels (kernels/invtrig.hpp's
atan_half_octave_c / _t, kernels/invtrig_f32.hpp's f32_atan_octant_c / _t).

For each cell of [1/16, 16) -- half octaves [2^e (1 + j/2), 2^e (1 + (j + 1)/2)) for
float64, quarter octaves for float32, e in [-4, 3] -- a point c of the target precision
near the cell's midpoint whose atan, rounded to that precision, is within 2^-63 (float64)
or 2^-36 (float32) of atan c relative, so that the kernels need no low part of atan c. c
stays within 2^e/64 (float64) or 2^e/128 (float32) of the midpoint (the bound on |u| the
kernels state), and the last cell's c is at least 14 (float64) or 15 (float32), so that
1/c bounds |u| above 16. float64 points are drawn at random (seeded) near the midpoint and
checked with mpmath; float32 points are scanned outward from the midpoint in float64 and
checked with mpmath. Prints the tables in slot order (the low bits of a's top bits):

    .venv/bin/python tools/invtrig_gal_tables.py f64
    .venv/bin/python tools/invtrig_gal_tables.py f32
"""

import random
import struct
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 50


def _f32(v) -> float:
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def _hex32(v: float) -> str:
    m, e = float(v).hex().split("p")
    m = m.rstrip("0").rstrip(".")
    return f"{m}p{e}f"


def f64_table():
    rng = random.Random(27)
    rows = {}
    for e in range(-4, 4):
        for j in range(2):
            mid = mp.mpf(2) ** e * (1 + mp.mpf(2 * j + 1) / 4)
            ulp = mp.mpf(2) ** (e - 52)
            span = 2**52 // 64
            best = None
            for n in range(20000):
                k = rng.randint(-span, span) if n else 0
                if e == 3 and j == 1:
                    k = abs(k)
                c = mid + k * ulp
                t = mp.atan(c)
                hi = mp.mpf(float(t))
                r = abs(t - hi) / t
                if r < mp.mpf(2) ** -63 and (best is None or abs(k) < best[3]):
                    best = (c, hi, r, abs(k))
                if best and n > 3000:
                    break
            c, hi, r, _ = best
            rows[(2 * (e + 1023) + j) % 16] = (float(c), float(hi), r)
    return [rows[s] for s in range(16)]


def f32_table():
    rows = {}
    for e in range(-4, 4):
        for j in range(4):
            mid = 2.0**e * (1 + (2 * j + 1) / 8)
            ulp = 2.0 ** (e - 23)
            reach = int(2.0**e / 128 / ulp)
            ks = np.arange(-reach, reach + 1)
            c = mid + ks * ulp
            if e == 3 and j == 3:
                c = c[c >= 15.0]
            t = np.arctan(c)
            rel = np.abs(t - t.astype(np.float32).astype(np.float64)) / t
            for i in np.argsort(np.abs(c - mid)):
                if rel[i] < 2.0**-37:
                    tt = mp.atan(mp.mpf(float(c[i])))
                    hi = mp.mpf(_f32(tt))
                    r = abs(tt - hi) / tt
                    if r < mp.mpf(2) ** -36:
                        rows[(4 * (e + 127) + j) % 32] = (float(c[i]), float(hi), r)
                        break
    return [rows[s] for s in range(32)]


def main() -> None:
    single = sys.argv[1:] == ["f32"]
    table = f32_table() if single else f64_table()
    for c, hi, r in table:
        if single:
            print(f"    {_hex32(c)}, {_hex32(hi)},  // c = {c:.9g}, 2^{float(mp.log(r, 2)):.1f}")
        else:
            print(f"    {c.hex()}, {hi.hex()},  // c = {c:.17g}, 2^{float(mp.log(r, 2)):.1f}")


if __name__ == "__main__":
    main()
