"""evaluate's exp, log and erf run the ufuncs' fast paths (arch/unary_fast_ops.hpp): each
batch the fast kernel may get wrong (specials, huge or tiny arguments, NaN, negative log
arguments) is recomputed with the full kernel. These tests check that an element's bits are
the ufunc's whatever its neighbours in the batch are, at every level, in place and as a
temporary inside a larger formula."""

import numpy as np
import pytest

import numfuse

NAMES = ["exp", "log", "erf"]
DTYPES = [np.float32, np.float64]
IDS = ["float32", "float64"]
BITS = {np.float32: np.uint32, np.float64: np.uint64}


def _hostile(dtype, seed=0):
    """Values over every magnitude, subnormals, signed zeros, infinities and NaNs (with
    payloads and both signs), shuffled so that special lanes share batches with ordinary
    ones, in lengths that leave every tail size."""
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    bits = BITS[dtype]
    nbits = 32 if dtype == np.float32 else 64
    raw = rng.integers(0, 2**nbits, 4000, dtype=np.uint64).astype(bits).view(dtype)
    ordinary = rng.uniform(-30, 30, 4000).astype(dtype)
    near_limits = np.concatenate(
        [
            np.log(info.max) + rng.uniform(-2, 2, 200),
            np.log(info.tiny) + rng.uniform(-40, 2, 200),
            rng.uniform(-1e-5, 1e-5, 200),
            rng.uniform(0.5, 2.0, 200),
        ]
    ).astype(dtype)
    payload_nan = np.array([0x7FF8000000000123 if nbits == 64 else 0x7FC00123], bits).view(dtype)
    specials = np.concatenate(
        [
            np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.tiny, -info.tiny], dtype),
            np.array(
                [info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max], dtype
            ),
            payload_nan,
            -payload_nan,
        ]
    )
    x = np.concatenate([raw, ordinary, near_limits, np.tile(specials, 20)])
    rng.shuffle(x)
    return x


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_evaluate_gives_the_ufunc_bits_on_hostile_inputs(name, dtype, level):
    x = _hostile(dtype)
    bits = BITS[dtype]
    ufunc = getattr(numfuse, name)
    with np.errstate(all="ignore"):
        for n in (len(x), 1, 3, 5, 7, 9, 17, 255, 257, 1031):
            want = ufunc(x[:n]).view(bits)
            got = numfuse.evaluate(f"{name}(a)", local_dict={"a": x[:n]}).view(bits)
            np.testing.assert_array_equal(got, want, err_msg=f"n={n}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_fast_path_inside_formulas_and_in_place(name, dtype, level):
    """The argument a temporary of the formula (its block register may be the result's),
    the result written over the input, and a strided input."""
    x = _hostile(dtype, seed=1)
    bits = BITS[dtype]
    ufunc = getattr(numfuse, name)
    with np.errstate(all="ignore"):
        doubled = (x * dtype(2)).astype(dtype)
        want = (ufunc(doubled) + dtype(1)).astype(dtype)
        got = numfuse.evaluate(f"{name}(a * 2) + 1", local_dict={"a": x})
        np.testing.assert_array_equal(got.view(bits), want.view(bits))

        inplace = x.copy()
        numfuse.evaluate(f"{name}(a)", local_dict={"a": inplace}, out=inplace)
        np.testing.assert_array_equal(inplace.view(bits), ufunc(x).view(bits))

        strided = x[::3]
        got = numfuse.evaluate(f"{name}(a)", local_dict={"a": strided})
        np.testing.assert_array_equal(got.view(bits), ufunc(strided).view(bits))


@pytest.mark.parametrize("name", NAMES)
def test_threads_give_the_same_bits(name, threads):
    x = np.tile(_hostile(np.float64, seed=2), 40)  # long enough to split over threads
    with np.errstate(all="ignore"):
        want = getattr(numfuse, name)(x).view(np.uint64)
        for count in (1, 2, 3, 7):
            numfuse.set_num_threads(count)
            got = numfuse.evaluate(f"{name}(a)", local_dict={"a": x}).view(np.uint64)
            np.testing.assert_array_equal(got, want, err_msg=f"threads={count}")
