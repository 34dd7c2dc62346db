"""numfuse on CUDA devices (optional), imported on first use of ``numfuse.cuda``.

    import numfuse.cuda as nfc
    y = nfc.exp(x)                      # x: torch CUDA tensor, CuPy array, any CAI/DLPack GPU array
    nfc.logsumexp(x, axis=-1)           # deterministic reduction on the device
    nfc.evaluate("exp(a) * b + 2")      # one fused kernel, names from the caller's frame
    nfc.exp(numpy_array, device="cuda") # copies in and out: slower than numfuse.exp for one op

``numfuse.cuda.available()`` says whether a GPU can be used and ``status()`` why not.

NumPy input needs ``device="cuda"`` (or ``"cuda:N"``): it is copied to the
GPU, computed there and copied back, and the result is a NumPy array. For a
single operation the copies cost more than the GPU saves; see docs/gpu.md.

Why a separate namespace: ``numfuse.exp`` is a ``numpy.ufunc``. NumPy's ufunc
machinery never hands it a torch CUDA tensor, and CuPy's ``__array_ufunc__``
would answer ``numfuse.exp(cupy_array)`` with CuPy's own ``exp`` (it looks up
the ufunc by name). So the GPU entry points are explicit: ``numfuse.cuda.exp``.

The package by job: ``_loader`` (the numfuse._cuda extension, status,
devices), ``_arrays`` (device arrays in and out: __cuda_array_interface__,
DLPack, NumPy staging), ``_api`` (the functions below), ``_nvrtc`` (finding
the GPU evaluate compiler), ``_testing`` (the GPU code paths run on the CPU,
for tests).
"""

from ._api import (
    erf,
    evaluate,
    exp,
    jit_status,
    log,
    log_softmax,
    logsumexp,
    softmax,
)
from ._arrays import DeviceArray, to_device
from ._loader import available, devices, status

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
