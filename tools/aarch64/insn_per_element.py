"""Instructions per element of every neon64 unary loop, from qemu-aarch64's own log, beside
the same loops of an x86 level counted by valgrind's callgrind.

Debian's qemu-user ships no TCG plugins (no libinsn.so), so the count comes from
`-d in_asm,exec,nochain`: in_asm gives the instructions of each translated block, exec
(with chaining off) one line per executed block. tools/aarch64/insn_per_element.cpp calls
each loop between two calls of numfuse_insn_marker; the blocks executed in between are
that loop. Two sizes, n and 2n, and their difference per element removes the fixed cost
(head, tail, setup).

The x86 column: the same driver built natively (numfuse_insn_marker zeroes callgrind's
counters before each call and dumps them after it), run under callgrind at X86_LEVEL.

Usage: python insn_per_element.py DRIVER SYSROOT [n [X86_DRIVER [X86_LEVEL]]]
"""

from __future__ import annotations

import collections
import glob
import os
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


def run_logged(driver: str, sysroot: str, n: int, log: str) -> list[str]:
    """Runs the driver on n elements under qemu-aarch64, its log (in_asm, exec, no chaining)
    written to `log`; returns the driver's lines ("id op dtype", one per loop it called)."""
    out = subprocess.run(
        ["qemu-aarch64", "-L", sysroot, "-d", "in_asm,exec,nochain", "-D", log, driver, str(n)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [line for line in out.split("\n") if line]


def executed_blocks(
    log: str, marker: int
) -> tuple[dict[int, list[str]], list[collections.Counter[int]]]:
    """Reads qemu's log: the instructions of each translated block (keyed by its address),
    and for each call between two markers how often each block ran. A block's text is the
    one translated last at its address (qemu retranslates only what it flushed)."""
    text: dict[int, list[str]] = {}
    calls: list[collections.Counter[int]] = []
    block, inside = None, False
    with open(log) as lines:
        for line in lines:
            if line.startswith("IN:"):
                block = None
                continue
            m = INSN.match(line)
            if m:
                pc = int(m.group(1), 16)
                if block is None:
                    block = pc
                    text[pc] = []
                text[block].append(line.rstrip())
                continue
            m = TRACE.match(line)
            if not m:
                continue
            pc = int(m.group(1), 16)
            if pc == marker:
                inside = not inside
                if inside:
                    calls.append(collections.Counter())
            elif inside:
                calls[-1][pc] += 1
    return text, calls


def counts(driver: str, sysroot: str, n: int) -> tuple[list[str], list[int]]:
    """The driver's lines and the instructions each loop call executed, n elements."""
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        names = run_logged(driver, sysroot, n, log.name)
        text, calls = executed_blocks(log.name, marker_address(driver))
    return names, [sum(k * len(text[pc]) for pc, k in call.items()) for call in calls]


TOTALS = re.compile(r"^totals:\s+(\d+)")


def callgrind_counts(driver: str, level: str, n: int) -> dict[str, int]:
    """Instructions of each loop call (keyed "op dtype"), one callgrind dump per call."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "cg.out")
        names = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", driver, str(n), level],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        dumps = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        per_call = []
        for dump in dumps:
            with open(dump) as lines:
                per_call.extend(int(m.group(1)) for m in map(TOTALS.match, lines) if m)
    keys = [" ".join(name.split()[1:]) for name in names if name]
    return dict(zip(keys, per_call))


def main() -> None:
    driver, sysroot = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    x86_driver = sys.argv[4] if len(sys.argv) > 4 else None
    x86_level = sys.argv[5] if len(sys.argv) > 5 else "avx2_fma"
    names, small = counts(driver, sysroot, n)
    _, large = counts(driver, sysroot, 2 * n)
    x86_small = callgrind_counts(x86_driver, x86_level, n) if x86_driver else {}
    x86_large = callgrind_counts(x86_driver, x86_level, 2 * n) if x86_driver else {}
    head = f"| function | dtype | instructions / element, neon64 (n={n} -> {2 * n}) |"
    if x86_driver:
        head += f" {x86_level} | neon64 / {x86_level} |"
    print(head)
    print("|---|---|---|" + ("---|---|" if x86_driver else ""))
    for name, a, b in zip(names, small, large):
        _, op, dtype = name.split()
        neon = (b - a) / n
        row = f"| {op} | {dtype} | {neon:.1f} |"
        key = f"{op} {dtype}"
        if x86_driver and key in x86_small and key in x86_large:
            x86 = (x86_large[key] - x86_small[key]) / n
            row += f" {x86:.1f} | {neon / x86:.2f} |" if x86 > 0 else f" {x86:.1f} | |"
        elif x86_driver:
            row += " | |"
        print(row)


if __name__ == "__main__":
    main()
