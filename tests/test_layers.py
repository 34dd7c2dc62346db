"""The Python layer's structure: modules import in one direction only.

(And the C++ side of the same arrow: only src/python includes Python, pybind11 or NumPy.)

Bottom to top: helpers, front ends, back ends. A front end reaches a back end
only through numfuse._dispatch (the back end registers itself), so the import
graph of numfuse's modules has no cycle, and ``import numfuse`` loads neither
a back end nor dask. Every import statement counts, also one inside a function.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

import numfuse
from conftest import HANG_SCALE

PACKAGE = pathlib.Path(numfuse.__file__).parent

HELPERS = {"numfuse._axes", "numfuse._config", "numfuse._dispatch", "numfuse._frames"}
HELPERS |= {"numfuse._interop", "numfuse._table", "numfuse._scipy_loops"}
FRONT_ENDS = {"numfuse", "numfuse.__main__", "numfuse._evaluate", "numfuse._patch"}
FRONT_ENDS |= {"numfuse._reduce", "numfuse._numexpr_surface", "numfuse._ufuncs"}
# numfuse.jit: a front end over _evaluate's engine and _reduce's functions
FRONT_ENDS |= {f"numfuse._jit{m}" for m in ("", "._function", "._guards", "._ops")}
FRONT_ENDS |= {
    f"numfuse._jit{m}" for m in ("._program", "._trace", "._tracer", "._decorator", "._errors")
}
EXTENSIONS = {"numfuse._core", "numfuse._cuda"}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "bench" in path.relative_to(PACKAGE).parts[:1]:
            continue  # numfuse.bench: the benchmark tool, a user of the package
        found[_module_name(path)] = path
    return found


def _imports(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The modules of `known` that `name` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import module` imports the module; else names of `base`
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found |= submodules or {base}
    return found & known


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules) | EXTENSIONS
    return {name: _imports(name, path, known) - {name} for name, path in modules.items()}


def test_the_layers_are_known():
    graph = _graph()
    back_ends = {m for m in graph if m == "numfuse._dask" or m.startswith("numfuse.cuda")}
    assert set(graph) == HELPERS | FRONT_ENDS | back_ends, "a new module: place it in a layer"


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    done, on_path = set(), []

    def visit(module):
        if module in on_path:
            cycle = on_path[on_path.index(module) :] + [module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        on_path.append(module)
        for imported in sorted(graph.get(module, ())):
            visit(imported)
        on_path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_helpers_import_only_helpers_and_extensions():
    graph = _graph()
    for module in sorted(HELPERS):
        assert graph[module] <= HELPERS | EXTENSIONS, module


def test_front_ends_do_not_import_back_ends():
    graph = _graph()
    for module in sorted(FRONT_ENDS):
        assert graph[module] <= HELPERS | FRONT_ENDS | EXTENSIONS, module


def test_the_cuda_extension_is_loaded_by_numfuse_cuda_only():
    graph = _graph()
    users = {m for m, imported in graph.items() if "numfuse._cuda" in imported}
    assert users <= {m for m in graph if m.startswith("numfuse.cuda.")}, users


def test_import_numfuse_loads_no_back_end():
    code = (
        "import sys, numfuse\n"
        "print(sorted(m for m in sys.modules if m.startswith(('numfuse.cuda', "
        "'numfuse._cuda', 'numfuse._dask', 'dask')) or m == 'dask'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60 * HANG_SCALE,
    )
    assert out.stdout.strip() == "[]"


def test_numfuse_cuda_and_devices_are_imported_on_first_use():
    code = (
        "import sys, numfuse\n"
        "assert numfuse.devices()[0]['kind'] == 'cpu'\n"
        "assert 'numfuse.cuda' in sys.modules\n"
        "assert numfuse.cuda.devices is numfuse.devices\n"
        "import numfuse.cuda as nfc\n"
        "assert nfc is numfuse.cuda and isinstance(nfc.available(), bool)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60 * HANG_SCALE)


SOURCES = pathlib.Path(__file__).resolve().parent.parent / "src"
# An include of Python, pybind11 or NumPy, or of a file of the bindings from elsewhere.
PYTHON_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*[<"](?:Python\.h|pybind11/|numpy/|(?:\.\./)+python/)', re.M
)


def _includes_python(path: pathlib.Path) -> bool:
    return bool(PYTHON_INCLUDE.search(path.read_text(errors="replace")))


def test_only_the_bindings_include_python():
    # src/core and src/cuda know nothing of Python: the bindings (src/python, the CUDA
    # module's in src/python/cuda) are the only code that includes it.
    sources = [
        path
        for path in sorted(SOURCES.rglob("*"))
        if path.suffix in {".cpp", ".hpp", ".h", ".cu", ".cuh"}
    ]
    bindings = [path for path in sources if path.relative_to(SOURCES).parts[0] == "python"]
    assert any(_includes_python(path) for path in bindings)  # the pattern finds what it should
    outside = [
        str(path.relative_to(SOURCES))
        for path in sources
        if path not in bindings and _includes_python(path)
    ]
    assert outside == []


def test_the_namespace_is_the_public_api():
    """dir(numfuse) shows the API, not the modules __init__ happens to use (os, importlib)."""
    extra = {name for name in dir(numfuse) if not name.startswith("_")} - set(numfuse.__all__)
    # subpackages and submodules that an import of numfuse.<name> adds are part of the API
    extra -= {"cuda", "bench", "jit"}
    assert not extra, sorted(extra)


def test_import_loads_no_heavy_modules():
    # `import numfuse` stays cheap: the jit's tracer loads on the first jit call,
    # numpy.typing only for type checkers, SciPy's version without importlib.metadata.
    code = (
        "import sys, numfuse; "
        "print(sorted(m for m in ('numfuse._jit._function', 'numpy.typing', "
        "'importlib.metadata', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
