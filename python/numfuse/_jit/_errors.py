"""The jit's own exception, apart so that ``import numfuse`` need not load the tracer."""


class GraphBreakError(TypeError):
    """``numfuse.jit(f, strict=True)``: an operation of `f` would run outside the engine."""
