"""numfuse.jit: a tracing front end over the fused engine (docs/jit.md).

Layers: ``_ops`` (what the engine spells, and NumPy's verdict per operation), ``_tracer``
and ``_trace`` (recording), ``_program`` (replaying), ``_guards`` (what a trace depends on
besides its arguments), ``_function`` (the decorator's object and its cache), ``_decorator``
(``jit`` itself, which loads the rest on its first call).
"""

from typing import Any

from ._decorator import jit
from ._errors import GraphBreakError

__all__ = ["GraphBreakError", "JitFunction", "jit"]


def __getattr__(name: str) -> Any:
    if name == "JitFunction":
        from ._function import JitFunction

        return JitFunction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
