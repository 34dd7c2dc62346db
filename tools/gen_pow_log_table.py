#!/usr/bin/env python3
"""Writes src/core/kernels/generated/pow_log_table.hpp: the log table of the power kernel.

power(x, y) (src/core/kernels/power.hpp) needs log|x| to a relative error near 2^-68, far
below what one float64 log gives, because y log|x| reaches +-745 and every ulp of the
product's error is an ulp of the result's. The kernel reduces x = 2^k m, m in
[RN(1/sqrt2), 2 RN(1/sqrt2)), and splits that interval into 128 segments by the top 7
mantissa bits of bits(x) - bits(RN(1/sqrt2)). Segment i gets a number invc close to 1/m with
at most 8 significant bits, and log m = log1p(r) - log(invc) with r = m invc - 1: r is exact
(one fused multiply-add, or a split product without FMA) because m has 53 significant bits,
invc 8 and |r| < 2^-7, so m invc - 1 fits 53 bits. This script chooses each invc (the 8-bit
value that minimises max |r| over the segment, 1 exactly in the segment holding 1, so that
log(1) is an exact 0) and writes -log(invc) as a pair hi + lo (mpmath, 200 bits, each part
rounded to nearest), and the Taylor coefficients of log1p beyond r - r^2/2. The computation
takes a fraction of a second, so this generator computes rather than reading fit data.

    python3 tools/gen_pow_log_table.py            # rewrite the header
    python3 tools/gen_pow_log_table.py --stdout   # print it instead
"""

from __future__ import annotations

import pathlib
import struct
from fractions import Fraction

import generated_header  # tools/generated_header.py (the script's own folder)
import mpmath

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "src" / "core" / "kernels" / "generated" / "pow_log_table.hpp"

BITS = 7  # 2^7 segments
OFF = 0x3FE6A09E667F3BCD  # bits of RN(1/sqrt(2))
MANT = (1 << 52) - 1
TAYLOR_DEGREE = 10  # log1p(r) to r^10: truncation below 2^-72 relative for |r| < 2^-7.2


def from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def segment(i: int) -> tuple[Fraction, Fraction]:
    """The smallest and largest m of segment i, exactly."""
    lo = from_bits(OFF + (i << (52 - BITS)))
    hi = from_bits(OFF + ((i + 1) << (52 - BITS)) - 1)
    return Fraction(lo), Fraction(hi)


def eight_bit_values(around: Fraction) -> list[Fraction]:
    """The numbers with at most 8 significant bits nearest to `around` (> 0)."""
    e = 0
    while Fraction(2) ** (e + 1) <= around:
        e += 1
    while Fraction(2) ** e > around:
        e -= 1
    step = Fraction(2) ** (e - 7)
    j = round(around / step)
    return [step * (j + d) for d in range(-2, 3)]


def choose_invc(lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    if lo <= 1 <= hi:
        candidates = [Fraction(1)]
    else:
        candidates = eight_bit_values(2 / (lo + hi))
    best = min(candidates, key=lambda c: max(abs(lo * c - 1), abs(hi * c - 1)))
    worst = max(abs(lo * best - 1), abs(hi * best - 1))
    # r = m invc - 1 is exact: m's last bit times invc's last bit is 2^-60 (m below 1:
    # ulp 2^-53, invc in (1, 2): ulp 2^-7; m above 1: ulp 2^-52, invc in (1/2, 1): ulp
    # 2^-8), so r is an integer multiple of 2^-60 below 2^-7 in magnitude: 53 bits.
    if not worst < Fraction(1, 2**7):
        raise SystemExit(f"segment [{float(lo)}, {float(hi)}]: |r| reaches {float(worst)}")
    ulp_m = Fraction(1, 2**53) if hi < 1 else Fraction(1, 2**52)
    if hi >= 1 > lo:
        ulp_m = Fraction(1, 2**53)
    if (best / (Fraction(1, 2**60) / ulp_m)).denominator != 1:
        raise SystemExit(f"invc {float(best)} has more than 8 significant bits")
    return best, worst


def pair(value: mpmath.mpf) -> tuple[float, float]:
    hi = float(value)
    lo = float(value - mpmath.mpf(hi))
    return hi, lo


def render() -> str:
    mpmath.mp.prec = 200
    rows = []
    max_r = Fraction(0)

    for i in range(1 << BITS):
        lo, hi = segment(i)
        invc, worst = choose_invc(lo, hi)
        max_r = max(max_r, worst)
        logc = -mpmath.log(mpmath.mpf(invc.numerator) / invc.denominator)
        rows.append((float(invc), *pair(logc), float(lo), float(hi)))
    log2_max_r = float(mpmath.log(max_r.numerator, 2) - mpmath.log(max_r.denominator, 2))
    lines = generated_header.opening(
        "gen_pow_log_table.py",
        [
            "The log table of src/core/kernels/power.hpp (how it is used: the top of that",
            "header and of the generator). Row i: {invc, logc_hi, logc_lo, 0} with",
            "logc_hi + logc_lo = -log(invc) to 2^-106 relative, for the m of segment i",
            "(m from bits(x) - bits(RN(1/sqrt2)), its top 7 mantissa bits are i).",
            f"max |m invc - 1| over all segments: {float(max_r):.6g} (2^{log2_max_r:.3f})",
            "Plain macros (no types, no includes).",
        ],
    )
    lines += [
        f"#define NUMFUSE_POW_LOG_BITS {BITS}",
        f"#define NUMFUSE_POW_LOG_OFF 0x{OFF:016x}  /* bits of RN(1/sqrt2) */",
        "",
        "// log1p(r) = r - r^2/2 + r^3 P(r), P(r) = sum (-1)^(j+1) r^(j-3) / j for j = 3..",
        f"// {TAYLOR_DEGREE} (Taylor; truncation below 2^-72 relative to r for |r| < 2^-7.2),",
        "// lowest degree first: the argument list of kernels::dd::horner.",
    ]
    coefficients = []
    for j in range(3, TAYLOR_DEGREE + 1):
        c = float(mpmath.mpf((-1) ** (j + 1)) / j)
        coefficients.append(f"{c.hex()} /* {c:.17g} */")
    lines.append("#define NUMFUSE_POW_LOG1P_TAIL \\")
    lines.append("    " + ", \\\n    ".join(coefficients))
    lines.append("")
    lines.append("// {invc, logc_hi, logc_lo, 0}, segment m in [lo, hi] in the comment.")
    lines.append("#define NUMFUSE_POW_LOG_TABLE \\")
    body = []
    for i, (invc, lh, ll, lo, hi) in enumerate(rows):
        body.append(
            f"    {invc.hex()}, {lh.hex()}, {ll.hex()}, 0.0, /* {i:3d}: [{lo:.9f}, {hi:.9f}] */"
        )
    lines.append(" \\\n".join(body))
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    generated_header.write(HEADER, render())
