"""Shared fixtures: every test that takes `level` runs at every usable level."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse

# Tests of the thread-count API that only hold where numfuse has threads: a build without
# OpenMP runs every call on the calling thread and get_num_threads() is always 1.
needs_openmp = pytest.mark.skipif(
    not numfuse._core._has_openmp(), reason="built without OpenMP: get_num_threads() is always 1"
)


@pytest.fixture(params=numfuse.usable_levels())
def level(request):
    """Run the test with the instruction-set level forced to each usable one."""
    previous = numfuse.set_level(request.param)
    yield request.param
    numfuse.set_level(previous)


@pytest.fixture
def threads():
    """Restore the thread count a test changes."""
    previous = numfuse.get_num_threads()
    yield
    numfuse.set_num_threads(previous)


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Number of representable values between two same-dtype float arrays.

    NaN against NaN counts as 0; NaN against a number as a huge distance.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype
    int_type = {2: np.int64, 4: np.int64, 8: object}[actual.dtype.itemsize]
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[actual.dtype.itemsize]

    def ordered(values):
        raw = values.view(bits).astype(int_type)
        # Map sign-magnitude bit patterns onto a monotonic integer line.
        return np.where(raw < 0, -(raw & ((1 << (8 * values.itemsize - 1)) - 1)), raw)

    distance = np.abs(ordered(actual) - ordered(expected))
    both_nan = np.isnan(actual) & np.isnan(expected)
    one_nan = np.isnan(actual) ^ np.isnan(expected)
    distance = np.where(both_nan, 0, distance)
    return np.where(one_nan, 1 << 60, distance).astype(np.float64)
