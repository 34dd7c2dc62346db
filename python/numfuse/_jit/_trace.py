"""Tracing: stand-in arrays that record what the user's function does with them.

A ``Tracer`` is a node of the pending formula (an engine template over other nodes,
Python-number literals and constants) or a leaf holding a slot of ``env``. NumPy reaches it
through its protocols (``__array_ufunc__``, ``__array_function__``, NEP 13/18), Python
through its operators, numfuse's reductions through the ``_dispatch`` back-end hook. The
trace runs while it records: the call being traced gets its result from the same steps
later calls replay. What the engine cannot fuse runs in NumPy on the materialised operands
(a graph break) and the trace continues on its result. The tracer only records and routes;
types come from NumPy, code from the engine (see _ops).
"""

from __future__ import annotations

import linecache
import os
import sys
import weakref

import numpy as np

from .. import _core
from . import _ops
from ._errors import GraphBreakError
from ._program import Eager, Guard, Opaque, Ref, Return, Segment, fill, store, value_key
from ._tracer import Tracer

_NUMFUSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(np.__file__) + os.sep
_NO_CONST = _ops.NO_CONST
_PYTHON_SCALARS = _ops.PYTHON_SCALARS
# A fused formula longer or deeper than this is cut: its largest operand is materialised
# first (the engine's limits are 100000 characters and 400 levels of nesting).
_MAX_TEXT = 20000
_MAX_DEPTH = 300
_new_tracer = Tracer.__new__
# a fused formula: its steps and inputs from its nodes, then compiled from the steps
# (src/python/jit_formula.cpp)
_jit_steps = _core._jit_steps
_jit_formula = _core._jit_formula


def user_origin() -> str:
    """``file:line: source`` of the innermost frame outside numfuse and NumPy."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith((_NUMFUSE_DIR, _NUMPY_DIR)):
        frame = frame.f_back
    if frame is None:
        return ""
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    return f"{filename}:{line}: {source}" if source else f"{filename}:{line}"


class Trace:
    """One recording: its steps in order, the concrete ``env`` they fill as they run."""

    def __init__(self, strict: bool, name: str):
        self.strict = strict
        self.name = name
        self.items = []  # steps, (Guard, key) pairs, then a Return or Opaque
        self.env = []
        self.pending = []  # weak references to fused nodes, computed or not
        self.foreign = False  # a dask array among the inputs

    # -- slots and leaves

    def new_slot(self, value) -> int:
        self.env.append(value)
        return len(self.env) - 1

    def leaf(self, value, slot=None, const=_NO_CONST) -> Tracer:
        node = Tracer(self)
        node.dtype = np.dtype(value.dtype)
        node.shape = tuple(value.shape)
        node.scalar = isinstance(value, np.generic)
        node.slot = self.new_slot(value) if slot is None and const is _NO_CONST else slot
        node.const = const
        return node

    def input(self, value) -> Tracer:
        if not isinstance(value, (np.ndarray, np.generic)):
            self.foreign = True
        return self.leaf(value)

    def operand(self, value):
        """A fused operand: a Tracer, a Python number, or None (not fusable)."""
        if type(value) is Tracer:
            if value.trace is not self:
                raise ValueError(
                    "numfuse.jit: an array traced by another call leaked into this one"
                )
            return value
        if type(value) in _ops.PYTHON_SCALARS:
            return value
        if isinstance(value, (np.ndarray, np.generic)):
            return self.leaf(value, const=value)
        return None

    # -- fusing

    def fused(self, template, call, operands, shape=None, what="", key_call=None):
        """A pending node `template`(operands), or the NumPy result of `call` when the
        engine does not compute it as NumPy does (a graph break). `key_call`: a hashable
        that stands for `call` in the cache of answers (see _ops.answer)."""
        nodes = []
        # operand descriptions for NumPy and the verdict: (dtype, shape) of an array, the
        # value of a Python number or of a 0-d constant (checked with its own value)
        descs = []
        shapes = []
        # text length and nesting of the formula written out (leaves count 0): a template
        # nests its operands at most one level per parenthesis it opens (a bound, exact for
        # the templates of one call or operator), plus one; summed in the same pass
        textsize = len(template)
        deepest = 0
        for value in operands:
            if type(value) is Tracer and value.trace is self:
                node = value
            elif type(value) in _PYTHON_SCALARS:  # operand()'s answer, without its call
                nodes.append(value)
                descs.append(value)
                continue
            else:
                node = self.operand(value)
                if node is None:
                    return self.eager(call, operands, {}, f"{what} of {_types(operands)}")
            nodes.append(node)
            if type(node) is not Tracer:
                descs.append(node)
                continue
            textsize += node.textsize
            if node.depth > deepest:
                deepest = node.depth
            if node.const is not _NO_CONST and not node.shape:
                descs.append(node.const)
            else:
                descs.append((node.dtype, node.shape))
                shapes.append(node.shape)
        if shape is None:
            # every operand of one shape (the common case), without a call
            shape = shapes[0] if shapes and shapes.count(shapes[0]) == len(shapes) else None
            if shape is None:
                shape = _ops.broadcast_shape(shapes)
                if shape is None:
                    _ops.numpy_result(call, descs)  # NumPy's broadcasting error, user's line
        dtype, scalar, fuse = _ops.answer(template, call, descs, key_call)
        if not fuse:
            return self.eager(call, operands, {}, f"{what} on {_types(operands)}")
        node = _new_tracer(Tracer)  # Tracer(self)'s fields, set here without its __init__
        node.trace = self
        node.slot = None
        node.const = _NO_CONST
        node.template = template
        node.args = nodes
        node.dtype = dtype
        node.scalar = scalar
        node.shape = shape
        node.textsize = textsize
        node.depth = depth = template.count("(") + 1 + deepest
        if textsize > _MAX_TEXT or depth > _MAX_DEPTH:
            sub = [
                n for n in nodes if type(n) is Tracer and n.slot is None and n.const is _NO_CONST
            ]
            self.materialize([max(sub, key=lambda n: n.textsize)])
            return self.fused(template, call, operands, shape, what, key_call)
        self.pending.append(weakref.ref(node))
        return node

    def reduction(self, name, call, value, axis, keepdims):
        node = self.operand(value)
        if type(node) is not Tracer:
            return self.eager(call, (value,), {}, f"{name} of {_types((value,))}")
        if name in ("softmax", "log_softmax"):
            axes = _ops.normalize_axes(axis, node.ndim)
            shape = node.shape
        else:
            axes = _ops.normalize_axes(axis, node.ndim)
            shape = _ops.reduced_shape(node.shape, axes, keepdims)
        template = _ops.reduction_template(name, axes, keepdims, node.ndim)
        # NumPy's answer depends on the template (name, axes, ndim), keepdims and the
        # operand, not on how axis was spelled: one cache entry for every spelling
        return self.fused(template, call, (node,), shape, name, ("reduction", keepdims))

    # -- running things

    def materialize(self, nodes) -> None:
        """Compute pending `nodes` now (each one fused expression) into slots."""
        for node in nodes:
            if node.slot is not None or node.const is not _NO_CONST:
                continue
            steps, inputs = _jit_steps(node, _NO_CONST, Tracer)
            slot = self.new_slot(None)
            step = Segment(_jit_formula(steps), inputs, slot, node.scalar, self.foreign, None)
            step.run(self.env)
            if np.shape(self.env[slot]) != node.shape:  # a full reduction's missing ones
                step.shape = node.shape
                step.run(self.env)
            self.items.append(step)
            node.slot = slot
            node.args = ()
            node.textsize = node.depth = 0  # a leaf now

    def _check_break(self, reason: str) -> str:
        origin = user_origin()
        if self.strict:
            raise GraphBreakError(
                f"numfuse.jit(strict=True) cannot fuse {reason} in {self.name}\n  at {origin}"
            )
        return origin

    def eager(self, function, args, kwargs, reason, view=False):
        """Run `function` in NumPy on the materialised arguments; trace its result."""
        leaves = []
        args_t = _flatten(args, leaves)
        kwargs_t = _flatten(kwargs, leaves)
        if view and any(n.slot is None and n.const is _NO_CONST for n in leaves):
            view = False
            reason = f"{reason} of an intermediate"
        origin = "" if view else self._check_break(reason)
        self.materialize(leaves)
        step = Eager(
            function,
            _refs(args_t, leaves),
            _refs(kwargs_t, leaves),
            None if view else reason,
            origin,
        )
        result = step.call(self.env)
        python_values = []
        outs, traced = self._wrap(result, python_values)
        step.outs = outs
        store(outs, result, self.env)
        self.items.append(step)
        if python_values:  # Python objects the code may look at: the next call checks them
            self._guard_python(step, python_values, origin)
        return traced

    def _wrap(self, value, python_values):
        """(slot template, traced value) of a NumPy result: arrays become leaves."""
        kind = type(value)
        if kind in (tuple, list):
            pairs = [self._wrap(v, python_values) for v in value]
            return kind(p[0] for p in pairs), kind(p[1] for p in pairs)
        if isinstance(value, (np.ndarray, np.generic)) or _is_dask(value):
            node = self.leaf(value, slot=len(self.env))
            self.env.append(None)
            return Ref(node.slot), node
        python_values.append(value)
        return None, value

    def _guard_python(self, step, values, origin):
        # The step's Python outputs are re-read on replay; a different value means the code
        # may go another way: the guard's key picks (or misses) the continuation.
        step.python_slot = self.new_slot(tuple(values))
        guard = Guard(step.python_slot, tuple, f"Python values from {_name(step.function)}", origin)
        self.items.append((guard, value_key(tuple(values))))

    def concretize(self, node, convert, what):
        """A Python value of a traced array (``bool``, ``float``, ``.item()``): computed now,
        and a guard that later calls re-check."""
        origin = self._check_break(what)
        self.materialize([node])
        value = convert(self.env[node.slot])
        self.items.append((Guard(node.slot, convert, what, origin), value_key(value)))
        return value

    def mutate(self, function, args, what):
        """An in-place operation: every pending formula is computed first (it must see the
        old values), then `function` runs on the materialised arrays."""
        alive = [node for node in map(weakref.ref.__call__, self.pending) if node is not None]
        self.materialize(alive)
        return self.eager(function, args, {}, what)

    def escape(self, node, what):
        origin = self._check_break(what)
        self.materialize([node])
        if not any(type(i) is Opaque for i in self.items):
            self.items.append(Opaque(f"{what} at {origin}"))
        return self.env[node.slot]

    def finish(self, result):
        """Materialise the outputs; the items of this trace and the call's result."""
        leaves = []
        template = _flatten(result, leaves)
        self.materialize(leaves)
        refs = _refs(template, leaves)
        if not any(type(i) is Opaque for i in self.items):
            self.items.append(Return(refs))
        return self.items, fill(refs, self.env)


def _is_dask(value) -> bool:
    return type(value).__module__.startswith("dask.")


def _name(function) -> str:
    name = getattr(function, "__name__", None) or type(function).__name__
    module = getattr(function, "__module__", "") or ""
    return f"np.{name}" if module.startswith("numpy") or isinstance(function, np.ufunc) else name


def _types(values) -> str:
    return ", ".join(str(v.dtype) if hasattr(v, "dtype") else type(v).__name__ for v in values)


def _flatten(obj, leaves):
    kind = type(obj)
    if kind is Tracer:
        leaves.append(obj)
        return _Leaf(len(leaves) - 1)
    if kind in (tuple, list):
        return kind(_flatten(item, leaves) for item in obj)
    if kind is dict:
        return {key: _flatten(item, leaves) for key, item in obj.items()}
    return obj


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _refs(template, leaves):
    """A _flatten template with each Tracer leaf as its slot (or its constant)."""
    kind = type(template)
    if kind is _Leaf:
        node = leaves[template.index]
        return node.const if node.slot is None else Ref(node.slot)
    if kind in (tuple, list):
        return kind(_refs(item, leaves) for item in template)
    if kind is dict:
        return {key: _refs(item, leaves) for key, item in template.items()}
    return template
