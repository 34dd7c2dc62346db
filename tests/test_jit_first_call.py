"""What makes numfuse.jit's first call cheap, checked against the slower ways it replaced.

- Repeated groups: the engine's parser takes a parenthesized group or a call whose
  characters it parsed before as that node again (the tracer writes each shared
  subexpression out at every use), and the compiler lowers a shared node once. The same
  text with the repeats spelled apart (an extra space: no reuse) gives the same program and
  the same bits; errors (nesting limits, syntax) are those of a parse without reuse.
- One cached answer per traced operation (_ops.answer): NumPy's result type, scalar-ness
  and the engine's verdict, keyed by the operation and operand types; reductions keyed by
  template and keepdims, whatever the spelling of their axis.
- The verdict's plan of a template's one operation, compiled from the operation without
  its text (compile_operation), is the plan of the text, and gives the same verdict.
- A fused segment's formula, compiled from the AST its trace's nodes make
  (_core._jit_formula) without printing and parsing its text, gets the plan of its text
  (over the formula table, literals of every kind and integer and bool operands), and
  the text it carries is what str.format of the templates writes.
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


# --------------------------------------------------------------- a process's first answers
# (what answer() computes on a miss: _ops._new_answer; the caches are emptied per test)

_ENGINE_DTYPES = [np.dtype(t) for t in ("?", "i4", "i8", "f4", "f8", "c8", "c16")]


@pytest.fixture
def fresh_answers(monkeypatch):
    from numfuse._jit import _ops

    for name in ("_answers", "_verdicts", "_samples", "_standins"):
        monkeypatch.setattr(_ops, name, {})
    return _ops


def _operand_lists(ufunc):
    if ufunc.nin == 1:
        return [[(d, s)] for d in _ENGINE_DTYPES for s in ((3,), (), (2, 3))]
    lists = [[(a, (3,)), (b, (2, 3))] for a in _ENGINE_DTYPES for b in _ENGINE_DTYPES]
    for d in _ENGINE_DTYPES:
        for number in (True, 1.5, 1.5 - 2j, np.float32(2.5), np.int64(3)):
            lists += [[(d, (3,)), number], [number, (d, ())]]
    return lists


def test_a_derived_answer_is_numpys_on_stand_ins(fresh_answers):
    """NumPy's dtype and scalar-ness taken from the verdict's sample call equal those of
    NumPy's call on one-element stand-ins, for every traced ufunc on every engine dtype,
    ndim and Python or NumPy number (no Python ints: those always take the stand-ins)."""
    ops = fresh_answers
    checked = 0
    for ufunc, template in list(ops._UFUNC_TEMPLATES.items()):
        for operands in _operand_lists(ufunc):
            try:
                want = ops.numpy_result(ufunc, operands)
            except Exception:  # noqa: BLE001 - NumPy refuses the types: answer() raises too
                with pytest.raises(Exception):  # noqa: B017, PT011 - NumPy's own error
                    ops.answer(template, ufunc, operands)
                continue
            dtype, scalar, _ = ops.answer(template, ufunc, operands)
            assert (dtype, scalar) == want, (ufunc.__name__, operands)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("number", [0, 1, 2, -3, 7, 2**53, -(2**53), 2**53 + 1, 2**70])
def test_python_ints_beside_floating_point_operands_answer_as_on_stand_ins(fresh_answers, number):
    """A Python int within +-2**53 beside floating-point and complex operands is sampled
    (the verdict's sample call answers NumPy's dtype and scalar-ness, _ops._answer_of);
    the answer, or NumPy's exception, is the one NumPy gives on stand-ins with the int's
    own value, for every traced ufunc, inexact dtype and ndim, on either side."""
    ops = fresh_answers
    inexact = [d for d in _ENGINE_DTYPES if d.kind in "fc"]
    checked = 0
    for ufunc, template in list(ops._UFUNC_TEMPLATES.items()):
        if ufunc.nin != 2:
            continue
        for d in inexact:
            for operands in ([(d, (3,)), number], [number, (d, ())], [(d, (2, 3)), number]):
                try:
                    want = ops.numpy_result(ufunc, operands)
                except Exception as error:  # noqa: BLE001 - NumPy's error: answer()'s too
                    with pytest.raises(type(error)):
                        ops.answer(template, ufunc, operands)
                    continue
                assert ops.answer(template, ufunc, operands)[:2] == want, (ufunc, operands)
                checked += 1
    assert checked > 100


def test_ufunc_samples_warn_only_through_the_floating_point_flags(fresh_answers):
    """Why the verdict's ufunc calls need no warnings.catch_warnings (see _ops._reference):
    with errstate silencing the flags, no traced ufunc warns on the samples of any engine
    dtype or Python number kind."""
    import warnings

    ops = fresh_answers
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error")
        for ufunc in list(ops._UFUNC_TEMPLATES):
            for operands in _operand_lists(ufunc):
                samples = [ops._sample(i, op) for i, op in enumerate(operands)]
                try:
                    ufunc(*samples)
                except Warning:
                    raise
                except Exception:  # noqa: BLE001, S112 - a refused type, not a warning
                    continue


def test_new_answers_ignore_the_callers_floating_point_errors(fresh_answers):
    """A miss runs NumPy and the engine on samples with NaN, infinities and zeros in a
    per-thread context where NumPy ignores floating-point errors (_ops._new_answer): under
    the caller's np.errstate(all="raise"), on any thread, the operations still fuse, and
    the caller's error state is the caller's again afterwards."""
    import threading

    def f(x, y):
        return np.log(x) / y + np.arctanh(x) - np.sqrt(y)

    x = np.linspace(0.1, 0.9, 9)
    y = np.linspace(1.0, 2.0, 9)
    results = {}

    def trace_new_types(name, dtype):
        with np.errstate(all="raise"):
            jitted = nf.jit(f)
            got = jitted(x.astype(dtype), y.astype(dtype))
            results[name] = (got, jitted.explain(), np.geterr())

    threads = [
        threading.Thread(target=trace_new_types, args=(str(i), dtype))
        for i, dtype in enumerate((np.float64, np.float32, np.float64, np.complex128))
    ]
    for thread in threads:
        thread.start()
    trace_new_types("main", np.float32)
    for thread in threads:
        thread.join()
    assert len(results) == 5
    for got, explain, state in results.values():
        assert set(state.values()) == {"raise"}
        assert "numpy " not in explain, explain
        assert got.shape == x.shape
    assert np.geterr()["invalid"] != "raise"


def test_a_miss_inside_the_ignoring_context_answers_as_any_other(fresh_answers):
    """answer() reached again while its thread's context is entered (a sample call that
    traces) cannot enter the context twice: it answers under np.errstate instead."""
    ops = fresh_answers
    operands = [(np.dtype("f8"), (3,)), (np.dtype("f4"), (2, 3))]
    ops._new_answer("({0} + {1})", np.add, operands)  # the thread's context exists now
    nested = ops._ignoring.context.run(ops._new_answer, "({0} / {1})", np.true_divide, operands)
    assert nested == (np.dtype("f8"), False, True)
    with pytest.raises(OverflowError):  # NumPy's error, raised again under np.errstate
        ops._ignoring.context.run(
            ops._new_answer, "({0} + {1})", np.add, [(np.dtype("i4"), (3,)), 2**40]
        )


def test_cached_samples_and_stand_ins_are_read_only(fresh_answers):
    ops = fresh_answers
    # a Python int beside an integer array takes the stand-ins (beside floats, the samples)
    nf.jit(lambda a, b, c: np.sin(a) * b + (c + 1))(
        np.arange(3.0), np.arange(3, dtype=np.float32), np.arange(3)
    )
    assert ops._samples and ops._standins
    for array in (*ops._samples.values(), *ops._standins.values()):
        assert not array.flags.writeable


def test_an_engine_that_disagrees_still_breaks_the_graph(fresh_answers, monkeypatch):
    """A verdict computed on a process's first use: an operation whose engine result
    differs from NumPy's on the samples runs in NumPy (here sin spelled as the engine's
    cos), whatever its answer's dtype came from."""
    ops = fresh_answers
    monkeypatch.setitem(ops._UFUNC_TEMPLATES, np.sin, "cos({0})")

    def f(x):
        return np.sin(x) * 2.0 + 1

    for x in (np.linspace(-3, 3, 11), np.linspace(-3, 3, 11, dtype=np.float32)):
        jitted = nf.jit(f)
        got = jitted(x)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, f(x))
        assert "numpy   np.sin" in jitted.explain()


def test_integer_powers_break_on_samples_numpy_refuses(fresh_answers):
    """int ** int raises in NumPy for negative exponents (the samples have them): the
    verdict is False, the power runs in NumPy, NumPy's error reaches the caller."""

    def f(a, b):
        return a**b + 1

    for dtype in (np.int32, np.int64):
        a = np.arange(1, 5, dtype=dtype)
        jitted = nf.jit(f)
        np.testing.assert_array_equal(jitted(a, a), f(a, a))
        assert "numpy   np.power" in jitted.explain()
        with pytest.raises(ValueError, match="negative integer powers"):
            nf.jit(f)(a, -a)
    x = np.arange(1.0, 5.0)
    jitted = nf.jit(f)
    np.testing.assert_array_equal(jitted(x, x), f(x, x))
    assert "numpy   np.power" not in jitted.explain()


# ------------------------------------------- the verdict's one C++ call (jit_verdict.cpp)

_F8 = np.array([-2.5, -1.0, -0.0, 0.5, 3.0, 7.25, np.nan, np.inf, -np.inf])


def _agrees(text, samples, reference):
    from numfuse import _core

    return _core._jit_engine_agrees(text, tuple(samples), reference)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_verdict_compares_values_as_documented(dtype):
    """Same bits, or every element within rtol 1e-4 / atol 1e-6 with NaN where NumPy has
    NaN, infinities equal and a zero's sign NumPy's: anything else is a disagreement."""
    x = _F8.astype(dtype)
    exact = np.negative(x)
    assert _agrees("(-v0)", [x], exact)
    near = exact.copy()
    near[0] *= 1 + 5e-5  # within rtol
    assert _agrees("(-v0)", [x], near)
    for index, value in [
        (0, exact[0] * (1 + 1e-3)),  # beyond rtol
        (2, -exact[2]),  # a zero's sign
        (6, 1.0),  # NaN where NumPy has a number
        (3, np.nan),  # a number where NumPy has NaN
        (7, np.inf),  # -inf against +inf
    ]:
        wrong = exact.copy()
        wrong[index] = value
        assert not _agrees("(-v0)", [x], wrong), (index, value)
    assert not _agrees("(-v0)", [x], exact.astype(np.float16))  # NumPy's dtype differs
    assert not _agrees("(-v0)", [x], exact[:-1])  # NumPy's shape differs
    assert _agrees("(-v0)", [x], exact[()] if exact.ndim == 0 else exact)


_VERDICT_CASES = {
    "(v0 + v1)": np.add,
    "(v0 * v1)": np.multiply,
    "(v0 > v1)": np.greater,
    "exp(v0)": np.exp,
    "sum(v0)": np.sum,
    "where((v0 > v1), v0, v1)": lambda a, b: np.where(a > b, a, b),
}


@pytest.mark.parametrize("text", sorted(_VERDICT_CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_the_verdict_runs_1d_samples_as_any_others(text, dtype):
    """1-d contiguous samples run through the contiguous path (execute_contiguous), strided
    and 2-d ones through execute(): the same verdicts, on NumPy's result and on a wrong one."""
    function = _VERDICT_CASES[text]
    arity = text.count("v1") and 2 or 1
    if np.dtype(dtype).kind == "i":
        flat = [np.array([-7, -1, 0, 1, 3, 100, 2, -2, 5], dtype), np.arange(9, dtype=dtype) - 4]
    else:
        flat = [_F8.astype(dtype), np.roll(_F8, 3).astype(dtype)]
    flat = flat[:arity]
    strided = [np.repeat(a, 2)[::2] for a in flat]
    tall = [a.reshape(9, 1) for a in flat]
    verdicts = set()
    with np.errstate(all="ignore"):
        for samples in (flat, strided, tall):
            reference = np.asarray(function(*samples))
            verdicts.add(_agrees(text, samples, reference))
            if reference.dtype.kind in "fciu" and reference.size:
                wrong = reference.copy()
                wrong.flat[0] = wrong.flat[0] + 1 if np.isfinite(wrong.flat[0]) else 1
                assert not _agrees(text, samples, wrong), samples
    assert len(verdicts) == 1, verdicts


def test_the_verdict_compares_complex_integer_and_bool_results():
    z = np.empty(9, np.complex128)
    z.real, z.imag = _F8, np.roll(_F8, 1)
    assert _agrees("(-v0)", [z], np.negative(z))
    wrong = np.negative(z)
    wrong[0] += 1e-2
    assert not _agrees("(-v0)", [z], wrong)
    wrong = np.negative(z)
    wrong[2] = complex(-wrong[2].real, wrong[2].imag)  # a zero real part's sign
    assert not _agrees("(-v0)", [z], wrong)
    i = np.array([-7, -1, 0, 1, 3, 100], np.int64)
    assert _agrees("(v0 + v1)", [i, 2], i + 2)
    assert not _agrees("(v0 + v1)", [i, 2], i + 3)
    assert _agrees("(v0 > v1)", [i, 2], i > 2)
    assert not _agrees("(v0 > v1)", [i, 2], i > 3)


def test_the_verdict_takes_a_full_reduction_without_numpys_ones():
    """A reduction over every axis is written without keepdims (the engine's fast path):
    its result lacks only NumPy's ones, which the segment restores by a reshape."""
    x = np.arange(6.0).reshape(3, 2, 1)
    assert _agrees("sum(v0)", [x], np.sum(x, keepdims=True))
    assert _agrees("sum(v0)", [x], np.sum(x))
    assert not _agrees("sum(v0)", [x], np.sum(x, axis=0))


def test_the_verdict_answers_false_where_the_engine_refuses():
    x = _F8
    assert not _agrees("(v0 << v1)", [x, x], np.zeros(9))  # no shift on floats
    assert not _agrees("(v0 +", [x], x)  # a syntax error
    assert not _agrees("(v0 + v1)", [x, np.ones(4)], x)  # shapes that do not broadcast


def test_verdicts_leave_the_plan_cache_alone(fresh_answers):
    """A one-operation plan is compiled for its verdict only, never cached (the trace's
    formulas have other text)."""
    from numfuse import _core

    _core._expr_clear_cache()
    assert _agrees("(v0 * v1)", [_F8, _F8], _F8 * _F8)
    nf.jit(lambda a: np.cos(a) / 3.0)(_F8)  # its verdicts, and one formula's plan
    assert _core._expr_cache_size() == 1


def test_the_verdict_takes_the_tracers_template_and_any_sequence():
    """_jit_engine_agrees writes a template's {k} as vk itself: the same verdicts as the
    text written out, from a list or a tuple of samples, on NumPy's result and a wrong one."""
    x, y = _F8, np.roll(_F8, 3)
    with np.errstate(all="ignore"):
        cases = [
            ("({0} * {1})", "(v0 * v1)", [x, y], x * y),
            ("arctan2({0}, {1})", "arctan2(v0, v1)", [x, y], np.arctan2(x, y)),
            ("where({0}, {1}, {2})", "where(v0, v1, v2)", [x > 0, x, y], np.where(x > 0, x, y)),
            ("({0} ** 2)", "(v0 ** 2)", [x], x**2),
        ]
    for template, text, samples, reference in cases:
        wrong = reference.copy()
        wrong[np.flatnonzero(np.isfinite(reference))[0]] += 1  # a finite element, off by one
        for answer in (reference, wrong):
            want = _agrees(text, samples, answer)
            assert _agrees(template, samples, answer) == want, template
            assert _core_agrees_list(template, samples, answer) == want, template
        assert _agrees(template, samples, reference)
        assert not _agrees(template, samples, wrong)


def _core_agrees_list(text, samples, reference):
    from numfuse import _core

    return _core._jit_engine_agrees(text, list(samples), reference)


def test_a_new_answers_verdict_is_the_verdict_computed_alone(fresh_answers, monkeypatch):
    """answer()'s miss path (one pass: samples, NumPy's sample call, the verdict) fuses
    exactly where the verdict computed on its own (engine_agrees, fresh caches) agrees and
    NumPy's dtype is the engine's, for the traced ufuncs on engine dtypes and numbers."""
    ops = fresh_answers
    checked = fused_count = 0
    for ufunc, template in list(ops._UFUNC_TEMPLATES.items()):
        for operands in _operand_lists(ufunc)[::4]:
            try:
                dtype, _, fused = ops.answer(template, ufunc, operands)
            except Exception:  # noqa: BLE001, S112 - NumPy refuses the types
                continue
            monkeypatch.setattr(ops, "_verdicts", {})
            alone = ops.engine_agrees(template, ufunc, operands)
            assert bool(fused) == (alone and dtype in ops.ENGINE_DTYPES), (ufunc, operands)
            checked += 1
            fused_count += bool(fused)
    assert checked > 300 and 0 < fused_count < checked


# Templates the tracer writes besides the ufuncs' (_tracer.py, _ops.py): np.where, np.clip's
# halves, real/imag, astype's, and reductions (left to the text: their keywords).
_OTHER_TEMPLATES = [
    "where({0}, {1}, {2})",
    "minimum({0}, {1})",
    "maximum({0}, {1})",
    "real({0})",
    "imag({0})",
    "copy({0})",
    "({0} != 0)",
    "sum({0})",
    "max({0}, axis=(0,), keepdims=True)",
]
# Python and NumPy numbers of every kind, Python ints of several NumPy ranges among them
_NUMBERS = (True, 2, -1, 300, 2**40, 2**70, 1.5, 1.5 - 2j, np.float32(2.5), np.int64(3))


def _verdict_operand_lists(arity):
    """Operands as answer() has them: (dtype, shape) of arrays of every engine dtype,
    1-d and 0-d, and every kind of number, in each position."""
    if arity == 1:
        return [[(d, s)] for d in _ENGINE_DTYPES for s in ((3,), ())]
    if arity == 2:
        lists = [[(a, (3,)), (b, (3,))] for a in _ENGINE_DTYPES for b in _ENGINE_DTYPES]
        for d in _ENGINE_DTYPES:
            for number in _NUMBERS:
                lists += [[(d, (3,)), number], [number, (d, ())], [number, number]]
        return lists
    lists = [
        [(np.dtype("?"), (3,)), (a, (3,)), (b, ())] for a in _ENGINE_DTYPES for b in _ENGINE_DTYPES
    ]
    for d in _ENGINE_DTYPES:
        for number in _NUMBERS:
            lists += [[(d, (3,)), number, (d, (3,))], [number, (d, ()), number]]
    return lists


def _spelled_apart(template):
    """The template's formula with a space after its first operand's opening: the same
    text to the parser, no longer one operation to the verdict (compiled from the text)."""
    return (
        template.replace("({0}", "( {0}", 1)
        if "({0}" in template
        else template.replace("{0}", " {0}", 1)
    )


def test_the_verdicts_plan_from_the_operation_is_the_plan_from_its_text(fresh_answers):
    """The verdict compiles a template's one operation without its text
    (numfuse.expr compile_operation: the parse's AST built directly, then the compiler's
    lowering and code generation): for every traced ufunc's template and the tracer's
    others, on every engine dtype, 1-d and 0-d, and every kind of Python and NumPy number,
    the plan (stages, registers, constants' bits, instructions, result type, value keying)
    or the engine's error is the one the text gives."""
    from numfuse import _core

    ops = fresh_answers
    import scipy.special  # noqa: F401 - its erf, erfc, expit templates too

    ops._add_scipy_ufuncs()
    templates = {}
    for ufunc, template in ops._UFUNC_TEMPLATES.items():
        templates[template] = ufunc.nin
    for template in _OTHER_TEMPLATES:
        templates[template] = template.count("{")
    compared = errors = 0
    for template, arity in templates.items():
        for operands in _verdict_operand_lists(arity):
            with np.errstate(all="ignore"):  # as answer() makes them
                samples = [ops._sample(i, op) for i, op in enumerate(operands)]
            samples = [
                op if type(op) is int else s for op, s in zip(operands, samples)
            ]  # Python ints by their own values (the plan may be keyed by them)
            lean = _core._jit_verdict_plan(template, samples)
            text = _core._jit_verdict_plan(_spelled_apart(template), samples)
            if lean[0] == "error":  # the same kind; a message may differ in its column
                assert text[:2] == lean[:2], (template, operands, lean, text)
            else:
                assert lean == text, (template, operands)
            compared += 1
            errors += lean[0] == "error"
    assert compared > 5000 and 0 < errors < compared


def test_the_verdict_from_the_operation_answers_as_from_the_text(fresh_answers):
    """The verdict itself (compile, run, compare with NumPy) agrees between a template's
    plan from its operation and from its text, over the ufuncs' templates on the verdict's
    samples (the plans being the same, above, this checks the run takes either)."""
    from numfuse import _core

    ops = fresh_answers
    checked = 0
    for ufunc, template in list(ops._UFUNC_TEMPLATES.items())[::3]:
        for operands in _verdict_operand_lists(ufunc.nin)[::5]:
            with np.errstate(all="ignore"):
                samples = [ops._sample(i, op) for i, op in enumerate(operands)]
                try:
                    reference = ufunc(*samples)
                except Exception:  # noqa: BLE001, S112 - NumPy refuses: no verdict
                    continue
            lean = _core._jit_engine_agrees(template, samples, reference)
            text = _core._jit_engine_agrees(_spelled_apart(template), samples, reference)
            assert lean == text, (template, operands)
            checked += 1
    assert checked > 100


def _formula_text(steps):
    """The text of _jit_formula's steps as the tracer used to write it (str.format)."""
    texts = []
    for step in steps:
        texts.append(step if type(step) is str else step[0].format(*(texts[i] for i in step[1:])))
    return texts[-1]


def _record_formulas(monkeypatch):
    """Record each fused formula's steps and each run's inputs: a list of (steps,
    compiled, values), one per run of a segment."""
    from numfuse._jit import _program, _trace

    steps_of = {}
    runs = []
    make = _trace._jit_formula

    def record(steps):
        compiled = make(steps)
        steps_of[id(compiled)] = (list(steps), compiled)  # kept alive: ids stay unique
        return compiled

    plain_run = _program.Segment.run

    def run(self, env):
        values = [env[v] if is_slot else v for is_slot, v in self.inputs]
        runs.append((steps_of[id(self.compiled)][0], self.compiled, values))
        return plain_run(self, env)

    monkeypatch.setattr(_trace, "_jit_formula", record)
    monkeypatch.setattr(_program.Segment, "run", run)
    return runs


def _assert_plans_agree(runs):
    from numfuse import _core

    compared = 0
    for steps, compiled, values in runs:
        tree, text, formula = _core._jit_formula_plans(steps, values)
        assert formula == compiled.expression == _formula_text(steps)
        assert tree[0] != "error", (formula, tree)
        assert tree == text, formula
        compared += 1
    return compared


def test_fused_formulas_plan_from_the_trace_is_the_plan_from_their_text(monkeypatch):
    """Every fused segment of the formula table (float32 and float64, 1-d and 2-d: the
    reductions' keywords, softmax's formulas, shared subexpressions), compiled from the
    AST its steps make, has the plan (stages, registers, constants' bits, instructions,
    result type) that the parse of its text gives, and its text is the templates'."""
    from jit_formulas import FORMULAS, inputs

    runs = _record_formulas(monkeypatch)
    for _name, function, domains in FORMULAS:
        for dtype in (np.float32, np.float64):
            for shape in ((50,), (3, 17)):
                with np.errstate(all="ignore"):
                    nf.jit(function)(*inputs(domains, shape, dtype))
    assert _assert_plans_agree(runs) > 4 * len(FORMULAS)


def _literals(x, n):
    big = 2**70  # beyond int64: the parser's rounded big int
    a = x * 1.5 - 2 + (-3) * x / 1e-300 + (-0.0) - 5e-324 + 1e16 * x
    b = np.where(x > -7, a, -a) ** 2 + np.maximum(x, big) - (x < 0.5) * 2.5
    return b + n * 3 + (n > 2) + np.sqrt(abs(x)) + (x != x) + True


def _integers(i, j, flag):
    k = (i & j) | (i ^ 3) << 2
    m = (k >> 1) + (-4) * i - j // 3 + i % 7
    return m * (flag | (i > j)) + ~i + (-i) + np.where(flag, i, -j)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_literal_and_integer_formulas_plan_from_the_trace_is_the_plan_from_their_text(
    monkeypatch, dtype
):
    """Python-number literals of every form the tracer writes (negative ints and floats,
    -0.0, the smallest subnormal, a float beyond int64's range, an int beyond int64, True)
    and integer and bool operands with every operator: the trace's AST gives the text's
    plan, and the results are NumPy's."""
    runs = _record_formulas(monkeypatch)
    x = np.linspace(-3, 3, 40).astype(dtype)
    n = np.arange(40, dtype=np.int64) % 5
    with np.errstate(all="ignore"):
        got = nf.jit(_literals)(x, n)
        want = _literals(x, n)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert got.dtype == want.dtype
    for itype in (np.int32, np.int64):
        i = np.arange(-20, 20, dtype=itype)
        j = (np.arange(40, dtype=itype) * 7) % 11 + 1
        flag = i % 3 == 0
        got = nf.jit(_integers)(i, j, flag)
        want = _integers(i, j, flag)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    assert _assert_plans_agree(runs) >= 3


def test_a_formula_the_tree_cannot_compile_raises_the_texts_error():
    """A compile error of a formula compiled from its steps is the text's own (column
    included): the compiled object compiles the text where the tree fails."""
    from numfuse import _core

    steps = ["v0", "v1", ("({0} + {1})", 0, 1)]
    compiled = _core._jit_formula(steps)
    assert compiled.expression == "(v0 + v1)"
    assert compiled.input_names == ["v0", "v1"]
    s = np.array([b"a", b"b"])
    with pytest.raises(Exception) as from_tree:
        compiled(s, s)
    with pytest.raises(Exception) as from_text:
        _core.CompiledExpression("(v0 + v1)")(s, s)
    assert type(from_tree.value) is type(from_text.value)
    assert str(from_tree.value) == str(from_text.value)


def test_formula_steps_walk_each_node_once_with_literals_and_constant_inputs(monkeypatch):
    """_core._jit_steps (the walk of a pending formula's nodes): a node used twice is one
    step, Python numbers are literals as the tracer writes them (negative ones in
    parentheses), a non-finite float or a complex is an input c<k>, and the result is the
    plain function's."""

    def f(x):
        a = x * 2.5 - 3
        b = a * a + a
        c = np.where(x > 5, float("nan"), b) + np.where(x > 5, float("-inf"), -1)
        return c + (x + 1j).real * (-2) + (x > 0) * True

    runs = _record_formulas(monkeypatch)
    x = np.linspace(-2, 2, 11)
    got = nf.jit(f)(x)
    np.testing.assert_array_equal(got, f(x))
    ((steps, compiled, values),) = runs
    texts = [s for s in steps if type(s) is str]
    for literal in ("2.5", "3", "(-1)", "(-2)", "True"):
        assert literal in texts, (literal, steps)
    assert sum(type(s) is tuple and s[0] == "({0} - {1})" for s in steps) == 1  # a, once
    assert sum(type(s) is tuple and s[0] == "({0} * {1})" for s in steps) == 4
    constants = [v for name, v in zip(compiled.input_names, values) if name.startswith("c")]
    assert len(constants) == 3
    assert any(type(v) is float and np.isnan(v) for v in constants)
    assert float("-inf") in constants and 1j in constants
    assert compiled.input_names.count("v0") == 1
