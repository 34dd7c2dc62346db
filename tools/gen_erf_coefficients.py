#!/usr/bin/env python3
"""Writes src/core/kernels/generated/erf_coefficients.hpp from tools/data/erf_coefficients.json.

The JSON holds the exact float64 values (hex) of the erf fits made by tools/erf_coeffs.py;
this emitter only formats them, so `make regen` is fast and deterministic. The header is
included by src/core/kernels/erf.hpp (SIMD kernels: the column view, one 16-entry array
per coefficient) and src/core/device_math/erf.hpp (scalar / GPU code: the row view, one
interval's coefficients contiguous). Both views are written from the same numbers, and
tests/cpp/test_device_math.cpp checks that they agree entry by entry.

    python3 tools/gen_erf_coefficients.py            # rewrite the header
    python3 tools/gen_erf_coefficients.py --stdout   # print it instead
"""

from __future__ import annotations

import pathlib

import generated_header  # tools/generated_header.py (the script's own folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "erf_coefficients.json"
HEADER = ROOT / "src" / "core" / "kernels" / "generated" / "erf_coefficients.hpp"
ENTRIES = 16  # intervals per table (one AVX-512 two-register permute)


def literal(text: str) -> str:
    """The exact hex literal of a JSON value (normalised by a float round trip)."""
    return float.fromhex(text).hex()


def decimal(text: str) -> str:
    return f"{float.fromhex(text):.17g}"


def define_list(name: str, body: list[str]) -> list[str]:
    """#define NAME { body } over several lines (body lines carry their own commas)."""
    lines = [f"#define {name} {{"] + ["    " + line for line in body] + ["}"]
    return [line + " \\" for line in lines[:-1]] + [lines[-1]]


def column(values: list[str], label: str = "") -> list[str]:
    prefix = label + " = " if label else ""
    return [f"{literal(v)}, /* {prefix}{decimal(v)} */" for v in values]


def emit_table(name: str, table: dict) -> list[str]:
    macro = "NUMFUSE_ERF_" + name.upper()
    degree = table["degree"]
    rows = table["intervals"]
    assert len(rows) == ENTRIES, name
    for row in rows:
        assert len(row["c"]) == degree - 1, name
    n = table["n"]
    out = [
        f"// ---- {name}: degree {degree} (c1..c{degree}), interval k = round(qb ax + qc ax^2"
        f" - {n}) clamped to",
        "// [0, 15], ax = min(|x|, xmax). Interval [lo, hi] and the max error (output ulps) of",
        "// the rounded polynomial on it, measured with mpmath by tools/erf_coeffs.py:",
    ]
    out += [
        f"// {line}" for line in generated_header.interval_comment(rows, "fit_error_ulp", " ulp")
    ]
    out.append(f"#define {macro}_DEGREE {degree}")
    for key in ("xmax", "qb", "qc"):
        value = table[key]
        out.append(f"#define {macro}_{key.upper()} {literal(value)}  /* {decimal(value)} */")
    out.append(f"#define {macro}_QN {(2.0**52 - n).hex()}  /* 2^52 - {n} */")
    if table.get("c1lo0") is not None:
        value = table["c1lo0"]
        out.append("// c1lo is zero on intervals k >= 1 (their centers m make c1 a double); the")
        out.append("// kernels apply interval 0's c1lo as this constant under the k = 0 mask.")
        out.append(f"#define {macro}_C1LO0 {literal(value)}  /* {decimal(value)} */")
    out.append("")
    out.append("// Column view (SIMD kernels): entry k of each array belongs to interval k.")
    for key in ("m", "c0", "c1hi", "c1lo"):
        out += define_list(f"{macro}_{key.upper()}", column([r[key] for r in rows]))
    items = []
    for j in range(degree - 1):
        label = f"c{j + 2}"
        items.append(f"{{ /* {label} */")
        items += ["    " + v for v in column([r["c"][j] for r in rows], label)]
        items.append("},")
    out += define_list(f"{macro}_C", items)
    out.append("")
    out.append(f"// Row view (scalar / GPU code): row k = m, c0, c1hi, c1lo, c2..c{degree} of")
    out.append("// interval k (the same values as the columns above).")
    row_items = []
    for k, row in enumerate(rows):
        values = [row["m"], row["c0"], row["c1hi"], row["c1lo"]] + row["c"]
        row_items.append(f"/* {k:2d} */ {{{', '.join(literal(v) for v in values)}}},")
    out += define_list(f"{macro}_ROWS", row_items)
    out.append("")
    return out


def render(data: dict) -> str:
    lines = generated_header.opening(
        "gen_erf_coefficients.py",
        [
            "Coefficients of erf(x) per interval, float64 and float32 (the float32 kernel",
            "evaluates in double): exact hex literals with their decimal value, from",
            "tools/data/erf_coefficients.json, fitted by tools/erf_coeffs.py (Chebyshev",
            "interpolation, near-minimax, in mpmath). The method is described in",
            "src/core/kernels/erf.hpp. Interval k >= 1: y = c0 + t (c1 + u (c2 + ...)),",
            "u = t = ax - m; interval 0: y = x + x (c1 + u (c2 + ...)), u = x^2; c1 = c1hi + c1lo.",
            "float64: c3..cD of interval k carry k in their 4 lowest mantissa bits (the AVX-512",
            "kernel uses each as the permute index of the next).",
            "Plain macros (no types, no includes): the same initialisers build host constexpr",
            "arrays and, under nvcc / NVRTC, __device__ arrays.",
        ],
    )
    for name in ("f64", "f32"):
        lines += emit_table(name, data[name])
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    generated_header.main(DATA, HEADER, render)
