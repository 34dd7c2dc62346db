"""Random numexpr-style expressions with a NumPy reference (differential testing).

Shared by tests/test_properties.py (driven by hypothesis) and tests/fuzz/fuzz_evaluate.py
(driven by atheris or a plain random generator): both hand in a `Chooser`, an object
with `pick(n) -> int in [0, n)` and `uniform(lo, hi) -> float`.

The grammar keeps every operation well conditioned (no sqrt or log near 0, divisions by
1 + r*r), and the reference tracks the largest intermediate magnitude M, so a fixed
error budget of a few ULP per operation turns into the tolerance K * eps * (1 + M)**2
(exp amplifies an absolute error of its argument by its result). `where` conditions
whose two sides are closer than that tolerance are ambiguous in floating point: those
elements are left out of the comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VARIABLES = ("x", "y", "z")

UNARY = {
    "neg": ("(-{})", np.negative),
    "exp": ("exp({})", np.exp),
    "sin": ("sin({})", np.sin),
    "cos": ("cos({})", np.cos),
    "tanh": ("tanh({})", np.tanh),
    "arctan": ("arctan({})", np.arctan),
    "abs": ("abs({})", np.abs),
    "sqrt1": ("sqrt(abs({}) + 1)", lambda v: np.sqrt(np.abs(v) + 1)),
    "log1p": ("log1p(abs({}))", lambda v: np.log1p(np.abs(v))),
    "square": ("({}) ** 2", np.square),
}

BINARY = {
    "add": ("({} + {})", np.add),
    "sub": ("({} - {})", np.subtract),
    "mul": ("({} * {})", np.multiply),
    "div": ("({} / (1 + ({}) ** 2))", lambda a, b: a / (1 + b * b)),
}


@dataclass
class Reference:
    value: np.ndarray  # float64
    magnitude: float  # largest |intermediate|
    ambiguous: np.ndarray  # bool: where-conditions too close to call


def random_tree(chooser, depth: int, constants: bool = True):
    """A tree of tuples: ('var', name) | ('const', float) | ('un', op, a) |
    ('bin', op, a, b) | ('where', a, b, c, d) meaning where(a > b, c, d)."""
    leaf_only = depth <= 0
    kind = chooser.pick(2 if leaf_only else 5)
    if kind == 0 or (kind == 1 and not constants):
        return ("var", VARIABLES[chooser.pick(len(VARIABLES))])
    if kind == 1:
        return ("const", round(chooser.uniform(-4.0, 4.0), 3))
    if kind == 2:
        op = sorted(UNARY)[chooser.pick(len(UNARY))]
        return ("un", op, random_tree(chooser, depth - 1, constants))
    if kind == 3:
        op = sorted(BINARY)[chooser.pick(len(BINARY))]
        return (
            "bin",
            op,
            random_tree(chooser, depth - 1, constants),
            random_tree(chooser, depth - 1, constants),
        )
    return ("where",) + tuple(random_tree(chooser, depth - 1, constants) for _ in range(4))


def text_of(tree) -> str:
    kind = tree[0]
    if kind == "var":
        return tree[1]
    if kind == "const":
        return repr(float(tree[1]))
    if kind == "un":
        return UNARY[tree[1]][0].format(text_of(tree[2]))
    if kind == "bin":
        return BINARY[tree[1]][0].format(text_of(tree[2]), text_of(tree[3]))
    a, b, c, d = (text_of(t) for t in tree[1:])
    return f"where({a} > {b}, {c}, {d})"


def reference(tree, values: dict, shape, tolerance_of) -> Reference:
    """float64 NumPy evaluation; tolerance_of(magnitude) is the comparison tolerance."""
    kind = tree[0]
    if kind == "var":
        v = np.broadcast_to(np.asarray(values[tree[1]], dtype=np.float64), shape)
        return Reference(v, float(np.max(np.abs(v), initial=0.0)), np.zeros(shape, bool))
    if kind == "const":
        v = np.full(shape, float(tree[1]))
        return Reference(v, abs(float(tree[1])), np.zeros(shape, bool))
    if kind == "un":
        a = reference(tree[2], values, shape, tolerance_of)
        with np.errstate(all="ignore"):
            v = UNARY[tree[1]][1](a.value)
        return Reference(v, max(a.magnitude, float(np.max(np.abs(v), initial=0.0))), a.ambiguous)
    if kind == "bin":
        a = reference(tree[2], values, shape, tolerance_of)
        b = reference(tree[3], values, shape, tolerance_of)
        with np.errstate(all="ignore"):
            v = BINARY[tree[1]][1](a.value, b.value)
        magnitude = max(a.magnitude, b.magnitude, float(np.max(np.abs(v), initial=0.0)))
        return Reference(v, magnitude, a.ambiguous | b.ambiguous)
    a, b, c, d = (reference(t, values, shape, tolerance_of) for t in tree[1:])
    magnitude = max(r.magnitude for r in (a, b, c, d))
    close = np.abs(a.value - b.value) <= tolerance_of(max(a.magnitude, b.magnitude))
    v = np.where(a.value > b.value, c.value, d.value)
    ambiguous = (
        a.ambiguous | b.ambiguous | close | np.where(a.value > b.value, c.ambiguous, d.ambiguous)
    )
    return Reference(v, magnitude, ambiguous)


def working_dtype(values: dict, used) -> np.dtype:
    """The least precise type any intermediate may be computed in: a float32 subtree
    stays float32 (NumPy's rules; constants are weak) even when the result is float64."""
    if any(np.asarray(values[n]).dtype == np.float32 for n in used):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def tolerance(dtype, magnitude: float) -> float:
    return 32.0 * float(np.finfo(dtype).eps) * (1.0 + magnitude) ** 2


def compare(got: np.ndarray, ref: Reference, dtype) -> str | None:
    """None when `got` matches the reference, else a description of the worst element.
    `dtype`: the working dtype (see working_dtype)."""
    if ref.magnitude > 1e3 or not np.all(np.isfinite(ref.value)):
        return None  # out of the well-conditioned domain: nothing to compare
    tol = tolerance(dtype, ref.magnitude)
    error = np.abs(got.astype(np.float64) - ref.value)
    error = np.where(ref.ambiguous, 0.0, error)
    bad = ~(error <= tol)  # NaN in got counts as bad
    if np.any(bad):
        k = np.unravel_index(
            np.argmax(np.where(bad, np.nan_to_num(error, nan=np.inf), -1)), got.shape
        )
        return f"at {k}: got {got[k]!r}, reference {ref.value[k]!r}, tolerance {tol:.3g}"
    return None
