#!/usr/bin/env python3
"""Writes src/core/kernels/generated/explog_coefficients.hpp from tools/data (the JSON).

The JSON holds the exact values (hex) of the exp / log polynomials that the portable SIMD
kernels (src/core/kernels/exp.hpp, log.hpp) and the scalar / GPU code (src/core/device_math)
share, the lean float32 power kernel's (src/core/kernels/power.hpp) and logsumexp's term exp
(src/core/kernels/lse_exp.hpp); tools/explog_remez.py, tools/pow_remez.py and
tools/lse_exp_remez.py fit them. This emitter only formats them, so `make regen` is
fast and deterministic. For each fit NAME the header defines NUMFUSE_<NAME>_C<i> (the
coefficient of degree i) and NUMFUSE_<NAME> (all of them, lowest degree first, comma
separated: the argument list of kernels::detail::horner). A block with "constants" instead
(exp_constants: exp's argument reduction and clamps, chosen by hand) defines one macro per
constant and dtype, <macro_prefix><NAME>.

    python3 tools/gen_explog_coefficients.py            # rewrite the header
    python3 tools/gen_explog_coefficients.py --stdout   # print it instead
"""

from __future__ import annotations

import pathlib
import struct

import generated_header  # tools/generated_header.py (the script's own folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tools" / "data" / "explog_coefficients.json"
HEADER = ROOT / "src" / "core" / "kernels" / "generated" / "explog_coefficients.hpp"


def literal(text: str, dtype: str) -> str:
    """The exact C++ literal of a JSON value: double hex, or float hex with an f suffix."""
    value = float.fromhex(text)
    if dtype == "f64":
        return value.hex()
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    if single != value:
        raise ValueError(f"{text} is not a float32 value")
    mantissa, exponent = value.hex().split("p")
    mantissa = mantissa.rstrip("0")
    return f"{mantissa}0p{exponent}f" if mantissa.endswith(".") else f"{mantissa}p{exponent}f"


def decimal(text: str, dtype: str) -> str:
    return f"{float.fromhex(text):.17g}" if dtype == "f64" else f"{float.fromhex(text):.9g}"


def emit_fit(name: str, fit: dict) -> list[str]:
    macro = "NUMFUSE_" + name.upper()
    dtype = fit["dtype"]
    coefficients = fit["coefficients"]
    out = [
        f"// {name} ({dtype}): {fit['approximates']}",
        f"// max error with these rounded coefficients: {fit['max_error']}",
    ]
    for i, c in enumerate(coefficients):
        out.append(f"#define {macro}_C{i} {literal(c, dtype)}  /* {decimal(c, dtype)} */")
    names = ", ".join(f"{macro}_C{i}" for i in range(len(coefficients)))
    out.append(f"#define {macro} {names}")
    out.append("")
    return out


def emit_constants(name: str, block: dict) -> list[str]:
    """Named constants (not a fit): <macro_prefix><NAME> per dtype."""
    out = [f"// {name}: {block['approximates']}"]
    for dtype, constants in block["constants"].items():
        prefix = block["macro_prefix"][dtype]
        for constant, value, meaning in constants:
            text = literal(value, dtype)
            text = f"({text})" if text.startswith("-") else text  # safe after a binary minus
            comment = f"/* {decimal(value, dtype)}: {meaning} */"
            out.append(f"#define {prefix}{constant.upper()} {text}  {comment}")
    out.append("")
    return out


def render(data: dict) -> str:
    lines = generated_header.opening(
        "gen_explog_coefficients.py",
        [
            "Polynomial coefficients shared by the portable exp / log kernels",
            "(src/core/kernels/exp.hpp, log.hpp) and the scalar / GPU code",
            "(src/core/device_math/exp.hpp, log.hpp): exact hex literals with their decimal",
            "value, from tools/data/explog_coefficients.json, fitted by tools/explog_remez.py",
            "(Remez exchange in mpmath). _C<i> is the coefficient of degree i. Also exp's",
            "reduction constants and clamps (exp_constants), shared the same way, and the",
            "lean float32 power kernel's log2 and 2^f polynomials (src/core/kernels/power.hpp,",
            "fitted by tools/pow_remez.py), and logsumexp's term exp (lse_exp64:",
            "src/core/kernels/lse_exp.hpp, fitted by tools/lse_exp_remez.py).",
            "Plain macros (no types, no includes): usable from host, nvcc and NVRTC code.",
        ],
    )
    for name in sorted(k for k in data if k != "comment"):
        block = data[name]
        lines += emit_constants(name, block) if "constants" in block else emit_fit(name, block)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    generated_header.main(DATA, HEADER, render)
