#!/usr/bin/env python3
"""Spot-checks the reference used by tools/erf_check.cpp (x87 erfl) against mpmath at
50 digits: reads lines "x erfl(x)" (hex floats) as printed by `erf_check dump N` and
reports the largest |erfl - erf| in ulps of float64 (the harness needs << 0.01)."""

import sys

import mpmath as mp

mp.mp.dps = 50


def main():
    worst = mp.mpf(0)
    n = 0
    for line in sys.stdin:
        xs, ys = line.split()
        x = mp.mpf(float.fromhex(xs))
        # long double hex from printf %La, e.g. 0x8.d4f0p-3
        mant, exp = ys.split("p")
        whole, _, frac = mant[2:].partition(".")
        y = mp.mpf(int(whole + frac, 16)) * mp.mpf(2) ** (int(exp) - 4 * len(frac))
        ref = mp.erf(x)
        e = int(mp.floor(mp.log(abs(ref), 2)))
        err = abs(y - ref) / mp.mpf(2) ** (e - 52)
        worst = max(worst, err)
        n += 1
    print("%d points: max |erfl - erf| = %.3g float64 ulp" % (n, float(worst)))


if __name__ == "__main__":
    main()
