"""float32 x**y: the AVX-512 float32 kernel's domain and its edges (power_avx512.hpp).

The AVX-512 kernel computes lanes with a positive normal x, |y| < 256 and |y log2 x| <= 125
on float32 lanes (within 0.6 ULP) and every other lane through the float64 kernel; the
other levels compute float32 in float64. These tests hold at every level:

- a dense grid of x in [0.5, 2) with |y| up to 255.9, x next to 1, and pairs over the
  whole fast domain: within 0.6 ULP of x**y computed in float64 (that reference is within
  2^-28 of a float32 ULP);
- the fast domain's edges (|y| at 256, |y log2 x| at 125, tiny and subnormal y, the
  smallest normal x): within 1 ULP, x**tiny exactly 1, NumPy's special values;
- a lane's bits do not depend on the other lanes of its batch (a fast pair computed next
  to NaN, negative or huge lanes gives the bits it gives alone).

tools/pow32_check.py runs the same checks densely (every float32 of [0.5, 2) with --full).
"""

from __future__ import annotations

import numpy as np

import numfuse


def _ulp_error(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ref = np.power(x.astype(np.float64), y.astype(np.float64))
    _, e = np.frexp(ref)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    return np.abs(got.astype(np.float64) - ref) / ulp


def _fast_domain_pairs(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    bits = np.arange(0x3F000000, 0x40000000, 997, dtype=np.uint32)
    grid = bits.view(np.float32)
    xs = [np.tile(grid, 4)]
    ys = [np.repeat(np.float32([255.9, -255.9, 100.3, -7.3]), grid.size)]
    xs.append(rng.uniform(0.9, 1.1, n).astype(np.float32))  # the cells next to 1
    ys.append(rng.uniform(-255.9, 255.9, n).astype(np.float32))
    x = np.exp2(rng.uniform(-125.9, 127.9, n)).astype(np.float32)
    t = rng.uniform(-125.0, 125.0, n)
    xs.append(x)
    ys.append(np.clip(t / np.log2(x.astype(np.float64)), -255.9, 255.9).astype(np.float32))
    return np.concatenate(xs), np.concatenate(ys)


def test_fast_domain_within_0_6_ulp(level):
    x, y = _fast_domain_pairs(np.random.default_rng(31), 100_000)
    with np.errstate(all="ignore"):  # the grid's largest |y| overflow / underflow there
        got = numfuse.power(x, y)
        err = _ulp_error(got, x, y)
    finite = np.isfinite(err)
    assert np.all(np.isinf(got[~finite]))
    err = np.where(finite, err, 0.0)
    worst = int(np.argmax(err))
    assert err[worst] <= 0.6, f"{level}: {err[worst]:.4f} ULP at {x[worst]!r} ** {y[worst]!r}"


def test_fast_domain_edges(level):
    rng = np.random.default_rng(37)
    n = 4000
    x = np.exp2(rng.uniform(-20, 20, n)).astype(np.float32)
    lx = np.log2(x.astype(np.float64))
    cases = [
        # |y log2 x| next to 125 on both sides; |y| next to 256
        (x, (rng.choice([-1, 1], n) * rng.uniform(124.5, 125.5, n) / lx).astype(np.float32)),
        (
            rng.uniform(0.5, 2.0, n).astype(np.float32),
            rng.uniform(255.0, 257.0, n).astype(np.float32),
        ),
        (
            rng.uniform(0.97, 1.03, n).astype(np.float32),
            -rng.uniform(255.0, 257.0, n).astype(np.float32),
        ),
        # the smallest normals and the largest finite x
        (
            np.float32(np.finfo(np.float32).tiny) * rng.uniform(1, 4, n).astype(np.float32),
            rng.uniform(-0.9, 1.0, n).astype(np.float32),
        ),
        (
            np.float32(3e38) * rng.uniform(0.5, 1.1, n).astype(np.float32),
            rng.uniform(-1.0, 1.0, n).astype(np.float32),
        ),
    ]
    with np.errstate(all="ignore"):
        for x, y in cases:
            x = x[np.isfinite(x)]
            y = y[: x.size]
            got = numfuse.power(x, y)
            ref = np.power(x.astype(np.float64), y.astype(np.float64))
            finite = np.abs(ref) <= np.finfo(np.float32).max
            assert np.all(np.isinf(got[~finite]))
            err = _ulp_error(got[finite], x[finite], y[finite])
            assert err.max() <= 1.0, f"{level}: {err.max():.4f} ULP"
    # tiny and subnormal exponents: x**y rounds to 1 (the kernel computes them as y = 0)
    x = np.exp2(rng.uniform(-126, 127.9, n)).astype(np.float32)
    for tiny in (2.0**-40, 2.0**-41, 1e-30, 1e-40, 1e-45, 0.0):
        for sign in (1, -1):
            y = np.full(n, sign * tiny, np.float32)
            np.testing.assert_array_equal(numfuse.power(x, y), np.ones(n, np.float32))


def test_subnormal_bases_within_1_ulp(level):
    # Subnormal float32 bases are normal float64 numbers: the AVX2+FMA float32 kernel takes
    # them in its common batch (not the per-lane float64 fallback); every level within 1 ULP
    rng = np.random.default_rng(43)
    n = 4000
    x = (np.exp2(rng.uniform(-149, -126, n)) * rng.choice([1.0, -1.0], n)).astype(np.float32)
    x = x[x != 0]
    y = rng.uniform(-1.2, 1.2, x.size).astype(np.float32)
    y[::2] = np.round(y[::2] * 4)  # integral exponents for the negative bases
    keep = (x > 0) | (y == np.trunc(y))
    x, y = x[keep], y[keep]
    with np.errstate(all="ignore"):
        got = numfuse.power(x, y)
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    finite = np.abs(ref) <= np.finfo(np.float32).max
    assert np.all(np.isinf(got[~finite]))
    err = _ulp_error(got[finite], x[finite], y[finite])
    assert err.max() <= 1.0, f"{level}: {err.max():.4f} ULP"


def test_lane_bits_do_not_depend_on_the_batch(level):
    rng = np.random.default_rng(41)
    n = 16 * 64
    x = rng.uniform(0.1, 10, n).astype(np.float32)
    y = rng.uniform(-30, 30, n).astype(np.float32)
    alone = numfuse.power(x, y)
    one_by_one = np.array([numfuse.power(a, b) for a, b in zip(x[:64], y[:64])], np.float32)
    np.testing.assert_array_equal(one_by_one, alone[:64])
    # every 16-lane batch gets one lane the fast path does not take, at a varying place
    specials = np.float32([np.nan, -2.0, 0.0, np.inf, 1e-40, 3e38, 1e30])
    for j, (sx, sy) in enumerate([(s, 2.5) for s in specials] + [(2.0, 300.0), (1e20, 10.0)]):
        xm, ym = x.copy(), y.copy()
        where = np.arange(j % 16, n, 16)
        xm[where], ym[where] = sx, sy
        with np.errstate(all="ignore"):
            got = numfuse.power(xm, ym)
        keep = np.ones(n, bool)
        keep[where] = False
        np.testing.assert_array_equal(got[keep], alone[keep])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got[where], numfuse.power(xm[where], ym[where]))


def _flags_of(fn) -> tuple[np.ndarray, int]:
    """fn()'s result and the floating-point conditions it reported (np.seterrcall bits)."""
    seen = []
    with np.errstate(all="call", call=lambda kind, flag: seen.append(flag)):
        result = fn()
    bits = 0
    for flag in seen:
        bits |= flag
    return result, bits


def test_lanes_outside_the_fast_domain_anywhere(level, threads):
    # The AVX-512 kernel gathers the lanes outside its fast domain over blocks of 512
    # elements and runs them 8 at a time through the float64 kernel: at every density and
    # place, each lane gets the bits it gets alone, the fast lanes those they get without
    # the others, in place too, at every thread count, with the same conditions.
    rng = np.random.default_rng(43)
    n = 5003  # ten blocks and a tail
    x = rng.uniform(0.1, 10, n).astype(np.float32)
    y = rng.uniform(-30, 30, n).astype(np.float32)
    base = numfuse.power(x, y)
    slow_x = np.float32([1e-30, 1e-40, -2.0, 0.0, np.inf, np.nan, 3e38, 2.0, 1e-38])
    slow_y = np.float32([3.0, 2.5, 3.0, -1.0, 0.5, 2.0, 1.5, 300.0, -7.0])
    for density in (0.01, 0.3, 0.9, 1.0):
        where = np.flatnonzero(rng.random(n) < density)
        kind = rng.integers(0, slow_x.size, where.size)
        xm, ym = x.copy(), y.copy()
        xm[where], ym[where] = slow_x[kind], slow_y[kind]
        keep = np.ones(n, bool)
        keep[where] = False
        for team in (1, 3):
            numfuse.set_num_threads(team)
            got, flags = _flags_of(lambda xm=xm, ym=ym: numfuse.power(xm, ym))
            np.testing.assert_array_equal(got[keep], base[keep])
            alone, alone_flags = _flags_of(
                lambda xm=xm, ym=ym, where=where: np.concatenate(
                    [numfuse.power(xm[i : i + 1], ym[i : i + 1]) for i in where]
                )
            )
            np.testing.assert_array_equal(got[where], alone)
            assert flags == alone_flags
            inplace = xm.copy()
            with np.errstate(all="ignore"):
                numfuse.power(inplace, ym, out=inplace)
                np.testing.assert_array_equal(inplace, got)
                evaluated = numfuse.evaluate("a ** b", local_dict={"a": xm, "b": ym})
            np.testing.assert_array_equal(evaluated, got)
