"""A recorded trace as something to run again: steps over slots, branching at guards.

A call fills ``env`` (a list of slots: the call's arrays first, then each step's results)
and runs a block's steps in order. A block ends in a ``Return`` (build the outputs), a
``Guard`` (a value the Python code looked at: ``bool(x > 0)``, ``float(s)``, a Python object a
NumPy call returned; its children are keyed by that value) or ``Opaque`` (the trace escaped:
run the plain function). Steps hold their constants themselves, so the branches of one tree
never share anything through ``env`` but the call's own inputs.
"""

from __future__ import annotations

from .. import _evaluate


class Miss(Exception):
    """A guard saw a value no branch was traced for."""


class RunPlain(Exception):
    """This path of the function cannot be replayed."""


class Ref:
    """Where a pytree template takes a value from ``env``."""

    __slots__ = ("slot",)

    def __init__(self, slot: int):
        self.slot = slot


def fill(template, env):
    """The pytree `template` with every Ref replaced by its slot's value."""
    kind = type(template)
    if kind is Ref:
        return env[template.slot]
    if kind is tuple or kind is list:
        return kind(fill(item, env) for item in template)
    if kind is dict:
        return {key: fill(item, env) for key, item in template.items()}
    return template


class Segment:
    """One fused expression: ``env[out] = compiled(*inputs)``, `compiled` a
    CompiledExpression (the tracer's, _core._jit_formula)."""

    __slots__ = ("compiled", "text", "inputs", "out", "scalar", "foreign", "origin", "shape")

    def __init__(self, compiled, inputs, out, scalar, foreign, origin):
        self.text = compiled.expression
        self.compiled = compiled
        # input name (v3, c0, ...) -> ("slot", 3) or ("const", value), in call order
        self.inputs = [inputs[name] for name in self.compiled.input_names]
        self.out = out
        self.scalar = scalar
        self.foreign = foreign  # a dask array among the inputs: numfuse.evaluate dispatches
        self.origin = origin
        self.shape = None  # NumPy's shape when the engine's lacks leading ones (a view)

    def run(self, env):
        values = [env[v] if is_slot else v for is_slot, v in self.inputs]
        if self.foreign:
            names = self.compiled.input_names
            result = _evaluate.evaluate(self.text, local_dict=dict(zip(names, values)))
        else:
            result = self.compiled(*values)
        if self.shape is not None:
            result = result.reshape(self.shape)
        env[self.out] = result[()] if self.scalar else result

    def describe(self) -> str:
        return f"fused   v{self.out} = {self.text}"


class Eager:
    """One NumPy call the engine cannot fuse (a graph break) or a view of a slot."""

    __slots__ = ("function", "args", "kwargs", "outs", "python_slot", "reason", "origin")

    def __init__(self, function, args, kwargs, reason, origin):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.outs = None  # pytree of the result: Refs for arrays, None for Python objects
        self.python_slot = None  # where the tuple of those Python objects goes (a Guard reads it)
        self.reason = reason  # None for a view of an input (not a break)
        self.origin = origin

    def call(self, env):
        return self.function(*fill(self.args, env), **fill(self.kwargs, env))

    def run(self, env):
        result = self.call(env)
        store(self.outs, result, env)
        if self.python_slot is not None:
            found = []
            python_leaves(self.outs, result, found)
            env[self.python_slot] = tuple(found)

    def describe(self) -> str:
        what = "view   " if self.reason is None else "numpy  "
        where = f"  ({self.origin})" if self.origin else ""
        return f"{what} {self.reason or _name(self.function)}{where}"


def store(template, value, env):
    """Write `value`'s arrays to the slots of `template` (a pytree of Refs and Ignore)."""
    kind = type(template)
    if kind is Ref:
        env[template.slot] = value
    elif kind is tuple or kind is list:
        for item, part in zip(template, value):
            store(item, part, env)
    elif kind is dict:
        for key, item in template.items():
            store(item, value[key], env)


def python_leaves(template, value, found):
    """The parts of `value` that `template` marks None (Python objects), in order."""
    kind = type(template)
    if kind in (tuple, list) and type(value) in (tuple, list):
        for item, part in zip(template, value):
            python_leaves(item, part, found)
    elif template is None:
        found.append(value)


def _name(function) -> str:
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", repr(function))


class Guard:
    """Ends a block: the key of a value the Python code looked at picks the next block."""

    __slots__ = ("slot", "convert", "children", "origin", "what")

    def __init__(self, slot, convert, what, origin):
        self.slot = slot
        self.convert = convert
        self.children = {}
        self.what = what
        self.origin = origin

    def next_block(self, env):
        child = self.children.get(value_key(self.convert(env[self.slot])))
        if child is None:
            raise Miss
        return child


class Return:
    __slots__ = ("template",)

    def __init__(self, template):
        self.template = template


class Opaque:
    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


class Block:
    __slots__ = ("steps", "end")

    def __init__(self, steps, end):
        self.steps = steps
        self.end = end


def value_key(value):
    """A dict key telling values apart as the Python code would (NaN equal to itself,
    -0.0 apart from 0.0, True apart from 1)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - an object without a usable repr never matches
        return (object(),)
    return (type(value), text)


def run(block, env):
    """Run a block tree on `env`; Miss or RunPlain when it cannot answer this call."""
    while True:
        for step in block.steps:
            step.run(env)
        end = block.end
        if type(end) is Return:
            return fill(end.template, env)
        if type(end) is Opaque:
            raise RunPlain
        block = end.next_block(env)


def build(items):
    """A block tree from one trace's linear record (steps, then ends with their keys)."""
    steps = []
    for index, item in enumerate(items):
        if type(item) is tuple:  # (Guard, key): a guard and the value this trace saw
            guard, key = item
            guard.children[key] = build(items[index + 1 :])
            return Block(steps, guard)
        if type(item) in (Return, Opaque):
            return Block(steps, item)
        steps.append(item)
    raise AssertionError("a trace record ends in a Return or Opaque")


def merge(block, items) -> None:
    """Add a trace that took another branch to the tree (the caller holds the lock).

    The trace ran the same function on inputs of the same signature with the same
    globals, so it made the same steps up to the guard where it went another way.
    """
    rest = items[len(block.steps) :]
    end = block.end
    if rest and type(rest[0]) is tuple and type(end) is Guard:
        _, key = rest[0]
        child = end.children.get(key)
        if child is None:
            end.children[key] = build(rest[1:])
        else:
            merge(child, rest[1:])


def count_paths(block) -> int:
    if type(block.end) is Guard:
        return sum(count_paths(child) for child in block.end.children.values())
    return 1


def describe(block, indent="  ") -> list:
    lines = [indent + step.describe() for step in block.steps]
    end = block.end
    if type(end) is Return:
        lines.append(indent + "return")
    elif type(end) is Opaque:
        lines.append(indent + f"opaque: {end.reason}; calls run the plain function")
    else:
        where = f"  ({end.origin})" if end.origin else ""
        lines.append(indent + f"guard   {end.what}{where}")
        for key, child in end.children.items():
            lines.append(indent + f"  == {key[1]}:")
            lines.extend(describe(child, indent + "    "))
    return lines
