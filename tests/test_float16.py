"""float16 loops against NumPy's float16 conversions, exhaustively.

numfuse's float16 loops widen each half to float32 (exactly), run the float32 kernel and
round back to nearest-even; src/core/half.hpp holds the conversions used where the
compiler has no _Float16 type (Clang before 15 on x86). For every one of the 65536 half
bit patterns, each float16 loop must give the same bits as NumPy's float16 -> float32
conversion, numfuse's float32 loop and NumPy's float32 -> float16 rounding (NaN where that
gives NaN: NaN payloads are not compared). Runs at every usable level.
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from function_table import CORE, UFUNCS

HALF_UNARY = [name for name in UFUNCS if "e" in CORE[name].loops and CORE[name].arity == 1]
ALL_HALVES = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def test_there_are_float16_loops():
    assert {"exp", "log"} <= set(HALF_UNARY)


@pytest.mark.parametrize("name", HALF_UNARY)
def test_every_half_matches_numpy_conversions(name, level):
    ufunc = getattr(numfuse, name)
    with np.errstate(all="ignore"):
        got = ufunc(ALL_HALVES)
        expected = ufunc(ALL_HALVES.astype(np.float32)).astype(np.float16)
    assert got.dtype == np.float16
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    mismatch = np.flatnonzero(got[~nan].view(np.uint16) != expected[~nan].view(np.uint16))
    assert mismatch.size == 0, (
        f"{name}: {mismatch.size} halves differ, first input "
        f"{ALL_HALVES[~nan][mismatch[0]].view(np.uint16):#06x}"
    )


def test_strided_and_in_place_halves():
    x = ALL_HALVES[np.isfinite(ALL_HALVES) & (np.abs(ALL_HALVES) < 8)]
    expected = numfuse.exp(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(numfuse.exp(x[::-3]), expected[::-3])
    y = x.copy()
    numfuse.exp(y, out=y)
    np.testing.assert_array_equal(y, expected)
