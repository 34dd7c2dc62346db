"""numexpr behaviour a switching user relies on: exception types, NumExpr.run, results
broadcast into out=, and no user array kept alive by a call."""

from __future__ import annotations

import gc
import re
import warnings
import weakref

import numpy as np
import pytest

import numfuse as nf

try:
    import numexpr
except ImportError:  # pragma: no cover - optional peer
    numexpr = None

# Malformed texts: numexpr raises SyntaxError, ValueError (its sanitizer) or TypeError for them.
MALFORMED = [
    "(a",
    "a +",
    "a = 1",
    "a $ b",
    "__builtins__",
    "__import__('os')",
    "lambda: 1",
    "a.__class__",
    "a[0]",
    "[1, 2]",
    "a; b",
    "a.b",
    "{1: 2}",
    "a and b",
    "a or b",
    "not a",
    "a if a else b",
    "a < b < a",
    "foo(a)",
    "a(1)",
    "(a, b)",
    "a @ b",
]


@pytest.mark.parametrize("text", MALFORMED)
def test_syntax_errors_are_expression_errors_numexpr_code_catches(text):
    a = b = np.arange(3.0)  # noqa: F841 - read by the expression text
    with pytest.raises(nf.ExpressionError) as caught:
        nf.evaluate(text)
    error = caught.value
    assert isinstance(error, SyntaxError) and error.offset >= 1  # numfuse's contract: caret
    assert isinstance(error, ValueError) and isinstance(error, TypeError)
    assert type(nf.validate(text)) is nf.ExpressionError
    with pytest.raises(nf.ExpressionError):
        nf.compile(text)
    if numexpr is not None:
        try:
            numexpr.evaluate(text)
        except (SyntaxError, ValueError, TypeError) as theirs:
            assert isinstance(error, type(theirs)), (type(theirs), type(error))


# str where numfuse computes with bytes: (text, values, numfuse's class, numexpr's outcome:
# the exception class it raises, or None where it computes a result).
STR_USES = [
    pytest.param(
        "u == b'ab'",
        {"u": np.array(["ab", "c"])},
        nf.UnsupportedDtypeError,
        ValueError,
        id="U-array",
    ),
    pytest.param(
        "u + 1",
        {"u": np.array([["x"], ["yz"]]).T},
        nf.UnsupportedDtypeError,
        ValueError,
        id="U-array-view",
    ),
    pytest.param(
        "s == k",
        {"s": np.array([b"ab"]), "k": "ab"},
        nf.UnsupportedDtypeError,
        ValueError,
        id="str-value",
    ),
    pytest.param(
        "s < '\u00e9'",
        {"s": np.array([b"ab"])},
        nf.ExpressionError,
        ValueError,
        id="non-ascii-literal",
    ),
]


@pytest.mark.parametrize("text, values, ours, theirs", STR_USES)
def test_str_raises_what_typeerror_and_valueerror_catch(text, values, ours, theirs):
    errors = []
    with pytest.raises(ours) as caught:
        nf.evaluate(text, values, {})
    errors.append(caught.value)
    with pytest.raises(ours) as caught:
        nf.compile(text)(**values)
    errors.append(caught.value)
    errors.append(nf.validate(text, values, {}))
    for error in errors:
        assert type(error) is ours, type(error)
        assert isinstance(error, TypeError) and isinstance(error, ValueError)
        # The message says how to convert.
        assert re.search(r"astype\('S'\)|\.encode\(\)|bytes literal such as b'abc'", str(error))
    if ours is nf.ExpressionError:  # the caret points at the literal (its prefix included)
        quote = text.index("'")
        assert errors[0].offset == quote + 1 - (text[quote - 1] == "u")
    if numexpr is None:
        return
    with pytest.raises(theirs):  # numexpr raises `theirs` there; ours is one too
        numexpr.evaluate(text, values, {})
    assert isinstance(errors[0], theirs)


# ASCII str literals are bytes, as numexpr reads them: the same result as the b'..' spelling
# and as numexpr, in evaluate and compiled objects.
ASCII_STR_LITERALS = [
    ("s == 'ab'", "s == b'ab'"),
    ("'ab' <= s", "b'ab' <= s"),
    ("contains(s, u'a')", "contains(s, b'a')"),
    ("s != r'a\\b'", "s != rb'a\\b'"),
    ("s == 'a\\x62'", "s == b'ab'"),
    ("s == '\\u0061b'", "s == b'ab'"),
    ("s > ''", "s > b''"),
    ('s == """ab"""', "s == b'ab'"),
]


@pytest.mark.parametrize("text, spelled", ASCII_STR_LITERALS)
def test_ascii_str_literals_are_bytes_as_in_numexpr(text, spelled):
    values = {"s": np.array([b"ab", b"a", b"", b"a\\b", b"abc", b"b"])}
    expected = nf.evaluate(spelled, values, {})
    np.testing.assert_array_equal(nf.evaluate(text, values, {}), expected)
    np.testing.assert_array_equal(nf.compile(text)(**values), expected)
    assert nf.validate(text, values, {}) is None
    if numexpr is not None and "\\u" not in text:
        np.testing.assert_array_equal(numexpr.evaluate(text, values, {}), expected)


def test_expression_error_is_the_one_class_everywhere():
    assert nf.ExpressionError is nf._core.ExpressionError
    assert nf.ExpressionError.__module__ == "numfuse"
    with pytest.raises(nf.ExpressionError):
        nf.evaluate("a \ud800 b")  # a lone surrogate: rejected before the C++ parser


def test_run_is_calling_the_compiled_object():
    a, b = np.arange(5.0), np.linspace(0, 1, 5)
    c = nf.compile("2*a + b")
    np.testing.assert_array_equal(c.run(a, b), 2 * a + b)
    np.testing.assert_array_equal(c.run(a=a, b=b), 2 * a + b)
    out = np.empty(5)
    assert c.run(a, b, out=out) is out
    np.testing.assert_array_equal(out, 2 * a + b)
    typed = nf.NumExpr("2*a + b", [("a", np.float64), ("b", np.float64)])
    np.testing.assert_array_equal(typed.run(a, b, ex_uses_vml=False), 2 * a + b)
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        c.run(a, b, c=a)


def test_keyword_calls_take_the_same_path_and_results():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    c = nf.compile("exp(x) * y")
    expected = c(x, y)
    np.testing.assert_array_equal(c(x=x, y=y), expected)
    np.testing.assert_array_equal(c(y=y, x=x), expected)
    np.testing.assert_array_equal(c(x, y=y), expected)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        c(x=x, z=y)
    with pytest.raises(KeyError, match="'y'"):
        c(x=x)


@pytest.mark.parametrize(
    "text, values, out_shape",
    [
        ("3", {}, (4, 5)),
        ("a * 2", {"a": np.arange(5.0)}, (3, 5)),
        ("a + b", {"a": np.arange(5.0), "b": np.ones((1, 5))}, (2, 5)),
        ("sum(a)", {"a": np.arange(5.0)}, (3,)),
        ("sum(m, axis=0)", {"m": np.ones((4, 5))}, (2, 5)),
        ("a", {"a": np.arange(1.0)}, (6,)),
    ],
)
def test_results_broadcast_into_out(text, values, out_shape):
    out = np.full(out_shape, -1.0)
    assert nf.evaluate(text, local_dict=values, out=out) is out
    expected = np.broadcast_to(nf.evaluate(text, local_dict=values), out_shape)
    np.testing.assert_array_equal(out, expected)


def test_out_broadcasting_keeps_casting_rules_and_rejects_other_shapes():
    a = np.arange(5.0)
    out_int = np.zeros((2, 5), np.int64)
    with pytest.raises(TypeError, match="cannot cast"):
        nf.evaluate("a * 2", out=out_int)
    nf.evaluate("a * 2", out=out_int, casting="unsafe")
    np.testing.assert_array_equal(out_int, np.broadcast_to((a * 2).astype(np.int64), (2, 5)))
    for shape in [(4,), (5, 2), (0,)]:
        with pytest.raises(ValueError, match="does not broadcast to out's shape"):
            nf.evaluate("a * 2", out=np.zeros(shape))


def test_no_user_array_outlives_a_call():
    # evaluate, validate and compiled calls keep neither out= nor the inputs alive.
    def evaluate_out():
        a, out = np.arange(1000.0), np.zeros(1000)
        refs = (weakref.ref(out), weakref.ref(a))
        nf.evaluate("a + 1", local_dict={"a": a}, out=out)
        return refs

    def validate_out():
        a, out = np.arange(10.0), np.zeros(10)
        refs = (weakref.ref(out), weakref.ref(a))
        assert nf.validate("a + 1", local_dict={"a": a}, out=out) is None
        return refs

    def compiled_out():
        a, out = np.arange(10.0), np.zeros(10)
        refs = (weakref.ref(out), weakref.ref(a))
        nf.compile("a + 1")(a, out=out)
        return refs

    for make in (evaluate_out, validate_out, compiled_out):
        refs = make()
        gc.collect()
        assert all(ref() is None for ref in refs), make.__name__


def test_re_evaluate_reuses_a_live_out_and_allocates_once_it_is_gone():
    out = np.zeros(3)
    x = nf.evaluate("a + 1", local_dict={"a": np.array([1.0, 2.0, 3.0])}, out=out)
    assert x is out
    again = nf.re_evaluate(local_dict={"a": np.array([4.0, 5.0, 6.0])})
    assert again is out
    np.testing.assert_array_equal(out, [5.0, 6.0, 7.0])
    del out, x, again
    gc.collect()
    fresh = nf.re_evaluate(local_dict={"a": np.array([0.0, 1.0, 2.0])})
    np.testing.assert_array_equal(fresh, [1.0, 2.0, 3.0])


# ----------------------------------------------------------------- where numfuse and numexpr differ
# docs/evaluate.md's list "Where evaluate differs from numexpr", row by row: the outcome of each
# (a result dtype, or the exception class) in numfuse and in the installed numexpr. numfuse
# follows NumPy 2 in every row; a numexpr release that changes a row fails this test, and the
# docs list is updated with it.
VALUES = {
    "f": np.array([0.5, -1.5, 2.0], np.float32),
    "x": np.array([0.5, -1.5, 2.0]),
    "i": np.array([2**31 - 1, -5, 7], np.int32),
    "j": np.array([2, -1, 3], np.int32),
    "m": np.array([True, False, True]),
    "u8": np.array([200, 1, 255], np.uint8),
    "u64": np.array([2**64 - 1, 1, 2], np.uint64),
    "c": np.array([1 + 2j, -1j, 3], np.complex64),
}
DIFFERENCES = [
    # (id, expression, numfuse's outcome, numexpr's outcome)
    ("float32-times-python-float", "f * 2.5", "float32", "float64"),
    ("float32-plus-int32", "f + i", "float64", "float32"),
    ("python-int-alone", "3", "int64", "int32"),
    ("bool-times-python-int", "m * 2", "int64", "int32"),
    ("sum-of-int32", "sum(i)", "int64", "int32"),
    ("complex64-arithmetic", "c * 2", "complex64", "complex128"),
    ("abs-of-complex64", "abs(c)", "float32", "complex128"),
    ("real-of-complex64", "c.real", "float32", "float64"),
    ("conj-of-float64", "conj(x)", "float64", "complex128"),
    ("abs-of-int32", "abs(i)", "int32", "float64"),
    ("floor-of-int32", "floor(i)", "int32", "float64"),
    ("abs-of-bool", "abs(m)", "bool", "float32"),
    ("uint64-array", "u64 + 1", nf.UnsupportedDtypeError, "int64"),
    ("python-int-beyond-int32", "i + 3000000000", OverflowError, "int64"),
    ("where-python-int-beyond-uint8", "where(m, u8, 300)", OverflowError, "int32"),
    ("negative-integer-power", "i ** j", ValueError, "int32"),
    ("mean", "mean(x)", "float64", TypeError),
    ("sum-of-bool", "sum(m)", "int64", NotImplementedError),
    ("float-as-condition", "where(x, 1, 0)", "int64", NotImplementedError),
    ("comparing-complex", "c < c", "bool", NotImplementedError),
    ("maximum-of-complex", "maximum(c, c)", "complex64", NotImplementedError),
]


def _outcome(module, text):
    try:
        return module.evaluate(text, VALUES, {}).dtype.name
    except Exception as error:  # noqa: BLE001 - the class is the outcome
        return error


@pytest.mark.parametrize(
    "text, ours, theirs", [pytest.param(*row[1:], id=row[0]) for row in DIFFERENCES]
)
def test_documented_differences_from_numexpr(text, ours, theirs):
    got = _outcome(nf, text)
    if isinstance(ours, str):
        assert got == ours, got
        assert got == np.result_type(_numpy_result(text)).name  # NumPy 2's dtype
    else:
        assert isinstance(got, ours), got
    if numexpr is None:
        return
    got = _outcome(numexpr, text)
    if isinstance(theirs, str):
        assert got == theirs, got
    else:
        assert isinstance(got, theirs), got


def _numpy_result(text):
    names = {name: getattr(np, name) for name in ("sum", "abs", "floor", "maximum", "where")}
    names.update(mean=np.mean, conj=np.conj)
    with np.errstate(all="ignore"):
        return eval(text, {"__builtins__": {}}, {**names, **VALUES})  # noqa: S307 - test data


def test_int32_arithmetic_wraps_in_both():
    # Not a difference: int32 overflow wraps in numfuse, numexpr and NumPy alike.
    i = VALUES["i"]
    expected = i + np.int32(1)
    np.testing.assert_array_equal(nf.evaluate("i + 1", VALUES, {}), expected)
    np.testing.assert_array_equal(nf.evaluate("i * i", VALUES, {}), i * i)
    if numexpr is not None:
        np.testing.assert_array_equal(numexpr.evaluate("i + 1", VALUES, {}), expected)


# ----------------------------------------------------------------- numexpr's own test module
# numexpr's tests/test_numexpr.py classes run with numfuse's functions in place of numexpr's.
# The tests each class fails are listed with the reason (a documented difference, or a test
# of numexpr's internals); everything else passes. The expression matrix (test_expressions)
# is run by tests/test_evaluate.py.
NUMEXPR_CLASSES = (
    "test_evaluate",
    "test_int64",
    "test_int32_int64",
    "test_uint32_int64",
    "test_strings",
    "test_irregular_stride",
    "test_zerodim",
)
NUMEXPR_KNOWN_FAILURES = {
    # numexpr's expression objects (ConstantNode, OpNode) passed as the expression: numfuse
    # takes text only (docs/evaluate.md: its own parser, never Python objects or eval).
    "test_evaluate.test_f32_constant": "NumExpr(ConstantNode(...))",
    "test_evaluate.test_nan_constant": "NumExpr(OpNode), .constants",
    # The `constants` attribute and the register layout of numexpr's bytecode.
    "test_evaluate.test_constant_deduplication": "NumExpr(...).constants",
    "test_evaluate.test_disassemble": "numexpr's own bytecode (where_fbff, noop)",
    # evaluate('2') is int64, NumPy's Python int (docs/evaluate.md: differences from numexpr).
    "test_int32_int64.test_small_int": "a Python int is int64",
}


def test_numexprs_own_test_classes_with_numfuse(monkeypatch, pytestconfig):
    import unittest

    pytestconfig.addinivalue_line("markers", "thread_unsafe: numexpr's own marker")
    tests = pytest.importorskip("numexpr.tests.test_numexpr")
    for name in ("evaluate", "re_evaluate", "NumExpr", "disassemble", "validate"):
        if hasattr(tests, name):
            monkeypatch.setattr(tests, name, getattr(nf, name))
    outcome = {}
    loader = unittest.TestLoader()
    for class_name in NUMEXPR_CLASSES:
        suite = loader.loadTestsFromTestCase(getattr(tests, class_name))
        result = unittest.TestResult()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            suite.run(result)
        for case, trace in result.failures + result.errors:
            outcome[case.id().split("test_numexpr.")[1]] = trace.strip().splitlines()[-1]
        assert result.testsRun > 0, class_name
    failed = set(outcome)
    assert failed == set(NUMEXPR_KNOWN_FAILURES), {
        name: outcome.get(name, "passes now") for name in failed ^ set(NUMEXPR_KNOWN_FAILURES)
    }
