"""Device arrays in and out: __cuda_array_interface__, DLPack, NumPy staging, results.

Device arrays are used in place, without a trip through host memory: any
object exporting ``__cuda_array_interface__`` (CuPy, Numba, torch CUDA
tensors) or DLPack (``__dlpack__`` / ``__dlpack_device__``) on a CUDA device.
Results are allocated as the same kind of array on the same device (torch ->
torch tensor, CuPy -> CuPy array, Numba -> Numba device array, anything else
-> ``numfuse.cuda.DeviceArray``) or written to a device ``out=``. Work is
queued on the array's stream: the ``stream`` entry of
``__cuda_array_interface__``, torch's current stream for torch tensors, CuPy's
current stream for CuPy arrays, the legacy default stream otherwise, or the
``stream=`` argument (an int handle or an object with ``.ptr`` /
``.cuda_stream``). torch, CuPy and Numba are imported only when an array of
theirs arrives.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from ._loader import _require, _require_device

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


def to_device(array: Any, device: Any = "cuda") -> DeviceArray:
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
