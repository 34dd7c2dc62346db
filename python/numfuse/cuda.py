"""numfuse on CUDA devices (optional; see numfuse._cuda_api for the details).

    import numfuse.cuda as nfc
    y = nfc.exp(x)                      # x: torch CUDA tensor, CuPy array, any CAI/DLPack GPU array
    nfc.logsumexp(x, axis=-1)           # deterministic reduction on the device
    nfc.evaluate("exp(a) * b + 2")      # one fused kernel, names from the caller's frame
    nfc.exp(numpy_array, device="cuda") # copies in and out: slower than numfuse.exp for one op

``numfuse.cuda.available()`` says whether a GPU can be used and ``status()`` why not.
"""

from ._cuda_api import (
    DeviceArray,
    available,
    devices,
    erf,
    evaluate,
    exp,
    jit_status,
    log,
    log_softmax,
    logsumexp,
    softmax,
    status,
    to_device,
)

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
