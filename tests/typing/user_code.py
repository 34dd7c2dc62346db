"""A typical user file: must pass `mypy --strict` (tests/test_typing.py runs it)."""

from typing import Any

import numpy as np
import numpy.typing as npt

import numfuse as nf
import numfuse.cuda as nfc


def features(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    a = nf.exp(x)  # a numpy.ufunc: NumPy's own typing
    b = nf.logaddexp(x, y)
    return np.asarray(a + b, dtype=np.float64)


def scores(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return x * 2.0


@nf.jit
def fused(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.exp(x) * 2.0 + 1.0


@nf.jit(strict=True)
def fused_strict(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.tanh(x)


def on_gpu(x: npt.NDArray[np.float64]) -> None:
    if not nfc.available():
        print(nfc.status())
        return
    print([device["kind"] for device in nfc.devices()], nfc.jit_status())
    y = nfc.exp(x, device="cuda")
    total = nfc.logsumexp(x, axis=0, device="cuda")
    probabilities = nfc.softmax(nfc.to_device(x), axis=-1)
    print(y, total, probabilities, nfc.evaluate("2*x + 1", device="cuda"))


def main() -> None:
    x = np.linspace(0.0, 1.0, 1000)
    y = np.ones_like(x)
    r: np.ndarray = nf.evaluate("2*x + 3*y")
    r = nf.evaluate("x * y", local_dict={"x": x, "y": y}, out=np.empty_like(x))
    r = nf.re_evaluate()
    error: Exception | None = nf.validate("x + y")
    c = nf.compile("exp(a) + b")
    r = c(x, y)
    r = c.run(a=x, b=y)
    names: list[str] = c.input_names
    c2 = nf.NumExpr("a * 2", signature=[("a", np.float64)])
    r = c2(x)
    code = nf.disassemble(c2) + nf.disassemble("x * y")
    print(names, code[0][0], r.shape, error)

    lse: np.inexact[Any] = nf.logsumexp(x)  # over all axes: a NumPy scalar, as SciPy's
    kept: npt.NDArray[Any] = nf.logsumexp(x, axis=0, keepdims=True)
    into: npt.NDArray[Any] = nf.logsumexp(x.reshape(10, 100), axis=1, out=np.empty(10))
    value, sign = nf.logsumexp(x, b=y, return_sign=True)
    print(kept, into)
    sm: np.ndarray = nf.softmax(x)
    sm = nf.softmax(x.reshape(10, 100), axis=(0, 1), out=np.empty((10, 100)))
    lsm: np.ndarray = nf.log_softmax(x, axis=-1)
    print(lse, value, sign, sm, lsm)

    patched_now: list[str] = nf.patch_numpy(["exp"])
    assert nf.is_patched("exp")
    nf.restore_numpy()
    with nf.patched(["exp", "tanh"]):
        z = np.exp(x)
    with nf.patched(scipy=True):
        z = np.exp(x)
    print(patched_now, z)

    print(fused(x), fused_strict(x), features(x, y), scores(x))
    print(fused.explain())
    on_gpu(x)

    threads: int = nf.get_num_threads()
    previous: int = nf.set_num_threads(2)
    nf.set_num_threads(previous)
    cores: int = nf.detect_number_of_cores()
    threads = nf.detect_number_of_threads()
    level: str = nf.get_level()
    levels: list[str] = nf.usable_levels()
    config = nf.show_config(print_config=False)
    print(threads, cores, level, levels, config["version"], nf.__version__, nf.ncores)
    print(nf.MAX_THREADS + 1, nf.nthreads + 1)
    nf.print_versions()
    nf.set_vml_num_threads(2)
    nf.set_vml_accuracy_mode("high")
    nf.get_vml_version()
    print(nf.use_vml)
    try:
        nf.evaluate("1 +")
    except nf.ExpressionError as exc:
        print(exc)


if __name__ == "__main__":
    main()
