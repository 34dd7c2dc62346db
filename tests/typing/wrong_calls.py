"""Calls `mypy --strict` must flag: each marked line (`# E: <error code>`) must be reported
with that code (tests/test_typing.py). Never run: some calls would raise."""

import numpy as np

import numfuse as nf
import numfuse.cuda as nfc

x = np.linspace(0.0, 1.0, 10)

nf.evaluate(42)  # E: arg-type
nf.evaluate("x", order="Z")  # E: arg-type
nf.evaluate("x", casting="sometimes")  # E: arg-type
nf.evaluate("x", local_dict=[("x", x)])  # E: arg-type
nf.validate(b"x + 1")  # E: arg-type
nf.compile(["x"])  # E: arg-type
nf.disassemble(3)  # E: arg-type
nf.softmax(x, axis="1")  # E: call-overload
nf.softmax(x, 0, x)  # E: call-overload
nf.log_softmax(x, axis=1.5)  # E: call-overload
nf.logsumexp(x, axis="0")  # E: call-overload
total: np.ndarray = nf.logsumexp(x)  # E: assignment
kept: float = nf.logsumexp(x, keepdims=True)  # E: assignment
nf.patch_numpy(42)  # E: arg-type
nf.patched(scipy="yes")  # E: arg-type
nf.is_patched(1)  # E: arg-type
nf.set_num_threads("4")  # E: arg-type
nf.show_config(print_config="no")  # E: arg-type
threads: str = nf.detect_number_of_threads()  # E: assignment
nfc.evaluate("x", _frame_depth=2)  # E: call-arg
nf.jit(strict="yes")  # E: call-overload
nfc.logsumexp(x, axis=(0, 1))  # E: arg-type
nfc.exp(x, None, "cuda")  # E: call-arg


@nf.jit
def f(a: np.ndarray) -> np.ndarray:
    return a


f("not an array")  # E: arg-type
result: str = f(x)  # E: assignment
