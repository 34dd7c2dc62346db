#!/usr/bin/env python3
"""Writes src/core/kernels/generated/erfc_coefficients.hpp from tools/data/erfc_coefficients.json.

The JSON holds the exact float64 values (hex) of the erfcx fits made by tools/erfc_coeffs.py;
this emitter only formats them, so `make regen` is fast and deterministic. The header is
included by src/core/kernels/erfc.hpp (erfc_kernel): one row of 16 doubles per interval
(m, c0hi, c0lo, c1..cD, zero padding), the layout the kernel's row lookups load.

    python3 tools/gen_erfc_coefficients.py            # rewrite the header
    python3 tools/gen_erfc_coefficients.py --stdout   # print it instead
"""

from __future__ import annotations

import pathlib

import generated_header  # tools/generated_header.py (the script's own folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "erfc_coefficients.json"
HEADER = ROOT / "src" / "core" / "kernels" / "generated" / "erfc_coefficients.hpp"
WIDTH = 16  # doubles per row


def literal(text: str) -> str:
    """The exact hex literal of a JSON value (normalised by a float round trip)."""
    return float.fromhex(text).hex()


def render(data: dict) -> str:
    degree = data["degree"]
    rows = data["intervals"]
    lines = generated_header.opening(
        "gen_erfc_coefficients.py",
        [
            "erfcx(a) = exp(a^2) erfc(a) per interval, float64: R = c0 + t (c1 + t (c2 + ...)),",
            "t = a - m, c0 = c0hi + c0lo. Exact hex literals from",
            "tools/data/erfc_coefficients.json, fitted by tools/erfc_coeffs.py (Chebyshev",
            "interpolation, near-minimax, in mpmath).",
            "The method is described in src/core/kernels/erfc.hpp (erfc_kernel). Interval k of",
            "a = |x|: k = clamp((bits(a) >> 49) - KEY0, 0, ENTRIES - 1) (eighths of binades;",
            "interval 0 is [0, 1/8)). Interval [lo, hi) and the max relative error of the",
            "rounded polynomial on it (units of 2^-53), measured with mpmath:",
            *generated_header.interval_comment(rows, "err", "", closed=False),
        ],
    )
    lines += [
        f"#define NUMFUSE_ERFC_F64_DEGREE {degree}",
        f"#define NUMFUSE_ERFC_F64_ENTRIES {len(rows)}",
        f"#define NUMFUSE_ERFC_F64_WIDTH {WIDTH}",
        f"#define NUMFUSE_ERFC_F64_KEY0 {data['key0']}",
        f"#define NUMFUSE_ERFC_F64_AMAX {float(data['amax']).hex()}  /* {data['amax']} */",
        "",
        f"// Row k: m, c0hi, c0lo, c1..c{degree}, zero padding to {WIDTH}.",
    ]
    body = []
    for k, row in enumerate(rows):
        values = [row["m"], row["c0hi"], row["c0lo"]] + row["c"]
        assert len(row["c"]) == degree
        cells = [literal(v) for v in values] + ["0x0.0p+0"] * (WIDTH - len(values))
        body.append(f"/* {k:2d} */ {', '.join(cells)},")
    lines.append("#define NUMFUSE_ERFC_F64_ROWS { \\")
    lines += ["    " + line + " \\" for line in body]
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    generated_header.main(DATA, HEADER, render)
