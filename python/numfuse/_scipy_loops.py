"""Which loop scipy.special's erf, erfc and expit list first, read without importing SciPy.

NumPy resolves a call's result type by the first loop its input casts to safely, so the
loop order decides what bool, integers and float16 give. SciPy listed float64 first up to
1.17 (erf(int8) is float64) and float32 first from 1.18 (float32). numfuse's ufuncs of
SciPy's functions follow the installed SciPy, and the newest SciPy's order where there is
none. The extension asks this once, when it creates the ufuncs; importing SciPy there would
cost every `import numfuse` a tenth of a second, reading its version file well under a millisecond.
"""

from __future__ import annotations

import importlib.util
import os
import re

# The first SciPy release whose erf/erfc/expit list the float32 loop first.
FLOAT32_FIRST_SINCE = (1, 18)


def _installed_version() -> str | None:
    """SciPy's version string, or None without SciPy.

    Read from ``scipy/version.py`` (every SciPy build writes it) beside the package that
    ``import scipy`` would load; importlib.metadata, the fallback, costs about 20 ms to
    import.
    """
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.origin:
        return None
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "version.py"), encoding="utf-8") as f:
            match = re.search(r"""^version\s*=\s*['"]([^'"]+)['"]""", f.read(), re.MULTILINE)
    except OSError:
        match = None
    if match is not None:
        return match.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scipy")
    except PackageNotFoundError:
        return None


def scipy_float32_first() -> bool:
    text = _installed_version()
    if text is None:
        return True
    match = re.match(r"(\d+)\.(\d+)", text)
    if match is None:
        return True
    return (int(match.group(1)), int(match.group(2))) >= FLOAT32_FIRST_SINCE
