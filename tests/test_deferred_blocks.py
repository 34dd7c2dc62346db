"""The contiguous loop's deferred test gives the per-batch loop's results.

Deferrable operations (log, log2, log10, erf, sqrt, exp; sin, cos and tan in float32 on FMA
levels) run contiguous, non-overlapping calls through their fast path with the test for
rare lanes accumulated over the loop: first over one block of batches alone (512 vectors;
if it is flagged, its batches are repaired and the rest of the call takes the per-pair
test), then over the rest (rescanned at the end if flagged). Whatever the rare lanes'
positions (none, in the first block, after it, both, the last element, everywhere), the
values and the floating-point conditions must be those of the strided loop, which tests
every batch on its own.
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse

N = 40_000  # several blocks at every level and dtype (a block is 512 vectors)

RARE = {
    "log": [0.0, -1.0, np.nan, np.inf, 5e-324],
    "log2": [0.0, -2.0, np.nan, np.inf, 5e-324],
    "log10": [0.0, -3.0, np.nan, np.inf, 5e-324],
    "erf": [np.nan, np.inf, -np.inf, 5e-324],
    "sqrt": [-1.0, np.nan, -np.inf],
    "exp": [1000.0, -1000.0, np.nan, np.inf],
    "sin": [1e30, 3e5, 1e-6, 5e-324, np.inf, np.nan, 0.0],
    "cos": [1e30, 3e5, 1e-6, 5e-324, -np.inf, np.nan, -0.0],
    "tan": [1e30, 3e5, 1e-6, 5e-324, np.inf, np.nan, 0.0],
}

PLACES = {
    "none": [],
    "first": [0],
    "first block": [1_000],
    "after the first block": [30_000],
    "both": [1_000, 30_000],
    "second block and later": [9_000, 20_000],
    "last": [N - 1],
    "everywhere": list(range(7, N, 997)),
}


def _conditions(f, x) -> list[str]:
    got = []
    for cond in ("divide", "over", "under", "invalid"):
        with np.errstate(all="ignore", **{cond: "raise"}):
            try:
                f(x)
            except FloatingPointError:
                got.append(cond)
    return got


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(RARE))
def test_contiguous_as_strided(name, dtype, place, level):
    f = getattr(numfuse, name)
    rng = np.random.default_rng(len(name) * 31 + len(place))
    lo, hi = (0.1, 50.0) if name in ("log", "log2", "log10", "sqrt") else (-20.0, 20.0)
    x = rng.uniform(lo, hi, N).astype(dtype)
    rare = np.array(RARE[name], dtype=dtype)
    for k, at in enumerate(PLACES[place]):
        x[at] = rare[k % rare.size]
    spread = np.empty(2 * N, dtype)
    spread[::2] = x
    strided = spread[::2]
    with np.errstate(all="ignore"):
        got = f(x)
        want = f(strided)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(got.view(bits), want.view(bits))
    assert _conditions(f, x) == _conditions(f, strided)
