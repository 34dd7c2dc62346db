"""`--avx2`: run a benchmark as on an AVX2-only CPU, on a machine that has AVX-512.

Every contender is told to skip its AVX-512 code before it is imported: NumPy 2.x by
NPY_DISABLE_CPU_FEATURES (its X86_V3 = AVX2 loops), torch by ATEN_CPU_CAPABILITY=avx2,
JAX/XLA by --xla_cpu_max_isa=AVX2, numfuse by NUMFUSE_ARCH=avx2_fma. NumPy reads its
variable when it is first imported, so the flag must be seen before any import of NumPy:
a script calls `apply(sys.argv)` first thing; when the flag is present and the variables
are not yet set it sets them and re-executes the same command line.

The ratios measured this way compare AVX2 code with AVX2 code on the same cores; an
AVX2-only CPU (Zen 3, Haswell...) has other latencies and throughputs, so they are a proxy,
not that machine's figures.
"""

from __future__ import annotations

import os
import sys

FLAG = "--avx2"

VARIABLES = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "ATEN_CPU_CAPABILITY": "avx2",
    "NUMFUSE_ARCH": "avx2_fma",
}
XLA_FLAG = "--xla_cpu_max_isa=AVX2"


def apply(argv: list[str]) -> bool:
    """Set the variables and re-execute if FLAG is in argv; returns whether it is."""
    if FLAG not in argv:
        return False
    if os.environ.get("NUMFUSE_ARCH") != "avx2_fma" or XLA_FLAG not in os.environ.get(
        "XLA_FLAGS", ""
    ):
        env = dict(os.environ, **VARIABLES)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + XLA_FLAG).strip()
        os.execve(sys.executable, [sys.executable, *argv], env)
    return True


def describe() -> str:
    """One line for a benchmark's header."""
    return (
        "AVX2 proxy ("
        + ", ".join(f"{k}={v}" for k, v in VARIABLES.items())
        + f", XLA_FLAGS={XLA_FLAG})"
    )
