"""numfuse.jit: a tracing front end over the fused engine (docs/jit.md).

Layers: ``_ops`` (what the engine spells, and NumPy's verdict per operation), ``_tracer``
and ``_trace`` (recording), ``_program`` (replaying), ``_guards`` (what a trace depends on
besides its arguments), ``_function`` (the decorator and its cache).
"""

from ._function import JitFunction, jit
from ._trace import GraphBreakError

__all__ = ["GraphBreakError", "JitFunction", "jit"]
