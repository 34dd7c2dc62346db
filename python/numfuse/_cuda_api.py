"""numfuse on the GPU: the optional CUDA path (public names in ``numfuse.cuda``).

Device arrays are used in place, without a trip through host memory: any object
exporting ``__cuda_array_interface__`` (CuPy, Numba, torch CUDA tensors) or
DLPack (``__dlpack__`` / ``__dlpack_device__``) on a CUDA device. Results are
allocated as the same kind of array on the same device (torch -> torch tensor,
CuPy -> CuPy array, Numba -> Numba device array, anything else ->
``numfuse.cuda.DeviceArray``) or written to a device ``out=``. Work is queued on the
array's stream: the ``stream`` entry of ``__cuda_array_interface__``, torch's
current stream for torch tensors, CuPy's current stream for CuPy arrays, the
legacy default stream otherwise, or the ``stream=`` argument (an int handle or
an object with ``.ptr`` / ``.cuda_stream``).

NumPy input needs ``device="cuda"`` (or ``"cuda:N"``): it is copied to the
GPU, computed there and copied back, and the result is a NumPy array. For a
single operation the copies cost more than the GPU saves; see the README.

Why a separate namespace: ``numfuse.exp`` is a ``numpy.ufunc``. NumPy's ufunc
machinery never hands it a torch CUDA tensor, and CuPy's ``__array_ufunc__``
would answer ``numfuse.exp(cupy_array)`` with CuPy's own ``exp`` (it looks up
the ufunc by name). So the GPU entry points are explicit: ``numfuse.cuda.exp``.

Importing numfuse never fails because of CUDA: when the ``numfuse._cuda``
extension is missing (built without nvcc) or cannot load, ``available()`` is
False, ``status()`` says why, ``devices()`` lists the CPU only, and the GPU
functions raise RuntimeError with that reason.
"""

from __future__ import annotations

import ctypes
import math
import sys

import numpy as np

_cuda = None
_import_error: str | None = None
try:  # never let the optional extension break `import numfuse`
    from . import _cuda  # type: ignore[attr-defined, no-redef]
except Exception as error:  # ImportError, OSError (a broken .so), anything else
    _cuda = None
    _import_error = f"{type(error).__name__}: {error}"
    if isinstance(error, ImportError) and "cannot import name '_cuda'" in str(error):
        _import_error = "not built: no CUDA toolkit at build time, or NUMFUSE_CUDA=OFF"

__all__ = [
    "DeviceArray",
    "available",
    "devices",
    "erf",
    "evaluate",
    "exp",
    "jit_status",
    "log",
    "log_softmax",
    "logsumexp",
    "softmax",
    "status",
    "to_device",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_LETTERS = {
    np.dtype(np.bool_): "b",
    np.dtype(np.int32): "i",
    np.dtype(np.int64): "l",
    np.dtype(np.float32): "f",
    np.dtype(np.float64): "d",
}
_DTYPE_OF_LETTER = {letter: dtype for dtype, letter in _LETTERS.items()}
_TORCH_DTYPES = {
    "torch.float32": np.dtype(np.float32),
    "torch.float64": np.dtype(np.float64),
    "torch.bool": np.dtype(np.bool_),
    "torch.int32": np.dtype(np.int32),
    "torch.int64": np.dtype(np.int64),
}


# ---------------------------------------------------------------- status, devices


def status() -> str:
    """Why the GPU path is or is not usable, in one line."""
    if _cuda is None:
        return f"numfuse._cuda is not available ({_import_error})"
    count = _cuda.device_count()
    if count == 0:
        reason = _cuda.device_count_error() or "no CUDA device"
        return (
            f"numfuse._cuda is built (architectures {_cuda.architectures()}) but unusable: {reason}"
        )
    return f"numfuse._cuda: {count} CUDA device(s), architectures {_cuda.architectures()}"


def available() -> bool:
    """True when numfuse._cuda is built and at least one CUDA device is usable."""
    return _cuda is not None and _cuda.device_count() > 0


def devices() -> list[dict]:
    """The devices numfuse can compute on: the CPU first, then each CUDA device.

    CPU: ``{"kind": "cpu", "name", "level" (instruction set in use), "threads"}``.
    CUDA: ``{"kind": "cuda", "index", "name", "compute_capability", "total_memory"
    (bytes), "multiprocessors"}``.
    """
    import platform

    from . import _core

    listed = [
        {
            "kind": "cpu",
            "name": platform.processor() or platform.machine(),
            "level": _core.get_level(),
            "threads": _core.get_num_threads(),
        }
    ]
    if _cuda is not None:
        for index in range(_cuda.device_count()):
            info = dict(_cuda.device_info(index))
            info["kind"] = "cuda"
            listed.append(info)
    return listed


def _require(fn: str):
    if _cuda is None:
        raise RuntimeError(f"numfuse.cuda.{fn}: {status()}")
    return _cuda


_device_seen = False  # a device once usable stays so: skip the runtime query on every call


def _require_device(fn: str):
    """The extension, when a CUDA device is usable; RuntimeError saying why not otherwise."""
    global _device_seen
    lib = _require(fn)
    if not _device_seen:
        if lib.device_count() == 0:
            raise RuntimeError(f"numfuse.cuda.{fn}: no usable CUDA device ({status()})")
        _device_seen = True
    return lib


# ---------------------------------------------------------------- device arrays


class DeviceArray:
    """A C-contiguous array in GPU memory owned by numfuse (exports __cuda_array_interface__).

    numfuse.cuda returns one when the input's kind has no allocator numfuse knows
    (a generic __cuda_array_interface__ / DLPack producer). ``get()`` copies to NumPy.
    """

    def __init__(self, shape, dtype, device: int = 0):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = int(device)
        nbytes = math.prod(self.shape) * self.dtype.itemsize
        self._buffer = _require("DeviceArray").DeviceBuffer(nbytes, self.device)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def ptr(self) -> int:
        return self._buffer.ptr

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self._buffer.ptr, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }

    def get(self) -> np.ndarray:
        """A NumPy copy (waits for the device to finish)."""
        host = np.empty(self.shape, self.dtype)
        self._buffer.copy_to_host(host)
        return host

    def __repr__(self) -> str:
        return (
            f"numfuse.cuda.DeviceArray(shape={self.shape}, dtype={self.dtype}, "
            f"device={self.device})"
        )


def to_device(array, device="cuda") -> DeviceArray:
    """Copy a host array to the GPU as a numfuse.cuda.DeviceArray."""
    host = np.ascontiguousarray(array)
    _require_device("to_device")
    result = DeviceArray(host.shape, host.dtype, _device_index(device, "to_device"))
    result._buffer.copy_from_host(host)
    return result


def _device_index(device, fn: str) -> int:
    if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
        return int(device)
    if isinstance(device, str):
        if device == "cuda":
            return 0
        if device.startswith("cuda:") and device[5:].isdigit():
            return int(device[5:])
    raise ValueError(
        f"numfuse.cuda.{fn}: device must be 'cuda', 'cuda:N' or an int; got {device!r}"
    )


class _View:
    """One argument as seen by the kernels: a contiguous device buffer."""

    __slots__ = ("obj", "kind", "ptr", "shape", "dtype", "device", "stream", "keepalive", "host")

    def __init__(self):
        self.keepalive = None
        self.host = None


def _library_of(obj) -> str:
    return type(obj).__module__.split(".")[0]


def _stream_handle(stream) -> int:
    if stream is None:
        return 0
    if isinstance(stream, (int, np.integer)):
        return int(stream)
    for attr in ("ptr", "cuda_stream", "handle"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, (int, np.integer)):
            return int(handle)
    raise TypeError(
        f"stream must be an int handle or a CuPy/torch stream; got {type(stream).__name__}"
    )


def _c_contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13
_DL_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}


def _from_dlpack(obj, fn: str, stream: int, view: _View) -> None:
    capsule = obj.__dlpack__(stream=stream if stream else 1)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, b"dltensor")  # DLManagedTensor: its DLTensor comes first
    tensor = _DLTensor.from_address(address)
    kind = _DL_KINDS.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1:
        raise TypeError(f"numfuse.cuda.{fn}: unsupported DLPack dtype code {tensor.dtype.code}")
    dtype = np.dtype(np.bool_) if kind == "b" else np.dtype(f"{kind}{tensor.dtype.bits // 8}")
    shape = tuple(tensor.shape[k] for k in range(tensor.ndim))
    strides = None
    if tensor.strides:
        strides = tuple(tensor.strides[k] * dtype.itemsize for k in range(tensor.ndim))
    if not _c_contiguous(shape, strides, dtype.itemsize):
        raise ValueError(
            f"numfuse.cuda.{fn}: the array is not C-contiguous; make a contiguous copy first"
        )
    view.ptr = (tensor.data or 0) + tensor.byte_offset
    view.shape, view.dtype = shape, dtype
    view.device = tensor.device.device_id
    view.keepalive = capsule  # the producer's memory lives as long as the capsule


def _view(obj, fn: str, device=None, stream=None, *, role: str = "x") -> _View:
    lib = _require(fn)
    view = _View()
    view.obj = obj
    if type(obj) is DeviceArray:  # fast path: numfuse's own buffer, device known
        view.kind, view.ptr, view.shape, view.dtype = "cai", obj.ptr, obj.shape, obj.dtype
        view.device = obj.device
        view.stream = _stream_handle(stream)
        return view
    if isinstance(obj, (np.ndarray, list, tuple)):
        if device is None:
            raise TypeError(
                f"numfuse.cuda.{fn}: {role} is a host (NumPy) array; pass device='cuda' to copy it "
                f"to "
                f"the GPU and back (slower than the CPU for one operation), or use numfuse.{fn}"
            )
        _require_device(fn)
        host = np.ascontiguousarray(obj)
        staged = to_device(host, device)
        view.kind, view.host = "numpy", host
        view.ptr, view.shape, view.dtype = staged.ptr, staged.shape, staged.dtype
        view.device, view.keepalive = staged.device, staged
        view.stream = _stream_handle(stream)
        return view
    library = _library_of(obj)
    if library == "torch" and getattr(obj, "is_cuda", False) and not obj.requires_grad:
        # fast path (torch builds its __cuda_array_interface__ dict in Python on every call)
        dtype = _TORCH_DTYPES.get(str(obj.dtype))
        if dtype is not None and obj.is_contiguous():
            import torch

            view.kind, view.ptr, view.dtype = "torch", int(obj.data_ptr()), dtype
            view.shape = tuple(obj.shape)
            view.device = obj.device.index if obj.device.index is not None else 0
            view.stream = (
                _stream_handle(stream)
                if stream is not None
                else int(torch.cuda.current_stream(view.device).cuda_stream)
            )
            return view
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        cai = None
    except Exception as error:  # e.g. torch: a tensor that requires grad
        raise TypeError(
            f"numfuse.cuda.{fn}: {role} cannot export __cuda_array_interface__: {error}"
        ) from None
    if cai is not None:
        if cai.get("mask") is not None:
            raise ValueError(f"numfuse.cuda.{fn}: masked device arrays are not supported")
        view.dtype = np.dtype(cai["typestr"])
        view.shape = tuple(int(s) for s in cai["shape"])
        if not _c_contiguous(view.shape, cai.get("strides"), view.dtype.itemsize):
            raise ValueError(
                f"numfuse.cuda.{fn}: {role} is not C-contiguous; make a contiguous copy first "
                "(torch: .contiguous(), CuPy: cupy.ascontiguousarray)"
            )
        view.ptr = int(cai["data"][0] or 0)
        _require_device(fn)
        view.device = lib.pointer_device(view.ptr) if view.ptr else 0
        if stream is not None:
            view.stream = _stream_handle(stream)
        elif library == "torch":
            import torch

            view.stream = int(torch.cuda.current_stream(view.device).cuda_stream)
        elif cai.get("stream") is not None:
            view.stream = int(cai["stream"])
        elif library == "cupy":
            import cupy

            view.stream = int(cupy.cuda.get_current_stream().ptr)
        else:
            view.stream = 0
        view.kind = library if library in ("torch", "cupy", "numba") else "cai"
        return view
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device_type, _ = obj.__dlpack_device__()
        if int(device_type) not in (_DL_CUDA, _DL_CUDA_MANAGED):
            raise TypeError(
                f"numfuse.cuda.{fn}: {role} lives on DLPack device type {int(device_type)}, "
                "not CUDA "
                "(for host arrays pass device='cuda' with a NumPy array)"
            )
        _require_device(fn)
        view.stream = _stream_handle(stream)
        _from_dlpack(obj, fn, view.stream, view)
        view.kind = library if library in ("torch", "cupy") else "dlpack"
        return view
    raise TypeError(
        f"numfuse.cuda.{fn}: expected a GPU array (an object with __cuda_array_interface__ or "
        f"__dlpack__, e.g. a CuPy array or a torch CUDA tensor), or a NumPy array with "
        f"device='cuda'; got {type(obj).__name__}"
    )


def _empty_like(view: _View, shape, dtype):
    """A new C-contiguous device array of the same kind as `view`'s array: (object, pointer)."""
    shape = tuple(shape)
    if view.kind == "torch":
        import torch

        torch_dtype = {
            "b": torch.bool,
            "i": torch.int32,
            "l": torch.int64,
            "f": torch.float32,
            "d": torch.float64,
        }[_LETTERS[np.dtype(dtype)]]
        result = torch.empty(shape, dtype=torch_dtype, device=view.obj.device)
        return result, int(result.data_ptr())
    if view.kind == "cupy":
        import cupy

        with cupy.cuda.Device(view.device):
            result = cupy.empty(shape, dtype=dtype)
        return result, int(result.data.ptr)
    if view.kind == "numba":
        from numba import cuda as numba_cuda

        result = numba_cuda.device_array(shape, dtype=dtype)
        return result, int(result.__cuda_array_interface__["data"][0] or 0)
    result = DeviceArray(shape, dtype, view.device)
    return result, result.ptr


def _prepare_out(out, view: _View, shape, dtype, fn: str, stream):
    """(returned object, device pointer, finisher) for the result."""
    dtype = np.dtype(dtype)
    if view.kind == "numpy":
        if out is not None:
            if not isinstance(out, np.ndarray) or out.shape != tuple(shape) or out.dtype != dtype:
                raise ValueError(
                    f"numfuse.cuda.{fn}: out must be a NumPy array of shape {tuple(shape)} "
                    "and dtype "
                    f"{dtype} for NumPy input"
                )
        staged = DeviceArray(shape, dtype, view.device)

        def finish():
            target = out if out is not None and out.flags.c_contiguous else np.empty(shape, dtype)
            staged._buffer.copy_to_host(target)
            if out is not None and target is not out:
                out[...] = target
                return out
            return target

        return staged, staged.ptr, finish
    if out is None:
        result, ptr = _empty_like(view, shape, dtype)
        return result, ptr, lambda: result
    out_view = _view(out, fn, stream=stream, role="out")
    if out_view.shape != tuple(shape) or out_view.dtype != dtype:
        raise ValueError(
            f"numfuse.cuda.{fn}: out has shape {out_view.shape} and dtype {out_view.dtype}; "
            f"expected {tuple(shape)} and {dtype}"
        )
    if out_view.device != view.device:
        raise ValueError(
            f"numfuse.cuda.{fn}: out is on device {out_view.device}, the input on {view.device}"
        )
    return out, out_view.ptr, lambda: out


# ---------------------------------------------------------------- element-wise functions


def _unary(fn: str, x, out, device, stream):
    view = _view(x, fn, device, stream)
    if view.dtype not in _FLOATS:
        raise TypeError(
            f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {view.dtype} "
            "(cast on the device first)"
        )
    _, ptr, finish = _prepare_out(out, view, view.shape, view.dtype, fn, stream)
    n = math.prod(view.shape)
    _cuda.unary(fn, view.dtype.name, view.ptr, ptr, n, view.stream, view.device)
    return finish()


def exp(x, out=None, *, device=None, stream=None):
    """e**x on the GPU (numfuse's own kernel, <= 1 ULP; specials as NumPy)."""
    return _unary("exp", x, out, device, stream)


def log(x, out=None, *, device=None, stream=None):
    """Natural logarithm on the GPU (<= 1 ULP; specials as NumPy)."""
    return _unary("log", x, out, device, stream)


def erf(x, out=None, *, device=None, stream=None):
    """The error function on the GPU (<= 1 ULP; specials as scipy.special.erf)."""
    return _unary("erf", x, out, device, stream)


# ---------------------------------------------------------------- reductions


def _reduce_geometry(fn: str, shape, axis, keepdims):
    """(outer, n, inner, result shape) for reducing `shape` over `axis` (an int or None)."""
    if axis is None:
        outer, n, inner = 1, math.prod(shape), 1
        reduced = tuple(1 for _ in shape) if keepdims else ()
    else:
        if isinstance(axis, (tuple, list)):
            raise NotImplementedError(
                f"numfuse.cuda.{fn}: one axis or None (a tuple of axes is CPU-only)"
            )
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(
                f"numfuse.cuda.{fn}: axis must be an int or None, got {type(axis).__name__}"
            )
        ndim = len(shape)
        if not -ndim <= axis < ndim:
            raise np.exceptions.AxisError(int(axis), ndim)
        axis = int(axis) % ndim
        outer, n, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
        reduced = shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1 :]
    return outer, n, inner, (reduced if fn == "logsumexp" else tuple(shape))


def _reduce(fn: str, x, axis, keepdims, out, device, stream):
    view = _view(x, fn, device, stream)
    if view.dtype not in _FLOATS:
        raise TypeError(f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {view.dtype}")
    outer, n, inner, result_shape = _reduce_geometry(fn, view.shape, axis, keepdims)
    _, ptr, finish = _prepare_out(out, view, result_shape, view.dtype, fn, stream)
    _cuda.reduce(fn, view.dtype.name, view.ptr, ptr, outer, n, inner, view.stream, view.device)
    result = finish()
    if fn == "logsumexp" and result_shape == () and view.kind == "numpy":
        return result[()]
    return result


def _reduce_host(fn: str, x, axis=None, keepdims=False):
    """The GPU reduction in its exact order of operations, run on the CPU; for tests."""
    lib = _require(fn)
    x = np.ascontiguousarray(x)
    if x.dtype not in _FLOATS:
        raise TypeError(f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {x.dtype}")
    outer, n, inner, result_shape = _reduce_geometry(fn, x.shape, axis, keepdims)
    result = np.empty(result_shape, x.dtype)
    lib.reduce_host(fn, x.dtype.name, x.ctypes.data, result.ctypes.data, outer, n, inner)
    return result


def logsumexp(x, axis=None, keepdims=False, out=None, *, device=None, stream=None):
    """log(sum(exp(x))) over one axis (or all), deterministic on the GPU.

    The same reduction order on every run and every GPU: each row is split into
    chunks by its length only, chunks reduce in a fixed shared-memory tree, chunk
    results combine in index order; no floating-point atomics.
    """
    return _reduce("logsumexp", x, axis, keepdims, out, device, stream)


def softmax(x, axis=None, out=None, *, device=None, stream=None):
    """exp(x - logsumexp(x, axis, keepdims=True)) on the GPU (deterministic)."""
    return _reduce("softmax", x, axis, False, out, device, stream)


def log_softmax(x, axis=None, out=None, *, device=None, stream=None):
    """x - logsumexp(x, axis, keepdims=True) on the GPU (deterministic)."""
    return _reduce("log_softmax", x, axis, False, out, device, stream)


# ---------------------------------------------------------------- evaluate


def _scalar_bits(value, dtype) -> int:
    raw = np.array(value, dtype=dtype).tobytes()
    return int.from_bytes(raw.ljust(8, b"\0"), "little")


def _evaluate_inputs(ex, local_dict, global_dict, frame_depth, view_of):
    """(names, type letters, weak flags, pointers, scalar bits, [(name, view)]) for `ex`."""
    from . import _core

    if not isinstance(ex, str):
        raise TypeError(
            f"numfuse.cuda.evaluate: the expression must be a str, got {type(ex).__name__}"
        )
    names = list(_core._expr_names(ex))
    if local_dict is None or global_dict is None:
        frame = sys._getframe(frame_depth + 1)
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
    types, weak, arrays, bits, views = [], [], [], [], []
    for name in names:
        if name in local_dict:
            value = local_dict[name]
        elif name in global_dict:
            value = global_dict[name]
        else:
            raise KeyError(name)
        if isinstance(value, complex) or (isinstance(value, np.generic) and np.iscomplexobj(value)):
            raise NotImplementedError(
                "numfuse.cuda.evaluate: complex numbers are not supported on the GPU"
            )
        if isinstance(value, (bool, np.bool_)):
            types.append("b")
            weak.append(isinstance(value, bool))
            arrays.append(0)
            bits.append(int(bool(value)))
            continue
        if type(value) in (int, float) or isinstance(value, np.generic):
            if isinstance(value, np.generic):
                dtype = np.dtype(type(value))
                if dtype not in _LETTERS:
                    raise TypeError(f"numfuse.cuda.evaluate: {name} has unsupported dtype {dtype}")
                letter, is_weak = _LETTERS[dtype], False
            else:
                letter, is_weak = ("l" if type(value) is int else "d"), True
            types.append(letter)
            weak.append(is_weak)
            arrays.append(0)
            bits.append(_scalar_bits(value, _DTYPE_OF_LETTER[letter]))
            continue
        view = view_of(name, value)
        if view.dtype not in _LETTERS:
            raise TypeError(
                f"numfuse.cuda.evaluate: '{name}' has dtype {view.dtype}; "
                "bool, int32, int64, float32 or float64 expected on the GPU"
            )
        types.append(_LETTERS[view.dtype])
        weak.append(False)
        arrays.append(view.ptr)
        bits.append(0)
        views.append((name, view))
    if not views:
        raise ValueError("numfuse.cuda.evaluate: at least one input must be an array")
    first_name, first = views[0]
    for name, view in views[1:]:
        if view.shape != first.shape:
            raise ValueError(
                "numfuse.cuda.evaluate: inputs must have the same shape on the GPU "
                f"(no broadcasting): '{first_name}' {first.shape} vs '{name}' {view.shape}"
            )
        if view.device != first.device:
            raise ValueError(
                f"numfuse.cuda.evaluate: '{first_name}' and '{name}' are on different devices"
            )
    return names, types, weak, arrays, bits, views


def _nvrtc_candidates() -> list[str]:
    """NVRTC libraries to try, most specific first: $NUMFUSE_NVRTC, the nvidia-cuda-nvrtc
    wheels (what torch and CuPy install), then the CUDA toolkit ($CUDA_HOME, /usr/local/cuda).
    """
    import glob
    import os

    found = []
    if os.environ.get("NUMFUSE_NVRTC"):
        found.append(os.environ["NUMFUSE_NVRTC"])
    for base in sys.path:
        for pattern in ("nvidia/cu13/lib/libnvrtc.so.*", "nvidia/cuda_nvrtc/lib/libnvrtc.so.*"):
            found.extend(sorted(glob.glob(os.path.join(base or ".", pattern)), reverse=True))
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            found.extend(
                sorted(glob.glob(os.path.join(root, "lib64", "libnvrtc.so.*")), reverse=True)
            )
    # the builtins library sits next to libnvrtc and is loaded by it
    return [p for p in dict.fromkeys(found) if "builtins" not in os.path.basename(p)]


_nvrtc_set = False


def jit_status() -> dict:
    """The GPU evaluate compiler (NVRTC): whether it is loaded, its cache and errors."""
    lib = _require("jit_status")
    _set_nvrtc_candidates(lib)
    return dict(lib.jit_status())


def _set_nvrtc_candidates(lib) -> None:
    global _nvrtc_set
    if not _nvrtc_set:
        lib.set_nvrtc_candidates(_nvrtc_candidates())
        _nvrtc_set = True


def evaluate(
    ex,
    local_dict=None,
    global_dict=None,
    out=None,
    *,
    device=None,
    stream=None,
    engine="auto",
    _frame_depth=1,
):
    """numfuse.evaluate's expression language, run as one fused kernel on the GPU.

    The expression is compiled by the same compiler as numfuse.evaluate (same type
    rules, common-subexpression elimination) into one kernel: one pass over the
    inputs, no temporaries in device memory. Array inputs must be C-contiguous
    device arrays of one shape (no broadcasting on the GPU yet) of dtype bool,
    int32, int64, float32 or float64; Python and NumPy scalars are fine.
    Reductions (sum, ..., logsumexp inside the expression) and complex numbers
    raise NotImplementedError.

    engine: 'auto' (default) compiles each distinct program to CUDA code with NVRTC
    the first time it is seen (about 0.1-0.5 s, then cached for the process) and runs
    it at memory speed; where NVRTC is missing (or NUMFUSE_CUDA_JIT=0) it runs the
    bytecode interpreter kernel instead, which gives the same bits, slower.
    'compiled' raises RuntimeError instead of falling back; 'interpreter' never
    compiles. ``numfuse.cuda.jit_status()`` tells which is available.
    """
    lib = _require("evaluate")
    if engine not in ("auto", "compiled", "interpreter"):
        raise ValueError(
            f"numfuse.cuda.evaluate: engine must be 'auto', 'compiled' or 'interpreter', got {engine!r}"
        )
    _set_nvrtc_candidates(lib)

    def view_of(name, value):
        return _view(value, "evaluate", device, stream, role=f"'{name}'")

    names, types, weak, arrays, bits, views = _evaluate_inputs(
        ex, local_dict, global_dict, _frame_depth, view_of
    )
    first = views[0][1]
    letter = lib.evaluate_result_type(ex, names, types, weak)
    _, ptr, finish = _prepare_out(
        out, first, first.shape, _DTYPE_OF_LETTER[letter], "evaluate", stream
    )
    n = math.prod(first.shape)
    lib.evaluate(ex, names, types, weak, arrays, bits, ptr, n, first.stream, first.device, engine)
    return finish()


def _evaluate_host(ex, local_dict):
    """The GPU interpreter's per-element code run on the CPU over NumPy arrays; for tests.

    Same translation (bytecode -> device program) and same per-element code as the
    kernel; only libdevice functions are replaced by the C++ library's.
    """
    lib = _require("evaluate")

    def view_of(name, value):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"_evaluate_host: '{name}' must be a NumPy array")
        view = _View()
        host = np.ascontiguousarray(value)
        view.obj, view.keepalive, view.kind = host, host, "host"
        view.ptr, view.shape, view.dtype, view.device = host.ctypes.data, host.shape, host.dtype, -1
        return view

    names, types, weak, arrays, bits, views = _evaluate_inputs(ex, local_dict, {}, 1, view_of)
    first = views[0][1]
    letter = lib.evaluate_result_type(ex, names, types, weak)
    result = np.empty(first.shape, _DTYPE_OF_LETTER[letter])
    lib.evaluate_host(ex, names, types, weak, arrays, bits, result.ctypes.data, result.size)
    return result


def _host_math(fn: str, x):
    """The GPU kernels' scalar math evaluated on the CPU (same source); for tests."""
    return _require("host_math").host_math(fn, np.asarray(x))
