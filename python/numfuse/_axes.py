"""Axis arguments as NumPy and SciPy take them, and the shapes they leave."""

from __future__ import annotations

import operator

import numpy as np


def normalise_axes(axis, ndim: int) -> tuple[int, ...]:
    """SciPy/NumPy axis rules: None, an integer or a tuple of integers; sorted, non-negative."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for item in items:
        index = operator.index(item)  # TypeError for floats, lists, ...
        if not -ndim <= index < ndim:
            raise np.exceptions.AxisError(index, ndim)
        axes.append(index % ndim if ndim else index)
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(axes))


def reduced_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    """`shape` reduced over `axes` (normalised): kept as 1, or dropped."""
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)
