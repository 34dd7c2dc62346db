"""``numfuse.jit`` itself: light, so that ``import numfuse`` does not load the tracer.

The tracer, the replaying program and the guards (``_function`` and what it imports) cost
about 20 ms to import; they load on the first call of ``jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar, overload

from ._errors import GraphBreakError

if TYPE_CHECKING:
    from ._function import JitFunction

_P = ParamSpec("_P")
_R = TypeVar("_R")


@overload
def jit(function: Callable[_P, _R], *, strict: bool = False) -> JitFunction[_P, _R]: ...
@overload
def jit(
    function: None = None, *, strict: bool = False
) -> Callable[[Callable[_P, _R]], JitFunction[_P, _R]]: ...
def jit(
    function: Callable[_P, _R] | None = None, *, strict: bool = False
) -> JitFunction[_P, _R] | Callable[[Callable[_P, _R]], JitFunction[_P, _R]]:
    """Compile a NumPy function whole: ``@numfuse.jit`` or ``numfuse.jit(f, strict=True)``.

    The function runs on stand-in arrays the first time it meets a signature (the types
    and shapes of its array arguments, the values of its other arguments); what it does with
    them is recorded and later calls replay it, fused, through the engine of
    ``numfuse.evaluate``. Operations the engine cannot fuse run in NumPy (with
    ``strict=True`` they raise ``numfuse.jit.GraphBreakError`` naming the source line).
    See docs/jit.md.
    """
    from ._function import JitFunction

    if function is None:
        return lambda f: JitFunction(f, strict=strict)
    return JitFunction(function, strict=strict)


jit.GraphBreakError = GraphBreakError
