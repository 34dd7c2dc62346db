"""Hash every result numfuse computes, per instruction-set level, to show a refactor changed none.

Usage (with numfuse importable, e.g. PYTHONPATH=build/dev/pkg):

    python tools/hash_results.py record FILE    # write the hashes of this build to FILE (JSON)
    python tools/hash_results.py compare FILE   # exit 1 and list the cases that differ

For each level this build and CPU can run (sse2, avx2_fma, avx512; neon64 on aarch64) a
subprocess started with NUMFUSE_ARCH=<level> (so the NaN policy probed at import sees that
level too) hashes, bit for bit, with the floating-point errors each call reported:
every ufunc of the function table at float16/32/64, longdouble and its complex loops
(special values, random values over the whole range, both signs), reduce/accumulate of the
two-argument ufuncs, logsumexp/softmax/log_softmax, and evaluate of every table function at
float32/float64/int64 (complex64/complex128 where its type rule has complex) and of a few
compound expressions. Nothing is written into the package; a result that changes is a bug
in the refactor, not in this script (the inputs are seeded).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np


def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    v = [
        0.0,
        1.0,
        2.0,
        0.5,
        3.0,
        10.0,
        1e-3,
        0.7,
        1.5,
        20.0,
        30.0,
        40.0,
        88.7,
        89.0,
        709.7,
        710.0,
        745.2,
        1e10,
        1e22,
        1e300,
        np.pi,
        np.pi / 2,
        1 - 2**-24,
        1 + 2**-23,
        np.inf,
        np.nan,
    ]
    v += [float(info.tiny), float(info.smallest_subnormal), float(info.max), float(info.eps)]
    x = np.array(v + [-a for a in v], dtype=np.float64)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _random(dtype, rng) -> np.ndarray:
    n = 6000
    mags = np.exp(rng.uniform(np.log(1e-320), np.log(1e308), n)) * rng.choice([-1.0, 1.0], n)
    parts = [mags, rng.uniform(-10, 10, n), rng.uniform(-1, 1, n), rng.uniform(-800, 800, n)]
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dtype)


def _complex(dtype, rng) -> np.ndarray:
    real = {np.complex64: np.float32, np.complex128: np.float64}.get(dtype, np.longdouble)
    s = _specials(np.float32 if real == np.float32 else np.float64)[::3].astype(real)
    grid = (s[:, None] + 1j * s[None, :]).ravel()
    r = rng.uniform(-5, 5, 4000) + 1j * rng.uniform(-5, 5, 4000)
    m = np.exp(rng.uniform(-60, 60, 2000)) * np.exp(1j * rng.uniform(-4, 4, 2000))
    return np.concatenate([grid, r, m]).astype(dtype)


def _significant_bytes(r: np.ndarray) -> bytes:
    """The array's bytes without the padding of x86's 80-bit long double (uninitialised)."""
    if (
        r.dtype.kind in "fc"
        and r.dtype.itemsize in (16, 32)
        and np.finfo(np.longdouble).nmant == 63
    ):
        return r.view(np.uint8).reshape(-1, 16)[:, :10].tobytes()
    return r.tobytes()


class _Digest:
    def __init__(self):
        self.cases: dict[str, str] = {}

    def add(self, key: str, fn, *args, **kwargs):
        flags: list[str] = []
        old = np.seterrcall(lambda kind, _flag: flags.append(kind))
        try:
            with np.errstate(all="call"):
                result = fn(*args, **kwargs)
        except Exception as exc:  # the exception is a result too
            result = f"{type(exc).__name__}: {exc}"
        finally:
            np.seterrcall(old)
        h = hashlib.sha256()
        for r in result if isinstance(result, tuple) else (result,):
            if isinstance(r, np.ndarray | np.generic):
                r = np.ascontiguousarray(r)
                h.update(f"{r.dtype.str}{r.shape}".encode())
                h.update(_significant_bytes(r))
            else:
                h.update(repr(r).encode())
        h.update(repr(sorted(set(flags))).encode())
        self.cases[key] = h.hexdigest()[:16]


def hash_level() -> dict[str, str]:
    import numfuse
    from numfuse import _core

    rng = np.random.default_rng(20261126)
    d = _Digest()
    table = _core._function_table()
    real_inputs = {}
    for dt in (np.float16, np.float32, np.float64, np.longdouble):
        real_inputs[dt] = np.concatenate([_specials(dt), _random(dt, rng)])
    cplx_inputs = {dt: _complex(dt, rng) for dt in (np.complex64, np.complex128, np.clongdouble)}

    for name, arity, _types, is_ufunc, loops, *_ in table:
        if not is_ufunc:
            continue
        uf = getattr(numfuse, name)
        if arity == 1:
            for dt, x in real_inputs.items():
                d.add(f"ufunc {name} {np.dtype(dt).name}", uf, x)
                d.add(f"ufunc {name} {np.dtype(dt).name} strided", uf, x[::3])
            if "F" in loops:
                for dt, z in cplx_inputs.items():
                    d.add(f"ufunc {name} {np.dtype(dt).name}", uf, z)
            d.add(f"ufunc {name} int64", uf, np.arange(-50, 50))
        else:
            for dt, x in real_inputs.items():
                y = rng.permutation(x)
                d.add(f"ufunc {name} {np.dtype(dt).name}", uf, x, y)
                d.add(f"ufunc {name} {np.dtype(dt).name} outer", uf.outer, x[:40], y[:40])
                if dt != np.float16:
                    f = x[np.isfinite(x)][:3000]
                    d.add(f"ufunc {name} {np.dtype(dt).name} reduce", uf.reduce, f)
                    d.add(f"ufunc {name} {np.dtype(dt).name} acc", uf.accumulate, f)

    for dt in (np.float32, np.float64):
        a = rng.normal(0, 30, (37, 129)).astype(dt)
        a[3, 5], a[4, :] = np.inf, -np.inf
        for axis in (None, 0, 1, -1):
            d.add(f"logsumexp {np.dtype(dt).name} {axis}", numfuse.logsumexp, a, axis=axis)
            d.add(f"softmax {np.dtype(dt).name} {axis}", numfuse.softmax, a, axis=axis)
            d.add(f"log_softmax {np.dtype(dt).name} {axis}", numfuse.log_softmax, a, axis)
        b = rng.uniform(-1, 1, a.shape).astype(dt)
        d.add(
            f"logsumexp b {np.dtype(dt).name}",
            numfuse.logsumexp,
            a,
            axis=1,
            b=b,
            return_sign=True,
        )

    ints = np.arange(-40, 40, dtype=np.int64)
    for name, arity, types, *_ in table:
        args = "x" if arity == 1 else "x, y"
        ex = f"{name}({args})"
        for dt in (np.float32, np.float64):
            x = real_inputs[dt]
            y = rng.permutation(x)
            d.add(f"evaluate {ex} {np.dtype(dt).name}", numfuse.evaluate, ex, {"x": x, "y": y})
        d.add(f"evaluate {ex} int64", numfuse.evaluate, ex, {"x": ints, "y": ints[::-1]})
        if types in ("float_complex", "rounding_complex"):
            for dt in (np.complex64, np.complex128):
                z = cplx_inputs[dt]
                d.add(f"evaluate {ex} {np.dtype(dt).name}", numfuse.evaluate, ex, {"x": z})
    x, y = real_inputs[np.float64][:20000], rng.permutation(real_inputs[np.float64])[:20000]
    xf = x.astype(np.float32)
    z = cplx_inputs[np.complex128]
    for ex in (
        "exp(x) * sin(y) + log1p(abs(x))",
        "where(x > y, tanh(x), expm1(y) / 2)",
        "sum(exp(x - 3), axis=0)",
        "x**2 + 3*x*y - y**3",
        "logaddexp(x, y) - erf(x)",
        "arctan2(y, x) + hypot(x, y)",
        "sqrt(x*x + 1) ** 0.5",
    ):
        d.add(f"evaluate {ex} f64", numfuse.evaluate, ex, {"x": x, "y": y})
        d.add(f"evaluate {ex} f32", numfuse.evaluate, ex, {"x": xf, "y": xf[::-1]})
    for ex in (
        "exp(z) * log(z) + z**2",
        "log1p(z) - expm1(z) + log2(z) * log10(z)",
        "sqrt(z) + tanh(z) * arcsinh(z)",
    ):
        d.add(f"evaluate {ex} c128", numfuse.evaluate, ex, {"z": z})
        d.add(f"evaluate {ex} c64", numfuse.evaluate, ex, {"z": z.astype(np.complex64)})
    return d.cases


def hash_all() -> dict[str, dict[str, str]]:
    import numfuse

    out = {}
    for level in numfuse.usable_levels():
        env = dict(os.environ, NUMFUSE_ARCH=level)
        run = subprocess.run(
            [sys.executable, __file__, "level"], env=env, capture_output=True, text=True, check=True
        )
        out[level] = json.loads(run.stdout)
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["level"]:
        json.dump(hash_level(), sys.stdout)
        return 0
    if len(argv) != 2 or argv[0] not in ("record", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    hashes = hash_all()
    count = sum(len(v) for v in hashes.values())
    if argv[0] == "record":
        with open(argv[1], "w") as f:
            json.dump(hashes, f, indent=0, sort_keys=True)
        print(f"{count} hashes over levels {', '.join(hashes)} -> {argv[1]}")
        return 0
    with open(argv[1]) as f:
        expected = json.load(f)
    bad = [
        f"{level}: {case}"
        for level in expected.keys() | hashes.keys()
        for case in expected.get(level, {}).keys() | hashes.get(level, {}).keys()
        if expected.get(level, {}).get(case) != hashes.get(level, {}).get(case)
    ]
    for line in sorted(bad):
        print("differs:", line)
    print(f"{count} hashes over levels {', '.join(hashes)}: {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
