"""The stand-in array: NumPy's protocols and Python's operators, routed to the Trace."""

from __future__ import annotations

import operator

import numpy as np

from . import _ops

_VIEW_FUNCTIONS = frozenset(
    getattr(np, name)
    for name in (
        "transpose",
        "reshape",
        "squeeze",
        "expand_dims",
        "broadcast_to",
        "moveaxis",
        "swapaxes",
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "ravel",
    )
)
_UFUNC_TEMPLATES = _ops._UFUNC_TEMPLATES
_VIEW_METHODS = frozenset(("reshape", "transpose", "squeeze", "swapaxes", "ravel", "view"))


class Tracer:
    """A traced array: a pending node (``template`` over ``args``) or a leaf (``slot`` of
    the trace's env, or ``const``). ``dtype``, ``shape`` and ``scalar`` (NumPy would give a
    NumPy scalar here) are NumPy's, known while tracing."""

    __slots__ = (
        "trace",
        "template",
        "args",
        "dtype",
        "shape",
        "scalar",
        "slot",
        "const",
        "textsize",
        "depth",
        "__weakref__",
    )
    __array_priority__ = 1000
    __hash__ = None  # as ndarray

    def __init__(self, trace):
        self.trace = trace
        self.slot = None
        self.const = _ops.NO_CONST
        self.args = ()
        self.textsize = 0
        self.depth = 0

    # -- static facts (part of the signature a trace is cached under)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"<numfuse.jit tracer shape={self.shape} dtype={self.dtype}>"

    __str__ = __repr__

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- NumPy's protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        trace = self.trace
        # the table's template without a call (every traced np.* ufunc comes here)
        template = _UFUNC_TEMPLATES.get(ufunc) or _ops.ufunc_template(ufunc)
        if method == "__call__" and not kwargs and template is not None:
            return trace.fused(template, ufunc, inputs, what=f"np.{ufunc.__name__}")
        function = ufunc if method == "__call__" else getattr(ufunc, method)
        name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if "out" in kwargs:
            return trace.mutate(
                lambda *a: function(*a[:-1], **{**kwargs, "out": a[-1]}),
                (*inputs, kwargs["out"]),
                f"{name}(out=...)",
            )
        return trace.eager(function, inputs, kwargs, name)

    def __array_function__(self, func, types, args, kwargs):
        trace = self.trace
        if func in _ops.REDUCTIONS:
            return _reduce(self, func, args, kwargs)
        if func is np.where and len(args) == 3 and not kwargs:
            return trace.fused("where({0}, {1}, {2})", np.where, args, what="np.where")
        if func is np.clip and len(args) == 3 and not kwargs:
            return _clip(trace, *args)
        if func in _VIEW_FUNCTIONS:
            return trace.eager(func, args, kwargs, f"np.{func.__name__}", view=True)
        return trace.eager(func, args, kwargs, f"np.{func.__name__}")

    def __array__(self, dtype=None, copy=None):
        value = self.trace.escape(self, "conversion to a NumPy array (np.asarray)")
        return np.asarray(value, dtype=dtype)

    # -- Python values of traced arrays: computed, and re-checked by later calls

    def __bool__(self):
        return self.trace.concretize(self, bool, "bool() of a traced array (an if or while)")

    def __float__(self):
        return self.trace.concretize(self, float, "float() of a traced array")

    def __int__(self):
        return self.trace.concretize(self, int, "int() of a traced array")

    def __index__(self):
        return self.trace.concretize(self, operator.index, "a traced array used as an index")

    def __complex__(self):
        return self.trace.concretize(self, complex, "complex() of a traced array")

    def item(self, *args):
        return self.trace.concretize(self, lambda a: a.item(*args), "ndarray.item()")

    # -- methods the engine has

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        target = np.dtype(dtype)
        if order != "K" or casting != "unsafe" or not subok:
            return self.trace.eager(
                lambda a: a.astype(dtype, order, casting, subok, copy),
                (self,),
                {},
                "ndarray.astype",
            )
        if target == self.dtype and not copy:
            return self
        template = _ops.astype_template(self.dtype, target)
        operands = (self,)
        if template is None and np.result_type(self.dtype, target) == target:
            # a widening cast: times a strong (NumPy scalar) one of the target type is exact
            template, operands = "({0} * {1})", (self, target.type(1))

        def call(a, *_):
            return a.astype(target)

        if template is None:
            return self.trace.eager(call, (self,), {}, f"astype({target}) of {self.dtype}")
        return self.trace.fused(template, call, operands, what=f"astype({target})")

    def copy(self, order="K"):
        return self.astype(self.dtype, order=order, copy=True)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return _reduce(self, np.sum, (self, axis, dtype, out, keepdims), kwargs)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return _reduce(self, np.prod, (self, axis, dtype, out, keepdims), kwargs)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return _reduce(self, np.mean, (self, axis, dtype, out, keepdims), kwargs)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        return _reduce(self, np.max, (self, axis, out, keepdims), kwargs)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        return _reduce(self, np.min, (self, axis, out, keepdims), kwargs)

    def clip(self, min=None, max=None, **kwargs):  # noqa: A002 - ndarray's names
        if kwargs:
            return self.trace.eager(np.clip, (self, min, max), kwargs, "np.clip")
        return _clip(self.trace, self, min, max)

    @property
    def T(self):
        return self.trace.eager(np.transpose, (self,), {}, "ndarray.T", view=True)

    @property
    def real(self):
        return self.trace.fused("real({0})", np.real, (self,), what="real")

    @property
    def imag(self):
        return self.trace.fused("imag({0})", np.imag, (self,), what="imag")

    def __getitem__(self, index):
        basic = _is_basic_index(index)
        return self.trace.eager(
            operator.getitem,
            (self, index),
            {},
            "indexing" if basic else "fancy indexing",
            view=basic,
        )

    def __setitem__(self, index, value):
        self.trace.mutate(operator.setitem, (self, index, value), "item assignment")

    def __getattr__(self, name):
        # Any other ndarray attribute or method: NumPy's, on the computed array. Protocol
        # probes (__array_interface__, __deepcopy__, ...) are not traced.
        if name.startswith("__"):
            raise AttributeError(name)
        attribute = getattr(np.ndarray, name)  # AttributeError as NumPy's for unknown names
        trace = self.trace
        if not callable(attribute):
            return trace.eager(getattr, (self, name), {}, f"ndarray.{name}")
        view = name in _VIEW_METHODS

        def method(*args, **kwargs):
            return trace.eager(
                lambda a, *r, **k: getattr(a, name)(*r, **k),
                (self, *args),
                kwargs,
                f"ndarray.{name}()",
                view=view,
            )

        return method


def _is_basic_index(index) -> bool:
    items = index if type(index) is tuple else (index,)
    return all(type(i) in (int, slice) or i is None or i is Ellipsis for i in items)


def _clip(trace, a, lo, hi):
    if lo is None and hi is None:
        return trace.eager(np.clip, (a, lo, hi), {}, "np.clip")
    if lo is None:
        return trace.fused(
            "minimum({0}, {1})", lambda x, high: np.clip(x, None, high), (a, hi), what="np.clip"
        )
    if hi is None:
        return trace.fused(
            "maximum({0}, {1})", lambda x, low: np.clip(x, low, None), (a, lo), what="np.clip"
        )
    return trace.fused("minimum(maximum({0}, {1}), {2})", np.clip, (a, lo, hi), what="np.clip")


_REDUCTION_PARAMS = ("a", "axis", "dtype", "out", "keepdims")
_MINMAX_PARAMS = ("a", "axis", "out", "keepdims")


def _reduce(tracer, func, args, kwargs):
    """np.sum(x, axis, keepdims=...) and friends: fused when only axis/keepdims are given."""
    name = _ops.REDUCTIONS[func]
    params = _MINMAX_PARAMS if name in ("min", "max") else _REDUCTION_PARAMS
    bound = dict(zip(params, args))
    extra = {k: v for k, v in kwargs.items() if k not in params}
    bound.update({k: v for k, v in kwargs.items() if k in params})
    a = bound.get("a")
    axis = bound.get("axis")
    keepdims = bound.get("keepdims", False)
    plain = (
        not extra
        and bound.get("dtype") is None
        and bound.get("out") is None
        and type(keepdims) is bool
        and type(a) is Tracer
    )
    if not plain:
        full = {k: v for k, v in bound.items() if k != "a"}
        full.update(extra)
        return tracer.trace.eager(
            func,
            (a,),
            {k: v for k, v in full.items() if v is not None or k == "axis"},
            f"np.{func.__name__} with {sorted(full)}",
        )

    def call(x):
        return func(x, axis=axis, keepdims=keepdims)

    return a.trace.reduction(name, call, a, axis, keepdims)


def _binary(ufunc):
    # What __array_ufunc__ does for a call without keywords, without its dispatch: every
    # operator's ufunc has a template.
    template = _ops.ufunc_template(ufunc)
    what = f"np.{ufunc.__name__}"

    def forward(self, other):
        return self.trace.fused(template, ufunc, (self, other), what=what)

    def reflected(self, other):
        return self.trace.fused(template, ufunc, (other, self), what=what)

    return forward, reflected


def _unary(ufunc):
    template = _ops.ufunc_template(ufunc)
    what = f"np.{ufunc.__name__}"
    return lambda self: self.trace.fused(template, ufunc, (self,), what=what)


for _name, _ufunc in {**_ops.BINARY_OPERATORS, **_ops.COMPARISONS}.items():
    _forward, _reflected = _binary(_ufunc)
    setattr(Tracer, f"__{_name}__", _forward)
    if _name in _ops.BINARY_OPERATORS:
        setattr(Tracer, f"__r{_name}__", _reflected)
for _name, _ufunc in _ops.UNARY_OPERATORS.items():
    setattr(Tracer, f"__{_name}__", _unary(_ufunc))
Tracer.__matmul__ = lambda self, other: self.__array_ufunc__(np.matmul, "__call__", self, other)
Tracer.__rmatmul__ = lambda self, other: self.__array_ufunc__(np.matmul, "__call__", other, self)
Tracer.__divmod__ = lambda self, other: self.__array_ufunc__(np.divmod, "__call__", self, other)


def _inplace(name, ufunc):
    def method(self, other):
        if self.scalar:  # NumPy scalars are immutable: x += 1 rebinds x
            return self.__array_ufunc__(ufunc, "__call__", self, other)
        function = getattr(operator, f"i{name}")
        return self.trace.mutate(function, (self, other), f"in-place {name} (x {name}= ...)")

    return method


for _name, _ufunc in _ops.BINARY_OPERATORS.items():
    setattr(Tracer, f"__i{_name}__", _inplace(_name, _ufunc))
