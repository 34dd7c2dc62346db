"""numexpr behaviour a switching user relies on: exception types, NumExpr.run, results
broadcast into out=, and no user array kept alive by a call."""

from __future__ import annotations

import gc
import re
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
