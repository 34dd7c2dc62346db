"""What is benchmarked: functions, their inputs, and each peer's spelling of them.

A *function* (``exp``, ``softmax``, ``2*a+3*b``, ...) knows how to make its
inputs for a size and dtype, how many bytes any implementation must at least
move (for the roofline column), and, per peer, a *binder*: given the
inputs, it returns a zero-argument callable doing the work, or ``None``
when that peer has no such function (shown as n/a with a reason).

Every call is the allocating form (``f(x)``, not ``f(x, out=o)``): it is what
user code writes, and it is what the memory column measures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import compilers as _compilers


@dataclass
class Function:
    name: str
    kind: str  # "ufunc", "reduction" or "evaluate"
    domain: tuple  # inputs uniform in [lo, hi)
    variables: tuple  # input names
    # peer -> (text, binder) or (reason, None) when n/a; a binder takes (peer module,
    # inputs) and returns a zero-argument callable doing the work.
    spellings: dict
    two_d: bool = False  # inputs shaped (r, n // r) with r = isqrt(n)
    output: str = "same"  # "same" (n elements), "scalar", or "row" (n // r elements)
    notes: list = field(default_factory=list)

    def shape(self, n: int) -> tuple:
        if self.two_d:
            rows = max(1, math.isqrt(n))
            return (rows, max(1, n // rows))
        return (n,)

    def inputs(self, n: int, dtype, seed: int = 0) -> dict:
        rng = np.random.default_rng(seed)
        lo, hi = self.domain
        shape = self.shape(n)
        out = {}
        for name in self.variables:
            values = rng.random(shape)  # float64, then rounded to dtype
            values *= hi - lo
            values += lo
            out[name] = values.astype(dtype, copy=False)
        return out

    def bytes_moved(self, n: int, dtype) -> int:
        """Compulsory memory traffic: every input read once, the result written once."""
        shape = self.shape(n)
        elements = int(np.prod(shape))
        itemsize = np.dtype(dtype).itemsize
        written = {"same": elements, "scalar": 1, "row": shape[-1]}[self.output]
        return (len(self.variables) * elements + written) * itemsize


def _na(reason: str):
    return (reason, None)


class Unavailable(Exception):
    """Raised by a binder when the installed peer lacks the function (torch has no cbrt,
    numexpr no exp2): the runner records n/a with this message, not an error."""


# ----------------------------------------------------------------- binders
# Each returns a closure over the inputs; tensors are made once, outside the timing.


def _ufunc_binders(
    name: str,
    ne_name: str | None,
    scipy_name: str | None,
    numpy_name: str | None,
    torch_name: str | None = None,
) -> dict:
    """One-argument ufuncs; torch_name is torch's attribute path when it differs
    (``special.expit``)."""
    torch_path = (torch_name or name).split(".")

    def nf_bind(mod, v):
        f, x = getattr(mod, name), v["x"]
        return lambda: f(x)

    def np_bind(mod, v):
        f, x = getattr(mod, numpy_name), v["x"]
        return lambda: f(x)

    def ne_bind(mod, v):
        known = getattr(getattr(mod, "expressions", None), "functions", None)
        if known is not None and ne_name not in known:
            raise Unavailable(f"numexpr has no {ne_name}")
        ex, d = f"{ne_name}(x)", {"x": v["x"]}
        return lambda: mod.evaluate(ex, local_dict=d)

    def torch_bind(mod, v):
        f, t = mod, mod.from_numpy(v["x"])
        for part in torch_path:
            if not hasattr(f, part):
                raise Unavailable(f"torch has no {'.'.join(torch_path)}")
            f = getattr(f, part)
        return lambda: f(t)

    def scipy_bind(mod, v):
        f, x = getattr(mod.special, scipy_name), v["x"]
        return lambda: f(x)

    return {
        "numfuse": (f"numfuse.{name}(x)", nf_bind),
        "numpy": (f"np.{numpy_name}(x)", np_bind) if numpy_name else _na(f"NumPy has no {name}"),
        "numexpr": (f"ne.evaluate('{ne_name}(x)')", ne_bind)
        if ne_name
        else _na(f"numexpr has no {name}"),
        "torch": (f"torch.{'.'.join(torch_path)}(t)", torch_bind),
        "scipy": (f"scipy.special.{scipy_name}(x)", scipy_bind)
        if scipy_name
        else _na(f"scipy.special has no plain {name}"),
    }


# torch's names where they are not NumPy's
_TORCH_NAMES = {"power": "pow"}


def _binary_ufunc_binders(name: str) -> dict:
    """Two-argument ufuncs that NumPy and torch have (logaddexp; power is torch.pow)."""
    torch_name = _TORCH_NAMES.get(name, name)

    def nf_bind(mod, v):
        f, x, y = getattr(mod, name), v["x"], v["y"]
        return lambda: f(x, y)

    def np_bind(mod, v):
        f, x, y = getattr(mod, name), v["x"], v["y"]
        return lambda: f(x, y)

    def torch_bind(mod, v):
        f, s, t = getattr(mod, torch_name), mod.from_numpy(v["x"]), mod.from_numpy(v["y"])
        return lambda: f(s, t)

    return {
        "numfuse": (f"numfuse.{name}(x, y)", nf_bind),
        "numpy": (f"np.{name}(x, y)", np_bind),
        "numexpr": _na(f"numexpr has no {name}"),
        "torch": (f"torch.{torch_name}(s, t)", torch_bind),
        "scipy": _na(f"scipy.special has no {name}"),
    }


# The ufuncs: every ufunc row of the function table, its domain the row's benchmark
# domain (lo, hi: where it is commonly used and defined). NumPy's ufuncs are np.<name>,
# numexpr's <name>(x) and torch.<name>; SciPy's scipy.special.<name> and
# torch.special.<name>.
def _table_ufuncs() -> dict:
    from .._table import function_rows

    return {row.name: row for row in function_rows() if row.is_ufunc}


TABLE_UFUNCS = _table_ufuncs()


def _ufunc_case(row) -> Function:
    if row.arity == 2:
        spellings = _binary_ufunc_binders(row.name)
    elif row.ufunc_of == "scipy":
        spellings = _ufunc_binders(row.name, None, row.name, None, f"special.{row.name}")
    else:
        spellings = _ufunc_binders(row.name, row.name, None, row.name)
    variables = ("x", "y")[: row.arity]
    return Function(row.name, "ufunc", tuple(row.bench_domain), variables, spellings)


def _logsumexp_binders() -> dict:
    def nf_bind(mod, v):
        x = v["x"]
        return lambda: mod.logsumexp(x)

    def np_bind(mod, v):
        x = v["x"]

        def numpy_logsumexp():
            m = x.max()
            return m + np.log(np.sum(np.exp(x - m)))

        return numpy_logsumexp

    def ne_bind(mod, v):
        x = v["x"]

        def numexpr_logsumexp():
            m = x.max()
            return m + np.log(mod.evaluate("sum(exp(x - m))", local_dict={"x": x, "m": m}))

        return numexpr_logsumexp

    def torch_bind(mod, v):
        t = mod.from_numpy(v["x"])
        return lambda: mod.logsumexp(t, dim=0)

    def scipy_bind(mod, v):
        x = v["x"]
        return lambda: mod.special.logsumexp(x)

    return {
        "numfuse": ("numfuse.logsumexp(x)", nf_bind),
        "numpy": ("m = x.max(); m + np.log(np.sum(np.exp(x - m)))", np_bind),
        "numexpr": ("m = x.max(); m + np.log(ne.evaluate('sum(exp(x - m))'))", ne_bind),
        "torch": ("torch.logsumexp(t, dim=0)", torch_bind),
        "scipy": ("scipy.special.logsumexp(x)", scipy_bind),
    }


def _softmax_binders() -> dict:
    def nf_bind(mod, v):
        x = v["x"]
        return lambda: mod.softmax(x)

    def np_bind(mod, v):
        x = v["x"]

        def numpy_softmax():
            e = np.exp(x - x.max())
            e /= e.sum()
            return e

        return numpy_softmax

    def ne_bind(mod, v):
        x = v["x"]

        def numexpr_softmax():
            e = mod.evaluate("exp(x - m)", local_dict={"x": x, "m": x.max()})
            return mod.evaluate("e / s", local_dict={"e": e, "s": e.sum()})

        return numexpr_softmax

    def torch_bind(mod, v):
        t = mod.from_numpy(v["x"])
        return lambda: mod.softmax(t, dim=0)

    def scipy_bind(mod, v):
        x = v["x"]
        return lambda: mod.special.softmax(x)

    return {
        "numfuse": ("numfuse.softmax(x)", nf_bind),
        "numpy": ("e = np.exp(x - x.max()); e /= e.sum()", np_bind),
        "numexpr": ("e = ne.evaluate('exp(x - m)'); ne.evaluate('e / s')", ne_bind),
        "torch": ("torch.softmax(t, dim=0)", torch_bind),
        "scipy": ("scipy.special.softmax(x)", scipy_bind),
    }


def _evaluate_binders(expression: str, numpy_fn, torch_fn, extra: dict | None = None) -> dict:
    """numfuse.evaluate and numexpr.evaluate take the string; NumPy and torch
    get the same computation written out in their own API (no eval)."""

    def nf_bind(mod, v):
        d = dict(v)
        return lambda: mod.evaluate(expression, local_dict=d)

    def ne_bind(mod, v):
        d = dict(v)
        return lambda: mod.evaluate(expression, local_dict=d)

    binders = {
        "numfuse": (f"numfuse.evaluate('{expression}')", nf_bind),
        "numexpr": (f"ne.evaluate('{expression}')", ne_bind),
        "scipy": _na("not a SciPy function"),
    }
    if numpy_fn is not None:
        numpy_text, numpy_call = numpy_fn

        def np_bind(mod, v):
            return lambda: numpy_call(**v)

        binders["numpy"] = (numpy_text, np_bind)
    else:
        binders["numpy"] = _na("no NumPy spelling for a custom expression")
    if torch_fn is not None:
        torch_text, torch_call = torch_fn

        def torch_bind(mod, v):
            tensors = {k: mod.from_numpy(a) for k, a in v.items()}
            return lambda: torch_call(mod, **tensors)

        binders["torch"] = (torch_text, torch_bind)
    else:
        binders["torch"] = _na("no torch spelling for a custom expression")
    binders.update(extra or {})
    return binders


def _compiler_spellings(name: str, variables: tuple) -> dict:
    """JAX's and Numba's spellings of a function (compilers.py), n/a where they have none."""
    arguments = ", ".join(variables)

    def jax_bind(mod, v):
        return _compilers.jax_call(mod, name, *(v[k] for k in variables))

    def numba_bind(mod, v):
        return _compilers.numba_call(mod, name, *(v[k] for k in variables))

    return {
        "jax": (f"{_compilers.JAX_TEXT[name]}({arguments})", jax_bind)
        if name in _compilers.JAX_TEXT
        else _na(f"no JAX spelling of {name}"),
        "numba": (f"{_compilers.NUMBA_TEXT[name]}", numba_bind)
        if name in _compilers.NUMBA_TEXT
        else _na(f"no Numba spelling of {name}"),
    }


def _numexpr_lse_axis0(mod, v):
    x = v["x"]
    return lambda: np.log(mod.evaluate("sum(exp(x), axis=0)", local_dict={"x": x}))


def _scipy_lse_axis0(mod, v):
    x = v["x"]
    return lambda: mod.special.logsumexp(x, axis=0)


EXPRESSIONS = {
    "2*a+3*b": dict(
        domain=(-1.0, 1.0),
        variables=("a", "b"),
        numpy=("2*a + 3*b", lambda a, b: 2 * a + 3 * b),
        torch=("2*ta + 3*tb", lambda t, a, b: 2 * a + 3 * b),
    ),
    "exp(a)+tan(b)-sinh(c)": dict(
        domain=(-1.0, 1.0),
        variables=("a", "b", "c"),
        numpy=(
            "np.exp(a) + np.tan(b) - np.sinh(c)",
            lambda a, b, c: np.exp(a) + np.tan(b) - np.sinh(c),
        ),
        torch=(
            "torch.exp(ta) + torch.tan(tb) - torch.sinh(tc)",
            lambda t, a, b, c: t.exp(a) + t.tan(b) - t.sinh(c),
        ),
    ),
    "log(sum(exp(x),axis=0))": dict(
        domain=(-5.0, 5.0),
        variables=("x",),
        two_d=True,
        output="row",
        numpy=("np.log(np.sum(np.exp(x), axis=0))", lambda x: np.log(np.sum(np.exp(x), axis=0))),
        torch=(
            "torch.log(torch.sum(torch.exp(t), dim=0))",
            lambda t, x: t.log(t.sum(t.exp(x), dim=0)),
        ),
        extra={
            "numexpr": ("np.log(ne.evaluate('sum(exp(x), axis=0)'))", _numexpr_lse_axis0),
            "scipy": ("scipy.special.logsumexp(x, axis=0)", _scipy_lse_axis0),
        },
    ),
}


def _build_functions() -> dict:
    table = {
        **{name: _ufunc_case(row) for name, row in TABLE_UFUNCS.items()},
        "logsumexp": Function(
            "logsumexp", "reduction", (-5.0, 5.0), ("x",), _logsumexp_binders(), output="scalar"
        ),
        "softmax": Function("softmax", "reduction", (-5.0, 5.0), ("x",), _softmax_binders()),
    }
    for expression, spec in EXPRESSIONS.items():
        table[expression] = Function(
            expression,
            "evaluate",
            spec["domain"],
            spec["variables"],
            _evaluate_binders(expression, spec["numpy"], spec["torch"], spec.get("extra")),
            two_d=spec.get("two_d", False),
            output=spec.get("output", "same"),
        )
    table["log(sum(exp(x),axis=0))"].notes.append("x is 2-d: isqrt(n) rows")
    for function in table.values():
        function.spellings.update(_compiler_spellings(function.name, function.variables))
    return table


FUNCTIONS = _build_functions()
GROUPS = {
    "ufuncs": list(TABLE_UFUNCS),
    "reductions": ["logsumexp", "softmax"],
    "evaluate": list(EXPRESSIONS),
}


def custom_expression(expression: str) -> Function:
    """A user's expression (--expr): numfuse.evaluate against numexpr.evaluate only.

    Its variables are the names numfuse finds in it; each gets a 1-d input
    uniform in [-1, 1) (so stay within functions defined there).
    """
    import numfuse

    names = tuple(
        sorted(n for n in numfuse._evaluate._names(expression) if n not in ("inf", "nan"))
    )
    if not names:
        raise ValueError(f"expression {expression!r} has no input variables")
    return Function(
        expression, "evaluate", (-1.0, 1.0), names, _evaluate_binders(expression, None, None)
    )


def resolve(names) -> list:
    """Function names (or group names: ufuncs, reductions, evaluate, all) -> Functions."""
    chosen = []
    for name in names:
        name = name.strip().replace(" ", "")
        if not name:
            continue
        if name == "all":
            keys = list(FUNCTIONS)
        elif name in GROUPS:
            keys = GROUPS[name]
        elif name in FUNCTIONS:
            keys = [name]
        else:
            raise KeyError(
                f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)} "
                f"or a group: {', '.join(GROUPS)}, all"
            )
        for key in keys:
            if FUNCTIONS[key] not in chosen:
                chosen.append(FUNCTIONS[key])
    return chosen
