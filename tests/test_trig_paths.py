"""sin and cos float32: the lanes outside the float32-lane reduction (|x| >= 2^17, tiny, +-0,
subnormals, inf, NaN) take the kernel's rare path, which reduces |x| >= 2^17 in float64 lanes
with a window of the bits of 2/pi and runs the float32 polynomials on every lane. Whichever
batch a value lands in and whatever its neighbours: the same bits (in every layout, in
evaluate), within 1 ULP of mpmath, NumPy's NaNs and NumPy's floating-point conditions."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import fp_conditions, results_in_three_layouts, ulp_of

F32 = np.finfo(np.float32)
FUNCS = {"sin": (numfuse.sin, np.sin, mpmath.sin), "cos": (numfuse.cos, np.cos, mpmath.cos)}


def _huge(rng, n: int) -> np.ndarray:
    """n float32 values 2^17 <= |x| < 2^128 with log-uniform magnitudes, both signs."""
    mag = np.exp2(rng.uniform(17, 128, n)).astype(np.float32)
    mag = np.where(np.isfinite(mag), mag, F32.max).astype(np.float32)
    return np.where(rng.random(n) < 0.5, -mag, mag).astype(np.float32)


def _edges() -> list[float]:
    two17 = np.float32(2.0**17)
    return [
        0.0,
        -0.0,
        float(F32.smallest_subnormal),
        -float(F32.tiny) / 2,
        2.0**-12,
        -float(np.nextafter(np.float32(2.0**-12), np.float32(0))),
        float(two17),
        -float(np.nextafter(two17, np.float32(0))),
        float(np.nextafter(two17, np.float32(np.inf))),
        float(F32.max),
        -float(F32.max),
        np.inf,
        -np.inf,
        np.nan,
    ]


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_huge_lanes_within_one_ulp_of_mpmath(name, level):
    ours, _, exact = FUNCS[name]
    rng = np.random.default_rng(31)
    x = np.concatenate([_huge(rng, 1500), np.float32([2.0**17, 3e38, 1e10, 103993.0, 1.5e6])])
    got = ours(x)
    mpmath.mp.prec = 200
    worst = 0.0
    for xi, gi in zip(x.tolist(), got.tolist()):
        ref = exact(mpmath.mpf(xi))
        worst = max(worst, float(abs(mpmath.mpf(gi) - ref) / ulp_of(ref, F32)))
    print(f"{name} float32 |x| >= 2^17 at {level}: max {worst:.3f} ULP over {x.size} inputs")
    assert worst <= 1.0


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_rare_lanes_same_bits_whatever_the_batch(name, level):
    """A value's bits do not depend on the other lanes of its batch: huge values alone in an
    ordinary array, among other huge values, among tiny / inf / NaN lanes, in every layout."""
    ours = FUNCS[name][0]
    rng = np.random.default_rng(7)
    values = np.concatenate([_huge(rng, 200), np.float32(_edges())])
    with np.errstate(all="ignore"):
        dense = ours(values)  # neighbours: mostly huge
        for i, v in enumerate(values.tolist()):
            x = rng.uniform(-20, 20, 67).astype(np.float32)  # ordinary neighbours
            x[i % 67] = v
            one = ours(x)[i % 67]
            assert one.view(np.uint32) == dense[i].view(np.uint32), (v, one, dense[i])
        mixed = np.where(rng.random(values.size) < 0.5, values, np.float32(np.nan))
        mixed[::3] = np.float32(1e-30)
        got, inplace, strided = results_in_three_layouts(ours, mixed)
        kernel = numfuse.evaluate(f"{name}(x)", local_dict={"x": mixed})
        keep = mixed == values
        assert np.array_equal(got[keep].view(np.uint32), dense[keep].view(np.uint32))
        for other in (inplace, strided, kernel):
            assert np.array_equal(got.view(np.uint32), other.view(np.uint32))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_rare_lanes_specials_and_conditions(name, level):
    ours, ref, _ = FUNCS[name]
    rng = np.random.default_rng(5)
    for v in _edges():
        for positions in ((0,), (50, 33), (99, 3, 17)):
            x = _huge(rng, 100)
            x[list(positions)] = v
            with np.errstate(all="ignore"):
                got, want = ours(x), ref(x)
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got), nan), v
            assert np.array_equal(got[nan].view(np.uint32), want[nan].view(np.uint32)), v
            small = np.abs(x) < 2.0**-12  # sin x = x (keeps -0), cos x = 1
            expect = x[small] if name == "sin" else np.ones(small.sum(), np.float32)
            assert np.array_equal(got[small].view(np.uint32), expect.view(np.uint32)), v
            assert fp_conditions(ours, x) == fp_conditions(ref, x), (v, positions)
