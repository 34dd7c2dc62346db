"""numfuse.cuda on a GPU: exp/log/erf, logsumexp/softmax and evaluate vs torch and CuPy.

    python benchmarks/python/gpu_bench.py [--n 100000000] [--repeat 10] [--device 0]
                                          [--only unary,reductions,evaluate]

For each float32/float64 case it reports the time per call, the effective memory
throughput (bytes read + written by an ideal single pass) and that throughput as a
fraction of the device's copy bandwidth, measured in the same run with a
device-to-device copy of the same number of bytes (cudaMemcpyAsync). Peers are
timed side by side in the same process on the same data: torch and CuPy, each when
installed (they are optional). Ratios > 1 mean numfuse is faster.

Targets: exp/log/erf >= 85 % of copy bandwidth and at least as fast as torch and
CuPy; the 5-operation evaluate >= 2x faster than torch eager; logsumexp and softmax
over n elements as (sqrt n, sqrt n) axis 0 and 1, (n/100, 100) axis 1, (100, n/100)
axis 1 and axis=None: >= 85 % of copy bandwidth and at least as fast as torch
(logsumexp moves n elements, softmax 2n: one read, one write).

Without a CUDA device (or without numfuse._cuda) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

import numpy as np

import numfuse
import numfuse.cuda as nfc
from numfuse.cuda import _loader

EXPRESSION = "exp(a) * b + log(b) - a"  # 5 operations: exp, *, log, +, -


def optional(name):
    try:
        return __import__(name)
    except Exception:
        return None


def timed(fn, sync, repeat: int) -> float:
    """Best of `repeat` calls, in seconds (one warm-up call first)."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def reduction_shapes(n: int) -> list:
    """(shape, axis) cases of n elements: square both ways, short rows, long rows, all."""
    side = int(round(n**0.5))
    return [
        ((side, side), 1),
        ((side, side), 0),
        ((n // 100, 100), 1),
        ((100, n // 100), 1),
        ((side, side), None),
    ]


def bench_dtype(dtype, n, dev, rng, sync, repeat, torch, cupy, cupy_special, only) -> list:
    """Rows (dtype, operation, seconds, bytes/s, fraction of copy bandwidth, peer ratios)."""
    lib = _loader._cuda
    rows = []
    itemsize = dtype.itemsize
    host_a = rng.uniform(0.1, 4.0, n).astype(dtype)
    host_b = rng.uniform(0.1, 4.0, n).astype(dtype)
    a = nfc.to_device(host_a)
    b = nfc.to_device(host_b)
    out = nfc.DeviceArray(a.shape, dtype, dev)
    peers = {}
    if torch is not None:
        peers["torch"] = (
            torch.from_numpy(host_a).to(f"cuda:{dev}"),
            torch.from_numpy(host_b).to(f"cuda:{dev}"),
        )
    if cupy is not None:
        with cupy.cuda.Device(dev):
            peers["cupy"] = (cupy.asarray(host_a), cupy.asarray(host_b))
    del host_a, host_b

    # Copy bandwidth: one read + one write of n elements, like a unary op.
    nbytes = n * itemsize
    t_copy = timed(lambda: lib.copy_device(out.ptr, a.ptr, nbytes, 0, dev), sync, repeat)
    copy_bw = 2 * nbytes / t_copy
    rows.append((dtype.name, "d2d copy", t_copy, copy_bw, 1.0, {}))

    def case(label, ours, bytes_moved, peer_fns):
        t = timed(ours, sync, repeat)
        bw = bytes_moved / t
        ratios = {p: timed(fn, sync, repeat) / t for p, fn in peer_fns.items() if fn is not None}
        rows.append((dtype.name, label, t, bw, bw / copy_bw, ratios))

    for fn in ("exp", "log", "erf") if "unary" in only else ():
        peer_fns = {}
        if "torch" in peers:
            peer_fns["torch"] = partial(getattr(torch, fn), peers["torch"][0])
        if "cupy" in peers:
            cupy_fn = getattr(cupy_special, "erf", None) if fn == "erf" else getattr(cupy, fn)
            peer_fns["cupy"] = partial(cupy_fn, peers["cupy"][0]) if cupy_fn is not None else None
        case(fn, partial(getattr(nfc, fn), a, out=out), 2 * nbytes, peer_fns)

    # logsumexp reads n elements once (and writes one per line); softmax reads and
    # writes n elements.
    for shape, axis in reduction_shapes(n) if "reductions" in only else ():
        size = shape[0] * shape[1]
        x2 = nfc.DeviceArray(shape, dtype, dev)
        lib.copy_device(x2.ptr, a.ptr, size * itemsize, 0, dev)
        lines = 1 if axis is None else size // shape[axis]
        t2 = None
        if "torch" in peers:
            t2 = peers["torch"][0][:size].view(*shape)
            if axis is None:
                t2 = t2.view(-1)
        dim = 0 if axis is None else axis
        where = f"axis={axis} {shape[0]:.0e}x{shape[1]:.0e}".replace("+0", "")
        lse_out = nfc.DeviceArray(() if axis is None else (lines,), dtype, dev)
        case(
            f"logsumexp {where}",
            partial(nfc.logsumexp, x2, axis=axis, out=lse_out),
            (size + lines) * itemsize,
            {"torch": partial(torch.logsumexp, t2, dim=dim)} if t2 is not None else {},
        )
        sm_out = nfc.DeviceArray(shape, dtype, dev)
        case(
            f"softmax {where}",
            partial(nfc.softmax, x2, axis=axis, out=sm_out),
            2 * size * itemsize,
            {"torch": partial(torch.softmax, t2, dim=dim)} if t2 is not None else {},
        )
        del x2, sm_out

    # evaluate: 5 operations fused into one pass (2 reads + 1 write).
    if "evaluate" not in only:
        return rows
    peer_fns = {}
    if "torch" in peers:
        ta, tb = peers["torch"]
        peer_fns["torch"] = partial(eager_expression, torch, ta, tb)
    if "cupy" in peers:
        ca, cb = peers["cupy"]
        peer_fns["cupy"] = partial(eager_expression, cupy, ca, cb)  # same eager form
    case(
        f"evaluate '{EXPRESSION}'",
        partial(nfc.evaluate, EXPRESSION, local_dict={"a": a, "b": b}, out=out),
        3 * nbytes,
        peer_fns,
    )
    return rows


def eager_expression(xp, a, b):
    """EXPRESSION in eager mode (one kernel and one temporary per operation)."""
    return xp.exp(a) * b + xp.log(b) - a


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e8, help="elements per array (default 1e8)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument(
        "--only",
        default="unary,reductions,evaluate",
        help="comma-separated groups to run: unary, reductions, evaluate (default all)",
    )
    args = parser.parse_args()

    if not nfc.available():
        print(f"gpu_bench: nothing to measure here -- {nfc.status()}")
        return 0

    lib = _loader._cuda
    dev = args.device
    n = int(args.n)
    info = lib.device_info(dev)
    torch = optional("torch")
    if torch is not None and not torch.cuda.is_available():
        torch = None
    cupy = optional("cupy")
    cupy_special = None
    if cupy is not None:
        try:
            import cupyx.scipy.special as cupy_special
        except Exception:
            cupy_special = None

    print(
        f"device {dev}: {info['name']}, compute capability {info['compute_capability']}, "
        f"{info['total_memory'] / 2**30:.1f} GiB; numfuse._cuda for {lib.architectures()}"
    )
    print(
        f"peers: torch {'yes ' + torch.__version__ if torch else 'no'}, "
        f"CuPy {'yes ' + cupy.__version__ if cupy else 'no'}; n = {n:.3g}, best of {args.repeat}"
    )

    def sync():
        lib.device_synchronize(dev)

    only = set(args.only.split(","))
    rows = []
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        rows += bench_dtype(
            np.dtype(dtype), n, dev, rng, sync, args.repeat, torch, cupy, cupy_special, only
        )

    peers_seen = sorted({p for row in rows for p in row[5]})
    header = f"{'dtype':8} {'operation':48} {'ms':>9} {'GB/s':>8} {'of copy':>8}"
    header += "".join(f" {'vs ' + p:>9}" for p in peers_seen)
    print()
    print(header)
    print("-" * len(header))
    for dtype, label, t, bw, frac, ratios in rows:
        line = f"{dtype:8} {label:48} {t * 1e3:9.3f} {bw / 1e9:8.1f} {frac * 100:7.1f}%"
        for p in peers_seen:
            line += f" {ratios[p]:8.2f}x" if p in ratios else f" {'-':>9}"
        print(line)
    print(
        "\nvs peer = peer time / numfuse time (> 1: numfuse faster); 'of copy' = effective "
        "bandwidth / device-to-device copy bandwidth."
    )
    print(f"numfuse {numfuse.__version__}; CPU level {numfuse.get_level()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
