"""What a trace depends on outside its arguments, read again on every call.

From the bytecode of the function (and of the Python functions it reaches through its
globals and closures, three levels deep): every global name it loads, every closure cell,
and ``name.attr`` for each attribute it loads right after a global (``config.ALPHA``),
except on NumPy, SciPy, numfuse and math (whose functions and constants are taken as
fixed) and except callables (what they return is traced). A call compares each value by
identity with the one the cached traces saw; any difference drops them all.
"""

from __future__ import annotations

import dis
import sys
import types

from .. import _core

_MISSING = object()
_FIXED_MODULES = ("numpy", "scipy", "numfuse", "math", "builtins")
_DEPTH = 3


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


# The bytecode scan of _global_loads, in C++ (src/python/jit_guards.cpp): dis.get_instructions
# builds an Instruction per instruction (about 100x slower, a large part of a small
# function's first call), and a Python loop over the instruction units cost a 20-operation
# function's first call ~0.12M instructions (AMD EPYC Zen 3). The opcodes and shifts are
# the running Python's, from dis.
_CACHE = dis.opmap.get("CACHE", -1)  # inline cache entries (3.11+), skipped as dis skips them
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_LOAD_GLOBAL = dis.opmap["LOAD_GLOBAL"]
# Since 3.12 dis.opmap also names pseudo-instructions (LOAD_METHOD among them, numbered from
# 256), which the compiler replaces and co_code never holds: only real opcodes (< 256) count.
_ATTRIBUTE_LOADS = bytes(
    op for op in (dis.opmap.get(n, 256) for n in ("LOAD_ATTR", "LOAD_METHOD")) if op < 256
)
# LOAD_GLOBAL's argument is the name's index times two plus a flag since 3.11, LOAD_ATTR's
# since 3.12 (tests/test_jit_dispatch.py compares this scan with dis on many functions)
_GLOBAL_SHIFT = 1 if sys.version_info >= (3, 11) else 0
_ATTRIBUTE_SHIFT = 1 if sys.version_info >= (3, 12) else 0
_scan = _core._jit_global_loads


def _global_loads(code):
    """[name, [attribute]] for every LOAD_GLOBAL, with the LOAD_ATTR (or LOAD_METHOD)
    that is the next instruction after it, past its inline caches ([] if none)."""
    return _scan(
        code.co_code,
        code.co_names,
        _LOAD_GLOBAL,
        _ATTRIBUTE_LOADS,
        _CACHE,
        _EXTENDED_ARG,
        _GLOBAL_SHIFT,
        _ATTRIBUTE_SHIFT,
    )


class Watch:
    """The values a function's traces depend on, and a fast comparison with them."""

    def __init__(self, function):
        self.globals_names = []  # (globals dict, name)
        self.cells = []
        self.attributes = []  # (globals dict, name, attribute)
        self._collect(function, 0, set())
        self.globals_names = _unique(self.globals_names)
        seen_attributes = {}
        for ns, name, attribute in self.attributes:
            seen_attributes.setdefault((id(ns), name, attribute), (ns, name, attribute))
        self.attributes = list(seen_attributes.values())
        self._checks = None  # nothing remembered: unchanged() is False until remember()

    def _collect(self, function, depth, seen):
        if id(function) in seen or depth > _DEPTH:
            return
        seen.add(id(function))
        namespace = function.__globals__
        for code in _code_objects(function.__code__):
            for name, attributes in _global_loads(code):
                self.globals_names.append((namespace, name))
                if attributes:
                    self.attributes.append((namespace, name, attributes[0]))
                value = namespace.get(name, _MISSING)
                if isinstance(value, types.FunctionType):
                    self._collect(value, depth + 1, seen)
        for cell in function.__closure__ or ():
            self.cells.append(cell)
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, types.FunctionType):
                self._collect(value, depth + 1, seen)

    def read(self) -> list:
        values = []
        for namespace, names in self._groups():
            values += map(namespace.get, names)  # a missing name reads as None
        for cell in self.cells:
            try:
                values.append(cell.cell_contents)
            except ValueError:
                values.append(_MISSING)
        for namespace, name, attribute in self.attributes:
            values.append(_attribute(namespace.get(name), attribute))
        return values

    def _groups(self):
        groups = self.__dict__.get("groups")
        if groups is None:
            by_namespace = {}
            for namespace, name in self.globals_names:
                by_namespace.setdefault(id(namespace), (namespace, []))[1].append(name)
            groups = self.groups = list(by_namespace.values())
        return groups

    def remember(self, snapshot) -> None:
        """Make `snapshot` (a read()) the values later calls compare with."""
        checks = []
        values = iter(snapshot)
        for namespace, names in self._groups():
            get = namespace.get
            checks += [(get, name, next(values)) for name in names]
        self._checks = checks
        self._cells = [(cell, next(values)) for cell in self.cells]
        self._attributes = [
            (ns, name, attr, value)
            for (ns, name, attr), value in zip(self.attributes, values)
            if value is not _UNWATCHED
        ]

    def remembered(self) -> bool:
        return self._checks is not None

    def flat_checks(self) -> tuple:
        """The remembered values as numfuse._core._JitDispatch compares them: (dict,
        name, value, ...) per global, (cell, value, ...), (dict, name, attribute, value,
        ...); the same comparisons as unchanged()."""
        globals_flat = []
        for get, name, value in self._checks:
            globals_flat += (get.__self__, name, value)
        cells_flat = [item for pair in self._cells for item in pair]
        attributes_flat = [item for quad in self._attributes for item in quad]
        return tuple(globals_flat), tuple(cells_flat), tuple(attributes_flat)

    def unchanged(self) -> bool:
        """Whether every watched value is still the one remembered (by identity)."""
        checks = self._checks
        if checks is None:
            return False
        for get, name, value in checks:
            if get(name) is not value:
                return False
        if self._cells or self._attributes:
            for cell, value in self._cells:
                try:
                    if cell.cell_contents is not value:
                        return False
                except ValueError:
                    if value is not _MISSING:
                        return False
            for namespace, name, attribute, value in self._attributes:
                if _attribute(namespace.get(name), attribute) is not value:
                    return False
        return True


_UNWATCHED = object()
# module name -> whether it is one of _FIXED_MODULES or inside one (a few names a process)
_fixed_names: dict = {}


def _attribute(base, name):
    """``base.name`` as a watched value: _UNWATCHED for the functions and constants of
    NumPy, SciPy, numfuse and math, and for anything callable (methods are new objects
    on every read; what a call returns is traced, not watched)."""
    if base is None:
        return _UNWATCHED
    if isinstance(base, types.ModuleType):
        name_of = base.__name__
        fixed = _fixed_names.get(name_of)
        if fixed is None:
            fixed = _fixed_names[name_of] = name_of.partition(".")[0] in _FIXED_MODULES
        if fixed:
            return _UNWATCHED
    try:
        value = getattr(base, name)
    except Exception:  # noqa: BLE001 - a missing or failing attribute: its absence is watched
        return _MISSING
    return _UNWATCHED if callable(value) else value


def _unique(pairs):
    seen = set()
    out = []
    for ns, name in pairs:
        if (id(ns), name) not in seen:
            seen.add((id(ns), name))
            out.append((ns, name))
    return out
