"""The .pyi stubs of the compiled modules name exactly what the modules define.

python/numfuse/_core.pyi must list every attribute of numfuse._core (and _cuda.pyi every
attribute of numfuse._cuda when that extension was built): functions as `def`, classes as
`class` with their public members, other objects (the ufuncs) as annotated names. Where a
binding names its arguments (py::arg), the stub uses the same names. `make lint` runs this.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "numfuse"
# pybind11's docstrings start with the signature: "name(a: int, b: str = 'x') -> int"
SIGNATURE = re.compile(r"^\w+\((.*)\)\s*->")


def _is_overload(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(ast.unparse(d).split(".")[-1] == "overload" for d in decorators)


def _duplicate_stub_entries(text: str) -> list[str]:
    """Names a stub declares more than once (a dict of entries would keep only the last);
    typing.overload'ed functions may repeat."""
    seen: set[str] = set()
    duplicates = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        else:
            continue
        if name in seen and not _is_overload(node):
            duplicates.append(name)
        seen.add(name)
    return duplicates


def _stub_entries(path: Path) -> dict[str, tuple[str, object]]:
    """name -> (kind, detail): function (argument names), class (public members), attribute."""
    duplicates = _duplicate_stub_entries(path.read_text())
    assert not duplicates, f"{path.name} declares {duplicates} more than once"
    entries: dict[str, tuple[str, object]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names = [a.arg for a in node.args.args]
            if node.args.vararg is not None:
                names.append("*" + node.args.vararg.arg)
            entries[node.name] = ("function", names)
        elif isinstance(node, ast.ClassDef):
            members = {
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
            }
            entries[node.name] = ("class", members)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            entries[node.target.id] = ("attribute", None)
    return entries


def _argument_names(function) -> list[str] | None:
    """The argument names pybind11 reports, or None when the binding leaves them unnamed."""
    doc = function.__doc__ or ""
    match = SIGNATURE.match(doc.lstrip())
    if match is None or "Overloaded function" in doc:
        return None
    parts, depth, start = [], 0, 0
    text = match.group(1)
    for index, char in enumerate(text):  # split at top-level commas (not inside list[a, b])
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    names = [part.split(":")[0].split("=")[0].strip() for part in parts]
    names = [name for name in names if name and name not in ("*", "/")]
    if any(re.fullmatch(r"arg\d+", name) for name in names):
        return None
    return names


def _module_entries(module: types.ModuleType) -> dict[str, tuple[str, object]]:
    entries: dict[str, tuple[str, object]] = {}
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        if inspect.isclass(value):
            members = {member for member in vars(value) if not member.startswith("_")}
            entries[name] = ("class", members)
        elif isinstance(value, (types.BuiltinFunctionType, types.FunctionType)):
            entries[name] = ("function", _argument_names(value))
        else:
            entries[name] = ("attribute", None)
    return entries


def _check(module_name: str, stub: Path) -> None:
    module = importlib.import_module(module_name)
    assert stub.is_file(), f"{stub} is missing"
    have, declared = _module_entries(module), _stub_entries(stub)
    missing = sorted(set(have) - set(declared))
    stale = sorted(set(declared) - set(have))
    assert not missing, f"{stub.name} lacks {missing} (defined by {module_name})"
    assert not stale, f"{stub.name} declares {stale}, which {module_name} does not define"
    for name, (kind, detail) in have.items():
        stub_kind, stub_detail = declared[name]
        assert stub_kind == kind, f"{stub.name}: {name} is a {kind}, the stub says {stub_kind}"
        if kind == "class":
            assert stub_detail == detail, f"{stub.name}: {name} members {stub_detail} != {detail}"
        elif kind == "function" and detail is not None:
            assert stub_detail == detail, f"{stub.name}: {name}{tuple(stub_detail)} != {detail}"


def test_duplicate_stub_entries_are_caught():
    stub = "import numpy as np\n\nexp: np.ufunc\ndef f() -> int: ...\ndef f() -> int: ...\n"
    assert _duplicate_stub_entries(stub) == ["f"]
    overloads = (
        "from typing import overload\n\n@overload\ndef g(a: int) -> int: ...\n"
        "@overload\ndef g(a: str) -> str: ...\n"
    )
    assert _duplicate_stub_entries(overloads) == []


def test_core_stub_is_complete():
    _check("numfuse._core", PACKAGE / "_core.pyi")


def test_cuda_stub_is_complete():
    pytest.importorskip("numfuse._cuda", reason="the CUDA extension was not built")
    _check("numfuse._cuda", PACKAGE / "_cuda.pyi")
