"""Arrays with more than 2**31 elements (64-bit indexing everywhere).

Marked slow (`make test` deselects them; `make test-slow` runs them): the in-place
test holds one float32 array of 2**31 + 5 elements (8.6 GB) and needs ~10 GB free.
A few values at and around index 2**31 are special, so an index that wrapped at
32 bits would read or write the wrong element and fail the checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import numfuse as nf

N = 2**31 + 5
MARKS = {2**31 - 1: 1.0, 2**31: 2.0, N - 1: -1.0}  # index -> value (others: BASE)
BASE = np.float32(0.25)

pytestmark = pytest.mark.slow


def available_bytes() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def test_more_than_2_31_elements_in_place():
    if available_bytes() < 10 * 2**30:
        pytest.skip("needs ~10 GiB of free memory")
    x = np.full(N, BASE, dtype=np.float32)
    for index, value in MARKS.items():
        x[index] = value
    probes = np.array([0, 2**31 - 2, *MARKS, 2**30])

    # ufunc, in place: every element goes through the SIMD loop once.
    nf.exp(x, out=x)
    # (compared with numfuse's own result on a small array: this is about indexing)
    small_exp = {v: nf.exp(np.array([v], np.float32))[0] for v in [BASE, *MARKS.values()]}
    for index in probes:
        value = np.float32(MARKS.get(int(index), BASE))
        assert x[index] == small_exp[value], (index, x[index])
    assert np.all(x[:: 2**22][:-1] == small_exp[BASE])

    # evaluate, in place (aliasing out= and input element for element).
    nf.evaluate("log(x)", {"x": x}, out=x)
    for index in probes:
        assert abs(x[index] - np.float32(MARKS.get(int(index), BASE))) <= 1e-6, index

    # Reductions over all elements: logsumexp (one pass) and evaluate's sum.
    others = N - len(MARKS)
    lse_expected = math.log(
        others * math.exp(float(BASE)) + sum(math.exp(v) for v in MARKS.values())
    )
    lse = nf.logsumexp(x)
    assert lse.dtype == np.float32
    assert abs(float(lse) - lse_expected) <= 4e-7 * abs(lse_expected)
    total = nf.evaluate("sum(x)", {"x": x})
    total_expected = others * float(np.float32(BASE)) + sum(MARKS.values())
    assert abs(float(total) - total_expected) <= 1e-6 * total_expected


def test_broadcast_iteration_over_2_31_elements():
    """evaluate iterates 2**31 + 2**16 broadcast elements without materialising them."""
    rows, cols = 2**16, 2**15 + 1
    x = (np.arange(rows, dtype=np.float64) % 7)[:, None]
    y = (np.arange(cols, dtype=np.float64) % 5)[None, :]
    got = nf.evaluate("sum(x + y)", {"x": x, "y": y})
    expected = cols * float(x.sum()) + rows * float(y.sum())
    assert got == expected  # small integers: exact in float64
    got_rows = nf.evaluate("sum(x * y, axis=1)", {"x": x, "y": y})
    assert np.array_equal(got_rows, x[:, 0] * float(y.sum()))
    lse = nf.logsumexp(np.broadcast_to(np.float64(0.0), (rows, cols)))
    assert abs(lse - math.log(rows * cols)) <= 1e-12 * math.log(rows * cols)
