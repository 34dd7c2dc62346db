"""JAX and Numba, the compilers a user would pick instead of numfuse: each benchmarked
function written as a user of that compiler writes it.

- JAX: ``jax.jit`` of the ``jax.numpy`` / ``jax.scipy.special`` / ``jax.nn`` function
  on the CPU (XLA), float64 enabled (``jax_enable_x64``, set when numfuse.bench.peers
  loads JAX). Inputs are the NumPy arrays every peer gets; each call ends with
  ``np.asarray(result.block_until_ready())``, the NumPy array the user goes on with.
- Numba: ``@vectorize([...float64, float32 signatures], target="parallel")`` for the
  element-wise functions, ``@njit(parallel=True)`` loops with ``prange`` for the
  reductions; ``fastmath`` stays off (as numfuse, it keeps NaN/inf semantics).

Every compiled function is built once per process (the first bind of a case), so
compilation never lands in the timed calls: JAX compiles per shape and dtype on
the first call, which the benchmark's warm-up call makes; Numba's vectorize
compiles its signatures when it is built.

Used by numfuse-bench (cases.py) and benchmarks/python/compare_evaluate.py.
"""

from __future__ import annotations

import math

import numpy as np


# Element-wise functions, every one-argument ufunc row of the function table
# (numfuse._core._function_table()): name -> (JAX attribute path under the jax module:
# jax.numpy's for NumPy's ufuncs, jax.scipy.special's for SciPy's; the math module function
# Numba compiles, the row's libm column, or None when math lacks it and the name has its own
# Numba kernel below).
def _ufuncs_from_table(arity: int) -> dict:
    from .._table import function_rows

    return {
        row.name: (
            f"{'scipy.special' if row.ufunc_of == 'scipy' else 'numpy'}.{row.name}",
            row.libm if hasattr(math, row.libm) else None,
        )
        for row in function_rows()
        if row.is_ufunc and row.arity == arity
    }


UNARY = _ufuncs_from_table(1)
# The two-argument ufunc rows (logaddexp, hypot, arctan2, ...), the same columns.
BINARY = _ufuncs_from_table(2)

_jax_cache: dict = {}
_numba_cache: dict = {}


def _attribute(module, path: str):
    for part in path.split("."):
        module = getattr(module, part)
    return module


# ------------------------------------------------------------------------ JAX


def _jax_builders(jax) -> dict:
    jnp, jsp = jax.numpy, jax.scipy.special
    builders = {
        name: (lambda path=path: _attribute(jax, path))
        for name, (path, _) in {**UNARY, **BINARY}.items()
    }
    builders.update(
        {
            "logsumexp": lambda: jsp.logsumexp,
            "softmax": lambda: jax.nn.softmax,  # over the last axis, the whole of a 1-d x
            "softmax_last_axis": lambda: lambda x: jax.nn.softmax(x, axis=-1),
            "2*a+3*b": lambda: lambda a, b: 2 * a + 3 * b,
            "exp(a)+tan(b)-sinh(c)": lambda: lambda a, b, c: jnp.exp(a) + jnp.tan(b) - jnp.sinh(c),
            "log(sum(exp(x),axis=0))": lambda: lambda x: jnp.log(jnp.sum(jnp.exp(x), axis=0)),
        }
    )
    return builders


JAX_TEXT = {
    **{
        name: f"jax.jit({path.replace('numpy.', 'jnp.')})"
        for name, (path, _) in {**UNARY, **BINARY}.items()
    },
    "logsumexp": "jax.jit(jax.scipy.special.logsumexp)",
    "softmax": "jax.jit(jax.nn.softmax)",
    "softmax_last_axis": "jax.jit(lambda x: jax.nn.softmax(x, axis=-1))",
    "2*a+3*b": "jax.jit(lambda a, b: 2*a + 3*b)",
    "exp(a)+tan(b)-sinh(c)": "jax.jit(lambda a, b, c: jnp.exp(a) + jnp.tan(b) - jnp.sinh(c))",
    "log(sum(exp(x),axis=0))": "jax.jit(lambda x: jnp.log(jnp.sum(jnp.exp(x), axis=0)))",
}


def jax_function(jax, name: str):
    """The jitted JAX function for `name` (built once), returning a JAX array."""
    if name not in _jax_cache:
        builders = _jax_builders(jax)
        if name not in builders:
            raise KeyError(f"no JAX spelling of {name!r}")
        _jax_cache[name] = jax.jit(builders[name]())
    return _jax_cache[name]


def jax_call(jax, name: str, *args):
    """A zero-argument callable: the jitted function on `args`, result as a NumPy array."""
    function = jax_function(jax, name)

    def call():
        return np.asarray(function(*args).block_until_ready())

    return call


# ---------------------------------------------------------------------- Numba

_SIGNATURES_1 = ["float64(float64)", "float32(float32)"]
_SIGNATURES_2 = ["float64(float64, float64)", "float32(float32, float32)"]
_SIGNATURES_3 = ["float64(float64, float64, float64)", "float32(float32, float32, float32)"]


def _numba_unary(numba, math_function):
    @numba.vectorize(_SIGNATURES_1, target="parallel")
    def kernel(v):
        return math_function(v)

    return kernel


def _numba_binary(numba, math_function):
    @numba.vectorize(_SIGNATURES_2, target="parallel")
    def kernel(x, y):
        return math_function(x, y)

    return kernel


def _numba_expit(numba):
    @numba.vectorize(_SIGNATURES_1, target="parallel")
    def expit(v):
        return 1.0 / (1.0 + math.exp(-v))

    return expit


def _numba_logaddexp(numba):
    @numba.vectorize(_SIGNATURES_2, target="parallel")
    def logaddexp(x, y):
        # The textbook form: max + log1p(exp(-|x - y|)) (inputs are finite here).
        return max(x, y) + math.log1p(math.exp(-abs(x - y)))

    return logaddexp


def _numba_logaddexp2(numba):
    @numba.vectorize(_SIGNATURES_2, target="parallel")
    def logaddexp2(x, y):
        # The textbook form: max + log1p(2^-|x - y|) / ln 2 (inputs are finite here).
        return max(x, y) + math.log1p(2.0 ** -abs(x - y)) * 1.4426950408889634

    return logaddexp2


def _numba_linear(numba):
    @numba.vectorize(_SIGNATURES_2, target="parallel")
    def linear(a, b):
        return 2 * a + 3 * b

    return linear


def _numba_exp_tan_sinh(numba):
    @numba.vectorize(_SIGNATURES_3, target="parallel")
    def exp_tan_sinh(a, b, c):
        return math.exp(a) + math.tan(b) - math.sinh(c)

    return exp_tan_sinh


def _numba_logsumexp(numba):
    @numba.njit(parallel=True)
    def logsumexp(x):
        m = x.max()
        s = 0.0
        for i in numba.prange(x.size):
            s += math.exp(x[i] - m)
        return m + math.log(s)

    return logsumexp


def _numba_softmax(numba):
    @numba.njit(parallel=True)
    def softmax(x):
        m = x.max()
        out = np.empty_like(x)
        s = 0.0
        for i in numba.prange(x.size):
            e = math.exp(x[i] - m)
            out[i] = e
            s += e
        for i in numba.prange(x.size):
            out[i] /= s
        return out

    return softmax


def _numba_softmax_last_axis(numba):
    @numba.njit(parallel=True)
    def softmax_last_axis(x):
        out = np.empty_like(x)
        rows = x.reshape(-1, x.shape[-1])
        flat = out.reshape(-1, x.shape[-1])
        for i in numba.prange(rows.shape[0]):
            m = rows[i].max()
            s = 0.0
            for j in range(rows.shape[1]):
                e = math.exp(rows[i, j] - m)
                flat[i, j] = e
                s += e
            for j in range(rows.shape[1]):
                flat[i, j] /= s
        return out

    return softmax_last_axis


def _numba_log_sum_exp_axis0(numba):
    @numba.njit(parallel=True)
    def log_sum_exp_axis0(x):
        out = np.empty(x.shape[1], dtype=x.dtype)
        for j in numba.prange(x.shape[1]):  # a column per iteration
            s = 0.0
            for i in range(x.shape[0]):
                s += math.exp(x[i, j])
            out[j] = math.log(s)
        return out

    return log_sum_exp_axis0


_NUMBA_BUILDERS = {
    "expit": _numba_expit,
    "logaddexp": _numba_logaddexp,
    "logaddexp2": _numba_logaddexp2,
    "logsumexp": _numba_logsumexp,
    "softmax": _numba_softmax,
    "softmax_last_axis": _numba_softmax_last_axis,
    "2*a+3*b": _numba_linear,
    "exp(a)+tan(b)-sinh(c)": _numba_exp_tan_sinh,
    "log(sum(exp(x),axis=0))": _numba_log_sum_exp_axis0,
}

NUMBA_TEXT = {
    **{
        name: f"@vectorize(target='parallel'): math.{fn}(v)"
        for name, (_, fn) in UNARY.items()
        if fn is not None
    },
    **{
        name: f"@vectorize(target='parallel'): math.{fn}(x, y)"
        for name, (_, fn) in BINARY.items()
        if fn is not None
    },
    "expit": "@vectorize(target='parallel'): 1/(1 + math.exp(-v))",
    "logaddexp": "@vectorize(target='parallel'): max(x, y) + log1p(exp(-|x - y|))",
    "logaddexp2": "@vectorize(target='parallel'): max(x, y) + log1p(2**-|x - y|) / ln 2",
    "logsumexp": "@njit(parallel=True): m = x.max(); prange sum of exp(x - m)",
    "softmax": "@njit(parallel=True): m = x.max(); prange exp(x - m), sum; divide",
    "softmax_last_axis": "@njit(parallel=True): prange over rows: max, exp, sum, divide",
    "2*a+3*b": "@vectorize(target='parallel'): 2*a + 3*b",
    "exp(a)+tan(b)-sinh(c)": "@vectorize(target='parallel'): exp(a) + tan(b) - sinh(c)",
    "log(sum(exp(x),axis=0))": "@njit(parallel=True): prange over columns: log(sum(exp))",
}


def numba_function(numba, name: str):
    """The compiled Numba function for `name` (built once; returns NumPy arrays)."""
    if name not in _numba_cache:
        if name in _NUMBA_BUILDERS:
            _numba_cache[name] = _NUMBA_BUILDERS[name](numba)
        elif name in UNARY and UNARY[name][1] is not None:
            _numba_cache[name] = _numba_unary(numba, getattr(math, UNARY[name][1]))
        elif name in BINARY and BINARY[name][1] is not None:
            _numba_cache[name] = _numba_binary(numba, getattr(math, BINARY[name][1]))
        else:
            raise KeyError(f"no Numba spelling of {name!r}")
    return _numba_cache[name]


def numba_call(numba, name: str, *args):
    """A zero-argument callable: the compiled function on `args`."""
    function = numba_function(numba, name)
    return lambda: function(*args)
