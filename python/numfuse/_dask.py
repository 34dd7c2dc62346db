"""numfuse on dask arrays: lazy results, blockwise programs, one-pass tree reductions.

A back end (numfuse._dispatch): imported, and registered for dask arrays,
once ``dask.array`` is imported and a value that is not a NumPy array reaches
numfuse.evaluate / logsumexp / softmax / log_softmax, so dask is not needed
to import numfuse. Every block function here is a module-level function of
plain arguments, so dask.distributed pickles it by reference: workers need
numfuse importable (installed, or on PYTHONPATH).

No Python here reads expression text: evaluate() schedules the stages of the
plan the C++ compiler makes (``numfuse._core._plan_stages``: what each stage
reads, how it reduces, its dtype) and runs one stage on one block with
``numfuse._core._plan_run_stage``.

* Element-wise stages: one blockwise task per block running the whole fused
  program of the stage; inputs with different chunks are unified and
  broadcast by dask's blockwise machinery; NumPy arrays become single-chunk
  dask arrays, scalars travel as constants.
* ``logsumexp``: ``da.reduction`` whose chunk step is numfuse's one-pass C++
  logsumexp of the block (with ``b`` as dask's ``weights``) and whose state
  is the pair (m, s) with value ``s * exp(m)``: the block's log-sum and sign.
  combine/aggregate merge pairs as ``shift = max(m)``,
  ``s = sum(s_i * exp(m_i - shift))`` (shift 0 when the max is not finite,
  so -inf, +inf and NaN come out as in memory), and the result is
  ``shift + log|s|`` with sign ``sign(s)``: one read of the data.
* ``softmax``/``log_softmax``: when every reduced axis is a single chunk, each
  block is an independent numfuse.softmax call (the in-memory answer); else
  a logsumexp reduction over the chunked axes followed by one fused
  element-wise pass ``exp(x - L)`` / ``x - L`` (two reads of the data).
* Reduction stages (the compiler makes one per reduction, in dependency
  order) become dask tree reductions: each block's task runs the stage's
  fused program and reduces it with keepdims (sum, prod, min, max: partial
  results combined with NumPy; mean: a sum divided by the count; logsumexp:
  the (m, s) state above); later stages read the lazy result, broadcasting
  against it. A stage that reads no dask array is evaluated at once.
"""

from __future__ import annotations

import functools
import math

import dask.array as da
import numpy as np

from . import _axes, _core, _dispatch, _evaluate, _interop, _reduce

# Chunk results are output-sized (16 bytes per output for the (m, s) state),
# so merging many in one task costs little, while every tree level adds a
# scheduler hop: 32 per combine step instead of dask's default 4 makes an
# axis=None reduction of up to 32 chunks a single aggregate task.
_SPLIT_EVERY = 32


def is_dask_array(value) -> bool:
    return isinstance(value, da.Array)


def _no_out(out, name: str) -> None:
    if out is not None:
        raise TypeError(
            f"{name}: out= is not supported for dask arrays (the result is a lazy dask "
            "array; write it with dask.array.store or .compute())"
        )


def _to_dask(value):
    if is_dask_array(value):
        return value
    return da.asarray(_interop.as_ndarray(value))


def _is_array(value) -> bool:
    return is_dask_array(value) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _dummy(value):
    """A one-element stand-in with the value's dtype and number of dimensions."""
    if _is_array(value):
        return np.zeros((1,) * value.ndim, dtype=value.dtype)
    return value


def _evaluate_numpy(ex, env):
    return _evaluate.evaluate(ex, local_dict=env, global_dict={})


# ------------------------------------------------- (m, s) logsumexp state


def _state_dtype(compute: np.dtype) -> np.dtype:
    return np.dtype([("m", compute), ("s", compute)])


def _state_from(log_sum, sign, compute: np.dtype):
    log_sum = np.asarray(log_sum)
    state = np.empty(log_sum.shape, _state_dtype(compute))
    state["m"] = log_sum
    state["s"] = 1 if sign is None else sign
    return state


def _state_combine(state, axis=None, keepdims=False):
    """Merge (m, s) pairs along `axis`: value = s * exp(m) summed."""
    m, s = state["m"], state["s"]
    top = np.max(m, axis=axis, keepdims=True)
    with np.errstate(all="ignore"):
        shift = np.where(np.isfinite(top), top, 0).astype(m.dtype)
        total = np.sum(s * np.exp(m - shift), axis=axis, keepdims=True)
    if not keepdims:
        shift = np.squeeze(shift, axis=axis)
        total = np.squeeze(total, axis=axis)
    out = np.empty(np.shape(total), state.dtype)
    out["m"], out["s"] = shift, total
    return out


def _state_log(state, dtype):
    with np.errstate(all="ignore"):
        return (state["m"] + np.log(np.abs(state["s"]))).astype(dtype)


def _state_sign(state, dtype):
    return np.sign(state["s"]).astype(dtype)


def _logsumexp_chunk(x, weights=None, axis=None, keepdims=True, *, compute):
    log_sum, sign = _reduce.logsumexp(x, axis=axis, b=weights, keepdims=True, return_sign=True)
    return _state_from(log_sum, sign, compute)


def _compute_type(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float16, np.float32) else dtype


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, out=None):
    """numfuse.logsumexp for dask inputs: a lazy one-pass tree reduction."""
    _no_out(out, "logsumexp")
    a = _to_dask(a)
    b = None if b is None else _to_dask(b)
    for value, what in ((a, "a"), (b, "b")):
        if value is not None and value.dtype.kind not in "biuf":
            raise TypeError(
                f"logsumexp: dask input {what} has dtype {value.dtype}; dask arrays of "
                "boolean, integer or real floating-point type are supported"
            )
    # dtypes (and argument errors) exactly as the in-memory function gives them
    result_dtype = np.asarray(
        _reduce.logsumexp(_dummy(a), b=None if b is None else _dummy(b), return_sign=True)[0]
    ).dtype
    shape = a.shape if b is None else np.broadcast_shapes(a.shape, b.shape)
    if len(shape) == 0:
        shape = (1,)
    a = da.broadcast_to(a, shape)
    b = None if b is None else da.broadcast_to(b, shape)
    axes = _axes.normalise_axes(axis, len(shape))
    result_shape = _axes.reduced_shape(shape, axes, keepdims)
    if math.prod(shape) == 0:
        result = da.full(result_shape, -np.inf, dtype=result_dtype)
        sign = da.full(result_shape, -1.0, dtype=result_dtype)
        return (result, sign) if return_sign else result
    compute = _compute_type(result_dtype)
    state_dtype = _state_dtype(compute)
    state = da.reduction(
        a,
        chunk=functools.partial(_logsumexp_chunk, compute=compute),
        combine=_state_combine,
        aggregate=_state_combine,
        axis=axes,
        keepdims=keepdims,
        dtype=state_dtype,
        weights=b,
        meta=np.empty((0,) * len(result_shape), state_dtype),
        concatenate=True,
        split_every=_SPLIT_EVERY,
    )
    meta = np.empty((0,) * len(result_shape), result_dtype)
    result = state.map_blocks(
        functools.partial(_state_log, dtype=result_dtype), dtype=result_dtype, meta=meta
    )
    if not return_sign:
        return result
    sign = state.map_blocks(
        functools.partial(_state_sign, dtype=result_dtype), dtype=result_dtype, meta=meta
    )
    return result, sign


# ---------------------------------------------------------------- softmax


def _softmax_block(x, *, axis, log):
    return _reduce._softmax_any(x, axis, None, log)


def softmax(x, axis=None, log=False, *, out=None):
    """numfuse.softmax / log_softmax for a dask array (lazy)."""
    name = "log_softmax" if log else "softmax"
    _no_out(out, name)
    x = _to_dask(x)
    if x.dtype.kind == "c":
        raise TypeError(f"{name}: complex dask arrays are not supported")
    axes = _axes.normalise_axes(axis, x.ndim)
    dummy = np.zeros((1,) * x.ndim, x.dtype)
    result_dtype = np.asarray(_reduce._softmax_any(dummy, axes, None, log)).dtype
    meta = np.empty((0,) * x.ndim, result_dtype)
    if all(len(x.chunks[d]) == 1 for d in axes):
        return x.map_blocks(
            functools.partial(_softmax_block, axis=axes, log=log), dtype=result_dtype, meta=meta
        )
    if any(x.shape[d] == 0 for d in axes):
        raise ValueError("zero-size array to reduction operation maximum which has no identity")
    compute = _compute_type(result_dtype)
    xc = x.astype(compute)
    lse = logsumexp(xc, axis=axes, keepdims=True)
    # +inf in a group: NaN everywhere (as in memory); NaN / all -inf give NaN anyway.
    program = "where(lse < inf, x - lse, nan)" if log else "where(lse < inf, exp(x - lse), nan)"
    return _elementwise(program, {"x": xc, "lse": lse}).astype(result_dtype)


# --------------------------------------------------------------- evaluate


class _Program:
    """The stages of the plan numfuse compiles for `ex` and values like `values`
    (numfuse._core._plan_stages): picklable, so blocks run on any worker."""

    def __init__(self, ex, names, values):
        self.ex = ex
        inputs, self.stages = _core._plan_stages(ex, list(names), [_dummy(v) for v in values])
        self.inputs = [tuple(item) for item in inputs]

    def run(self, k, values, reduce, axes, keepdims):
        """Stage k on NumPy arrays and scalars (cast to the stage's input dtypes)."""
        dtypes = self.stages[k]["input_dtypes"]
        arrays = [np.require(v, dtype, "A") for v, dtype in zip(values, dtypes)]
        return _core._plan_run_stage(self.ex, self.inputs, k, arrays, reduce, axes, keepdims)

    def run_as_compiled(self, k, values):
        stage = self.stages[k]
        axes = None if stage["all_axes"] else list(stage["axes"])
        return self.run(k, values, stage["reduce"], axes, stage["keepdims"])


def _stage_block(*blocks, program, k, slots, reduce, axes, keepdims, state):
    """Stage k on one block of each dask input. `slots`: per stage input,
    ("block", j) for blocks[j] or ("value", v) for a value every block shares.
    `state`: the compute dtype when the result is a logsumexp partial, which
    is returned as the (m, s) state."""
    values = [blocks[item] if kind == "block" else item for kind, item in slots]
    result = program.run(k, values, reduce, axes, keepdims)
    return result if state is None else _state_from(result, None, state)


def _blockwise_stage(program, k, values, dtype, *, reduce, axes, keepdims, state=None):
    """Stage k over dask blocks: element-wise, or partial reductions of each block
    (one element per block along the reduced `axes`, keepdims)."""
    shape = np.broadcast_shapes(*(v.shape for v in values if _is_array(v)))
    # NumPy broadcasting aligns dimensions from the right: so do the indices;
    # blockwise rechunks inputs to common chunks (align_arrays) and
    # broadcasts single-block dimensions.
    out_index = tuple(range(len(shape)))
    pairs, slots = [], []
    for value in values:
        if _is_array(value):
            slots.append(("block", len(pairs) // 2))
            pairs += [_to_dask(value), out_index[len(shape) - value.ndim :]]
        else:
            slots.append(("value", value))
    adjust = {d: 1 for d in axes} if reduce != "none" and axes else None
    return da.blockwise(
        _stage_block,
        out_index,
        *pairs,
        dtype=dtype,
        meta=np.empty((0,) * len(shape), dtype),
        align_arrays=True,
        adjust_chunks=adjust,
        program=program,
        k=k,
        slots=tuple(slots),
        reduce=reduce,
        axes=None if axes is None else list(axes),
        keepdims=keepdims,
        state=state,
    )


def _partials_chunk(partials, axis=None, keepdims=True):
    """The chunk step over per-block partial results: each is one element along `axis`."""
    return partials


def _numpy_combine(values, axis=None, keepdims=False, *, function):
    return function(values, axis=axis, keepdims=keepdims).astype(values.dtype, copy=False)


def _mean_aggregate(values, axis=None, keepdims=False, *, count, dtype):
    total = np.sum(values, axis=axis, keepdims=keepdims)
    return (total / count).astype(dtype, copy=False)


_COMBINE = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.sum}


def _reduction_stage(program, k, values):
    """Reduction stage k as a dask tree reduction: each block's partial
    reduction (mean: a sum; logsumexp: the (m, s) state) fused with the
    stage's element-wise program, partials combined with NumPy."""
    stage = program.stages[k]
    function = stage["reduce"]
    result_dtype = np.dtype(stage["out_dtype"])
    shape = np.broadcast_shapes(*(v.shape for v in values if _is_array(v)))
    ndim = len(shape)
    if ndim == 0:  # one element: one block, reduced as compiled
        axes = None if stage["all_axes"] else list(stage["axes"])
        return _blockwise_stage(
            program, k, values, result_dtype, reduce=function, axes=axes, keepdims=stage["keepdims"]
        )
    if stage["all_axes"]:
        axes = tuple(range(ndim))
    else:
        axes = _axes.normalise_axes(tuple(stage["axes"]), ndim)
    keepdims = stage["keepdims"]
    out_ndim = ndim if keepdims else ndim - len(axes)

    def tree(partials, combine, aggregate, dtype):
        return da.reduction(
            partials,
            chunk=_partials_chunk,
            combine=combine,
            aggregate=aggregate,
            axis=axes,
            keepdims=keepdims,
            dtype=dtype,
            meta=np.empty((0,) * out_ndim, dtype),
            split_every=_SPLIT_EVERY,
        )

    if function == "logsumexp":
        compute = _compute_type(result_dtype)
        state_dtype = _state_dtype(compute)
        partials = _blockwise_stage(
            program,
            k,
            values,
            state_dtype,
            reduce="logsumexp",
            axes=axes,
            keepdims=True,
            state=compute,
        )
        state = tree(partials, _state_combine, _state_combine, state_dtype)
        return state.map_blocks(
            functools.partial(_state_log, dtype=result_dtype),
            dtype=result_dtype,
            meta=np.empty((0,) * out_ndim, result_dtype),
        )
    partial_function = "sum" if function == "mean" else function
    partials = _blockwise_stage(
        program, k, values, result_dtype, reduce=partial_function, axes=axes, keepdims=True
    )
    combine = functools.partial(_numpy_combine, function=_COMBINE[function])
    if function == "mean":
        count = math.prod(shape[d] for d in axes)
        aggregate = functools.partial(_mean_aggregate, count=count, dtype=result_dtype)
    else:
        aggregate = combine
    return tree(partials, combine, aggregate, result_dtype)


def _run_program(program, values):
    """Every stage in order: blockwise where a dask array flows in, at once elsewhere."""
    results = []
    for k, stage in enumerate(program.stages):
        inputs = [results[i] if from_stage else values[i] for from_stage, i in stage["inputs"]]
        if not any(is_dask_array(v) for v in inputs):
            result = program.run_as_compiled(k, inputs)  # nothing lazy: now
        elif stage["reduce"] != "none":
            result = _reduction_stage(program, k, inputs)
        elif stage["passthrough"]:
            result = inputs[0]  # the program is an earlier stage's (lazy) result
        else:
            dtype = np.dtype(stage["out_dtype"])
            result = _blockwise_stage(
                program, k, inputs, dtype, reduce="none", axes=None, keepdims=False
            )
        results.append(result)
    return results[-1]


def _elementwise(ex, env):
    """The element-wise program `ex` over env's values as a dask array."""
    names = [n for n in _core._expr_names(ex) if n in env]
    values = [env[n] for n in names]
    return _run_program(_Program(ex, names, values), values)


def evaluate(ex, names, values, *, out=None, order="K", casting="same_kind"):
    """numfuse.evaluate with dask inputs: a lazy dask array (see the module docstring)."""
    _no_out(out, "evaluate")
    values = [
        value
        if isinstance(value, (bool, int, float, complex, np.generic)) or is_dask_array(value)
        else _interop.as_ndarray(value)
        for value in values
    ]
    # Compile errors, types and broadcasting are reported now, not at compute time.
    np.broadcast_shapes(*(v.shape for v in values if _is_array(v)))
    _evaluate_numpy(ex, {n: _dummy(v) for n, v in zip(names, values)})
    return _run_program(_Program(ex, names, values), values)


_dispatch.register("dask", is_dask_array, evaluate=evaluate, logsumexp=logsumexp, softmax=softmax)
