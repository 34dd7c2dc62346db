"""Python ints in evaluate follow NumPy 2's rule (NEP 50) in every form: bound to a name,
written as a literal, passed to a compiled object (its fast path memoises plans), checked
by validate: for every integer dtype, bool and the floats, every operation and operand
order, at the bounds of every dtype and beyond int64, uint64 and float64
(tests/python_int_table.py has the table and NumPy's reference).
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from python_int_table import (
    DTYPES,
    OPERATIONS,
    array_of,
    boundaries,
    expression,
    literal,
    numpy_outcome,
    same_result,
)

BOUNDARIES = boundaries()


def _numpy_class(error_type):
    """The exception class as NumPy's: numfuse.UnsupportedOperationError (an operation the
    engine lacks for the types: `float_array & k`) is the TypeError NumPy raises there."""
    if error_type is numfuse.UnsupportedOperationError:
        return TypeError
    return error_type


def _outcomes(text, x, k):
    """evaluate's outcome in each form: the exception class (NumPy's) or the result."""

    def run(call):
        try:
            return call()
        except (OverflowError, ValueError, TypeError) as error:
            return _numpy_class(type(error))

    named = text.format(k="k")
    return {
        "name": run(lambda: numfuse.evaluate(named, {"x": x, "k": k})),
        "literal": run(lambda: numfuse.evaluate(text.format(k=literal(k)), {"x": x})),
        "compiled": run(lambda: numfuse.compile(named)(x=x, k=k)),
        "validate": _numpy_class(type(numfuse.validate(named, {"x": x, "k": k}))),
    }


@pytest.mark.parametrize("template", list(OPERATIONS))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_python_ints_follow_numpy_2(dtype, template):
    x = array_of(dtype)
    for int_first in (False, True):
        text = expression(template, "{k}", int_first)
        for k in BOUNDARIES:
            expected = numpy_outcome(template, x, k, int_first)
            for form, got in _outcomes(text, x, k).items():
                where = f"{text.format(k=k)} with x {x.dtype}, {form}"
                if form == "validate":
                    # validate compiles without running: errors of the values (a negative
                    # integer power) are found only by running.
                    raises = isinstance(expected, type) and expected is not ValueError
                    assert got is (expected if raises else type(None)), where
                elif isinstance(expected, type):
                    assert got is expected, f"{where}: {got!r}, NumPy raises {expected}"
                else:
                    assert not isinstance(got, type), f"{where}: {got}, NumPy {expected!r}"
                    assert same_result(got, expected), f"{where}: {got!r}, NumPy {expected!r}"


def test_the_issue_examples():
    """The report: names bound to Python ints wrapped to the array's integer type."""
    i = np.arange(3, dtype=np.int32)
    k = 2**40
    with pytest.raises(OverflowError, match="Python integer 1099511627776 out of bounds for int32"):
        numfuse.evaluate("i + k")
    np.testing.assert_array_equal(numfuse.evaluate("i < k"), [True, True, True])
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        numfuse.compile("i + k")(i=i, k=k)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        numfuse.evaluate("i + 1099511627776")
    # Checked before anything runs: out= keeps its values.
    out = np.full(3, 9, np.int32)
    with pytest.raises(OverflowError):
        numfuse.evaluate("i + k", out=out)
    np.testing.assert_array_equal(out, [9, 9, 9])


def test_compiled_fast_path_memo_checks_every_call():
    """The compiled object's fast path memoises the plan of the last call's types: a
    Python int that fits is followed by one that does not, and back."""
    x = np.arange(5, dtype=np.int32)
    c = numfuse.compile("x + k")
    assert c.input_names == ["k", "x"]  # positional arguments in sorted name order
    for _ in range(2):
        np.testing.assert_array_equal(c(7, x), x + 7)
        with pytest.raises(OverflowError, match="Python integer 2147483648 out of bounds"):
            c(2**31, x)
        np.testing.assert_array_equal(c(x=x, k=-(2**31)), x + np.int32(-(2**31)))
    below = numfuse.compile("x < k")
    np.testing.assert_array_equal(below(3, x), x < 3)
    np.testing.assert_array_equal(below(2**40, x), np.ones(5, bool))
    np.testing.assert_array_equal(below(-(2**40), x), np.zeros(5, bool))
    np.testing.assert_array_equal(below(2**100, x), np.ones(5, bool))


def test_arithmetic_between_python_ints_is_exact():
    """Python computes k + 1 before it meets the array: the check sees its value (the
    plan is compiled for the values then: Plan::value_keyed), and a result beyond int64
    stays a Python int (a float64 array takes it rounded; an int64 array refuses it)."""
    i = np.arange(3, dtype=np.int32)
    c = numfuse.compile("i + (k + 1)")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(c(i=i, k=2**31 - 2), i + np.int32(2**31 - 1))
    with pytest.raises(OverflowError, match="Python integer 2147483648 out of bounds for int32"):
        c(i=i, k=2**31 - 1)
    np.testing.assert_array_equal(c(i=i, k=5), i + 6)
    f = np.array([1.0, -2.0])
    np.testing.assert_array_equal(numfuse.evaluate("f + k * k", {"f": f, "k": 2**40}), f + 2**80)
    np.testing.assert_array_equal(numfuse.evaluate("f + 2**64"), f + 2**64)
    n = np.array([0, 1], np.int64)
    with pytest.raises(OverflowError, match="Python integer out of bounds for int64"):
        numfuse.evaluate("n + 2**63")
    np.testing.assert_array_equal(numfuse.evaluate("n + -2**63"), n + np.int64(-(2**63)))
    np.testing.assert_array_equal(numfuse.evaluate("n < 2**63"), [True, True])
    np.testing.assert_array_equal(numfuse.evaluate("k + 1", {"k": 2**62}), 2**62 + 1)


def test_literals_beyond_int64_in_every_radix():
    """An int literal beyond int64 is rounded to float64 as Python's float() rounds it,
    in decimal, hexadecimal, octal and binary."""
    f = np.zeros(1)
    for value in (2**64 + 1, 2**100 - 1, 3**80, 2**63 + 2**10 + 1):
        for text in (str(value), hex(value), oct(value), bin(value)):
            got = numfuse.evaluate(f"f + {text}", {"f": f})
            assert got[0] == float(value), text
    with pytest.raises(OverflowError, match="too large to convert to float"):
        numfuse.evaluate(f"f + {2**1024}", {"f": f})


def test_where_refuses_an_out_of_range_python_int():
    """np.where(c, uint8_array, 300) casts 300 to uint8 silently (44) before NumPy 2.5 and
    raises OverflowError from 2.5 on; evaluate applies the ufuncs' rule to where() with
    every NumPy: an OverflowError (docs/evaluate.md)."""
    u = np.array([1, 2], np.uint8)
    try:
        with np.errstate(all="ignore"):
            wrapped = np.where(u > 1, u, 300)[0]
    except OverflowError:
        assert np.lib.NumpyVersion(np.__version__) >= "2.5.0"
    else:
        assert wrapped == 44
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        numfuse.evaluate("where(u > 1, u, 300)")
    np.testing.assert_array_equal(numfuse.evaluate("where(u > 1, u, 255)"), [255, 2])


def test_dask_back_end_checks_python_ints():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.arange(10, dtype=np.int32), chunks=3)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        numfuse.evaluate("x + k", {"x": x, "k": 2**40})
    got = numfuse.evaluate("x + (k + 1)", {"x": x, "k": 5}).compute()
    np.testing.assert_array_equal(got, np.arange(10, dtype=np.int32) + 6)
    got = numfuse.evaluate("sum(x < k) + x", {"x": x, "k": 2**70}).compute()
    np.testing.assert_array_equal(got, np.arange(10) + 10)
