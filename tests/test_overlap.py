"""Outputs that overlap inputs: every path that writes while it reads gives what NumPy gives.

NumPy's contract for an inner loop is the result of running it element by element, in order,
and NumPy hands overlapping operands to a loop only where that order is wanted (the output
behind a 1-d input; reduce and accumulate); every other overlap it copies first. So for a
user's call the result must equal the copy-first result, whatever the team size, and the
threads must not race (each layout below is above the threading threshold). The same holds
while NumPy is patched, and for numfuse's own reductions and evaluate with out=.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import numfuse
from conftest import HANG_SCALE
from function_table import BINARY_UFUNCS, CORE, UFUNCS

TEAMS = (1, 2, 3, 7)
# Long enough that every ufunc splits across threads (the largest per-thread minimum is
# 32768 elements) and a trailing call spans several copy blocks (2**18 elements).
N = 600_011


def _domain_values(name, n, dtype):
    """Values inside the function's domain (no warnings), spread over many magnitudes."""
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    magnitudes = np.exp(rng.uniform(np.log(1e-30), np.log(0.999), n)) * rng.choice([-1, 1], n)
    if name in ("log", "log2", "log10"):
        x = np.abs(magnitudes) * 1e3 + np.finfo(dtype).tiny
    elif name == "arccosh":
        x = 1.0 + np.abs(magnitudes) * 50
    elif name == "log1p":
        x = np.abs(magnitudes) * 40 - 0.5
    elif name in ("arcsin", "arccos", "arctanh"):
        x = magnitudes
    else:
        x = magnitudes * 20
    return x.astype(dtype)


# (name, input view, output view) of one buffer `v`: the layouts a loop can be handed.
def _layouts(v):
    n = len(v)
    h = n // 2
    return {
        "same": (v, v),
        "behind_by_1": (v[1:], v[:-1]),
        "behind_strided": (v[2::2], v[: (n - 1) // 2]),
        "behind_reversed": (v[-2::-1], v[::-1][: n - 1]),
        "ahead_by_1": (v[:-1], v[1:]),
        "ahead_strided": (v[: h - 3], v[3 : 2 * h - 3 : 2][: h - 3]),
        "reversed": (v[::-1], v),
        "partial_behind": (v[h // 2 : h // 2 + h], v[:h]),
        "partial_ahead": (v[:h], v[h // 2 : h // 2 + h]),
        "wider_output_stride": (v[1 : 1 + h // 2], v[:h:2][: h // 2]),
    }


LAYOUTS = list(_layouts(np.zeros(100)))


def _assert_same_bits(actual, expected, message):
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[actual.dtype.itemsize]
    np.testing.assert_array_equal(
        np.ascontiguousarray(actual).view(bits),
        np.ascontiguousarray(expected).view(bits),
        err_msg=message,
    )


def _check_unary(ufunc, dtype, values):
    with np.errstate(all="ignore"):  # float16 overflows; only the bits matter here
        _check_unary_layouts(ufunc, values)


def _check_unary_layouts(ufunc, values):
    for layout in LAYOUTS:
        v = values.copy()
        src, dst = _layouts(v)[layout]
        expected = ufunc(src.copy())
        result = ufunc(src, out=dst)
        assert result is dst
        _assert_same_bits(dst, expected, f"{ufunc.__name__} {layout}")


@pytest.mark.parametrize("team", TEAMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UFUNCS)
def test_unary_output_overlapping_input_gives_the_copy_first_result(name, dtype, team, threads):
    numfuse.set_num_threads(team)
    _check_unary(getattr(numfuse, name), dtype, _domain_values(name, N, dtype))


@pytest.mark.parametrize("team", (2, 7))
@pytest.mark.parametrize("name", [n for n in UFUNCS if "e" in CORE[n].loops])
def test_float16_output_overlapping_input(name, team, threads):
    numfuse.set_num_threads(team)
    _check_unary(getattr(numfuse, name), np.float16, _domain_values(name, N, np.float16))


def _patchable_reference(name):
    module = "scipy.special" if CORE[name].loops.startswith("d") else "numpy"
    target = getattr(importlib.import_module(module), name, None)
    return target if isinstance(target, np.ufunc) else None


@pytest.mark.parametrize("team", (2, 3))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UFUNCS)
def test_overlap_while_patched(name, dtype, team, threads):
    reference = _patchable_reference(name)
    if reference is None:
        pytest.skip(f"{name} is not a ufunc of this NumPy/SciPy")
    numfuse.set_num_threads(team)
    values = _domain_values(name, N, dtype)
    with numfuse.patched([name], scipy=True):
        _check_unary(reference, dtype, values)


# ---------------------------------------------------------------- two arguments


@pytest.mark.parametrize("team", TEAMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", BINARY_UFUNCS)
def test_binary_output_overlapping_either_input(name, dtype, team, threads):
    numfuse.set_num_threads(team)
    ufunc = getattr(numfuse, name)
    rng = np.random.default_rng(3)
    values = rng.uniform(-30, 30, N).astype(dtype)
    other = rng.uniform(-30, 30, N).astype(dtype)
    if CORE[name].types != "float_pair":  # power: positive bases, finite powers either way
        values = rng.uniform(0.5, 2.0, N).astype(dtype)
        other = rng.uniform(0.5, 8.0, N).astype(dtype)
    for layout in LAYOUTS:
        for first in (True, False):
            v = values.copy()
            src, dst = _layouts(v)[layout]
            w = other[: len(src)]
            args = (src, w) if first else (w, src)
            # (float_power's float64 results are cast to a float32 out=)
            expected = ufunc(args[0].copy(), args[1].copy()).astype(dtype)
            ufunc(*args, out=dst)
            np.testing.assert_array_equal(dst, expected, err_msg=f"{layout} first={first}")
        # Both inputs overlap the output (the same view twice, and two different views).
        v = values.copy()
        src, dst = _layouts(v)[layout]
        expected = ufunc(src.copy(), src.copy()).astype(dtype)
        ufunc(src, src, out=dst)
        np.testing.assert_array_equal(dst, expected, err_msg=f"{layout} both")


def _prefix_log_sum_exp(x, positions):
    """log(sum(exp(x[:i + 1]))) at the given positions, in float64 with an exact sum."""
    values = []
    for i in positions:
        head = x[: i + 1].astype(np.float64)
        m = head.max()
        values.append(m + np.log(math.fsum(np.exp(head - m))))
    return np.array(values)


@pytest.mark.parametrize("team", (1, 2, 7))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
# power's folds: tests/test_power_ufunc.py (a chain of powers of these inputs overflows)
@pytest.mark.parametrize("name", [n for n in BINARY_UFUNCS if CORE[n].types == "float_pair"])
def test_reduce_and_accumulate_see_every_earlier_element(name, dtype, team, threads):
    """reduce and accumulate hand the loop its own output as the first operand (at stride 0,
    or one element back). accumulate is the chain of calls, bit for bit (NumPy's contract:
    its test_umath checks it); reduce is the log-sum-exp of everything, within a few eps
    (logaddexp), or the chain's last value (hypot, arctan2).
    Any team size, and out= aliasing the input."""
    numfuse.set_num_threads(team)
    ufunc = getattr(numfuse, name)
    x = np.random.default_rng(4).uniform(-10, 10, 20_000).astype(dtype)
    x[:50] -= 30  # the running maximum moves
    accumulated = ufunc.accumulate(x)
    assert accumulated.dtype == dtype
    chain = np.array(list(itertools.accumulate(x, ufunc)), dtype=dtype)
    np.testing.assert_array_equal(accumulated, chain)
    y = x.copy()
    ufunc.accumulate(y, out=y)
    np.testing.assert_array_equal(y, chain)
    eps = np.finfo(dtype).eps
    reduced = ufunc.reduce(x)
    if name == "logaddexp":  # reduce is the running log-sum-exp (binary_fold)
        exact = _prefix_log_sum_exp(x, [len(x) - 1])[0]
        np.testing.assert_allclose(reduced, exact, rtol=4 * eps)
    else:  # the other folds are the chain of calls
        np.testing.assert_array_equal(reduced, chain[-1])
    out = np.empty((), dtype)
    ufunc.reduce(x, out=out)
    assert out == reduced
    # reduce over an axis of a 2-d array: each row as on its own
    table = x.reshape(200, 100)
    rows = [ufunc.reduce(row) for row in table]
    np.testing.assert_array_equal(ufunc.reduce(table, axis=1), rows)


def test_reduce_and_accumulate_special_values():
    f = numfuse.logaddexp
    inf, nan = np.inf, np.nan
    cases = [
        ([1.0, -inf, 2.0], [1.0, 1.0, np.logaddexp(1.0, 2.0)]),
        ([-inf, -inf], [-inf, -inf]),
        ([-inf, 3.0], [-inf, 3.0]),
        ([1.0, inf, 2.0], [1.0, inf, inf]),
        ([inf, inf], [inf, inf]),
        ([inf, -inf], [inf, inf]),
        ([1.0, nan, 2.0], [1.0, nan, nan]),
        ([-0.0, -inf], [-0.0, 0.0]),
    ]
    for values, expected in cases:
        x = np.array(values)
        with np.errstate(invalid="ignore"):
            got = f.accumulate(x)
        np.testing.assert_allclose(got, expected, rtol=2e-16)
        assert np.signbit(got[-1]) == np.signbit(expected[-1])
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        f.reduce(np.array([1.0, nan]))
    with np.errstate(under="raise"), pytest.raises(FloatingPointError):
        f.reduce(np.array([0.0, -800.0]))


# ---------------------------------------------------------- numfuse's own outputs


@pytest.mark.parametrize("team", TEAMS)
@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
def test_softmax_out_overlapping_input(function, team, threads):
    numfuse.set_num_threads(team)
    f = getattr(numfuse, function)
    base = np.random.default_rng(5).normal(0, 4, 700 * 400 + 400)
    for axis in (0, 1, -1, None):
        for shift in (0, 1, 400, -1):
            v = base.copy()
            lo = max(shift, 0)
            x = v[lo : lo + 700 * 400].reshape(700, 400)
            lo_out = max(-shift, 0) if shift < 0 else 0
            out = v[lo_out : lo_out + 700 * 400].reshape(700, 400)
            expected = f(x.copy(), axis=axis)
            f(x, axis=axis, out=out)
            np.testing.assert_array_equal(out, expected, err_msg=f"axis={axis} shift={shift}")


@pytest.mark.parametrize("team", TEAMS)
def test_evaluate_out_overlapping_inputs(team, threads):
    numfuse.set_num_threads(team)
    base = np.random.default_rng(6).uniform(0.5, 2.0, 2 * N)
    for name, (src, dst) in _layouts(base.copy()).items():
        a = src
        expected = numfuse.evaluate("exp(a) * 2 + a", local_dict={"a": a.copy()})
        numfuse.evaluate("exp(a) * 2 + a", local_dict={"a": a}, out=dst)
        np.testing.assert_array_equal(dst, expected, err_msg=name)
    # A 2-d output and a 1-d input that is one of its rows (broadcast over the others).
    m = np.random.default_rng(7).uniform(0.5, 2.0, (300, 2000))
    row = m[150]
    expected = numfuse.evaluate("m + exp(row)", local_dict={"m": m.copy(), "row": row.copy()})
    numfuse.evaluate("m + exp(row)", local_dict={"m": m, "row": row}, out=m)
    np.testing.assert_array_equal(m, expected)


# ------------------------------------------------------- NumPy's own overlap tests


def _numpy_mem_overlap():
    spec = importlib.util.find_spec("numpy._core.tests.test_mem_overlap")
    if spec is None or importlib.util.find_spec("hypothesis") is None:
        pytest.skip("this NumPy ships without its test modules")
    return importlib.import_module("numpy._core.tests.test_mem_overlap")


@pytest.mark.parametrize("name", ["exp", "log1p", "erf", "arctan"])
def test_numpys_overlap_fuzz_with_numfuse_ufuncs(name, threads):
    """NumPy's TestUFunc.check_unary_fuzz (random overlapping view pairs of up to 5-d
    arrays, up to 443,352 elements: threaded) with a numfuse ufunc on float64."""
    module = _numpy_mem_overlap()
    numfuse.set_num_threads(2)
    with np.errstate(all="ignore"):
        module.TestUFunc().check_unary_fuzz(getattr(numfuse, name), None, np.float64, count=400)


def test_numpys_reduce_and_accumulate_fuzz_with_logaddexp(threads):
    module = _numpy_mem_overlap()
    numfuse.set_num_threads(2)

    def accumulate_size(a, b, axis):
        if axis is None:
            return (a.size, False) if a.ndim == 1 else ("skip", False)
        return a.shape[axis], False

    def reduce_size(a, b, axis):
        return None, (axis is None or a.ndim == 1)

    case = module.TestUFunc()
    case.check_unary_fuzz(numfuse.logaddexp.accumulate, accumulate_size, np.float64, count=200)
    case.check_unary_fuzz(numfuse.logaddexp.reduce, reduce_size, np.float64, count=200)


def test_numpys_own_mem_overlap_tests_pass_while_patched(tmp_path):
    _numpy_mem_overlap()
    done = subprocess.run(
        [
            sys.executable, "-m", "numfuse", "run", "--scipy", "-m", "pytest", "--pyargs",
            "numpy._core.tests.test_mem_overlap", "-q", "-p", "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, NUMFUSE_NUM_THREADS="2"),
        timeout=600 * HANG_SCALE,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
