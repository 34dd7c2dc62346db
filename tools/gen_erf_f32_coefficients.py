#!/usr/bin/env python3
"""Writes src/core/kernels/generated/erf_f32_coefficients.hpp from
tools/data/erf_f32_coefficients.json (the float32-lane erf fit of tools/erf_f32_coeffs.py).

The header holds one 8-entry table per coefficient (entry k belongs to interval k), read by
the AVX2 float32 erf kernel in src/core/kernels/erf.hpp with one vpermps each.

    python3 tools/gen_erf_f32_coefficients.py            # rewrite the header
    python3 tools/gen_erf_f32_coefficients.py --stdout   # print it instead
"""

from __future__ import annotations

import pathlib

import generated_header  # tools/generated_header.py (the script's own folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "erf_f32_coefficients.json"
HEADER = ROOT / "src" / "core" / "kernels" / "generated" / "erf_f32_coefficients.hpp"
ENTRIES = 8  # intervals (one vpermps table)


def literal(text: str) -> str:
    """The exact float literal (hex, f suffix) of a JSON value; asserts it is a float."""
    value = float.fromhex(text)
    import struct

    assert struct.unpack("f", struct.pack("f", value))[0] == value, text
    return value.hex() + "f"


def row(values: list[str]) -> str:
    return "{" + ", ".join(literal(v) for v in values) + "}"


def render(data: dict) -> str:
    rows = data["intervals"]
    degree = data["degree"]
    assert len(rows) == ENTRIES
    out = generated_header.opening(
        "gen_erf_f32_coefficients.py",
        [
            "Coefficients of the float32-lane erf kernel (src/core/kernels/erf.hpp, AVX2), fitted",
            "by tools/erf_f32_coeffs.py (least squares on Chebyshev points, mpmath values,",
            "float coefficients rounded one at a time).",
            f"Interval k = [k w, (k + 1) w], w = {data['width']}:",
            "  k = 0:  y = x + x (c1 + u (c2 + ...)), u = x^2",
            "  k >= 1: y = c0 + t (c1 + t (c2 + ...)), t = ax - m",
            "and the max error (output ulps, exact arithmetic) of the rounded polynomial:",
            *generated_header.interval_comment(rows, "fit_error_ulp", " ulp"),
        ],
    )
    out += [
        f"#define NUMFUSE_ERF32_DEGREE {degree}",
        f"#define NUMFUSE_ERF32_SCALE {literal((1 / data['width']).hex())}",
        f"#define NUMFUSE_ERF32_XMAX {literal(data['xmax'])}",
        f"#define NUMFUSE_ERF32_M {row([r['m'] for r in rows])}",
        f"#define NUMFUSE_ERF32_C0 {row([r['c0'] for r in rows])}",
        "#define NUMFUSE_ERF32_C { \\",
    ]
    for j in range(degree):
        sep = "," if j < degree - 1 else ""
        out.append(f"    {row([r['c'][j] for r in rows])}{sep} /* c{j + 1} */ \\")
    out.append("}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    generated_header.main(DATA, HEADER, render)
