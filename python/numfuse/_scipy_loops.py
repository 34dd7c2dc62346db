"""Which loop scipy.special's erf, erfc and expit list first, read without importing SciPy.

NumPy resolves a call's result type by the first loop its input casts to safely, so the
loop order decides what bool, integers and float16 give. SciPy listed float64 first up to
1.17 (erf(int8) is float64) and float32 first from 1.18 (float32). numfuse's ufuncs of
SciPy's functions follow the installed SciPy, and the newest SciPy's order where there is
none. The extension asks this once, when it creates the ufuncs; importing SciPy there would
cost every `import numfuse` a tenth of a second, reading its version a few milliseconds.
"""

from __future__ import annotations

import re

# The first SciPy release whose erf/erfc/expit list the float32 loop first.
FLOAT32_FIRST_SINCE = (1, 18)


def scipy_float32_first() -> bool:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - importlib.metadata is in every supported Python
        return True
    try:
        text = version("scipy")
    except PackageNotFoundError:
        return True
    match = re.match(r"(\d+)\.(\d+)", text)
    if match is None:
        return True
    return (int(match.group(1)), int(match.group(2))) >= FLOAT32_FIRST_SINCE
