"""Byte strings in numfuse.evaluate: comparisons and contains() over S arrays.

The reference for ==, !=, <, <=, >, >= is NumPy's own comparison of the same arrays
(unsigned bytes, lexicographic, trailing NULs are padding); for contains(haystack,
needle) it is Python's `needle in haystack` on the elements as NumPy returns them
(trailing NULs stripped, interior NULs kept). numexpr agrees on ASCII strings without
interior NULs (it orders signed chars and searches C strings): it is compared there.
"""

from __future__ import annotations

import ast
import operator
import warnings

import numpy as np
import pytest

import numfuse as nf

OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
# Bytes that make the order interesting: NUL (padding when trailing), low and
# high values (0x80 and 0xff order after 0x7f only when compared unsigned).
ALPHABET = np.array([0, 0, 1, ord("a"), ord("b"), 0x7F, 0x80, 0xFF], dtype=np.uint8)


def random_bytes(rng, shape, itemsize, alphabet=ALPHABET):
    """An S array of `shape` with random bytes (NULs inside and at the end)."""
    count = int(np.prod(shape, dtype=np.int64))
    raw = alphabet[rng.integers(0, len(alphabet), size=(count, itemsize))]
    # Some elements short (trailing NULs) and some empty.
    lengths = rng.integers(0, itemsize + 1, size=count)
    raw[np.arange(itemsize)[None, :] >= lengths[:, None]] = 0
    return np.ascontiguousarray(raw).view(f"S{itemsize}").reshape(shape)


def contains_reference(haystack, needle):
    h, n = np.broadcast_arrays(np.asarray(haystack), np.asarray(needle))
    return np.array(
        [y in x for x, y in zip(h.ravel().tolist(), n.ravel().tolist())], dtype=bool
    ).reshape(h.shape)


def check_all_ops(a, b, **names):
    values = {"a": a, "b": b, **names}
    for op, func in OPS.items():
        got = nf.evaluate(f"a {op} b", values, {})
        expected = func(a, b)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, expected, err_msg=f"a {op} b")
    got = nf.evaluate("contains(a, b)", values, {})
    np.testing.assert_array_equal(got, contains_reference(a, b), err_msg="contains")


@pytest.mark.parametrize("itemsize_a", range(1, 18))
def test_all_itemsizes_against_numpy(itemsize_a):
    rng = np.random.default_rng(itemsize_a)
    for itemsize_b in range(1, 18):
        a = random_bytes(rng, (64,), itemsize_a)
        b = random_bytes(rng, (64,), itemsize_b)
        # Equal prefixes are where padding and lengths decide.
        b[:16] = a[:16]
        check_all_ops(a, b)


def test_padding_and_empty_strings():
    a = np.array([b"abc", b"ab", b"", b"abc\x00d", b"b", b"\x00a"], dtype="S5")
    b = np.array([b"abc\x00", b"abd", b"\x00", b"abc", b"a", b"\x00"], dtype="S4")
    check_all_ops(a, b)
    # Trailing NULs are padding; an interior NUL is data.
    assert nf.evaluate("a == b'abc'", {"a": np.array([b"abc"], "S6")}, {}).tolist() == [True]
    assert nf.evaluate("a == b'abc\\x00\\x00'", {"a": np.array([b"abc"])}, {}).tolist() == [True]
    assert nf.evaluate("a == b'ab'", {"a": np.array([b"a\x00b"])}, {}).tolist() == [False]
    assert nf.evaluate("a > b'a'", {"a": np.array([b"a\x00b"])}, {}).tolist() == [True]
    # The empty string equals all-NUL elements, sorts first, is in every string.
    s = np.array([b"", b"\x00", b"x"], dtype="S3")
    assert nf.evaluate("s == b''", {"s": s}, {}).tolist() == [True, True, False]
    assert nf.evaluate("b'' < s", {"s": s}, {}).tolist() == [False, False, True]
    assert nf.evaluate("contains(s, b'')", {"s": s}, {}).tolist() == [True] * 3
    assert nf.evaluate("contains(b'', s)", {"s": s}, {}).tolist() == [True, True, False]


def test_unsigned_order():
    a = np.array([b"\x7f", b"\x80", b"\xff", b"a\xff"])
    b = np.array([b"\x80", b"\x7f", b"\x01", b"a"])
    check_all_ops(a, b)
    assert nf.evaluate("a < b", {"a": a, "b": b}, {}).tolist() == [True, False, False, False]


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 1), (4,)), ((2, 3, 4), (1, 4)), ((), (5,)), ((5,), ()), ((0,), (1,)), ((2, 0), (2, 1))],
)
def test_broadcasting(shape_a, shape_b):
    rng = np.random.default_rng(3)
    a = random_bytes(rng, shape_a, 3)
    b = random_bytes(rng, shape_b, 6)
    check_all_ops(a, b)
    assert nf.evaluate("a == b", {"a": a, "b": b}, {}).shape == np.broadcast_shapes(
        shape_a, shape_b
    )


def test_non_contiguous_and_zero_stride_views():
    rng = np.random.default_rng(4)
    base = random_bytes(rng, (40, 30), 5)
    other = random_bytes(rng, (30, 40), 3)
    views = [
        (base[::2, ::3], other.T[::2, ::3]),
        (base[::-1], other.T),
        (base[:, 7], other[3]),
        (np.broadcast_to(base[0, :1], (40, 30)), other.T),
        (np.broadcast_to(np.array(b"ab\x00", "S3"), (40, 30)), base),
    ]
    for a, b in views:
        check_all_ops(a, b)


def test_large_arrays_cross_blocks_and_threads():
    rng = np.random.default_rng(5)
    a = random_bytes(rng, (300_001,), 7, np.array([0, ord("a"), ord("b")], np.uint8))
    b = random_bytes(rng, (300_001,), 2, np.array([0, ord("a"), ord("b")], np.uint8))
    check_all_ops(a, b)
    check_all_ops(a[::-3], b[::3])
    # A long element (more than a VM block of bytes).
    long_a = np.array([b"x" * 5000 + b"needle", b"y" * 5006], dtype="S5006")
    assert nf.evaluate("contains(a, b'needle')", {"a": long_a}, {}).tolist() == [True, False]
    assert nf.evaluate("a > b'xx'", {"a": long_a}, {}).tolist() == [True, True]


def test_constants_on_either_side():
    rng = np.random.default_rng(6)
    s = random_bytes(rng, (50,), 4, np.array([0, ord("a"), ord("b")], np.uint8))
    for constant in [b"", b"a", b"ab", b"ab\x00", b"\x00b", b"abab", b"ababab"]:
        for op, func in OPS.items():
            literal = repr(constant)
            expected = func(s, np.bytes_(constant))
            np.testing.assert_array_equal(nf.evaluate(f"s {op} {literal}", {"s": s}, {}), expected)
            np.testing.assert_array_equal(
                nf.evaluate(f"k {op} s", {"s": s, "k": constant}, {}), func(np.bytes_(constant), s)
            )
            np.testing.assert_array_equal(
                nf.evaluate(f"s {op} k", {"s": s, "k": np.bytes_(constant)}, {}), expected
            )
        np.testing.assert_array_equal(
            nf.evaluate(f"contains(s, {constant!r})", {"s": s}, {}), contains_reference(s, constant)
        )
        np.testing.assert_array_equal(
            nf.evaluate(f"contains({constant!r}, s)", {"s": s}, {}), contains_reference(constant, s)
        )


def test_constant_folding_of_two_literals():
    assert nf.evaluate("b'abc' == b'abc\\x00'") == np.True_
    assert nf.evaluate("b'abc' < b'abd'") == np.True_
    assert nf.evaluate("contains(b'xaby', b'ab')") == np.True_
    assert nf.evaluate("contains(b'xaby', b'ba')") == np.False_


def test_literal_syntax():
    s = np.array([b"A", b"'", b'"', b"\\", b"\n", b"\x00\x01", b"\xff", b"\\q"])
    cases = {
        "b'\\x41'": 0,
        'B"A"': 0,
        "b'\\101'": 0,
        "b'\\''": 1,
        'b"\'"': 1,
        "b'\\\"'": 2,
        "b'\\\\'": 3,
        "rb'\\\\'": None,  # two backslashes: no element
        "b'\\n'": 4,
        "b'\\0\\1'": 5,
        "b'\\xff'": 6,
        "b'\\q'": 7,  # unknown escapes keep their backslash, as in Python
        "rb'\\q'": 7,
        "Rb'\\q'": 7,
        "br'\\q'": 7,
        "b'''A'''": 0,
        'b"""\'"""': 1,
    }
    for literal, index in cases.items():
        got = nf.evaluate(f"s == {literal}", {"s": s}, {})
        expected = [k == index for k in range(len(s))]
        assert got.tolist() == expected, literal
        with warnings.catch_warnings():  # Python warns about the unknown escape \\q
            warnings.simplefilter("ignore")
            python_value = ast.literal_eval(literal)
        assert got.tolist() == (s == python_value).tolist(), literal


@pytest.mark.parametrize(
    "text, message",
    [
        ("s == b'abc", "unterminated bytes literal"),
        ("s == b'a\nb'", "unterminated bytes literal"),
        ("s == b'\\x4'", "invalid \\x escape"),
        ("s == b'\\777'", "octal escape out of range"),
        ("s == b'\u00e9'", "only contain ASCII"),
        ("s == xb'a'", "invalid string prefix"),
        ("s == b'a' b'b'", "unexpected"),
    ],
)
def test_literal_syntax_errors(text, message):
    with pytest.raises(SyntaxError, match=message.replace("\\", "\\\\")):
        nf.evaluate(text, {"s": np.array([b"a"])}, {})


def test_mixed_with_numeric_expressions():
    rng = np.random.default_rng(8)
    s = random_bytes(rng, (3, 200), 3, np.array([0, ord("a"), ord("b")], np.uint8))
    t = random_bytes(rng, (200,), 2, np.array([0, ord("a"), ord("b")], np.uint8))
    x = rng.standard_normal((3, 200))
    values = {"s": s, "t": t, "x": x}
    np.testing.assert_array_equal(nf.evaluate("(s == t) & (x > 0)", values, {}), (s == t) & (x > 0))
    np.testing.assert_array_equal(
        nf.evaluate("where(s < t, x, -x)", values, {}), np.where(s < t, x, -x)
    )
    np.testing.assert_array_equal(
        nf.evaluate("~contains(s, t) | (s >= b'b')", values, {}),
        ~contains_reference(s, t) | (s >= b"b"),
    )
    assert nf.evaluate("sum(s != t)", values, {}) == np.sum(s != t)
    np.testing.assert_array_equal(
        nf.evaluate("sum(s == b'a', axis=1)", values, {}), np.sum(s == b"a", axis=1)
    )
    ops = [line[0] for line in nf.disassemble("s < t", values, {})]
    assert ops == ["lt_bssw"]


def test_compiled_objects_and_out():
    rng = np.random.default_rng(9)
    compiled = nf.compile("contains(a, b) | (a == b'')")
    for itemsize_a, itemsize_b in [(3, 1), (5, 2), (3, 1)]:
        a = random_bytes(rng, (30,), itemsize_a)
        b = random_bytes(rng, (30,), itemsize_b)
        expected = contains_reference(a, b) | (a == b"")
        np.testing.assert_array_equal(compiled(a, b), expected)
        np.testing.assert_array_equal(compiled(a=a, b=b), expected)
    out = np.empty(30, bool)
    result = nf.evaluate("a <= b", {"a": a, "b": b}, {}, out=out)
    assert result is out
    np.testing.assert_array_equal(out, a <= b)
    with pytest.raises(TypeError, match="signature= takes numeric dtypes"):
        nf.compile("a == b", signature=[("a", "S3"), ("b", "S3")])
    with pytest.raises(TypeError, match="holds bytes"):
        nf.compile("a + 1", signature=[("a", np.float64)])(np.array([b"1"]))


def test_output_overlapping_an_input():
    s = np.frombuffer(bytearray(b"\x00\x01\x00\x00\x01\x01\x00\x01"), dtype="S1").copy()
    expected = s == b""
    out = s.view(np.bool_)[::-1]  # the same bytes, written in the other order
    nf.evaluate("s == b''", {"s": s}, {}, out=out)
    np.testing.assert_array_equal(out, expected)


def test_validate():
    s = np.array([b"a"])
    assert nf.validate("contains(s, b'a') & (s != b'b')", {"s": s}, {}) is None
    assert isinstance(nf.validate("s + 1", {"s": s}, {}), TypeError)


@pytest.mark.parametrize(
    "text, message",
    [
        ("s + 1", "bytes can only be compared"),
        ("-s", "bytes can only be compared"),
        ("~s", "bytes can only be compared"),
        ("sum(s)", "bytes can only be compared"),
        ("abs(s)", "bytes can only be compared"),
        ("exp(s)", "bytes can only be compared"),
        ("s.real", "bytes can only be compared"),
        ("where(s == t, s, t)", "bytes can only be compared"),
        ("where(s, 1, 2)", "bytes can only be compared"),
        ("s == 1", "bytes can only be compared with bytes, got bytes and int64"),
        ("1.5 < s", "bytes can only be compared with bytes, got float64 and bytes"),
        ("contains(x, b'a')", "contains(haystack, needle) takes bytes operands"),
        ("contains(s)", "contains() takes 2 arguments"),
        ("s == '\u00e9'", "str literals are encoded as ASCII"),
        ("contains(s, u'\\xe9')", "str literals are encoded as ASCII"),
        ("s == '\\u00e9'", "str literals are encoded as ASCII"),
        ("s == '\\N{DIGIT ONE}'", "N{...} escapes are not supported in str literals"),
        ("s == '\\200'", "str literals are encoded as ASCII"),
        ("s == '\\u00'", "truncated .u escape in a str literal"),
        ("s == f'a'", "f-strings are not supported"),
    ],
)
def test_errors(text, message):
    values = {"s": np.array([b"ab"]), "t": np.array([b"a"]), "x": np.ones(1)}
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        nf.evaluate(text, values, {})


# Operations numfuse has no instruction for on bytes, with numexpr's name for the opcode it
# lacks too (None where numexpr raises its TypeError "strings can only be operated with
# strings" instead, or fails otherwise).
UNSUPPORTED = [
    ("s + t", "add_sss"),
    ("s - t", "sub_sss"),
    ("s * t", "mul_sss"),
    ("s / t", "div_sss"),
    ("s // t", "floordiv_sss"),
    ("s % t", "mod_sss"),
    ("s ** t", "pow_sss"),
    ("s & t", "and_sss"),
    ("s << t", "lshift_sss"),
    ("-s", "neg_ss"),
    ("~s", "invert_ss"),
    ("s >= n", "ge_bsi"),
    ("s < n", "gt_bis"),
    ("s <= 1", "ge_bis"),
    ("s == 1.5", "eq_bsd"),
    ("x != s", "ne_bds"),
    ("contains(s, n)", "contains_bsi"),
    ("contains(n, n)", "contains_bii"),
    ("s * 2", None),
    ("s + n", None),
    ("+s", None),
    ("exp(s)", None),
    ("sum(s)", None),
    ("where(n > 1, s, t)", None),
]


@pytest.mark.parametrize("text, opcode", UNSUPPORTED)
def test_unsupported_operations_raise_what_numexpr_code_catches(text, opcode):
    values = {"s": np.array([b"ab"]), "t": np.array([b"a"]), "n": np.ones(1, np.int32)}
    values["x"] = np.ones(1)
    with pytest.raises(nf.UnsupportedOperationError) as caught:
        nf.evaluate(text, values, {})
    error = caught.value
    # numexpr raises NotImplementedError (a missing opcode) or TypeError: both catch it.
    assert isinstance(error, NotImplementedError) and isinstance(error, TypeError)
    assert "bytes" in str(error) and "column" in str(error)
    if opcode is not None:
        assert f"'{opcode}'" in error.args[0]
    assert type(nf.validate(text, values, {})) is nf.UnsupportedOperationError
    with pytest.raises(nf.UnsupportedOperationError):
        nf.compile(text)(**{name: values[name] for name in nf.compile(text).input_names})
    ne = pytest.importorskip("numexpr")
    if opcode is None:
        return
    with pytest.raises(NotImplementedError, match=f"'{opcode}'"):
        ne.evaluate(text, values, {})


BYTES_RESULTS = [
    pytest.param(np.array([b"ab", b"", b"a\x00b", b"\x00\x00c"]), id="1-d"),
    pytest.param(np.array([[b"ab", b"c"], [b"def", b""]]).T, id="2-d-transposed"),
    pytest.param(np.array([b"abcd", b"e", b"fg", b"h"])[::-2], id="reversed-step"),
    pytest.param(np.array([], dtype="S3"), id="empty"),
    pytest.param(b"foo\x00b\x00", id="python-bytes"),
    pytest.param(np.bytes_(b"xy"), id="numpy-bytes"),
]


@pytest.mark.parametrize("value", BYTES_RESULTS)
@pytest.mark.parametrize("text", ["s", "copy(s)", "(copy((s)))"])
def test_a_bytes_result_is_a_copy_of_the_input(value, text):
    """numexpr's evaluate("s") / evaluate("copy(s)"): the S array, every stored byte."""
    expected = np.array(value)
    for got in (nf.evaluate(text, {"s": value}, {}), nf.compile(text)(value)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()  # interior and trailing NULs kept
        assert not (isinstance(value, np.ndarray) and np.shares_memory(got, value))  # a copy
    assert nf.validate(text, {"s": value}, {}) is None
    ne = pytest.importorskip("numexpr")
    if expected.size == 0:  # numexpr 2.14 fails there: "data type must provide an itemsize"
        return
    theirs = ne.evaluate(text, {"s": value}, {})
    assert theirs.dtype == expected.dtype and theirs.tobytes() == expected.tobytes()


def test_bytes_results_with_out_order_and_literals():
    s = np.array([[b"ab", b"c"], [b"def", b""]])
    out = np.empty((2, 2), "S3")
    assert nf.evaluate("copy(s)", {"s": s}, {}, out=out) is out
    np.testing.assert_array_equal(out, s)
    wider = np.zeros((2, 2), "S5")  # S3 -> S5 is a safe cast, as in NumPy
    nf.evaluate("s", {"s": s}, {}, out=wider, casting="safe")
    np.testing.assert_array_equal(wider, s)
    with pytest.raises(TypeError, match="cannot cast the result"):
        nf.evaluate("s", {"s": s}, {}, out=np.empty((2, 2)), casting="safe")
    assert nf.evaluate("s", {"s": s}, {}, order="F").flags.f_contiguous
    literal = nf.evaluate("b'ab\\x00c'", {}, {})
    assert literal.shape == () and literal.dtype == "S4" and literal.tobytes() == b"ab\x00c"
    filled = np.empty(3, "S4")
    nf.evaluate("b'xyz'", {}, {}, out=filled)
    np.testing.assert_array_equal(filled, [b"xyz"] * 3)
    same = s.copy()
    nf.evaluate("s", {"s": same}, {}, out=same)  # out= is the input: unchanged
    np.testing.assert_array_equal(same, s)


def test_str_values_say_how_to_convert():
    u = np.array(["abc", "d"])
    with pytest.raises(TypeError, match=r"\.astype\('S'\).*np\.char\.encode"):
        nf.evaluate("u == u", {"u": u}, {})
    with pytest.raises(TypeError, match=r"variable 'k' is a str; .*k\.encode\(\)"):
        nf.evaluate("s == k", {"s": np.array([b"a"]), "k": "a"}, {})
    encoded = np.char.encode(u, "utf-8")
    np.testing.assert_array_equal(nf.evaluate("u == b'abc'", {"u": encoded}, {}), encoded == b"abc")
    np.testing.assert_array_equal(
        nf.evaluate("u == b'abc'", {"u": u.astype("S")}, {}), [True, False]
    )


def test_against_numexpr():
    ne = pytest.importorskip("numexpr")
    rng = np.random.default_rng(10)
    # ASCII without interior NULs (trailing NULs allowed): where numexpr's signed
    # order and C-string search agree with NumPy.
    ascii_letters = np.array([ord("a"), ord("b"), ord("c"), 0x7E], np.uint8)
    for itemsize_a, itemsize_b in [(1, 1), (3, 2), (5, 8), (17, 4)]:
        a = random_bytes(rng, (100,), itemsize_a, ascii_letters)
        b = random_bytes(rng, (100,), itemsize_b, ascii_letters)
        b[:20] = a[:20]
        for text in [*(f"a {op} b" for op in OPS), "contains(a, b)", "a < b'b'", "b'bc' >= a"]:
            np.testing.assert_array_equal(
                nf.evaluate(text, {"a": a, "b": b}, {}),
                ne.evaluate(text, {"a": a, "b": b}, {}),
                err_msg=text,
            )


def test_cuda_back_end_refuses_strings():
    pytest.importorskip("numfuse._cuda")
    import numfuse.cuda

    for value in [np.array([b"a"]), b"a", np.array(["a"])]:
        with pytest.raises(TypeError, match="'s' is a string; byte-string comparisons run on"):
            numfuse.cuda.evaluate("s == b'a'", {"s": value}, {})
