"""Fuzzer for numfuse.evaluate / validate / compile.

Three kinds of input, chosen by the first byte:

* text: any Unicode string of up to 2048 characters (lone surrogates included);
* token soup: random sequences of the grammar's own tokens (names of every type,
  numbers, operators, functions, reductions with axis=/keepdims=, parentheses), which
  reach the type checker, compiler and VM far more often than random text;
* differential: a well-conditioned random expression (tests/fuzz/expressions.py) over
  random arrays (shapes with broadcasting, float32/float64, reversed and strided views),
  compared with a NumPy float64 reference within ULP-derived bounds;
* bytes differential: a comparison or contains() between random S arrays (element
  sizes 1..6, NULs, broadcasting, reversed views), b'..' literals and bytes values,
  compared with NumPy's own comparison (contains: Python's `in`).
* Python ints: an operation of tests/python_int_table.py between an array of any
  integer dtype (bool, the floats) and a Python int of any magnitude (at a dtype's
  bounds, beyond int64, uint64 and float64), bound to a name or written as a literal,
  in either order: NumPy 2's result or its exception (NEP 50's range rule).
* out=: the result of a random expression (or a constant, or a bytes comparison)
  written into a random `out`: the result's shape, a larger shape it broadcasts to, or a
  shape it does not broadcast to; any dtype (the engine's, float16, uint8, S, U, object);
  reversed and strided views, read-only arrays; every `casting=`. A call must succeed
  exactly when NumPy's rules allow it (np.broadcast_shapes, np.can_cast, writeable),
  return `out`, and leave in it the result broadcast and cast as NumPy's astype does;
  otherwise it must raise a documented exception.
* overlap: a ufunc of the function table or a random expression with `out=` a view of
  the same buffer as its input (behind, ahead, reversed, crossing; steps of both signs;
  sometimes long enough to be threaded), compared bit for bit with the result computed
  from copies (NumPy's rule: an overlapping out= gives the copy-first result).

Only the documented exception types may escape evaluate/validate/compile (the README's
"Types" paragraph): SyntaxError, KeyError, TypeError, ValueError (numpy's AxisError is
one), OverflowError. Anything else, a disagreement with NumPy, a crash or a hang
(libFuzzer's -timeout) is a finding.

    python tests/fuzz/fuzz_evaluate.py                   # atheris, runs until stopped
    python tests/fuzz/fuzz_evaluate.py -runs=50000       # atheris, fixed count
    python tests/fuzz/fuzz_evaluate.py --random 50000    # plain random driver, same target
    make fuzz-smoke / make fuzz                          # see the Makefile

The plain driver feeds random byte strings to the same target (no coverage feedback);
it is what runs where atheris is not installed.
"""

from __future__ import annotations

import os
import random
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/python_int_table.py
USE_ATHERIS = __name__ == "__main__" and "--random" not in sys.argv
if USE_ATHERIS:
    import atheris

    # Python-level coverage (numfuse's Python layer and the expression generator)
    # steers libFuzzer; the C++ extension itself is not instrumented.
    with atheris.instrument_imports(include=["numfuse", "expressions"]):
        import expressions

        import numfuse as nf
        import python_int_table
else:
    import expressions  # noqa: E402

    import numfuse as nf  # noqa: E402
    import python_int_table  # noqa: E402

ALLOWED = (SyntaxError, KeyError, TypeError, ValueError, OverflowError)

RNG_ARRAYS = np.random.default_rng(7)
VALUES = {
    "x": np.linspace(-3.0, 3.0, 6),
    "y": np.linspace(0.5, 2.0, 6).astype(np.float32),
    "z": np.arange(12.0).reshape(2, 6) - 5.5,
    "i": np.arange(-3, 3, dtype=np.int32),
    "l": np.arange(6, dtype=np.int64) * 1_000_000_007,
    "b": np.array([True, False, True, True, False, False]),
    "c": (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex128),
    "f": np.float32(1.5),
    "s": 2.5,
    "n": 7,
    # Python ints beyond int32, int64 and float64, and a negative one (NumPy 2's range rule)
    "k": 2**40,
    "kb": 2**70,
    "kh": -(2**1100),
    "kn": -1,
    "e": np.empty((0, 6)),
    "m": RNG_ARRAYS.standard_normal((3, 1, 6))[:, :, ::-1],
    "u": np.arange(6, dtype=np.uint16),
    "g": np.array(4.0),
    "sa": np.array([b"ab", b"", b"a\x00b", b"\xff", b"ab\x00", b"b"], dtype="S3"),
    "sb": np.array([[b"a", b"abcde"], [b"", b"\x00"]] * 3, dtype="S5").reshape(2, 6),
    "sv": np.array([b"ba", b"a"] * 6, dtype="S2")[::-2],
    "sk": b"ab\x00",
    "su": np.array(["ab", "c"] * 3),
}

NAMES = list(VALUES) + ["inf", "nan", "unknown_name"]
# The language's own functions, the function table's (src/core/functions.hpp) and
# the reductions.
FUNCTIONS = [
    *(
        "where isinf isnan isfinite signbit maximum minimum fmod sign abs absolute negative "
        "conj real imag complex copy ones_like contains"
    ).split(),
    *(row[0] for row in nf._core._function_table()),
    *"sum prod min max mean logsumexp".split(),
]
TOKENS = (
    NAMES
    + FUNCTIONS
    + [
        "(",
        ")",
        ",",
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "<",
        ">",
        "<=",
        ">=",
        "==",
        "!=",
        "&",
        "|",
        "~",
        "^",
        "<<",
        ">>",
        "not",
        "and",
        "or",
        ".real",
        ".imag",
        "axis=",
        "keepdims=",
        "True",
        "False",
        "None",
        "0",
        "1",
        "-1",
        "2",
        "3",
        "0.5",
        "1e308",
        "1e-320",
        "0x1f",
        "1_000",
        "1.5j",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551616",
        "0x10000000000000000",
        "0o2000000000000000000000",
        "1" + "0" * 400,
        "2**63",
        "(0, 1)",
        "(-1,)",
        " ",
        "__import__",
        "lambda",
        "[",
        "]",
        "'s'",
        "b'ab'",
        "b''",
        "b'\\x00a'",
        'B"\\xff"',
        "rb'\\'",
        "b'''a'''",
        "b'\\777'",
        "b'\\x4'",
        "b'",
        "u'a'",
        ";",
        "\\",
        "\x00",
        "\u00e9",
        "\U0001f600",
    ]
)


class ProviderChooser:
    """expressions.Chooser over an atheris FuzzedDataProvider (or the fallback)."""

    def __init__(self, provider):
        self.provider = provider

    def pick(self, n):
        return self.provider.ConsumeIntInRange(0, n - 1)

    def uniform(self, lo, hi):
        return lo + (hi - lo) * self.provider.ConsumeProbability()


class BytesProvider:
    """The subset of atheris.FuzzedDataProvider this target uses, for the plain driver."""

    def __init__(self, data: bytes):
        self.data = data
        self.at = 0

    def _take(self, count: int) -> bytes:
        chunk = self.data[self.at : self.at + count]
        self.at += len(chunk)
        return chunk.ljust(count, b"\0")

    def ConsumeIntInRange(self, lo, hi):  # noqa: N802 - atheris' names
        span = hi - lo + 1
        return lo + int.from_bytes(self._take(4), "little") % span

    def ConsumeProbability(self):  # noqa: N802
        return int.from_bytes(self._take(4), "little") / 2**32

    def ConsumeBool(self):  # noqa: N802
        return bool(self._take(1)[0] & 1)

    def ConsumeUnicode(self, count):  # noqa: N802
        length = self.ConsumeIntInRange(0, count)
        wide = self.ConsumeBool()
        chars = []
        for _ in range(length):
            if self.at >= len(self.data):
                break
            code = int.from_bytes(self._take(3 if wide else 1), "little")
            chars.append(chr(code % 0x110000))
        return "".join(chars)


def call_api(text: str, values: dict) -> None:
    """evaluate, validate and compile one text; only documented exceptions may escape."""
    try:
        nf.evaluate(text, values, {})
    except ALLOWED:
        pass
    error = nf.validate(text, values, {})
    if error is not None and not isinstance(error, ALLOWED):
        raise AssertionError(f"validate returned {type(error).__name__}: {error}") from error
    try:
        compiled = nf.compile(text)
    except ALLOWED:
        return
    try:
        compiled(**{n: values[n] for n in compiled.input_names if n in values})
    except ALLOWED:
        pass


def token_soup(provider) -> str:
    count = provider.ConsumeIntInRange(1, 24)
    return "".join(TOKENS[provider.ConsumeIntInRange(0, len(TOKENS) - 1)] for _ in range(count))


def random_view(provider, shape, dtype):
    steps = [
        (-1 if provider.ConsumeBool() else 1) * provider.ConsumeIntInRange(1, 2) for _ in shape
    ]
    base_shape = tuple(n * abs(s) for n, s in zip(shape, steps))
    base = np.array(
        [
            provider.ConsumeProbability() * 6.0 - 3.0
            for _ in range(int(np.prod(base_shape, dtype=np.int64)))
        ],
        dtype=dtype,
    )
    base = base.reshape(base_shape)
    return base[tuple(slice(None, None, s) for s in steps) + (Ellipsis,)]


def differential(provider) -> None:
    ndim = provider.ConsumeIntInRange(0, 3)
    base = [provider.ConsumeIntInRange(0, 4) for _ in range(ndim)]
    values = {}
    for name in expressions.VARIABLES:
        shape = [n if provider.ConsumeBool() else 1 for n in base]
        shape = shape[provider.ConsumeIntInRange(0, len(shape)) :]
        dtype = np.float32 if provider.ConsumeBool() else np.float64
        values[name] = random_view(provider, shape, dtype)
    tree = expressions.random_tree(ProviderChooser(provider), provider.ConsumeIntInRange(0, 4))
    text = expressions.text_of(tree)
    used = [n for n in expressions.VARIABLES if n in {t for t in _names(tree)}]
    if not used:
        return
    shape = np.broadcast_shapes(*(values[n].shape for n in used))
    got = nf.evaluate(text, values, {})
    if got.dtype not in (np.float32, np.float64) or got.shape != shape:
        raise AssertionError(f"{text}: result {got.dtype} {got.shape}, expected shape {shape}")
    work = expressions.working_dtype(values, used)
    ref = expressions.reference(tree, values, shape, lambda m: expressions.tolerance(work, m))
    problem = expressions.compare(got, ref, work)
    if problem is not None:
        raise AssertionError(f"{text} disagrees with NumPy {problem}; inputs {values}")


BYTES_OPS = {
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
BYTES_ALPHABET = (0, 0, ord("a"), ord("b"), 0xFF)


def python_int_differential(provider) -> None:
    """An operation between an array and a Python int (tests/python_int_table.py): NumPy 2's
    result or its exception, the int bound to a name or written as a literal."""
    table = python_int_table
    dtype = table.DTYPES[provider.ConsumeIntInRange(0, len(table.DTYPES) - 1)]
    x = table.array_of(dtype)[: provider.ConsumeIntInRange(1, 8)]
    templates = list(table.OPERATIONS)
    template = templates[provider.ConsumeIntInRange(0, len(templates) - 1)]
    bounds = table.boundaries()
    k = bounds[provider.ConsumeIntInRange(0, len(bounds) - 1)]
    k += provider.ConsumeIntInRange(-2, 2)
    if provider.ConsumeBool():  # any magnitude, either sign
        k = (-1) ** provider.ConsumeIntInRange(0, 1) * provider.ConsumeIntInRange(0, 2**64) ** (
            provider.ConsumeIntInRange(1, 20)
        )
    int_first = provider.ConsumeBool()
    literal = provider.ConsumeBool()
    expected = table.numpy_outcome(template, x, k, int_first)
    text = table.expression(template, table.literal(k) if literal else "k", int_first)
    try:
        got = nf.evaluate(text, {"x": x} if literal else {"x": x, "k": k}, {})
    except (OverflowError, ValueError, TypeError) as error:
        # numfuse.UnsupportedOperationError (`float_array & k`) is NumPy's TypeError there.
        unsupported = isinstance(error, nf.UnsupportedOperationError)
        if (TypeError if unsupported else type(error)) is not expected:
            raise AssertionError(f"{text} with x {x!r}: {error!r}, NumPy {expected!r}") from error
        return
    if isinstance(expected, type) or not table.same_result(got, expected):
        raise AssertionError(f"{text} with x {x!r}: {got!r}, NumPy {expected!r}")


def random_bytes_operand(provider, shape):
    """An S array of `shape` (maybe a reversed view) with random bytes, NULs included."""
    itemsize = provider.ConsumeIntInRange(1, 6)
    count = int(np.prod(shape, dtype=np.int64))
    raw = bytes(
        BYTES_ALPHABET[provider.ConsumeIntInRange(0, len(BYTES_ALPHABET) - 1)]
        for _ in range(count * itemsize)
    )
    array = np.frombuffer(raw, dtype=f"S{itemsize}").reshape(shape).copy()
    if array.ndim and provider.ConsumeBool():
        array = array[::-1]
    return array


def bytes_differential(provider) -> None:
    ndim = provider.ConsumeIntInRange(0, 2)
    base = [provider.ConsumeIntInRange(0, 4) for _ in range(ndim)]
    operands, values = [], {}
    for name in ("p", "q"):
        form = provider.ConsumeIntInRange(0, 2)
        shape = [n if provider.ConsumeBool() else 1 for n in base]
        value = random_bytes_operand(provider, shape if form == 0 else [])
        if form == 0:
            values[name] = value
            operands.append((name, value))
        elif form == 1:  # a literal in the text
            operands.append((repr(value.item()), value))
        else:  # a bytes value bound to the name
            values[name] = value.item()
            operands.append((name, value))
    (text_a, a), (text_b, b) = operands
    op = provider.ConsumeIntInRange(0, len(BYTES_OPS))
    if op == len(BYTES_OPS):
        text = f"contains({text_a}, {text_b})"
        pa, pb = np.broadcast_arrays(a, b)
        expected = np.array(
            [y in x for x, y in zip(pa.ravel().tolist(), pb.ravel().tolist())], dtype=bool
        ).reshape(pa.shape)
    else:
        symbol, func = list(BYTES_OPS.items())[op]
        text = f"{text_a} {symbol} {text_b}"
        expected = func(a, b)
    got = nf.evaluate(text, values, {})
    if got.dtype != np.bool_ or got.shape != expected.shape or not np.array_equal(got, expected):
        raise AssertionError(f"{text}: {got!r}, NumPy gives {expected!r}; inputs {a!r} {b!r}")


OUT_DTYPES = ("f8", "f4", "f2", "c16", "c8", "i8", "i4", "u1", "?", "S4", "U3", "O")
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def random_out(provider, shape):
    """An out array for a result of `shape`: the same shape, a larger one the result
    broadcasts to (1-axes grown, leading axes added), or an unrelated one; any dtype;
    maybe a reversed or strided view, maybe read-only."""
    form = provider.ConsumeIntInRange(0, 3)
    shape = list(shape)
    if form in (1, 2):
        shape = [provider.ConsumeIntInRange(0, 3) if n == 1 else n for n in shape]
        shape = [provider.ConsumeIntInRange(0, 3) for _ in range(form - 1)] + shape
    elif form == 3:
        shape = [provider.ConsumeIntInRange(0, 4) for _ in range(provider.ConsumeIntInRange(0, 3))]
    dtype = np.dtype(OUT_DTYPES[provider.ConsumeIntInRange(0, len(OUT_DTYPES) - 1)])
    steps = [
        (-1 if provider.ConsumeBool() else 1) * provider.ConsumeIntInRange(1, 2) for _ in shape
    ]
    base = np.zeros([n * abs(k) for n, k in zip(shape, steps)], dtype=dtype)
    out = base[tuple(slice(None, None, k) for k in steps) + (Ellipsis,)]
    if provider.ConsumeIntInRange(0, 7) == 0:
        out.flags.writeable = False
    return out


def _cast_is_exact(result, out_dtype) -> bool:
    """Whether NumPy's astype defines every element's value (not NaN, inf or out-of-range
    floats into integers, whose bits NumPy leaves to the platform's conversion)."""
    if out_dtype.kind not in "iu" or result.dtype.kind in "biu":
        return True
    values = np.asarray(result)
    if values.dtype.kind == "c":
        values = values.real
    info = np.iinfo(out_dtype)
    finite = np.isfinite(values).all()
    return bool(
        finite
        and (values.size == 0 or (values.min() > info.min - 1 and values.max() < info.max + 1))
    )


def out_broadcast(provider) -> None:
    ndim = provider.ConsumeIntInRange(0, 2)
    base = [provider.ConsumeIntInRange(0, 3) for _ in range(ndim)]
    values = {}
    for name in expressions.VARIABLES:
        shape = [n if provider.ConsumeBool() else 1 for n in base]
        dtype = np.float32 if provider.ConsumeBool() else np.float64
        values[name] = random_view(provider, shape, dtype)
    form = provider.ConsumeIntInRange(0, 3)
    if form == 0:  # a constant: numexpr's evaluate('3', out=a) fills a
        text = ("3", "2.5", "-0.0", "True", "1.5j", "nan")[provider.ConsumeIntInRange(0, 5)]
    elif form == 1:  # a comparison of bytes arrays (a bool result)
        values["p"] = random_bytes_operand(
            provider, [n if provider.ConsumeBool() else 1 for n in base]
        )
        text = "p < b'a'" if provider.ConsumeBool() else "contains(p, b'b')"
    else:
        tree = expressions.random_tree(ProviderChooser(provider), provider.ConsumeIntInRange(0, 3))
        text = expressions.text_of(tree)
    result = nf.evaluate(text, values, {})
    out = random_out(provider, result.shape)
    casting = CASTINGS[provider.ConsumeIntInRange(0, len(CASTINGS) - 1)]
    try:
        fits = np.broadcast_shapes(result.shape, out.shape) == out.shape
    except ValueError:
        fits = False
    allowed = fits and np.can_cast(result.dtype, out.dtype, casting) and out.flags.writeable
    try:
        returned = nf.evaluate(text, values, {}, out=out, casting=casting)
    except ALLOWED as error:
        if allowed:
            raise AssertionError(
                f"{text}: result {result.dtype}{result.shape} into out {out.dtype}{out.shape} "
                f"(casting={casting!r}) raised {type(error).__name__}: {error}"
            ) from error
        return
    if not allowed:
        raise AssertionError(
            f"{text}: result {result.dtype}{result.shape} into out {out.dtype}{out.shape} "
            f"(casting={casting!r}, writeable={out.flags.writeable}) was accepted"
        )
    if returned is not out:
        raise AssertionError(f"{text}: evaluate(out=...) returned another object")
    if _cast_is_exact(result, out.dtype):
        expected = np.broadcast_to(result, out.shape).astype(out.dtype)
        got = out
        if out.dtype.kind == "O":  # Python numbers: compared as the result's dtype
            got, expected = out.astype(result.dtype), expected.astype(result.dtype)
        same = np.array_equal(got, expected, equal_nan=got.dtype.kind in "fc")
        if got.dtype.kind in "fc":  # also the sign of zero
            same = same and np.array_equal(np.signbit(got.real), np.signbit(expected.real))
        if not same:
            raise AssertionError(
                f"{text}: out {out!r} differs from the broadcast result {expected!r} "
                f"(casting={casting!r})"
            )


UFUNC_NAMES = [row[0] for row in nf._core._function_table() if row[3]]


def out_overlap(provider) -> None:
    n = (1, 5, 64, 300, 70_001)[provider.ConsumeIntInRange(0, 4)]
    in_step = (1, 2, -1, -2, 3)[provider.ConsumeIntInRange(0, 4)]
    out_step = (1, 2, -1, -2, 3)[provider.ConsumeIntInRange(0, 4)]
    span = n * 3 + provider.ConsumeIntInRange(0, 8)
    dtype = np.float32 if provider.ConsumeBool() else np.float64
    rng = np.random.default_rng(provider.ConsumeIntInRange(0, 2**31))
    buffer = rng.uniform(-3, 3, span).astype(dtype)

    def view(step):
        extent = (n - 1) * abs(step) + 1
        start = provider.ConsumeIntInRange(0, span - extent)
        if step < 0:
            start += extent - 1
        stop = start + n * step
        return buffer[start : stop if stop >= 0 else None : step]

    src, dst = view(in_step), view(out_step)
    if provider.ConsumeBool():
        name = UFUNC_NAMES[provider.ConsumeIntInRange(0, len(UFUNC_NAMES) - 1)]
        ufunc = getattr(nf, name)
        args = (src,) if ufunc.nin == 1 else (src, src[::-1])
        # Cast as out= casts (float_power's float64 result into a float32 out).
        expected = ufunc(*(a.copy() for a in args)).astype(dst.dtype)
        ufunc(*args, out=dst)
        text = f"{name} ufunc"
    else:
        tree = expressions.random_tree(ProviderChooser(provider), provider.ConsumeIntInRange(0, 3))
        text = expressions.text_of(tree)
        values = {name: src for name in expressions.VARIABLES}
        expected = nf.evaluate(text, {k: v.copy() for k, v in values.items()}, {})
        if expected.shape != dst.shape or not np.can_cast(expected.dtype, dst.dtype, "same_kind"):
            return
        nf.evaluate(text, values, {}, out=dst)
        expected = expected.astype(dst.dtype)
    bits = np.uint32 if dst.dtype == np.float32 else np.uint64
    if not np.array_equal(dst.copy().view(bits), np.ascontiguousarray(expected).view(bits)):
        raise AssertionError(
            f"{text}: out= overlapping its input (n={n}, steps {in_step}/{out_step}) differs "
            "from the copy-first result"
        )


def _names(tree):
    if tree[0] == "var":
        yield tree[1]
    for child in tree[1:]:
        if isinstance(child, tuple):
            yield from _names(child)


def test_one_input(data: bytes, provider_class=None) -> None:
    if provider_class is None:
        provider = atheris.FuzzedDataProvider(data)
    else:
        provider = provider_class(data)
    mode = provider.ConsumeIntInRange(0, 13)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if mode < 4:
            call_api(provider.ConsumeUnicode(2048), VALUES)
        elif mode < 8:
            call_api(token_soup(provider), VALUES)
        elif mode < 10:
            differential(provider)
        elif mode == 10:
            bytes_differential(provider)
        elif mode == 11:
            out_broadcast(provider)
        elif mode == 12:
            python_int_differential(provider)
        else:
            out_overlap(provider)


def run_random(count: int, seed: int) -> None:
    """The plain driver: `count` random inputs (no coverage feedback)."""
    rng = random.Random(seed)
    start = time.perf_counter()
    for k in range(count):
        size = rng.choice([8, 32, 128, 512, 4096])
        data = rng.randbytes(size)
        try:
            test_one_input(data, BytesProvider)
        except Exception:
            print(f"input {k} (seed {seed}) failed: {data!r}", file=sys.stderr)
            raise
    elapsed = time.perf_counter() - start
    print(f"fuzz_evaluate: {count} random inputs in {elapsed:.1f} s, no findings")


def main(argv) -> None:
    if len(argv) >= 2 and argv[1] == "--random":
        count = int(argv[2]) if len(argv) > 2 else 50_000
        seed = int(argv[3]) if len(argv) > 3 else int(os.environ.get("FUZZ_SEED", "1"))
        run_random(count, seed)
        return
    # The harness's own branches (modes, token choices) count as coverage too.
    for name in (
        "call_api",
        "token_soup",
        "random_view",
        "differential",
        "bytes_differential",
        "python_int_differential",
        "random_out",
        "out_broadcast",
        "out_overlap",
    ):
        globals()[name] = atheris.instrument_func(globals()[name])
    atheris.Setup(argv, atheris.instrument_func(test_one_input))
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
