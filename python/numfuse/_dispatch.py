"""Back ends for array types the front ends do not compute on themselves.

The front ends (numfuse._evaluate, numfuse._reduce) never import a back end.
A back end registers, when it is imported, a predicate saying which values
are its arrays and its implementations of the front ends' functions; a front
end asks ``backend_for(...)`` on its slow path only (values that are not
NumPy arrays or scalars).

A back end whose arrays cannot exist before a third-party module is imported
is listed in ``_LAZY``: it is imported the first time ``backend_for`` runs
with that module in ``sys.modules``. So dask arrays work without the user
importing anything from numfuse, and ``import numfuse`` imports no dask.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Callable

# third-party module whose arrays a back end handles -> that back end
_LAZY = {"dask.array": "numfuse._dask"}

_pending = dict(_LAZY)
_pending_lock = threading.Lock()
_registered: dict[str, tuple[Callable[[object], bool], dict[str, Callable]]] = {}


def register(name: str, owns: Callable[[object], bool], **functions: Callable) -> None:
    """Make back end `name` compute for every value `owns` accepts.

    `functions`: implementations by front-end name (evaluate, logsumexp, softmax).
    """
    _registered[name] = (owns, functions)


def backend_for(*values) -> dict[str, Callable] | None:
    """The functions of the back end owning one of `values` (None entries skipped), or None."""
    if _pending:
        _import_triggered()
    for owns, functions in _registered.values():
        for value in values:
            if value is not None and owns(value):
                return functions
    return None


def _import_triggered() -> None:
    for trigger in [t for t in _pending if t in sys.modules]:
        importlib.import_module(_pending[trigger])  # registers itself
        with _pending_lock:
            _pending.pop(trigger, None)
