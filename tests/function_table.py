"""The test side of the function table (src/core/functions.hpp): one row per function.

A row holds what the table-driven tests need: the NumPy / SciPy reference (special values,
ufunc semantics, evaluate), the exact value (mpmath, for the accuracy sweeps), the exact
complex value where the type rule has complex opcodes, and the arguments that cover the
function's domain. The rest -- arity, type rule, whether it is a ufunc and its loops, its
GPU form -- comes from the C++ table itself (``numfuse._table.function_rows()``), and
tests/test_function_table.py checks that both tables name the same functions.

Tests that use it: test_function_table.py (every row through evaluate and its type rule),
test_evaluate_accuracy.py (accuracy sweep, special values, complex64), test_accuracy.py,
test_ufunc_api.py and test_properties.py (ufuncs), test_cuda.py (GPU ufuncs);
fuzz/fuzz_evaluate.py takes the names from the C++ table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np
import scipy.special

from numfuse._table import function_rows

CORE = {row.name: row for row in function_rows()}
# The one-argument ufuncs (numfuse.exp, ...) and the two-argument ones (numfuse.logaddexp).
UFUNCS = [name for name, row in CORE.items() if row.is_ufunc and row.arity == 1]
BINARY_UFUNCS = [name for name, row in CORE.items() if row.is_ufunc and row.arity == 2]
# The ufuncs with numfuse's own device kernels (numfuse.cuda.<name>).
GPU_UFUNCS = [name for name in UFUNCS if CORE[name].gpu == "device_math"]


class Sweep:
    """Random arguments for one function and dtype: the helpers a domain row uses."""

    def __init__(self, rng: np.random.Generator, dtype, n: int):
        self.rng = rng
        self.n = n
        self.info = np.finfo(dtype)
        self.big = float(self.info.max)
        self.sub = float(self.info.smallest_subnormal)
        self.eps = float(self.info.eps)
        self.f64 = dtype == np.float64
        self.lnmax = float(np.log(self.big))

    def u(self, a, b, k=None):
        return self.rng.uniform(a, b, self.n if k is None else k)

    def logu(self, lo, hi, k, signed=False):
        """Log-uniform magnitudes in [lo, hi] (random sign if `signed`)."""
        x = np.exp(self.rng.uniform(np.log(lo), np.log(hi), k))
        if signed:
            x *= self.rng.choice([-1.0, 1.0], k)
        return x


# ------------------------------------------------------------------ domains
# A one-argument domain returns a list of parts (concatenated, cast to the dtype, non-finite
# values dropped); a two-argument one returns the two argument arrays, already cast.


def _trig(s: Sweep):
    n = s.n
    halfpi = np.pi / 2 * np.arange(-40, 41)
    parts = [
        s.u(-10, 10),
        s.logu(s.sub, s.big, n, True),
        s.u(-1e6, 1e6, n // 4),
        halfpi,
        np.nextafter(halfpi, np.inf),
        np.nextafter(halfpi, -np.inf),
        [1e22, -1e22, 1e300, -1e300, 1e15, 2.0**60, 3e38, 1.5e38, 1e10, 355.0, 103993.0],
    ]
    if s.f64:
        parts.append([6381956970095103.0 * 2.0**797, 5.0e-324, 1e308, 1.7976931348623157e308])
    return parts


def _unit_interval(s: Sweep):
    n = s.n
    edge = 1 - s.logu(s.eps / 2, 0.5, n // 2)
    return [
        s.u(-1, 1),
        s.logu(s.sub, 1, n // 2, True),
        edge,
        -edge,
        [0.5, -0.5, 1.0, -1.0, 0.99, 1e-30],
    ]


def _arctan(s: Sweep):
    return [s.u(-10, 10), s.logu(s.sub, s.big, s.n, True), [1.0, -1.0, s.big, -s.big]]


def _sinh_cosh(s: Sweep):
    n = s.n
    edge = s.lnmax + np.log(2)
    return [
        s.u(-edge - 1, edge + 1),
        s.logu(s.sub, 2, n // 2, True),
        s.u(-25, 25, n // 2),
        edge - s.logu(1e-7, 2, n // 4),
        -(edge - s.logu(1e-7, 2, n // 4)),
    ]


def _tanh(s: Sweep):
    n = s.n
    return [s.u(-25, 25), s.logu(s.sub, 1, n // 2, True), s.u(-1, 1, n // 2), [19.0, 20.0, 40.0]]


def _arcsinh(s: Sweep):
    return [s.u(-10, 10), s.logu(s.sub, s.big, s.n, True), [s.big, -s.big]]


def _arccosh(s: Sweep):
    n = s.n
    return [1 + s.logu(s.eps, 1, n // 2), s.logu(1, s.big, n), s.u(1, 10, n // 2), [1.0, s.big]]


def _log2_log10(s: Sweep):
    n = s.n
    return [
        s.logu(s.sub, s.big, n),
        s.u(0.5, 2, n // 2),
        [1.0, 2.0, 10.0, 1000.0, 1024.0, s.sub, s.big],
    ]


def _log1p(s: Sweep):
    n = s.n
    return [
        s.logu(s.sub, s.big, n),
        -s.logu(s.sub, 1, n // 2),
        s.u(-0.5, 1, n // 2),
        -1 + s.logu(s.eps / 2, 0.5, n // 4),
    ]


def _expm1(s: Sweep):
    n, lnmax = s.n, s.lnmax
    return [
        s.u(-lnmax - 50, lnmax + 1),
        s.logu(s.sub, 1, n // 2, True),
        s.u(-1, 1, n // 2),
        s.u(30, 45, n // 2),
        s.u(-45, -30, n // 4),
        [lnmax, lnmax - 1e-3],
    ]


def _exp(s: Sweep):
    return [s.u(-s.lnmax - 50, s.lnmax + 1), s.u(-1, 1, s.n // 2)]


def _exp2(s: Sweep):
    n, top = s.n, 1024 if s.f64 else 128
    sub = 1075 if s.f64 else 150  # 2^x rounds to 0 below -sub; subnormal results above it
    integers = np.arange(-sub - 2, top + 2, dtype=np.float64)
    return [
        s.u(-sub - 30, top + 1),
        s.u(-1, 1, n // 2),
        s.logu(s.sub, 1, n // 4, True),
        s.u(-sub - 1, -top + 2, n // 2),  # subnormal results, rounded once
        top - s.logu(1e-12, 2, n // 4),  # next to overflow: 2^1023.9 is finite
        integers,  # exact powers of two, subnormal ones included
        integers + 0.5,
    ]


def _cbrt(s: Sweep):
    n = s.n
    return [
        s.u(-10, 10),
        s.logu(s.sub, s.big, n, True),
        s.logu(s.sub, 1e-300 if s.f64 else 1e-37, n // 4, True),  # subnormals and near
        np.arange(-30.0, 31.0) ** 3,  # exact cubes
        [s.sub, -s.sub, s.big, -s.big, 0.001, -0.001],
    ]


def _log(s: Sweep):
    return [s.logu(s.sub, s.big, s.n), s.u(0.5, 2, s.n // 2)]


def _erf(s: Sweep):
    return [s.u(-7, 7), s.logu(s.sub, 1, s.n // 2, True)]


def _erfc(s: Sweep):
    n = s.n
    # eighths of binades from 1/8 to 28 (numfuse's interval edges) and their neighbours
    edges = np.array([m / 8 * 2.0**e for e in range(-3, 5) for m in range(8, 16)])
    edges = edges[edges <= 28]
    return [
        s.u(-6, 27.3 if s.f64 else 10.1),
        s.u(-1, 1, n // 2),
        s.logu(s.sub, 1, n // 4, True),
        s.u(26.5, 27.3, n // 4) if s.f64 else s.u(9.0, 10.1, n // 4),  # subnormal results
        s.u(-6, -0.4, n // 4),  # 2 - erfc(|x|)
        edges,
        np.nextafter(edges, 0),
        np.nextafter(edges, 30),
    ]


def _expit(s: Sweep):
    n = s.n
    return [s.u(-760 if s.f64 else -110, 40), s.u(-5, 5, n // 2), s.logu(s.sub, 1, n // 4, True)]


def _sqrt(s: Sweep):
    return [s.logu(s.sub, s.big, s.n)]


def _arctan2(s: Sweep, dtype):
    n = s.n
    y, x = s.logu(s.sub, s.big, n, True), s.logu(s.sub, s.big, n, True)
    y2, x2 = s.u(-10, 10), s.u(-10, 10)
    return np.concatenate([y, y2]).astype(dtype), np.concatenate([x, x2]).astype(dtype)


def _hypot(s: Sweep, dtype):
    n = s.n
    a, b = s.logu(s.sub, s.big, n, True), s.logu(s.sub, s.big, n, True)
    c = s.u(-10, 10)
    d = c * s.logu(1e-8, 1e8, n)
    return np.concatenate([a, c]).astype(dtype), np.concatenate([b, d]).astype(dtype)


def _logaddexp(s: Sweep, dtype):
    n = s.n
    a = s.u(-800 if s.f64 else -110, 800 if s.f64 else 110)
    b = a + s.u(-40, 40, n)
    c = s.u(-3, 3, n // 2)
    # Results next to zero: e^x + e^y near 1, x from -0.69 to the smallest normals, y the
    # nearest value to log(1 - e^x) and perturbations of it (tests/test_logaddexp.py has more)
    x = -s.logu(s.sub * 2**60, 0.69, n // 2).astype(dtype)
    with np.errstate(all="ignore"):
        y = np.log(-np.expm1(x.astype(np.float64))) * (
            1 + s.u(-1, 1, n // 2) * s.logu(1e-17, 1e-3, n // 2)
        )
    y = np.minimum(y.astype(dtype), x)
    return (
        np.concatenate([a, c, x]).astype(dtype),
        np.concatenate([b, -c, y]).astype(dtype),
    )


def _logaddexp2(s: Sweep, dtype):
    n = s.n
    a = s.u(-1100 if s.f64 else -160, 1100 if s.f64 else 160)
    b = a + s.u(-60, 60, n)
    c = s.u(-4, 4, n // 2)
    # Results next to zero: 2^x + 2^y near 1, x from -0.99 to the smallest normals, y the
    # nearest value to log2(1 - 2^x) and perturbations of it (tests/test_logaddexp.py has more)
    x = -s.logu(s.sub * 2**60, 0.99, n // 2).astype(dtype)
    with np.errstate(all="ignore"):
        y = np.log2(-np.expm1(x.astype(np.float64) * np.log(2))) * (
            1 + s.u(-1, 1, n // 2) * s.logu(1e-17, 1e-3, n // 2)
        )
    y = np.minimum(y.astype(dtype), x)
    return (
        np.concatenate([a, c, x]).astype(dtype),
        np.concatenate([b, -c, y]).astype(dtype),
    )


def _power(s: Sweep, dtype):
    n = s.n
    # ordinary pairs; bases of every magnitude with |y log2 x| up to past the overflow and
    # underflow limits (subnormal results included); negative bases with integral exponents
    x1, y1 = s.u(0, 10), s.u(-10, 10)
    limit = 1100.0 if s.f64 else 160.0
    x2 = s.logu(s.sub, s.big, n)
    y2 = s.u(-1, 1, n) * limit / np.maximum(np.abs(np.log2(x2)), 1.0)
    x3 = -s.logu(0.01, 100, n // 2)
    y3 = np.round(s.u(-60, 60, n // 2))
    with np.errstate(over="ignore"):
        return (
            np.concatenate([x1, x2, x3]).astype(dtype),
            np.concatenate([y1, y2, y3]).astype(dtype),
        )


def _power_exact(a, b):
    # a real power: negative bases only ever come with integral exponents in the sweep
    return mpmath.power(a, int(b)) if a < 0 else mpmath.power(a, b)


# ------------------------------------------------------------------ references
def _expit_reference(x):
    # SciPy's expit flushes to 0 near and below -log(max) (its exp(-x) overflows); the
    # true value there is e^x (1 - e^x), a subnormal, which numfuse returns: the
    # reference is NumPy's exp where SciPy says 0.
    r = scipy.special.expit(x)
    return np.where(r == 0, np.exp(x), r)


def _expit_exact(x):
    return 1 / (1 + mpmath.exp(-x))


def _logaddexp_exact(a, b):
    # max + log1p(e^(min - max)), but log1p(expm1(max) + e^min) for max in (-1, 1): where the
    # result is near zero that keeps its digits (e^max would round to 1 for a tiny max).
    m, s = max(a, b), min(a, b)
    if abs(m) < 1:
        return mpmath.log1p(mpmath.expm1(m) + mpmath.exp(s))
    return m + mpmath.log1p(mpmath.exp(s - m))


def _logaddexp2_exact(a, b):
    # as _logaddexp_exact, in base 2: log2(1 + expm1(max ln2) + 2^min) for max in (-1, 1)
    m, s = max(a, b), min(a, b)
    ln2 = mpmath.log(2)
    if abs(m) < 1:
        return mpmath.log1p(mpmath.expm1(m * ln2) + mpmath.power(2, s)) / ln2
    return m + mpmath.log1p(mpmath.power(2, s - m)) / ln2


@dataclass(frozen=True)
class Function:
    """One function's test data; `domain` and `exact` are None for functions that are
    exact by construction (rounding, nextafter, copysign: no accuracy sweep)."""

    reference: Callable  # NumPy / SciPy, with their special values
    exact: Callable | None = None  # mpmath of real arguments
    domain: Callable | None = None  # Sweep (and the dtype for two arguments) -> arguments
    exact_complex: Callable | None = None  # mpmath of a complex argument


# fmt: off
FUNCTIONS: dict[str, Function] = {
    "sqrt":      Function(np.sqrt, mpmath.sqrt, _sqrt, mpmath.sqrt),
    "sin":       Function(np.sin, mpmath.sin, _trig, mpmath.sin),
    "cos":       Function(np.cos, mpmath.cos, _trig, mpmath.cos),
    "tan":       Function(np.tan, mpmath.tan, _trig, mpmath.tan),
    "arcsin":    Function(np.arcsin, mpmath.asin, _unit_interval, mpmath.asin),
    "arccos":    Function(np.arccos, mpmath.acos, _unit_interval, mpmath.acos),
    "arctan":    Function(np.arctan, mpmath.atan, _arctan, mpmath.atan),
    "sinh":      Function(np.sinh, mpmath.sinh, _sinh_cosh, mpmath.sinh),
    "cosh":      Function(np.cosh, mpmath.cosh, _sinh_cosh, mpmath.cosh),
    "tanh":      Function(np.tanh, mpmath.tanh, _tanh, mpmath.tanh),
    "arcsinh":   Function(np.arcsinh, mpmath.asinh, _arcsinh, mpmath.asinh),
    "arccosh":   Function(np.arccosh, mpmath.acosh, _arccosh, mpmath.acosh),
    "arctanh":   Function(np.arctanh, mpmath.atanh, _unit_interval, mpmath.atanh),
    "exp":       Function(np.exp, mpmath.exp, _exp, mpmath.exp),
    "log":       Function(np.log, mpmath.log, _log, mpmath.log),
    "log1p":     Function(np.log1p, mpmath.log1p, _log1p, lambda z: mpmath.log(1 + z)),
    "log10":     Function(np.log10, mpmath.log10, _log2_log10, mpmath.log10),
    "log2":      Function(np.log2, lambda x: mpmath.log(x, 2), _log2_log10,
                          lambda z: mpmath.log(z, 2)),
    "expm1":     Function(np.expm1, mpmath.expm1, _expm1, lambda z: mpmath.exp(z) - 1),
    "erf":       Function(scipy.special.erf, mpmath.erf, _erf),
    "erfc":      Function(scipy.special.erfc, mpmath.erfc, _erfc),
    "expit":     Function(_expit_reference, _expit_exact, _expit),
    "ceil":      Function(np.ceil),
    "floor":     Function(np.floor),
    "trunc":     Function(np.trunc),
    "round":     Function(np.round),
    "arctan2":   Function(np.arctan2, mpmath.atan2, _arctan2),
    "hypot":     Function(np.hypot, lambda a, b: mpmath.sqrt(a * a + b * b), _hypot),
    "nextafter": Function(np.nextafter),
    "copysign":  Function(np.copysign),
    "logaddexp": Function(np.logaddexp, _logaddexp_exact, _logaddexp),
    "logaddexp2": Function(np.logaddexp2, _logaddexp2_exact, _logaddexp2),
    "exp2":      Function(np.exp2, lambda x: mpmath.power(2, x), _exp2,
                          lambda z: mpmath.exp(z * mpmath.log(2))),
    # the real cube root (mpmath.cbrt of a negative number is the complex principal root)
    "cbrt":      Function(np.cbrt, lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), _cbrt),
    "power":     Function(np.power, _power_exact, _power),
    "float_power": Function(np.float_power, _power_exact, _power),
}
# fmt: on


# Arguments outside each function's domain: where NumPy returns a NaN for a non-NaN input
# (an invalid operation), finite and infinite ones since kernels make those NaNs on
# different paths. Every row of the table is here; () where no argument gives a NaN
# (test_evaluate_accuracy.py checks that claim on the special values).
INF = float("inf")
# fmt: off
INVALID: dict[str, tuple] = {
    "sqrt":    (-1.0, -0.5, -INF),       "sin":     (INF, -INF),      "cos":   (INF, -INF),
    "tan":     (INF, -INF),              "arcsin":  (2.0, -1.5, INF, -INF),
    "arccos":  (2.0, -1.5, INF, -INF),   "arctan":  (),               "sinh":  (),
    "cosh":    (),                       "tanh":    (),               "arcsinh": (),
    "arccosh": (0.5, -1.0, 0.0, -INF),   "arctanh": (2.0, -1.5, INF, -INF),
    "exp":     (),                       "log":     (-1.0, -1e-30, -INF),
    "log1p":   (-2.0, -1.5, -INF),       "log10":   (-1.0, -INF),     "log2":  (-1.0, -INF),
    "expm1":   (),                       "erf":     (),               "erfc":  (),
    "expit":   (),                       "ceil":    (),               "floor": (),
    "trunc":   (),                       "round":   (),
    # Two arguments: no pair of non-NaN arguments gives a NaN.
    "arctan2": (), "hypot": (), "nextafter": (), "copysign": (), "logaddexp": (),
    "logaddexp2": (),
    "exp2":    (),                       "cbrt":    (),
    # power: a finite negative base with a non-integral exponent (tests/test_power_ufunc.py)
    "power":   (),                       "float_power": (),
}
# fmt: on


def arguments(name: str, sweep: Sweep, dtype) -> tuple[np.ndarray, ...]:
    """The domain sweep of a table function: one array per operand."""
    domain = FUNCTIONS[name].domain
    if CORE[name].arity == 2:
        return domain(sweep, dtype)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.asarray(p, dtype=np.float64) for p in domain(sweep)]).astype(dtype)
    return (x[np.isfinite(x)],)


def numpy_names(arity: int) -> list[str]:
    """Table functions of this arity that NumPy's namespace has under the same name."""
    return [name for name, row in CORE.items() if row.arity == arity and hasattr(np, name)]
