"""numfuse on dask arrays: lazy results, blockwise programs, one-pass tree reductions.

A back end (numfuse._dispatch): imported, and registered for dask arrays,
once ``dask.array`` is imported and a value that is not a NumPy array reaches
numfuse.evaluate / logsumexp / softmax / log_softmax, so dask is not needed
to import numfuse. Every block function here is
a module-level function of plain arguments, so dask.distributed pickles it by
reference: workers need numfuse importable (installed, or on PYTHONPATH).

* Element-wise programs: one ``map_blocks`` task per block evaluating the
  whole fused program; inputs with different chunks are unified and
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
* evaluate() programs with reductions are split at each reduction, innermost
  first: ``R(operand, axis=..., keepdims=...)`` becomes a dask tree reduction
  whose chunk step evaluates the fused ``R(operand, keepdims=True)`` on a
  block (sum, prod, min, max: partial results combined with NumPy; mean: a
  sum divided by the count; logsumexp: the (m, s) state above), and the
  call is replaced in the text by a name bound to that lazy result; the
  remaining element-wise program then runs blockwise, broadcasting against
  it. A reduction whose operand holds no dask array is evaluated at once.
"""

from __future__ import annotations

import functools
import math

import dask.array as da
import numpy as np

from . import _axes, _core, _dispatch, _evaluate, _interop, _reduce

_REDUCTIONS = ("sum", "prod", "min", "max", "mean", "logsumexp")

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


# ------------------------------------------------------------ element-wise


def _evaluate_block(*blocks, ex, names, constants):
    env = dict(zip(names, blocks))
    env.update(constants)
    return np.asarray(_evaluate_numpy(ex, env))


def _elementwise(ex, env):
    """The element-wise program `ex` over env's values as a dask array."""
    names = [n for n in _core._expr_names(ex) if n in env]
    arrays = {n: env[n] for n in names if _is_array(env[n])}
    constants = {n: env[n] for n in names if n not in arrays}
    dtype = np.asarray(_evaluate_numpy(ex, {n: _dummy(env[n]) for n in names})).dtype
    if not any(is_dask_array(v) for v in arrays.values()):
        return _evaluate_numpy(ex, {n: env[n] for n in names})
    shape = np.broadcast_shapes(*(v.shape for v in arrays.values()))
    # NumPy broadcasting aligns dimensions from the right: so do the indices;
    # blockwise rechunks inputs to common chunks (align_arrays) and
    # broadcasts single-block dimensions.
    out_index = tuple(range(len(shape)))
    pairs = []
    for value in arrays.values():
        pairs += [_to_dask(value), out_index[len(shape) - value.ndim :]]
    return da.blockwise(
        _evaluate_block,
        out_index,
        *pairs,
        dtype=dtype,
        meta=np.empty((0,) * len(shape), dtype),
        align_arrays=True,
        ex=ex,
        names=tuple(arrays),
        constants=constants,
    )


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


def _identifier_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _innermost_reduction(ex: str):
    """(start, end, function, argument texts) of the last-starting reduction
    call in `ex` (it contains no other), or None. `ex` already compiled, so
    its parentheses balance."""
    found = None
    i = 0
    while i < len(ex):
        c = ex[i]
        starts_word = i == 0 or not (_identifier_char(ex[i - 1]) or ex[i - 1] == ".")
        if (c.isalpha() or c == "_") and starts_word:
            j = i
            while j < len(ex) and _identifier_char(ex[j]):
                j += 1
            word = ex[i:j]
            k = j
            while k < len(ex) and ex[k].isspace():
                k += 1
            if word in _REDUCTIONS and k < len(ex) and ex[k] == "(":
                found = (i, word, k)
            i = j
        else:
            i += 1
    if found is None:
        return None
    start, word, open_paren = found
    depth = 0
    args, arg_start = [], open_paren + 1
    for pos in range(open_paren, len(ex)):
        c = ex[pos]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                args.append(ex[arg_start:pos])
                return start, pos + 1, word, [a.strip() for a in args]
        elif c == "," and depth == 1:
            args.append(ex[arg_start:pos])
            arg_start = pos + 1
    raise ValueError(f"unbalanced parentheses in {ex!r}")


def _parse_int(text: str) -> int:
    return int(text.replace("_", "").replace(" ", ""), 0)


def _reduction_options(function: str, args, ndim: int):
    axis, keepdims = None, False
    for arg in args[1:]:
        key, _, value = (part.strip() for part in arg.partition("="))
        try:
            if key == "axis":
                if value == "None":
                    axis = None
                elif value.startswith("("):
                    items = [v for v in value.strip("()").split(",") if v.strip()]
                    axis = tuple(_parse_int(v) for v in items)
                else:
                    axis = _parse_int(value)
            elif key == "keepdims":
                keepdims = {"True": True, "False": False, "1": True, "0": False}[value]
            else:
                raise KeyError(key)
        except (KeyError, ValueError):
            raise NotImplementedError(
                f"numfuse.evaluate on dask arrays: cannot split {function}() with argument "
                f"{arg!r}; write axis= as integer literals or None and keepdims= as True/False"
            ) from None
    return _axes.normalise_axes(axis, ndim), keepdims


def _reduce_chunk(*blocks, axis=None, keepdims=True, program, names, constants, logsumexp_state):
    env = dict(zip(names, blocks))
    env.update(constants)
    partial = np.asarray(_evaluate_numpy(program.format(axis=tuple(axis)), env))
    if logsumexp_state is not None:
        return _state_from(partial, None, logsumexp_state)
    return partial


def _numpy_combine(values, axis=None, keepdims=False, *, function):
    return function(values, axis=axis, keepdims=keepdims).astype(values.dtype, copy=False)


def _mean_aggregate(values, axis=None, keepdims=False, *, count, dtype):
    total = np.sum(values, axis=axis, keepdims=keepdims)
    return (total / count).astype(dtype, copy=False)


_COMBINE = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.sum}


def _dask_reduction(function, operand, axes, keepdims, env, result_dtype):
    names = [n for n in _core._expr_names(operand) if n in env]
    arrays = [n for n in names if _is_array(env[n])]
    dask_names = [n for n in arrays if is_dask_array(env[n])]
    if len(arrays) == 1 and len(dask_names) == 1:
        # Fused: the chunk step evaluates R(operand) straight from the input block.
        x = env[arrays[0]]
        block_names, block_program = (arrays[0],), operand
        constants = {n: env[n] for n in names if n not in arrays}
    else:
        x = _elementwise(operand, {n: env[n] for n in names})
        block_names, block_program, constants = ("operand",), "operand", {}
    if x.ndim == 0:
        x = x[None]
        axes = (0,)
    partial_function = "sum" if function == "mean" else function
    program = f"{partial_function}({block_program}, axis={{axis}}, keepdims=True)"
    partial_dtype = np.asarray(
        _evaluate_numpy(
            program.format(axis=tuple(axes)),
            {
                n: (np.zeros((1,) * x.ndim, x.dtype) if n in block_names else constants[n])
                for n in (*block_names, *constants)
            },
        )
    ).dtype
    lse_state = _compute_type(partial_dtype) if function == "logsumexp" else None
    chunk = functools.partial(
        _reduce_chunk,
        program=program,
        names=block_names,
        constants=constants,
        logsumexp_state=lse_state,
    )
    out_ndim = x.ndim if keepdims else x.ndim - len(axes)
    if function == "logsumexp":
        state_dtype = _state_dtype(lse_state)
        state = da.reduction(
            x,
            chunk=chunk,
            combine=_state_combine,
            aggregate=_state_combine,
            axis=axes,
            keepdims=keepdims,
            dtype=state_dtype,
            meta=np.empty((0,) * out_ndim, state_dtype),
            split_every=_SPLIT_EVERY,
        )
        return state.map_blocks(
            functools.partial(_state_log, dtype=result_dtype),
            dtype=result_dtype,
            meta=np.empty((0,) * out_ndim, result_dtype),
        )
    combine = functools.partial(_numpy_combine, function=_COMBINE[function])
    if function == "mean":
        count = math.prod(x.shape[d] for d in axes)
        aggregate = functools.partial(_mean_aggregate, count=count, dtype=result_dtype)
    else:
        aggregate = combine
    return da.reduction(
        x,
        chunk=chunk,
        combine=combine,
        aggregate=aggregate,
        axis=axes,
        keepdims=keepdims,
        dtype=result_dtype,
        meta=np.empty((0,) * out_ndim, result_dtype),
        split_every=_SPLIT_EVERY,
    )


def _fresh_name(env, taken_text: str) -> str:
    k = 0
    while f"nf_reduced_{k}" in env or f"nf_reduced_{k}" in taken_text:
        k += 1
    return f"nf_reduced_{k}"


def evaluate(ex, names, values, *, out=None, order="K", casting="same_kind"):
    """numfuse.evaluate with dask inputs: a lazy dask array (see the module docstring)."""
    _no_out(out, "evaluate")
    env = {}
    for name, value in zip(names, values):
        scalar = isinstance(value, (bool, int, float, complex, np.generic))
        if scalar or is_dask_array(value):
            env[name] = value
        else:
            env[name] = _interop.as_ndarray(value)
    # Compile errors, types and broadcasting are reported now, not at compute time.
    shapes = [v.shape for v in env.values() if _is_array(v)]
    np.broadcast_shapes(*shapes)
    _evaluate_numpy(ex, {n: _dummy(v) for n, v in env.items()})
    while True:
        call = _innermost_reduction(ex)
        if call is None:
            break
        start, end, function, args = call
        operand = args[0]
        call_text = ex[start:end]
        sub_names = [n for n in _core._expr_names(operand) if n in env]
        sub_env = {n: env[n] for n in sub_names}
        if not any(is_dask_array(env[n]) for n in sub_names):
            value = _evaluate_numpy(call_text, sub_env)  # nothing lazy inside: now
        else:
            ndim = max((env[n].ndim for n in sub_names if _is_array(env[n])), default=0)
            axes, keepdims = _reduction_options(function, args, max(ndim, 1))
            result_dtype = np.asarray(
                _evaluate_numpy(call_text, {n: _dummy(v) for n, v in sub_env.items()})
            ).dtype
            value = _dask_reduction(function, operand, axes, keepdims, sub_env, result_dtype)
        name = _fresh_name(env, ex)
        env[name] = value
        ex = ex[:start] + name + ex[end:]
    if ex.strip() in env and is_dask_array(env[ex.strip()]):
        return env[ex.strip()]
    return _elementwise(ex, env)


_dispatch.register("dask", is_dask_array, evaluate=evaluate, logsumexp=logsumexp, softmax=softmax)
