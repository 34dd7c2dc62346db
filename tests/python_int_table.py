"""The test side of NumPy 2's rule for Python ints (NEP 50): operations, dtypes, magnitudes
and the reference outcome, shared by test_evaluate_python_ints.py (every row at every
boundary) and test_properties.py (random magnitudes, shapes and operand orders).

NumPy 2 converts a Python int to the dtype of the operation it meets: an int that does not
fit is an OverflowError (``np.int32 array + 2**40``, ``uint8 array + -1``), one beyond
float64 too where it meets floats; comparisons with integer arrays are exact instead.
evaluate follows the rule for names, literals and compiled objects alike
(docs/evaluate.md, Python integers). Its values come from the engine's types: 8/16-bit
integers and uint32 are widened first (numexpr's rule), so the reference values are
NumPy's on the widened array, while the reference exception is NumPy's on the array as
it is.
"""

from __future__ import annotations

import numpy as np

# Every integer dtype evaluate takes, bool, and the floats (where ints beyond float64 fail).
INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]
DTYPES = [np.bool_, *INT_DTYPES, np.float32, np.float64]

# text template -> NumPy's function; {a} and {b} are the operands, in the order written.
# fmt: off
OPERATIONS = {
    "{a} + {b}": np.add, "{a} - {b}": np.subtract, "{a} * {b}": np.multiply,
    "{a} / {b}": np.true_divide, "{a} // {b}": np.floor_divide, "{a} % {b}": np.remainder,
    "{a} ** {b}": np.power, "{a} & {b}": np.bitwise_and, "{a} | {b}": np.bitwise_or,
    "{a} ^ {b}": np.bitwise_xor, "{a} << {b}": np.left_shift, "{a} >> {b}": np.right_shift,
    "{a} < {b}": np.less, "{a} <= {b}": np.less_equal, "{a} == {b}": np.equal,
    "{a} != {b}": np.not_equal, "{a} > {b}": np.greater, "{a} >= {b}": np.greater_equal,
    "maximum({a}, {b})": np.maximum, "minimum({a}, {b})": np.minimum,
    "arctan2({a}, {b})": np.arctan2,
}
# fmt: on


def boundaries() -> list[int]:
    """Python ints at every dtype's bounds and past them, beyond int64, uint64 and
    float64 (2**1024 does not convert to a float), and small ones."""
    values = {0, 1, -1, 2, -2, 2**63, 2**64, -(2**63) - 1, 2**70, -(2**70), 2**1024, -(2**1024)}
    for dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        values |= {int(info.min) - 1, int(info.min), int(info.max), int(info.max) + 1}
    return sorted(values)


def array_of(dtype) -> np.ndarray:
    """The dtype's extremes and small values."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([True, False, True])
    if dtype.kind == "f":
        return np.array([-2.5, 0.0, 1.0, 3e4], dtype)
    info = np.iinfo(dtype)
    values = {int(info.min), int(info.min) + 1, 0, 1, 2, int(info.max) - 1, int(info.max)}
    if info.min < 0:
        values.add(-1)
    return np.array(sorted(values), dtype)


def widened(x: np.ndarray) -> np.ndarray:
    """The array in the engine's type (docs/evaluate.md: int8/int16/uint8/uint16 -> int32,
    uint32 -> int64, the others unchanged)."""
    if x.dtype.kind in "iu" and x.dtype.itemsize <= 2:
        return x.astype(np.int32)
    if x.dtype == np.uint32:
        return x.astype(np.int64)
    return x


def numpy_outcome(template: str, x: np.ndarray, k: int, int_first: bool):
    """NumPy 2's outcome of the operation with the array x and the Python int k (k as
    operand a when `int_first`): the exception class it raises, or its result computed on
    the widened array (the values and dtype evaluate returns)."""
    function = OPERATIONS[template]

    def apply(array):
        with np.errstate(all="ignore"):
            return np.asarray(function(k, array) if int_first else function(array, k))

    try:
        apply(x)
    except (OverflowError, ValueError, TypeError) as error:  # TypeError: float & int
        return type(error)
    return apply(widened(x))


def expression(template: str, k_text: str, int_first: bool) -> str:
    """The operation's text with x and `k_text` (a name or a literal) as its operands."""
    a, b = (k_text, "x") if int_first else ("x", k_text)
    return template.format(a=a, b=b)


def literal(k: int) -> str:
    return f"({k})"


def same_result(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype and shape; the same values (floats: within 2 ulp, as the accuracy of
    arctan2 and of the division allows; the range rules are what is tested here)."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, expected))
    eps = float(np.finfo(got.dtype).eps)
    return bool(np.allclose(got, expected, rtol=2 * eps, atol=0.0, equal_nan=True))
