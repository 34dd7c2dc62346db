"""Opt-in patching: numfuse's float32/float64 loops inside NumPy's (and SciPy's) own ufuncs.

``patch_numpy()`` makes unmodified code that calls ``np.exp``, ``np.tanh``, ... (or, with
``scipy=True``, ``scipy.special.erf``, ``erfc``, ``expit``) run numfuse's loops. It swaps
only the all-float32 and all-float64 loops of each ufunc, through NumPy's documented
``PyUFunc_ReplaceLoopBySignature``; type resolution, casting, ``out=``/``where=``,
broadcasting, buffering, ``np.errstate`` and every other loop (float16, long double,
complex, object) stay NumPy's. ``restore_numpy()`` puts back exactly the functions that
were there. docs/patching.md lists what changes and the caveats.

Which ufuncs: every ufunc of the function table (``_table.function_rows()``) has one
reference implementation, named by its loop order -- NumPy's order for ``numpy.<name>``,
SciPy's (float64 first) for ``scipy.special.<name>`` -- the same rule the ufuncs'
docstrings use. A function is patchable when that reference is a ufunc in the running
NumPy/SciPy.

Holders and counts: a function stays patched while anything holds it. ``patch_numpy()``
is one holder (calling it again adds nothing: it is idempotent) and ``restore_numpy()``
drops it; each ``with patched():`` block is a holder of its own for its duration, so
blocks nest and overlap across threads. One lock orders every change.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import warnings
from collections.abc import Iterable, Iterator

import numpy as np

from . import _core
from ._table import function_rows

__all__ = ["is_patched", "patch_numpy", "patched", "restore_numpy"]

# The loops that are swapped: NumPy's all-float32 and all-float64 signatures.
_TYPES = ("f", "d")

_lock = threading.RLock()
_holds: dict[str, int] = {}  # function name -> number of holders
_saved: dict[str, list] = {}  # function name -> [(target ufunc, handle)] while patched
_explicit: set[str] = set()  # functions patch_numpy() holds


def _table() -> dict[str, str]:
    """numfuse ufunc name -> "numpy" or "scipy.special", from the function table."""
    return {
        row.name: "scipy.special" if row.ufunc_of == "scipy" else "numpy"
        for row in function_rows()
        if row.is_ufunc
    }


def _reference(name: str, module: str):
    """The reference ufunc object of `name`, or None when it is not a ufunc here."""
    if module == "numpy":
        target = getattr(np, name, None)
    else:
        try:
            target = getattr(importlib.import_module(module), name, None)
        except ImportError:
            return None
    return target if isinstance(target, np.ufunc) else None


def _select(functions: str | Iterable[str] | None, scipy: bool) -> list[str]:
    table = _table()
    if functions is None:
        chosen = [n for n, module in table.items() if module == "numpy" or scipy]
        return [n for n in chosen if _reference(n, table[n]) is not None]
    if isinstance(functions, str):
        functions = [functions]
    chosen = []
    for name in functions:
        if not isinstance(name, str):
            raise TypeError(f"function names must be str, not {type(name).__name__}")
        if name not in table:
            raise ValueError(
                f"numfuse has no ufunc {name!r} to patch in; it has: {', '.join(sorted(table))}"
            )
        module = table[name]
        if module != "numpy" and not scipy:
            raise ValueError(f"{name!r} replaces {module}.{name}: pass scipy=True to patch it")
        if _reference(name, module) is None:
            raise ValueError(f"{module}.{name} is not available as a ufunc here")
        if name not in chosen:
            chosen.append(name)
    return chosen


def _swap_in(name: str) -> None:
    module = _table()[name]
    target, source = _reference(name, module), getattr(_core, name)
    saved = []
    try:
        # The float32 / float64 loops the source has (float_power has only float64).
        for type_ in [t for t in _TYPES if t * source.nin + "->" + t in source.types]:
            saved.append((target, _core._swap_loop(target, source, type_)))
    except Exception:
        for target_, handle in reversed(saved):
            _core._restore_loop(target_, handle)
        raise
    _saved[name] = saved


def _swap_out(name: str) -> None:
    for target, handle in reversed(_saved.pop(name)):
        _core._restore_loop(target, handle)


def _acquire(names: list[str]) -> None:
    done = []
    try:
        for name in names:
            if _holds.get(name, 0) == 0:
                _swap_in(name)
            _holds[name] = _holds.get(name, 0) + 1
            done.append(name)
    except Exception:
        _release(done)
        raise


def _release(names) -> None:
    for name in names:
        _holds[name] -= 1
        if _holds[name] == 0:
            del _holds[name]
            _swap_out(name)


def patch_numpy(functions: str | Iterable[str] | None = None, scipy: bool = False) -> list[str]:
    """Run numfuse's float32/float64 loops inside NumPy's ufuncs until ``restore_numpy()``.

    functions: names of numfuse ufuncs (``["exp", "tanh"]``); None means every one whose
    NumPy ufunc exists (plus the ``scipy.special`` ones with ``scipy=True``).
    scipy: also patch ``scipy.special`` (erf, erfc, expit) where SciPy is importable.
    Idempotent: patching a function that ``patch_numpy`` already patched does nothing.
    Returns the names patched by ``patch_numpy`` (all of them, not only this call's).
    Raises ValueError for a name numfuse has no ufunc for, RuntimeError when NumPy's
    ufunc lacks the float32/float64 loop to replace (nothing is changed then).
    """
    with _lock:
        new = [name for name in _select(functions, scipy) if name not in _explicit]
        _acquire(new)
        _explicit.update(new)
        return sorted(_explicit)


def restore_numpy() -> None:
    """Undo ``patch_numpy()``: NumPy's own loops are back once no ``patched()`` block holds
    them. A no-op when ``patch_numpy`` patched nothing."""
    with _lock:
        names = sorted(_explicit)
        _explicit.clear()
        _release(names)


def is_patched(function: str | None = None) -> bool:
    """True when any function (or the named one) runs numfuse's loops inside NumPy/SciPy."""
    with _lock:
        return bool(_holds) if function is None else function in _holds


@contextlib.contextmanager
def patched(functions: str | Iterable[str] | None = None, scipy: bool = False) -> Iterator[None]:
    """``with numfuse.patched(): ...`` runs the block with NumPy patched (as
    ``patch_numpy(functions, scipy)``) and restores what was there before on exit."""
    with _lock:
        names = _select(functions, scipy)
        _acquire(names)
    try:
        yield
    finally:
        with _lock:
            _release(names)


def patch_from_environment(value: str | None) -> None:
    """``NUMFUSE_PATCH_NUMPY`` at import: "1" patches NumPy, "scipy" NumPy and scipy.special,
    "" or "0" nothing; any other value warns (RuntimeWarning) and patches nothing."""
    setting = (value or "").strip().lower()
    if setting in ("", "0"):
        return
    if setting in ("1", "scipy"):
        patch_numpy(scipy=setting == "scipy")
    else:
        warnings.warn(
            f"NUMFUSE_PATCH_NUMPY={value!r} is not one of 1 (NumPy), scipy (NumPy and "
            "scipy.special) or 0; NumPy is not patched",
            RuntimeWarning,
            stacklevel=3,
        )
