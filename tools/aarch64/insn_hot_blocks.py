"""The hottest translated blocks of one neon64 unary loop under qemu, with their instructions:
where insn_per_element.py's count goes (constants reloaded from the pool, stack copies, table
lookups), without a profiler (qemu-user has none, and the host's tools cannot see aarch64 code).

Runs the insn_per_element driver once under qemu-aarch64 with the same log
(`-d in_asm,exec,nochain`); the blocks executed between the markers around the named loop's
call are counted, and the blocks that execute the most instructions are printed with their
disassembly.

Usage: python insn_hot_blocks.py DRIVER SYSROOT N "FUNCTION DTYPE" [TOP]
e.g.   python tools/aarch64/insn_hot_blocks.py build/aarch64/insn_per_element \
           build/aarch64/sysroot 4096 "exp float64" 2
"""

from __future__ import annotations

import collections
import sys
import tempfile

from insn_per_element import executed_blocks, marker_address, run_logged


def main() -> None:
    driver, sysroot, n, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        names = run_logged(driver, sysroot, n, log.name)
        text, calls = executed_blocks(log.name, marker_address(driver))
    ids = {" ".join(line.split()[1:]): int(line.split()[0]) for line in names}
    if wanted not in ids:
        raise SystemExit(f"{wanted!r} not among the driver's loops: {sorted(ids)}")
    executed = calls[ids[wanted]]
    total = sum(count * len(text[pc]) for pc, count in executed.items())
    print(f"{wanted}: {total} instructions, {total / n:.2f} per element (n = {n})")
    hottest = sorted(executed.items(), key=lambda kv: -kv[1] * len(text[kv[0]]))
    for pc, count in hottest[:top]:
        ops = collections.Counter(line.split()[2] for line in text[pc])
        summary = ", ".join(f"{op} {k}" for op, k in ops.most_common(8))
        print(f"--- block {pc:#x}: {len(text[pc])} instructions x {count} ({summary})")
        print("\n".join(text[pc]))


if __name__ == "__main__":
    main()
