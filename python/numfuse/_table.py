"""The function table (src/core/functions.hpp) as Python data, read from the extension.

Code that needs the list of functions (the benchmarks' cases, the tests' table) reads it
here rather than naming functions itself.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _core


class FunctionRow(NamedTuple):
    """A row of the C++ table (numfuse._core._function_table())."""

    name: str
    arity: int
    types: (
        str  # float_complex, float_only, float_pair, rounding, rounding_complex, power, float_power
    )
    is_ufunc: bool
    loops: str  # NumPy type characters in loop order ("" when not a ufunc)
    gpu: str  # none, device_math, libdevice
    summary: str
    libm: str  # the scalar function (scalar_libm::libm; the GPU's libdevice name)
    threads: int  # a ufunc's elements per thread below which it stays on one thread
    invalid: tuple  # (finite, infinite) arguments outside the domain (NaN policy), or ()
    bench_domain: tuple  # (lo, hi): the benchmarks' inputs

    @property
    def has_complex(self) -> bool:
        return self.types in ("float_complex", "rounding_complex", "power", "float_power")

    @property
    def ufunc_of(self) -> str | None:
        """Whose ufunc numfuse.<name> stands in for: "numpy", "scipy" (loops in SciPy's
        order, float64 first) or None."""
        if not self.is_ufunc:
            return None
        return "scipy" if self.loops.startswith("df") else "numpy"


def function_rows() -> list[FunctionRow]:
    """Every row, in table order."""
    return [FunctionRow(*row) for row in _core._function_table()]
