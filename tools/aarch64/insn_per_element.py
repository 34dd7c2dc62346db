"""Instructions per element of every neon64 unary loop, from qemu-aarch64's own log.

Debian's qemu-user ships no TCG plugins (no libinsn.so), so the count comes from
`-d in_asm,exec,nochain`: in_asm gives the instructions of each translated block, exec
(with chaining off) one line per executed block. tools/aarch64/insn_per_element.cpp calls
each loop between two calls of numfuse_insn_marker; the blocks executed in between are
that loop. Two sizes, n and 2n, and their difference per element removes the fixed cost
(head, tail, setup).

Usage: python insn_per_element.py DRIVER SYSROOT [n]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile

TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
INSN = re.compile(r"^0x([0-9a-f]+):\s")


def marker_address(driver: str) -> int:
    out = subprocess.run(
        ["aarch64-linux-gnu-nm", driver], check=True, capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        if line.endswith(" numfuse_insn_marker"):
            return int(line.split()[0], 16)
    raise SystemExit("numfuse_insn_marker not found in " + driver)


def counts(driver: str, sysroot: str, n: int) -> tuple[list[str], list[int]]:
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        names = subprocess.run(
            [
                "qemu-aarch64",
                "-L",
                sysroot,
                "-d",
                "in_asm,exec,nochain",
                "-D",
                log.name,
                driver,
                str(n),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        marker = marker_address(driver)
        block_size: dict[int, int] = {}
        current_block, executed, inside, per_call = None, 0, False, []
        with open(log.name) as lines:
            for line in lines:
                if line.startswith("IN:"):
                    current_block = None
                    continue
                m = INSN.match(line)
                if m:
                    pc = int(m.group(1), 16)
                    if current_block is None:
                        current_block = pc
                        block_size[pc] = 0
                    block_size[current_block] += 1
                    continue
                m = TRACE.match(line)
                if not m:
                    continue
                pc = int(m.group(1), 16)
                if pc == marker:
                    if inside:
                        per_call.append(executed)
                    inside, executed = not inside, 0
                elif inside:
                    executed += block_size[pc]
    return [name for name in names if name], per_call


def main() -> None:
    driver, sysroot = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    names, small = counts(driver, sysroot, n)
    _, large = counts(driver, sysroot, 2 * n)
    print(f"| function | dtype | instructions / element (neon64, n={n} -> {2 * n}) |")
    print("|---|---|---|")
    for name, a, b in zip(names, small, large):
        _, op, dtype = name.split()
        print(f"| {op} | {dtype} | {(b - a) / n:.1f} |")


if __name__ == "__main__":
    main()
