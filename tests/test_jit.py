"""numfuse.jit's behaviour: graph breaks, guards, caching, outputs, types, errors, threads.

The contract under test: a jitted function returns what the plain function returns
(values within docs/accuracy.md, dtypes, shapes, Python types, output structure), on
every call, whatever changed since the trace. The formula table is test_jit_formulas.py.
"""

from __future__ import annotations

import sys
import threading
import traceback
import types

import numpy as np
import pytest

import numfuse as nf
from numfuse._jit import GraphBreakError


def same(got, want, rtol=1e-12):
    """The structure, Python types, dtypes and shapes of `want`, values within rtol."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, rtol)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            same(got[key], want[key], rtol)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want)


def check(function, *calls, rtol=1e-12):
    """Each call's arguments through the jitted and the plain function, in turn."""
    jitted = nf.jit(function)
    for args in calls:
        with np.errstate(all="ignore"):
            want = function(*args)
        same(jitted(*args), want, rtol)
    return jitted


RNG = np.random.default_rng(3)
X = RNG.standard_normal(50)
Y = RNG.standard_normal(50)
M = RNG.standard_normal((6, 7))


# ---------------------------------------------------------------- graph breaks


@pytest.mark.parametrize(
    "function",
    [
        lambda x: np.cumsum(np.exp(x)) * 2,
        lambda x: np.sort(x * 3)[::-1] + 1,
        lambda x: (x.reshape(5, 10) @ np.ones(10)) + 1,
        lambda x: np.exp(x)[np.argsort(x)] - x,
        lambda x: np.exp(x)[3:9] * 2,  # slicing an intermediate
        lambda x: np.exp(x)[x > 0].sum(),  # boolean mask
        lambda x: np.median(x) * x,
        lambda x: np.round(x, 2) + np.floor(x),
        lambda x: x.std() + x.var(),
        lambda x: np.concatenate([x, np.exp(x)]) / 2,
        lambda x: np.divmod(x, 0.7),
        lambda x: float(np.exp(x).sum()) * x,
        lambda x: x * len(x) + x.ndim + x.size,
    ],
)
def test_graph_breaks_give_the_plain_result(function):
    jitted = check(function, (X,), (Y,), (X * 2,))
    assert "signature" in jitted.explain()


def test_graph_break_is_listed_with_its_line():
    def f(x):
        y = np.exp(x)
        z = np.cumsum(y)  # the break
        return z * 2 + y

    jitted = check(f, (X,))
    text = jitted.explain()
    assert "np.cumsum" in text and "z = np.cumsum(y)" in text
    assert "fused" in text


def test_strict_raises_naming_the_operation_and_line():
    def f(x):
        return np.cumsum(x) + 1

    jitted = nf.jit(f, strict=True)
    with pytest.raises(GraphBreakError) as info:
        jitted(X)
    message = str(info.value)
    assert "np.cumsum" in message and "return np.cumsum(x) + 1" in message
    assert f"{__file__}:" in message
    assert nf.jit.GraphBreakError is GraphBreakError


@pytest.mark.parametrize(
    "function,what",
    [
        (lambda x: x * 2 if x.sum() > 0 else x, "bool()"),
        (lambda x: x * float(x.max()), "float()"),
        (lambda x: np.asarray(x) + 1, "np.asarray"),
        (lambda x: np.exp(x)[2:] + 1, "indexing of an intermediate"),
        (lambda x: x.astype(np.int8), "astype(int8)"),
    ],
)
def test_strict_names_every_kind_of_break(function, what):
    with pytest.raises(GraphBreakError, match=r"cannot fuse") as info:
        nf.jit(function, strict=True)(X)
    assert what in str(info.value)


def test_strict_passes_fused_functions():
    def f(x, y):
        return {"a": np.exp(x - x.max()) / np.exp(x - x.max()).sum(), "b": (x.T * y[::-1]).sum()}

    check(f, (X, Y))
    jitted = nf.jit(f, strict=True)
    same(jitted(X, Y), f(X, Y))


# ---------------------------------------------------------------- branches and guards


def test_value_dependent_branches_follow_the_data():
    def f(x):
        if x.sum() > 0:
            return np.exp(x)
        if x.max() > 1:
            return x * 2
        return -x

    pos, neg, small = np.abs(X) + 0.1, -np.abs(X) + 0.5, -np.abs(X) - 2.0
    jitted = check(f, (pos,), (neg,), (small,), (pos,), (neg,), (small,))
    assert jitted.explain().count("guard") >= 2


def test_python_values_from_numpy_calls_are_rechecked():
    def f(x):
        n = int(np.count_nonzero(x > 0))
        return x * n

    check(f, (X,), (np.abs(X),), (-np.abs(X),))


def test_many_distinct_branch_values_still_give_plain_results():
    def f(x):
        return x + round(float(x[0]), 6)

    check(f, *[(X + k,) for k in range(40)])


def test_changed_global_is_seen():
    namespace = {"np": np, "SCALE": 2.0}
    exec("def f(x):\n    return np.exp(x) * SCALE\n", namespace)
    f = namespace["f"]
    jitted = nf.jit(f)
    same(jitted(X), f(X))
    namespace["SCALE"] = 3.0
    same(jitted(X), f(X))
    namespace["SCALE"] = np.full(50, 0.5)  # now an array
    same(jitted(X), f(X))
    namespace["SCALE"][:] = 7.0  # in place: the trace reads the array, not a copy
    same(jitted(X), f(X))


def test_changed_global_through_a_helper_and_a_module():
    config = types.ModuleType("jit_test_config")
    config.ALPHA = 0.5
    namespace = {"np": np, "config": config, "OFFSET": 1.0}
    exec(
        "def helper(x):\n    return x + OFFSET\ndef f(x):\n    return helper(x) * config.ALPHA\n",
        namespace,
    )
    f = namespace["f"]
    jitted = nf.jit(f)
    same(jitted(X), f(X))
    namespace["OFFSET"] = -4.0
    same(jitted(X), f(X))
    config.ALPHA = 8.0
    same(jitted(X), f(X))


def test_changed_attribute_of_a_global_object_is_seen():
    namespace = {"np": np, "cfg": types.SimpleNamespace(alpha=0.5, beta=np.ones(50))}
    exec("def f(x):\n    return x * cfg.alpha + cfg.beta\n", namespace)
    f = namespace["f"]
    jitted = nf.jit(f)
    same(jitted(X), f(X))
    namespace["cfg"].alpha = 4.0
    same(jitted(X), f(X))
    namespace["cfg"].beta = np.zeros(50)
    same(jitted(X), f(X))


def test_objects_as_arguments_run_the_plain_function():
    class Layer:
        def __init__(self, scale):
            self.scale = scale

        @nf.jit
        def forward(self, x):
            return np.tanh(x) * self.scale

    layer = Layer(2.0)
    same(layer.forward(X), np.tanh(X) * 2.0)
    layer.scale = 3.0  # an attribute the trace could not watch: no trace is kept
    same(layer.forward(X), np.tanh(X) * 3.0)
    assert "not called yet" in Layer.forward.explain()


def test_changed_closure_value_is_seen():
    scale = 2.0

    def f(x):
        return x * scale

    jitted = nf.jit(f)
    same(jitted(X), f(X))
    scale = 5.0  # noqa: F841 - read through the closure
    same(jitted(X), f(X))


def test_python_scalar_arguments_are_part_of_the_signature():
    def f(x, alpha, mode="exp"):
        return np.exp(alpha * x) if mode == "exp" else np.tanh(alpha * x)

    check(f, (X, 0.5), (X, 1.5), (X, 2), (X, 0.5, "tanh"), (X, True))
    jitted = nf.jit(f)
    same(jitted(X, 0.5, mode="tanh"), f(X, 0.5, mode="tanh"))


def test_signatures_are_cached_and_replayed():
    calls = []

    def f(x):
        calls.append(1)  # a Python side effect: runs when tracing only
        return np.exp(x) + 1

    jitted = nf.jit(f)
    for _ in range(3):
        same(jitted(X), f(X))
    assert len(calls) == 3 + 1  # the three plain calls, one trace
    jitted(M)
    jitted(X.astype(np.float32))
    assert len(calls) == 3 + 3
    assert jitted.explain().count("\nsignature ") == 3


# ---------------------------------------------------------------- outputs


def test_output_structures():
    def f(x, y):
        s = np.exp(x) + y
        return {"s": s, "pair": (s, x), "list": [x.sum(), 3, None], "again": s}

    jitted = nf.jit(f)
    result = jitted(X, Y)
    same(result, f(X, Y))
    assert result["pair"][1] is X  # an input comes back as itself
    assert result["s"] is result["again"]


def test_scalars_and_zero_d_results():
    check(lambda x: np.sum(np.exp(x)), (X,))
    check(lambda x: x.max(), (X,))
    check(lambda x: np.exp(x), (np.float64(0.5),), (np.array(0.5),))
    check(lambda x: np.where(x > 0, x, 0.0), (np.array(0.5),))
    check(lambda x: 3.0, (X,))
    check(lambda x: x, (X,))


def test_reductions_axes_and_keepdims():
    for axis in (None, 0, 1, -1, (0, 1)):
        for kd in (False, True):
            check(lambda m, a=axis, k=kd: np.sum(np.exp(m), axis=a, keepdims=k), (M,))
            check(lambda m, a=axis, k=kd: m.mean(axis=a, keepdims=k) - 1, (M,))
            check(lambda m, a=axis, k=kd: np.amax(m, axis=a, keepdims=k) * 2, (M,))
            check(lambda m, a=axis, k=kd: m.min(axis=a, keepdims=k), (M,))
            check(lambda m, a=axis, k=kd: np.prod(m, a, keepdims=k), (M,))
    check(lambda m: m.sum(axis=0, dtype=np.float32), (M,))  # dtype=: NumPy runs it


def test_numfuse_reductions_inside():
    rtol = 1e-12
    check(lambda m: nf.softmax(m, axis=1) * 2, (M,), (M * 40,), rtol=rtol)
    check(lambda m: nf.log_softmax(m, axis=0) + 1, (M,), rtol=rtol)
    check(lambda m: nf.logsumexp(m, axis=1, keepdims=True) - m, (M,), rtol=rtol)
    check(lambda m: nf.logsumexp(m, b=np.ones_like(m)), (M,), rtol=rtol)
    specials = np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0, 1]])
    check(lambda m: nf.log_softmax(m, axis=1), (specials,))
    check(lambda m: nf.softmax(m, axis=1), (specials,))


# ---------------------------------------------------------------- types


@pytest.mark.parametrize(
    "dtype", ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
)
def test_dtypes_follow_numpy(dtype):
    values = (np.arange(-3, 9) % 4).astype(dtype)
    check(lambda a: a + a, (values,))
    check(lambda a: a * 2, (values,))
    check(lambda a: np.exp(a) if a.dtype != np.bool_ else np.exp(a), (values,), rtol=1e-3)
    check(lambda a: a / 3 - 1.5, (values,), rtol=1e-3)
    check(lambda a: (a > 1) & (a < 3), (values,))
    check(lambda a: a.sum() + a.max(), (values,), rtol=1e-3)
    if values.dtype.kind != "c":  # (NumPy warns that the imaginary part is dropped)
        check(lambda a: a.astype(np.float64) * 2, (values,))
        check(lambda a: a.astype(np.float32), (values,))
    check(lambda a: a.astype(np.complex128) * 2, (values,))


def test_weak_python_scalars():
    f32 = X.astype(np.float32)
    check(lambda a: a * 2.0 + 1, (f32,), rtol=1e-6)
    check(lambda a: a * np.float64(2.0), (f32,))  # a NumPy scalar is strong
    check(lambda a: a + 2**40, (X.astype(np.int64),))
    check(lambda a: a / 2, (np.arange(5, dtype=np.int32),))


def test_numpy_errors_at_the_users_line():
    def f(x):
        return x + np.ones(3)  # cannot broadcast

    jitted = nf.jit(f)
    with pytest.raises(ValueError, match="could not be broadcast") as info:
        jitted(X)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.line == "return x + np.ones(3)  # cannot broadcast" for fr in frames)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        nf.jit(lambda a: a + 2**40)(np.arange(3, dtype=np.int32))
    with pytest.raises(np.exceptions.AxisError):
        nf.jit(lambda a: a.sum(axis=3))(X)


# ---------------------------------------------------------------- views and mutation


def test_views_of_inputs():
    check(lambda m: m.T * 2 + m.T.sum(axis=0), (M,))
    check(lambda x, y: x[::2] + y[1::2] * x[:25], (X, Y))
    check(lambda m: m[:, None, 2] * m[None, 1, :], (M,))
    check(lambda m, v: np.transpose(m)[1:4] - v[:6], (M, X))


def test_in_place_operations():
    def normalize(x):
        e = np.exp(x)
        e /= e.sum()
        return e

    check(normalize, (X,), (Y,))

    def bump(x):
        y = x * 2
        x += 1  # mutates the caller's array, as the plain function does
        return y, x

    a, b = X.copy(), X.copy()
    jitted = nf.jit(bump)
    for _ in range(2):
        same(jitted(a), bump(b))
        same(a, b)

    def assign(x):
        y = np.exp(x)
        z = y + 1
        y[0] = 100.0
        return y, z

    check(assign, (X,), (Y,))


def test_keyword_array_arguments():
    def f(x, *, w, b=0.0):
        return np.exp(x) * w + b

    jitted = nf.jit(f)
    same(jitted(X, w=Y), f(X, w=Y))
    same(jitted(X, b=1.0, w=Y * 2), f(X, b=1.0, w=Y * 2))


def test_unsupported_arguments_run_the_plain_function():
    def f(items, x):
        return [np.exp(v) for v in items] + [x]

    jitted = nf.jit(f)
    same(jitted([X, Y], X), f([X, Y], X))


def test_other_array_types_run_the_plain_function():
    torch = pytest.importorskip("torch")

    def f(x):
        return x * 2 + 1

    jitted = nf.jit(f)
    for values in (X, Y):
        tensor = torch.from_numpy(values)
        result = jitted(tensor)
        assert isinstance(result, torch.Tensor)
        np.testing.assert_array_equal(result.numpy(), values * 2 + 1)


def test_long_chains_are_split():
    def f(x):
        for _ in range(300):
            x = x * 1.0001 + 0.0001
        return x

    check(f, (X,), (Y,))

    def g(x):
        y = x
        for _ in range(30):  # text doubles each step without splitting
            y = y + y * 0.01
        return y

    check(g, (X,))


def test_decorator_forms_and_methods():
    @nf.jit
    def f(x):
        return x + 1

    @nf.jit(strict=True)
    def g(x):
        return x + 2

    class Model:
        scale = 3.0

        @nf.jit
        def forward(self, x):
            return np.tanh(x) * self.scale

    same(f(X), X + 1)
    same(g(X), X + 2)
    same(Model().forward(X), np.tanh(X) * 3.0)
    assert f.__name__ == "f"
    with pytest.raises(TypeError, match="needs a function"):
        nf.jit(3)


# ---------------------------------------------------------------- threads and back ends


def test_threads_share_one_jitted_function():
    def f(x):
        if x[0] > 0:
            return np.exp(x) / np.exp(x).sum(), x.max()
        return np.tanh(x) * 2, x.min()

    jitted = nf.jit(f)
    inputs = [RNG.standard_normal(n) for n in (10, 1000, 20000) for _ in range(3)]
    errors = []

    def work(index):
        try:
            for step in range(30):
                x = inputs[(index + step) % len(inputs)]
                same(jitted(x), f(x))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_dask_inputs_stay_lazy():
    da = pytest.importorskip("dask.array")

    def f(x):
        return np.exp(x) * 2 + x.sum()

    lazy = da.from_array(X, chunks=10)
    result = nf.jit(f)(lazy)
    assert type(result).__module__.startswith("dask")
    np.testing.assert_allclose(result.compute(), f(X), rtol=1e-12)


def test_trace_does_not_import_scipy():
    # numfuse never imports SciPy itself; scipy.special's ufuncs are recognised once
    # the user's code has imported it
    assert "numfuse._jit" in sys.modules


# ---------------------------------------------------------------- memory and the benchmark


@pytest.mark.parametrize(
    "name,shape",
    [
        ("softmax", (10**6,)),
        ("gelu_tanh", (10**6,)),
        ("black_scholes_call", (10**6,)),
        ("mixture_loglik", (10**6,)),
        ("adam_step", (10**6,)),
        ("layer_norm", (1000, 1000)),
        ("sigmoid_bce_mean", (10**6,)),
    ],
)
def test_no_temporaries_beyond_the_outputs(name, shape):
    # NumPy reports its allocations to tracemalloc: a graph break's materialised
    # intermediate (8 MB here) would show; the engine works in cache-sized blocks.
    import tracemalloc

    from jit_formulas import FORMULAS, inputs

    function, domains = next((f, d) for n, f, d in FORMULAS if n == name)
    jitted = nf.jit(function)
    args = inputs(domains, shape, np.float64)
    jitted(*args)
    tracemalloc.start()
    try:
        result = jitted(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    outputs = sum(np.asarray(r).nbytes for r in (result if isinstance(result, tuple) else [result]))
    assert peak - outputs <= 2 << 20, (name, peak - outputs)


def test_benchmark_runs():
    from numfuse.bench import jit as bench

    lines = []
    rows = bench.run(
        ["softmax", "five_ops", "twenty_ops"],
        [1000],
        ["float64"],
        0.003,
        peers=set(),
        write=lines.append,
    )
    assert len(rows) == 3 and len(lines) == 3
    assert all(row["jit_s"] > 0 and row["numpy_s"] > 0 for row in rows)
    assert "compile_s" in rows[0] and "compile_s" not in rows[2]


def test_plain_array_calls_key_in_c_and_other_calls_the_general_way():
    key = nf._core._jit_key
    a, b = np.ones((3, 4)), np.zeros((3, 4))
    assert isinstance(key(a, b), bytes) and key(a, b) == key(b, a)
    assert key(a) != key(a.astype(np.float32)) and key(a) != key(a.T) != key(a[:, :1])
    assert key(a) != key(a, a) and key() == b""
    assert key(np.ones(3, dtype=np.float64)) != key(np.ones((3, 1), dtype=np.float64))
    # not exactly an ndarray of a built-in, native-order, fixed-size dtype: the general key
    swapped = np.ones(3, dtype=np.dtype(np.float64).newbyteorder())
    structured = np.zeros(3, dtype=[("x", "f8")])
    for other in (
        swapped,
        structured,
        np.array([b"a"]),
        np.array(["a"]),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.ma.masked_array([1.0]),
        1.0,
        [1.0],
    ):
        assert key(a, other) is None, other

    @nf.jit
    def f(x, y):
        return np.exp(x) - y * 2

    # the C key and the general key of the same signature both answer, each correctly
    for x in (np.linspace(0, 1, 5), swapped * 0.5, np.ma.masked_array([0.5, 1.0])):
        y = np.arange(x.shape[0], dtype=np.float64)
        expected = np.exp(x) - y * 2
        got = f(x, y)
        assert type(got) is type(expected)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
        np.testing.assert_array_equal(np.asarray(f(x, y=y)), np.asarray(expected))
    assert "float64[5]" in f.explain()
