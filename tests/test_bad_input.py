"""Every bad input a user can give gets a clear Python exception that names the problem.

One row per (API, bad input): the exception type and a regular expression the message
must match, so a crash, a hang, a silent answer or a vague message all fail the test.
"""

from __future__ import annotations

import re
import sys
import threading

import numpy as np
import pytest

import numfuse as nf

A2 = np.arange(6.0).reshape(2, 3)
X3 = np.ones(3)
OBJ = np.array([1.0, 2.0], dtype=object)
STR = np.array(["a", "b"])
BYTES = np.array([b"a", b"b"])
DATETIME = np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]")
TIMEDELTA = np.array([1, 2], dtype="timedelta64[s]")
VOID = np.zeros(2, dtype="V8")
STRUCTURED = np.zeros(2, dtype=[("a", "f8")])


def read_only(shape, dtype=np.float64):
    out = np.zeros(shape, dtype)
    out.flags.writeable = False
    return out


BAD_DTYPES = [
    pytest.param(OBJ, id="object"),
    pytest.param(STR, id="str"),
    pytest.param(BYTES, id="bytes"),
    pytest.param(DATETIME, id="datetime64"),
    pytest.param(TIMEDELTA, id="timedelta64"),
    pytest.param(VOID, id="void"),
    pytest.param(STRUCTURED, id="structured"),
]

JUNK = [
    pytest.param(None, id="None"),
    pytest.param({}, id="dict"),
    pytest.param("hello", id="python-str"),
    pytest.param(object(), id="object()"),
    pytest.param([["a"], ["b"]], id="nested-str-list"),
]


# ---------------------------------------------------------------- ufuncs


@pytest.mark.parametrize("ufunc", [nf.exp, nf.log, nf.erf], ids=lambda u: u.__name__)
@pytest.mark.parametrize("value", BAD_DTYPES + JUNK)
def test_ufunc_rejects_unsupported_types(ufunc, value):
    with pytest.raises(TypeError, match=f"ufunc '{ufunc.__name__}' not supported for the input"):
        ufunc(value)


def test_erf_rejects_complex():
    with pytest.raises(TypeError, match="ufunc 'erf' not supported"):
        nf.erf(np.ones(2, complex))


@pytest.mark.parametrize("ufunc", [nf.exp, nf.log, nf.erf], ids=lambda u: u.__name__)
def test_ufunc_out_errors(ufunc):
    with pytest.raises(ValueError, match="read-only"):
        ufunc(X3, out=read_only(3))
    with pytest.raises(ValueError, match=r"could not be broadcast.*\(3,\).*\(4,\)"):
        ufunc(X3, out=np.zeros(4))
    with pytest.raises(TypeError, match="return arrays must be of ArrayType"):
        ufunc(X3, out=[0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match=r"Cannot cast ufunc .* to dtype\('int64'\)"):
        ufunc(X3, out=np.zeros(3, np.int64))


# ---------------------------------------------------------------- reductions

REDUCTIONS = [nf.logsumexp, nf.softmax, nf.log_softmax]


@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", BAD_DTYPES + JUNK)
def test_reduction_rejects_unsupported_dtypes(func, value):
    with pytest.raises(TypeError, match=rf"{func.__name__}: unsupported input dtype"):
        func(value)


@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
def test_reduction_rejects_ragged(func):
    with pytest.raises(ValueError, match="inhomogeneous shape"):
        func([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "axis, error, message",
    [
        (2, np.exceptions.AxisError, "axis 2 is out of bounds for array of dimension 2"),
        (-3, np.exceptions.AxisError, "axis -3 is out of bounds"),
        (2**70, np.exceptions.AxisError, "out of bounds"),
        ((0, 5), np.exceptions.AxisError, "axis 5 is out of bounds"),
        ((0, 0), ValueError, "duplicate value in 'axis'"),
        ((1, -1), ValueError, "duplicate value in 'axis'"),
        (1.0, TypeError, "'float' object cannot be interpreted as an integer"),
        ("x", TypeError, "'str' object cannot be interpreted as an integer"),
        ([0], TypeError, "'list' object cannot be interpreted as an integer"),
    ],
)
def test_reduction_bad_axis(func, axis, error, message):
    with pytest.raises(error, match=re.escape(message)):
        func(A2, axis=axis)


def test_axis_error_is_value_error():
    # AxisError subclasses ValueError (and IndexError), as in NumPy and SciPy.
    with pytest.raises(ValueError):
        nf.logsumexp(A2, axis=7)


def test_logsumexp_out_errors():
    with pytest.raises(ValueError, match="logsumexp: out is read-only"):
        nf.logsumexp(A2, axis=1, out=read_only(2))
    with pytest.raises(ValueError, match="logsumexp: out is read-only"):
        nf.logsumexp(A2, axis=1, out=np.broadcast_to(np.zeros(1), (2,)))
    with pytest.raises(ValueError, match=re.escape("out has shape (3,), expected (2,)")):
        nf.logsumexp(A2, axis=1, out=np.zeros(3))
    with pytest.raises(ValueError, match=re.escape("out has shape (2,), expected (2, 1)")):
        nf.logsumexp(A2, axis=1, keepdims=True, out=np.zeros(2))
    with pytest.raises(ValueError, match=re.escape("out has shape (1,), expected ()")):
        nf.logsumexp(X3, out=np.zeros(1))
    with pytest.raises(TypeError, match="out has dtype float32, expected float64"):
        nf.logsumexp(A2, axis=1, out=np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="out must be a numpy.ndarray, got list"):
        nf.logsumexp(A2, axis=1, out=[0.0, 0.0])
    with pytest.raises(TypeError, match=r"pair \(out, sign_out\) with return_sign=True"):
        nf.logsumexp(A2, axis=1, out=(np.zeros(2), np.zeros(2)))
    with pytest.raises(ValueError, match=re.escape("logsumexp (sign): out has shape (3,)")):
        nf.logsumexp(A2, axis=1, return_sign=True, out=(None, np.zeros(3)))


@pytest.mark.parametrize(
    "b", [np.ones(4), np.ones((3, 3)), np.ones((2, 3, 2))], ids=["(4,)", "(3,3)", "(2,3,2)"]
)
def test_logsumexp_misshaped_b(b):
    with pytest.raises(ValueError, match="shape mismatch: objects cannot be broadcast"):
        nf.logsumexp(A2, axis=1, b=b)


@pytest.mark.parametrize("b", BAD_DTYPES + [pytest.param("x", id="python-str")])
def test_logsumexp_bad_b_dtype(b):
    with pytest.raises(TypeError, match="logsumexp: unsupported input dtype"):
        nf.logsumexp(X3[:2], b=b)


@pytest.mark.parametrize("func", [nf.softmax, nf.log_softmax], ids=lambda f: f.__name__)
def test_softmax_out_errors(func):
    name = func.__name__
    with pytest.raises(ValueError, match=f"{name}: out is read-only"):
        func(A2, out=read_only((2, 3)))
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: out has shape (3, 2), expected (2, 3)")
    ):
        func(A2, out=np.zeros((3, 2)))
    with pytest.raises(TypeError, match="out has dtype float32, expected float64"):
        func(A2, out=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="out must be a numpy.ndarray, got list"):
        func(A2, out=[[0.0] * 3] * 2)
    with pytest.raises(TypeError, match="boolean input is not supported"):
        func(np.ones(3, bool))
    with pytest.raises(ValueError, match="zero-size array"):
        func(np.ones((0, 3)), axis=0)


def test_private_reduce_bindings_recheck():
    """The _core entry points re-check what they rely on (no memory errors on misuse)."""
    core = nf._core
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        core._logsumexp(X3, None, [0, 0], np.zeros(()), None)
    with pytest.raises(ValueError, match="axis -1 is out of bounds"):
        core._logsumexp(X3, None, [-1], np.zeros(()), None)
    with pytest.raises(TypeError, match="expected a float32 or float64 array, got int64"):
        core._logsumexp(np.ones(3, np.int64), None, [0], np.zeros(()), None)
    with pytest.raises(ValueError, match="b must have a's shape"):
        core._logsumexp(A2, np.ones((2, 2)), [1], np.zeros(2), None)
    with pytest.raises(TypeError, match="b must have a's dtype"):
        core._logsumexp(A2, np.ones((2, 3), np.float32), [1], np.zeros(2), None)
    with pytest.raises(ValueError, match="output has the wrong shape"):
        core._logsumexp(A2, None, [1], np.zeros(3), None)
    with pytest.raises(ValueError, match="read-only"):
        core._softmax(X3, [0], np.broadcast_to(np.zeros(1), (3,)), False)


# ---------------------------------------------------------------- evaluate / validate / compile


@pytest.mark.parametrize(
    "value, message",
    [
        pytest.param(OBJ, "unsupported array dtype 'object'", id="object"),
        pytest.param(STR, "convert with .astype('S')", id="str-array"),
        pytest.param(BYTES, "bytes can only be compared", id="bytes-array"),
        pytest.param(DATETIME, "unsupported array dtype 'datetime64[D]'", id="datetime64"),
        pytest.param(TIMEDELTA, "unsupported array dtype 'timedelta64[s]'", id="timedelta64"),
        pytest.param(VOID, "unsupported array dtype '|V8'", id="void"),
        pytest.param(STRUCTURED, "unsupported array dtype", id="structured"),
        pytest.param(np.ones(2, np.uint64), "unsupported array dtype 'uint64'", id="uint64"),
        pytest.param(np.ones(2, np.longdouble), "unsupported array dtype", id="longdouble"),
        pytest.param("abc", "variable 'x' is a str;", id="python-str"),
        pytest.param(b"abc", "bytes can only be compared", id="python-bytes"),
        pytest.param(np.str_("a"), "variable 'x' is a str;", id="numpy-str"),
        pytest.param(None, "unsupported array dtype 'object'", id="None"),
        pytest.param({}, "unsupported array dtype 'object'", id="dict"),
    ],
)
def test_evaluate_rejects_unsupported_values(value, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        nf.evaluate("x + 1", {"x": value})
    error = nf.validate("x + 1", {"x": value})
    assert isinstance(error, TypeError) and message in str(error)
    with pytest.raises(TypeError, match=re.escape(message.replace("variable 'x' is a ", ""))):
        nf.compile("x + 1")(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(STR, id="str-array"),
        pytest.param(np.array([["ab", "c"]]).T, id="str-array-2d-view"),
        pytest.param(np.ones(2, np.uint64), id="uint64"),
        pytest.param(OBJ, id="object"),
    ],
)
def test_unsupported_dtype_is_both_typeerror_and_valueerror(value):
    # numfuse documents TypeError; numexpr raises ValueError for these arrays ("does not
    # support Unicode", "unknown type"): code written for either must catch the error.
    assert issubclass(nf.UnsupportedDtypeError, TypeError)
    assert issubclass(nf.UnsupportedDtypeError, ValueError)
    for caught in (TypeError, ValueError, nf.UnsupportedDtypeError):
        with pytest.raises(caught):
            nf.evaluate("x + 1", {"x": value})
        with pytest.raises(caught):
            nf.compile("x + 1")(value)
    assert isinstance(nf.validate("x + 1", {"x": value}), nf.UnsupportedDtypeError)


def test_str_comparison_says_how_to_convert():
    # A numexpr user's str comparison: ValueError as numexpr, with numfuse's how-to.
    words = np.array(["ab", "c", ""])
    with pytest.raises(ValueError, match=re.escape("convert with .astype('S')")) as caught:
        nf.evaluate("w == b'ab'", {"w": words})
    assert type(caught.value) is nf.UnsupportedDtypeError
    converted = nf.evaluate("w == b'ab'", {"w": words.astype("S")})
    np.testing.assert_array_equal(converted, words.astype("S") == b"ab")


def test_evaluate_ragged_list():
    with pytest.raises(ValueError, match="inhomogeneous shape"):
        nf.evaluate("x + 1", {"x": [[1.0, 2.0], [3.0]]})


def test_evaluate_unknown_names():
    with pytest.raises(KeyError, match="'zz'"):
        nf.evaluate("a + zz", {"a": X3}, {})
    assert isinstance(nf.validate("a + zz", {"a": X3}, {}), KeyError)
    with pytest.raises(KeyError, match="'zz'"):
        nf.disassemble("a + zz", {"a": X3}, {})
    with pytest.raises(KeyError, match="'y'"):
        nf.compile("x + y", [("x", "f8")])
    with pytest.raises(KeyError, match="'y'"):
        nf.compile("x + y")(x=X3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        nf.compile("x + 1")(x=X3, w=X3)


velocity = np.arange(3.0)  # a module global for the misspelling test below


def test_undefined_name_says_where_it_looked_and_suggests():
    """numexpr's KeyError, with a message: where numfuse looked, a close name, and why a
    comprehension's frame does not see the enclosing function's variables."""

    def misspelled():
        return nf.evaluate("velocty * 2")

    with pytest.raises(KeyError) as caught:
        misspelled()
    text = str(caught.value)
    assert "'velocty' is not defined" in text
    assert "the caller's local and global variables" in text
    assert "did you mean 'velocity'?" in text

    def in_comprehension():
        x = np.arange(3.0)
        return [nf.evaluate("x * i") for i in range(2)] if x.size else None

    if sys.version_info >= (3, 12):  # comprehensions are inlined (PEP 709): x is seen
        assert len(in_comprehension()) == 2
    else:
        with pytest.raises(KeyError) as caught:
            in_comprehension()
        assert "inside a listcomp" in str(caught.value)
        assert "local_dict=" in str(caught.value)
    with pytest.raises(KeyError, match="looked in local_dict and the caller's global variables"):
        nf.evaluate("a + 1", local_dict={"b": 1})
    with pytest.raises(KeyError, match=r"looked in local_dict and global_dict; did you mean 'ab'"):
        nf.evaluate("abc + 1", {"ab": 1}, {})


@pytest.mark.parametrize(
    "ex, error, message",
    [
        ("square(x)", nf.ExpressionError, r"unknown function 'square'; write x\*\*2"),
        ("ln(x)", nf.ExpressionError, r"unknown function 'ln'; write log\(x\)"),
        ("atan2(x, x)", nf.ExpressionError, r"write arctan2\(y, x\)"),
        ("lg(x)", nf.ExpressionError, "unknown function 'lg'; did you mean 'log'"),
        ("sinhh(x)", nf.ExpressionError, "did you mean 'sinh'"),
        ("max(x, x)", TypeError, r"max\(\) takes 1 argument \(2 given\).*write maximum\(x, y\)"),
        ("min(x, x)", TypeError, r"write minimum\(x, y\)"),
    ],
)
def test_errors_say_what_to_write_instead(ex, error, message):
    with pytest.raises(error, match=message):
        nf.evaluate(ex, {"x": X3})
    # a name far from every function gets no suggestion
    with pytest.raises(nf.ExpressionError) as caught:
        nf.evaluate("foo(x)", {"x": X3})
    assert "did you mean" not in str(caught.value)


def test_evaluate_out_errors():
    with pytest.raises(ValueError, match="out is read-only"):
        nf.evaluate("x + 1", {"x": X3}, out=read_only(3))
    with pytest.raises(ValueError, match="out is read-only"):
        nf.evaluate("x + 1", {"x": X3}, out=np.broadcast_to(np.zeros(1), (3,)))
    with pytest.raises(ValueError, match=r"shape \(3,\) does not broadcast to out's shape \(4,\)"):
        nf.evaluate("x + 1", {"x": X3}, out=np.zeros(4))
    with pytest.raises(ValueError, match=r"shape \(3,\) does not broadcast to out's shape \(1,\)"):
        nf.evaluate("x + 1", {"x": X3}, out=np.zeros(1))
    with pytest.raises(TypeError, match=r"cannot cast the result \(float64\) to out's dtype"):
        nf.evaluate("x + 1", {"x": X3}, out=np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="out must be an array or expose its memory"):
        nf.evaluate("x + 1", {"x": X3}, out=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="out is read-only"):
        nf.compile("x + 1")(X3, out=read_only(3))


def test_evaluate_bad_order_and_casting():
    with pytest.raises(ValueError, match="order must be one of"):
        nf.evaluate("x + 1", {"x": X3}, order="Q")
    # Checked with out= too (order is unused there, but a typo is still a typo).
    with pytest.raises(ValueError, match="order must be one of"):
        nf.evaluate("x + 1", {"x": X3}, out=np.zeros(3), order="Q")
    # Found by this audit: a misspelt casting= without out= used to pass silently.
    with pytest.raises(ValueError, match="casting must be one of"):
        nf.evaluate("x + 1", {"x": X3}, casting="bogus")
    with pytest.raises(TypeError, match="order must be a str, got int"):
        nf.compile("x + 1")(x=X3, order=5)
    with pytest.raises(TypeError, match="casting must be a str, got NoneType"):
        nf.compile("x + 1")(x=X3, casting=None)


def test_evaluate_shape_mismatch():
    with pytest.raises(
        ValueError, match=re.escape("could not be broadcast together with shapes (3,) (4,)")
    ):
        nf.evaluate("x + y", {"x": X3, "y": np.ones(4)})


@pytest.mark.parametrize(
    "ex, error, message",
    [
        (b"x + 1", TypeError, "expression must be a str, got bytes (decode bytes first)"),
        (5, TypeError, "expression must be a str, got int"),
        (None, TypeError, "expression must be a str, got NoneType"),
        # Unhashable ones used to say "unhashable type: 'list'" (the names cache).
        (["x"], TypeError, "expression must be a str, got list"),
        (bytearray(b"x"), TypeError, "expression must be a str, got bytearray (decode bytes"),
        ({"x": 1}, TypeError, "expression must be a str, got dict"),
        ("x +", SyntaxError, "unexpected end of expression"),
        ("x\x00 + 1", SyntaxError, "unexpected character"),
        # Found by this audit: a lone surrogate used to give pybind11's
        # "incompatible function arguments" TypeError.
        ("x\ud800", SyntaxError, "unexpected character '\\ud800' (column 2)"),
        ("foo(x)", SyntaxError, "unknown function 'foo'"),
        ("where(x)", TypeError, "where() takes 3 arguments (1 given)"),
        ("sum(x, axis=1.5)", SyntaxError, "axis must be an integer"),
        ("sum(x, axis=7)", ValueError, "axis 7 is out of bounds for array of dimension 1"),
        # A Python int beyond int64 meeting bools: NumPy converts it to int64 and fails.
        (
            "(x > 0) + 99999999999999999999999",
            OverflowError,
            "Python integer out of bounds for int64",
        ),
        ("x + 2**1024", OverflowError, "Python int too large to convert to float"),
        ("(" * 60000 + "x" + ")" * 60000, ValueError, "expression is too long"),
        ("+".join(["x"] * 20000), ValueError, "too deeply nested"),
        ("exp(" * 5000 + "x" + ")" * 5000, ValueError, "nests too deeply"),
    ],
    ids=lambda v: repr(v)[:30] if isinstance(v, (str, bytes)) else None,
)
def test_evaluate_bad_expressions(ex, error, message):
    with pytest.raises(error, match=re.escape(message)):
        nf.evaluate(ex, {"x": X3})
    result = nf.validate(ex, {"x": X3})
    assert isinstance(result, error) and message in str(result)


@pytest.mark.parametrize("ex", [["x"], b"x", 5, None, {"x": 1}], ids=repr)
def test_compile_and_disassemble_need_a_str(ex):
    message = f"expression must be a str, got {type(ex).__name__}"
    with pytest.raises(TypeError, match=re.escape(message)):
        nf.compile(ex)
    with pytest.raises(TypeError, match=re.escape(message)):
        nf.disassemble(ex, {"x": X3})


@pytest.mark.parametrize("ex", ["x\ud800", 5, None])
def test_compile_bad_expressions(ex):
    with pytest.raises((TypeError, SyntaxError)):
        nf.compile(ex)


def test_evaluate_python_int_overflow():
    # Two Python ints compute in NumPy's default integer (np.add(2**70, 1) raises too).
    with pytest.raises(OverflowError, match="Python integer out of bounds for int64"):
        nf.evaluate("x + 1", {"x": 2**70})


def test_evaluate_integer_power_negative():
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        nf.evaluate("x ** y", {"x": np.array([2]), "y": np.array([-1])})


def test_compile_bad_signatures():
    with pytest.raises(TypeError, match="unsupported array dtype 'object'"):
        nf.compile("x + 1", [("x", object)])
    with pytest.raises(TypeError, match="unsupported array dtype 'datetime64"):
        nf.compile("x + 1", [("x", "datetime64[s]")])
    with pytest.raises(ValueError, match=re.escape("signature entries are (name, dtype)")):
        nf.compile("x + 1", [("x",)])
    # Found by this audit: these used to raise pybind11's RuntimeError "Unable to cast".
    with pytest.raises(TypeError, match="signature names must be str, got int"):
        nf.compile("x + 1", [(1, "f8")])
    with pytest.raises(TypeError, match=re.escape("signature entries are (name, dtype) pairs")):
        nf.compile("x + 1", ["x"])
    with pytest.raises(TypeError, match="positional arguments"):
        nf.compile("x + 1")(X3, X3)
    with pytest.raises(TypeError, match="unsupported array dtype 'object'"):
        nf.compile("x + 1", [("x", "f8")])(OBJ)


def test_re_evaluate_without_previous_call():
    errors = []

    def worker():
        try:
            nf.re_evaluate()
        except RuntimeError as error:
            errors.append(error)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    assert len(errors) == 1 and "no previous evaluate() or validate()" in str(errors[0])


def test_evaluate_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        nf.evaluate("x + 1", {"x": X3}, bogus=1)


def test_thread_and_level_settings():
    with pytest.raises(
        ValueError, match=r"n must be from 1 to \d+ \(numfuse.MAX_THREADS\) or None, got -1"
    ):
        nf.set_num_threads(-1)
    with pytest.raises(TypeError):
        nf.set_num_threads("a")
    with pytest.raises(ValueError, match="unknown instruction-set level 'bogus'"):
        nf.set_level("bogus")
