"""What makes numfuse.jit's first call cheap, checked against the slower ways it replaced.

- Repeated groups: the engine's parser takes a parenthesized group or a call whose
  characters it parsed before as that node again (the tracer writes each shared
  subexpression out at every use), and the compiler lowers a shared node once. The same
  text with the repeats spelled apart (an extra space: no reuse) gives the same program and
  the same bits; errors (nesting limits, syntax) are those of a parse without reuse.
- One cached answer per traced operation (_ops.answer): NumPy's result type, scalar-ness
  and the engine's verdict, keyed by the operation and operand types; reductions keyed by
  template and keepdims, whatever the spelling of their axis.
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse as nf

# (text, the same text with every repeat spelled apart): shared groups, shared calls,
# reductions, a where, a comparison, powers and a bytes-free mix of the language
REPEATED = [
    (
        "sin((x + 1)) * sin((x + 1)) + (x * 2) / (x * 2)",
        "sin((x + 1)) * sin((x +  1)) + (x * 2) / (x *  2)",
    ),
    (
        "where((exp((-x)) > 0.5), log1p(exp((-x))), (-log1p(exp((-x)))))",
        "where((exp((-x)) > 0.5), log1p(exp(( -x))), (-log1p(exp((- x)))))",
    ),
    (
        "(x - mean(x, axis=-1, keepdims=True)) / sqrt(mean((x - mean(x, axis=-1, "
        "keepdims=True)) ** 2, axis=-1, keepdims=True) + 1e-5)",
        "(x - mean(x, axis=-1, keepdims=True)) / sqrt(mean((x - mean(x,  axis=-1, "
        "keepdims=True)) ** 2, axis=-1,  keepdims=True) + 1e-5)",
    ),
    (
        "((x * 1.5) + 2) * ((x * 1.5) + 2) ** 2 - abs(((x * 1.5) + 2)).real",
        "((x * 1.5) + 2) * ((x * 1.5)  + 2) ** 2 - abs(((x *  1.5) + 2)).real",
    ),
]


@pytest.mark.parametrize(("text", "apart"), REPEATED)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_repeated_groups_give_the_program_and_bits_of_separate_ones(text, apart, dtype):
    x = np.random.default_rng(3).uniform(-3, 3, (7, 11)).astype(dtype)
    assert nf.disassemble(text, {"x": x}) == nf.disassemble(apart, {"x": x})
    got = nf.evaluate(text, local_dict={"x": x})
    want = nf.evaluate(apart, local_dict={"x": x})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_a_repeat_nested_past_the_limit_is_the_error_a_fresh_parse_gives():
    group = "exp(((x + 1)))"
    assert nf.evaluate(group, local_dict={"x": 0.0}) == np.exp(1.0)
    for depth in (10, 150, *range(190, 202), 250):  # the limit lies at 196 here
        deep = "(" * depth + group + ")" * depth
        fresh = _error(deep)  # the group only once: nothing to reuse
        again = _error(f"{group} + {deep}")  # the same group parsed first, then repeated
        assert (fresh is None) == (again is None), depth
        if fresh is not None:
            assert type(again) is type(fresh) and "nests too deeply" in str(again)


def _error(text):
    try:
        nf.evaluate(text, local_dict={"x": 0.0})
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return error
    return None


@pytest.mark.parametrize(
    "text", ["sin((x + 1)) + sin((x + 1)) +", "sin((x + 1)) + sin((x + 1)", "(x, (x))"]
)
def test_syntax_errors_around_repeats_are_raised_every_time(text):
    for _ in range(3):  # the engine keeps recent parses, never errors
        with pytest.raises(nf.ExpressionError):
            nf.compile(text)


def test_reduction_answers_follow_keepdims_and_any_axis_spelling():
    x = np.arange(12.0).reshape(3, 4)

    def spellings(a):
        return (
            a.sum(),
            a.sum(keepdims=True),
            np.sum(a, axis=(0, 1)),
            np.sum(a, axis=(-2, -1), keepdims=True),
            a.max(axis=-1),
            np.max(a, axis=1, keepdims=True),
            a.mean(axis=0),
            a.mean(axis=-2, keepdims=True),
        )

    got = nf.jit(spellings)(x)
    want = spellings(x)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w)


def test_operation_answers_follow_operand_types_and_python_int_values():
    def f(a, b):
        return a + 1, a + b, a * 2.5, a**2, (a > 3) & (b < 5), np.where(a > 1, a, b)

    for a, b in [
        (np.arange(6, dtype=np.int32), np.arange(6, dtype=np.int64)),
        (np.arange(6.0), np.arange(6, dtype=np.float32)),
        (np.arange(6, dtype=np.float32), np.arange(6, dtype=np.float32)),
        (np.arange(6, dtype=np.int32)[()], np.int64(4)),
        (np.arange(6, dtype=np.int32).reshape(2, 3), np.float32(4)),
    ]:
        got = nf.jit(f)(a, b)
        want = f(a, b)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)

    def g(a):
        return a + 2**40

    with pytest.raises(OverflowError):  # NumPy's error, raised again: never cached
        nf.jit(g)(np.arange(3, dtype=np.int32))
    with pytest.raises(OverflowError):
        nf.jit(g)(np.arange(3, dtype=np.int32))
    assert nf.jit(g)(np.arange(3, dtype=np.int64)).dtype == np.int64
