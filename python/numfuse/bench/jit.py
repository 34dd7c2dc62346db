"""numfuse.jit benchmark: warm calls against numfuse.compile and eager NumPy, first calls,
peak memory; JAX, torch.compile, Numba and blosc2 where installed.

Command line: ``python -m numfuse.bench.jit`` (``--help``). Each formula is written once as a
plain NumPy function (what ``numfuse.jit`` and NumPy run) and once as the expression text
``numfuse.compile`` takes; the two must agree (checked before timing). Figures are from one
run on one machine: compare ratios, not times across machines. Eager NumPy computes erf with
``scipy.special.erf`` where SciPy is installed (NumPy has no erf; numfuse.jit traces
numfuse.erf, as the formulas are written).
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from functools import partial

import numpy as np

from . import timing as _timing
from .machine import busy_cores, cpu_info, usable_cores


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def _erf(x):
    # What numfuse.jit and numfuse.compile trace; eager NumPy runs SciPy's erf instead
    # (_eager), as code written without numfuse would.
    import numfuse

    return numfuse.erf(x)


def _eager(f):
    """`f` as eager NumPy code: with SciPy's erf, what a NumPy user calls (NumPy has none),
    where SciPy is installed; numfuse.erf otherwise."""
    try:
        import scipy.special
    except ImportError:
        return f
    return _respelled(f, _erf=scipy.special.erf)


def _gelu_erf(x):
    return 0.5 * x * (1 + _erf(x * 0.7071067811865476))


def _black_scholes(s, k, t):
    d1 = (np.log(s / k) + (0.02 + 0.045) * t) / (0.3 * np.sqrt(t))
    d2 = d1 - 0.3 * np.sqrt(t)
    return s * 0.5 * (1 + _erf(d1 * 0.7071067811865476)) - k * np.exp(-0.02 * t) * 0.5 * (
        1 + _erf(d2 * 0.7071067811865476)
    )


def _mixture(x):
    a = -1.2039728043259361 - 0.5 * (x + 1) ** 2 - 0.9189385332046727
    b = -0.35667494393873245 - 2.0 * (x - 2) ** 2 + 0.6931471805599453 - 0.9189385332046727
    return np.logaddexp(a, b)


def _silu(x):
    return x / (1 + np.exp(-x))


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _haversine(a, b, c, d):
    h = np.sin((c - a) / 2) ** 2 + np.cos(a) * np.cos(c) * np.sin((d - b) / 2) ** 2
    return 12742.0 * np.arcsin(np.sqrt(h))


def _layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)


def _huber(x, y):
    r = np.abs(x - y)
    return np.where(r < 1.0, 0.5 * r * r, r - 0.5)


def _five_ops(x, y):
    return np.exp(x) * 2 + y - x * y


def _twenty_ops(x):
    a = x * 1.5 + 2
    b = np.exp(-a)
    c = np.log1p(b) * a
    d = np.sqrt(c * c + 1)
    e = np.tanh(d) - np.sin(a)
    f = e / (1 + b)
    g = np.maximum(f, 0.1) ** 2 + c
    return np.where(g > 1, g, -g) * 0.5 + np.cos(d) - np.arctan(e)


_SM = "exp(x - max(x, axis=-1, keepdims=True))"
_MU = "mean(x, axis=-1, keepdims=True)"
_D1 = "((log(s / k) + (0.02 + 0.045) * t) / (0.3 * sqrt(t)))"
# name -> (NumPy function, numfuse.compile text, variables, domain, 2-d inputs)
FORMULAS = {
    "softmax": (_softmax, f"{_SM} / sum({_SM}, axis=-1, keepdims=True)", "x", (-5, 5), False),
    "softmax_rows": (
        _softmax,
        f"{_SM} / sum({_SM}, axis=-1, keepdims=True)",
        "x",
        (-5, 5),
        True,
    ),
    "gelu_tanh": (
        _gelu_tanh,
        "0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x**3)))",
        "x",
        (-5, 5),
        False,
    ),
    "gelu_erf": (_gelu_erf, "0.5 * x * (1 + erf(x * 0.7071067811865476))", "x", (-5, 5), False),
    "black_scholes": (
        _black_scholes,
        f"s * 0.5 * (1 + erf({_D1} * 0.7071067811865476)) - k * exp(-0.02 * t) * 0.5 * "
        f"(1 + erf(({_D1} - 0.3 * sqrt(t)) * 0.7071067811865476))",
        "skt",
        (0.5, 2.0),
        False,
    ),
    "mixture_loglik": (
        _mixture,
        "logaddexp(-1.2039728043259361 - 0.5 * (x + 1)**2 - 0.9189385332046727, "
        "-0.35667494393873245 - 2.0 * (x - 2)**2 + 0.6931471805599453 - 0.9189385332046727)",
        "x",
        (-5, 5),
        False,
    ),
    "silu": (_silu, "x / (1 + exp(-x))", "x", (-5, 5), False),
    "softplus": (_softplus, "maximum(x, 0) + log1p(exp(-abs(x)))", "x", (-5, 5), False),
    "haversine": (
        _haversine,
        "12742.0 * arcsin(sqrt(sin((c - a) / 2)**2 + cos(a) * cos(c) * sin((d - b) / 2)**2))",
        "abcd",
        (-1, 1),
        False,
    ),
    "layer_norm": (
        _layer_norm,
        f"(x - {_MU}) / sqrt(mean((x - {_MU})**2, axis=-1, keepdims=True) + 1e-5)",
        "x",
        (-5, 5),
        True,
    ),
    "huber": (
        _huber,
        "where(abs(x - y) < 1.0, 0.5 * abs(x - y) * abs(x - y), abs(x - y) - 0.5)",
        "xy",
        (-3, 3),
        False,
    ),
    "five_ops": (_five_ops, "exp(x) * 2 + y - x * y", "xy", (-1, 1), False),
    "twenty_ops": (_twenty_ops, None, "x", (0, 1), False),
}


def _inputs(name, n, dtype, seed=0):
    _, _, variables, (lo, hi), two_d = FORMULAS[name]
    shape = (max(1, math.isqrt(n)), max(1, n // max(1, math.isqrt(n)))) if two_d else (n,)
    rng = np.random.default_rng(seed)
    return [(lo + (hi - lo) * rng.random(shape)).astype(dtype) for _ in variables]


def _peers(selected):
    """Optional peers: name -> (make(function) -> callable, note)."""
    found = {}

    def want(name):
        return selected is None or name in selected

    if want("jax"):
        try:
            import jax
            import jax.numpy as jnp  # noqa: F401

            jax.config.update("jax_enable_x64", True)
            found["jax.jit"] = lambda f: _jax_wrap(jax, f)
        except ImportError:
            print("note: jax.jit skipped (not installed)")
    if selected is not None and "torch.compile" in selected:  # seconds per formula: opt in
        try:
            import torch

            found["torch.compile"] = lambda f: _torch_wrap(torch, f)
        except ImportError:
            print("note: torch.compile skipped (not installed)")
    if want("numba"):
        try:
            import numba

            found["numba"] = lambda f: _numba_wrap(numba, f)
        except ImportError:
            print("note: numba skipped (not installed)")
    if want("blosc2"):
        try:
            import blosc2

            found["blosc2.jit"] = lambda f: _blosc2_wrap(blosc2, f)
        except ImportError:
            print("note: blosc2.jit skipped (not installed)")
    return found


def _numba_wrap(numba, f):
    # the NumPy function itself under numba.njit(parallel=True): formulas using what
    # Numba's NumPy support lacks (numfuse.erf, reductions with keepdims) are reported
    import math

    erf = numba.vectorize(["float64(float64)", "float32(float32)"])(lambda v: math.erf(v))
    compiled = numba.njit(parallel=True)(_respelled(f, _erf=erf))
    return compiled, "numba.njit(parallel=True) of the NumPy function"


def _blosc2_wrap(blosc2, f):
    compiled = blosc2.jit(f)
    return lambda *arrays: np.asarray(compiled(*arrays)), "blosc2.jit of the NumPy function"


def _respelled(f, **names):
    """`f` with some of its module's globals replaced (np -> jax.numpy, _erf -> a peer's
    erf): the same formula in a peer's vocabulary, without a second copy of the table."""
    import types

    return types.FunctionType(f.__code__, {**f.__globals__, **names}, f.__name__)


def _jax_wrap(jax, f):
    import jax.numpy as jnp
    import jax.scipy.special

    compiled = jax.jit(_respelled(f, np=jnp, _erf=jax.scipy.special.erf))

    def call(*arrays):
        return np.asarray(compiled(*[jnp.asarray(a) for a in arrays]))

    return call, "jax.jit of the function with np as jax.numpy, results copied back"


def _torch_wrap(torch, f):
    compiled = torch.compile(f)  # torch.compile accepts NumPy functions (traced as tensors)
    return lambda *arrays: compiled(*arrays), "torch.compile of the NumPy function, CPU"


def run(names, sizes, dtypes, budget, peers=None, write=print):
    import numfuse

    optional = _peers(peers)
    rows = []
    for name in names:
        function, text, variables, _, _ = FORMULAS[name]
        for dtype in dtypes:
            for n in sizes:
                args = _inputs(name, n, dtype)
                row = {"formula": name, "dtype": dtype, "n": n}
                gc.collect()
                start = time.perf_counter()
                jitted = numfuse.jit(function)
                result = jitted(*args)
                row["first_call_s"] = time.perf_counter() - start
                with np.errstate(all="ignore"):
                    reference = function(*args)
                _agree(name, result, reference, dtype)
                calls = {"jit_s": partial(jitted, *args)}
                calls["numpy_s"] = partial(_quiet, _eager(function), args)
                if text is not None:
                    compiled = numfuse.compile(text)
                    named = dict(zip(variables, args))
                    ordered = [named[v] for v in compiled.input_names]
                    _agree(name, compiled(*ordered), reference, dtype)
                    calls["compile_s"] = partial(compiled, *ordered)
                row.update(_interleaved(calls, budget))
                peak, out = _timing.peak_memory(partial(jitted, *args))
                row["extra_memory_bytes"] = max(0, peak - np.asarray(out).nbytes)
                for peer, make in optional.items():
                    row[peer] = _peer_times(make, function, args, budget, reference, dtype)
                rows.append(row)
                write(_format_row(row, optional))
    return rows


def _quiet(function, args):
    with np.errstate(all="ignore"):
        return function(*args)


def _interleaved(calls, budget, rounds=3):
    """Median seconds per call of each callable, the best of `rounds` rounds that take
    the callables in turn (so a burst of load on a shared machine hits them all alike),
    in forward and reversed order on alternate rounds: a callable timed right after
    eager NumPy's runs slower at 1e6, so no callable may always be the one that follows
    it."""
    best = dict.fromkeys(calls, math.inf)
    keys = list(calls)
    for r in range(rounds):
        for key in keys if r % 2 == 0 else keys[::-1]:
            median = _timing.sample(calls[key], budget / rounds)["median_s"]
            best[key] = min(best[key], median)
    return best


def _peer_times(make, function, args, budget, reference, dtype):
    try:
        start = time.perf_counter()
        call, _ = make(function)
        result = call(*args)
        first = time.perf_counter() - start
        _agree("peer", np.asarray(result), reference, dtype)
        warm = _timing.sample(partial(call, *args), budget)["median_s"]
        return {"first_call_s": first, "warm_s": warm}
    except Exception as error:  # noqa: BLE001 - a peer failing on a formula is reported
        return {"error": f"{type(error).__name__}: {error}".splitlines()[0][:60]}


def _agree(name, got, want, dtype):
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-11
    scale = max(1.0, float(np.max(np.abs(want))))
    if not np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True):
        raise AssertionError(f"{name}: numfuse and NumPy disagree beyond {tol}")


def _us(seconds):
    return f"{seconds * 1e6:10.1f}" if seconds is not None else "       n/a"


def _format_row(row, optional):
    compile_s = row.get("compile_s")
    vs_compile = f"{row['jit_s'] / compile_s:6.3f}" if compile_s else "   n/a"
    parts = [
        f"{row['formula']:15s} {row['dtype']:8s} {row['n']:>9d}",
        f"jit {_us(row['jit_s'])} us",
        f"compile {_us(compile_s)} us",
        f"numpy {_us(row['numpy_s'])} us",
        f"jit/compile {vs_compile}",
        f"numpy/jit {row['numpy_s'] / row['jit_s']:6.2f}x",
        f"first call {row['first_call_s'] * 1e3:7.2f} ms",
        f"extra memory {row['extra_memory_bytes'] / 2**20:6.2f} MiB",
    ]
    for peer in optional:
        figures = row[peer]
        if "error" in figures:
            parts.append(f"{peer}: {figures['error']}")
        else:
            parts.append(
                f"{peer} {_us(figures['warm_s'])} us (first {figures['first_call_s'] * 1e3:.0f} ms)"
            )
    return " | ".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m numfuse.bench.jit",
        description="numfuse.jit against numfuse.compile and eager NumPy (and JAX, "
        "torch.compile, Numba, blosc2 where installed): warm call, first call, peak memory.",
    )
    parser.add_argument(
        "--functions", default=",".join(FORMULAS), help=f"comma list from {', '.join(FORMULAS)}"
    )
    parser.add_argument("--sizes", default="1e3,1e6", help="comma list of element counts")
    parser.add_argument("--dtypes", default="float64", help="comma list")
    parser.add_argument(
        "--time",
        type=float,
        default=0.3,
        dest="budget",
        help="seconds of samples per measurement (default 0.3)",
    )
    parser.add_argument(
        "--peers",
        default=None,
        help="comma list from jax, torch.compile, numba, blosc2 "
        "(default: those installed, torch.compile only when named)",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.functions.split(",") if n.strip()]
    unknown = [n for n in names if n not in FORMULAS]
    if unknown:
        parser.error(f"unknown formula {unknown[0]!r}; choose from {', '.join(FORMULAS)}")
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dtypes = [d.strip() for d in args.dtypes.split(",")]
    peers = None if args.peers is None else {p.strip() for p in args.peers.split(",")}
    cpu = cpu_info()
    print(
        f"cpu: {cpu.get('model', '?')}, {usable_cores()} usable cores, "
        f"busy cores at start: {busy_cores()}"
    )
    run(names, sizes, dtypes, args.budget, peers)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
