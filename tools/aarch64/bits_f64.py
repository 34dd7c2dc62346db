"""The bits of one float64 unary ufunc of numfuse over a fixed set of inputs, to compare a
neon64 kernel under qemu with the x86 kernel of the same method bit for bit.

The inputs are built from integer bit patterns (the same on every machine): special values,
the boundaries of the function's paths (EDGES), a sweep of every binade from 2^-1074 to
2^10 with random mantissas, and random uniform points in [-lim, lim] (7 for erf, else 25).

Usage: run once with the x86 build at the level to compare with and once with the aarch64
build under qemu (tools/aarch64/python3.11), then compare the two files:
  PYTHONPATH=/tmp/pk python tools/aarch64/bits_f64.py run tanh avx2_fma x86.npy
  PYTHONPATH=build/aarch64/pkg tools/aarch64/python3.11 tools/aarch64/bits_f64.py \\
      run tanh neon64 neon.npy
  python tools/aarch64/bits_f64.py compare x86.npy neon.npy
"""

import sys

import numpy as np

EDGES = {
    "tanh": [0.25, 2.0**-27, 2.0**-30, 19.07, 19.5, 0.5, 1.0, 18.0, 354.0],
    "erf": [0.5, 0.84375, 1.25, 2.857, 6.0, 5.9, 5.92, 27.0, 2.0**-28],
}


def inputs(name: str, n_random: int = 2_000_000) -> np.ndarray:
    rng = np.random.Generator(np.random.PCG64(2029))
    special = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -1.7976931348623157e308,
        ],
        dtype=np.float64,
    )
    snan = np.array([0x7FF0000000000001, 0xFFF4000000000000], dtype=np.uint64).view(np.float64)
    near = []
    for e in EDGES.get(name, []):
        bits = np.array([e], dtype=np.float64).view(np.uint64)[0]
        near.append((bits + np.arange(-64, 65, dtype=np.int64).astype(np.uint64)).view(np.float64))
    near = np.concatenate(near) if near else np.empty(0)
    near = np.concatenate([near, -near])
    # every binade 2^-1074 .. 2^10, 512 random mantissas each, both signs
    exps = np.arange(0, 1023 + 11, dtype=np.uint64)
    mant = rng.integers(0, 1 << 52, size=(exps.size, 512), dtype=np.uint64)
    binades = ((exps[:, None] << np.uint64(52)) | mant).ravel().view(np.float64)
    binades = np.concatenate([binades, -binades])
    lim = {"erf": 7.0}.get(name, 25.0)
    u = rng.integers(0, 1 << 53, size=n_random, dtype=np.uint64).astype(np.float64)
    uniform = (u / 2.0**53 * 2.0 - 1.0) * lim
    return np.concatenate([special, snan, near, binades, uniform])


def run(name: str, level: str, out: str) -> None:
    import numfuse

    numfuse.set_level(level)
    numfuse.set_num_threads(1)
    x = inputs(name)
    y = getattr(numfuse, name)(x)
    np.save(out, np.stack([x, y]))
    print(name, level, numfuse.get_level(), x.size, "inputs")


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ia = a.view(np.int64)
    ib = b.view(np.int64)
    ia = np.where(ia < 0, np.int64(-0x8000000000000000) - ia, ia)
    ib = np.where(ib < 0, np.int64(-0x8000000000000000) - ib, ib)
    return np.abs(ia - ib)


def compare(f1: str, f2: str) -> int:
    a = np.load(f1)
    b = np.load(f2)
    if not np.array_equal(a[0].view(np.uint64), b[0].view(np.uint64)):
        print("the inputs differ")
        return 1
    same = a[1].view(np.uint64) == b[1].view(np.uint64)
    print(f"{a.shape[1]} inputs, {np.count_nonzero(~same)} results differ in bits")
    if not same.all():
        d = ulp_diff(a[1], b[1])
        i = np.flatnonzero(~same)[:10]
        print("max ULP apart", d[~same].max())
        for k in i:
            print(f"  x={a[0][k]!r} {a[1][k]!r} {b[1][k]!r}")
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
