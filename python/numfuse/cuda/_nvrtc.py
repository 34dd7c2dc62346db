"""Where the NVRTC library (the GPU evaluate compiler) may be found."""

from __future__ import annotations

import glob
import os
import sys


def _nvrtc_candidates() -> list[str]:
    """NVRTC libraries to try, most specific first: $NUMFUSE_NVRTC, the nvidia-cuda-nvrtc
    wheels (what torch and CuPy install), then the CUDA toolkit ($CUDA_HOME, /usr/local/cuda).
    """
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


_candidates_set = False


def set_nvrtc_candidates(lib) -> None:
    global _candidates_set
    if not _candidates_set:
        lib.set_nvrtc_candidates(_nvrtc_candidates())
        _candidates_set = True
