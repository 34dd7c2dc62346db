"""Benchee-style text reports of a numfuse.bench run.

Per case: a table (name, ips, average, deviation, median, 99th percentile,
memory per call, roofline) sorted fastest first, then a comparison block
relative to the fastest ("numpy   1.50 K - 3.75x slower +487.00 µs") and a
memory comparison relative to the smallest. One statistic decides everywhere: the
median time per call (the table's order, ips = 1 / median, the comparison's ratios
and the summary's speed-ups); average and deviation are shown, never ranked by.
"""

from __future__ import annotations

import math

# A result whose CPU time (all the process's threads) was below this share of its wall
# time mostly waited for a core (timing.py): its cells carry WAITED and a note.
WAITED_SHARE = 0.3
WAITED = "†"

COLUMNS = ("Name", "ips", "average", "deviation", "median", "99th %", "memory", "roofline")


def fmt_time(seconds) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.2f} {unit}"
    return f"{seconds * 1e9:.2f} ns"


def fmt_ips(ips) -> str:
    if ips is None or not math.isfinite(ips):
        return "n/a"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if ips >= scale:
            return f"{ips / scale:.2f} {unit}"
    return f"{ips:.2f}"


def fmt_bytes(count) -> str:
    if count is None:
        return "n/a"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"  # pragma: no cover - loop always returns


def fmt_n(n: int) -> str:
    exponent = int(round(math.log10(n))) if n > 0 else 0
    return f"1e{exponent}" if 10**exponent == n else f"{n:,}"


def waited(result: dict) -> bool:
    """Did this timed result spend most of its wall time waiting for a core?"""
    share = result.get("cpu_share")
    return share is not None and math.isfinite(share) and share < WAITED_SHARE


def waited_note(result: dict) -> str:
    return (
        f"{WAITED} {result['peer']} waited for a core: its CPU time was "
        f"{100 * result['cpu_share']:.0f}% of its wall time (threads not scheduled on a busy "
        "machine), so its time measures the machine, not the library; rerun on a quiet machine"
    )


def _align(rows, right=()) -> list:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            str(cell).rjust(w) if i in right else str(cell).ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def case_title(case: dict, threads=None) -> str:
    shape = "x".join(str(s) for s in case["shape"])
    size = fmt_n(case["n"]) + (f" ({shape})" if len(case["shape"]) > 1 else "")
    suffix = f", {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    return f"## {case['function']} · {case['dtype']} · n = {size}{suffix}"


def case_report(case: dict, threads=None) -> str:
    """One case as a Benchee-style block of text."""
    lines = [case_title(case, threads)]
    results = case["results"]
    timed = sorted(
        (r for r in results.values() if r["status"] == "ok"), key=lambda r: r["median_s"]
    )
    if timed:
        rows = [COLUMNS]
        for r in timed:
            rows.append(
                (
                    r["peer"],
                    fmt_ips(r["ips"]),
                    fmt_time(r["mean_s"]),
                    f"±{r['deviation_pct']:.2f}%",
                    fmt_time(r["median_s"]) + (WAITED if waited(r) else ""),
                    fmt_time(r["p99_s"]),
                    fmt_bytes(r.get("memory_bytes")),
                    f"{r['roofline']:.2f}",
                )
            )
        lines += ["", *_align(rows, right=range(1, len(COLUMNS)))]

        fastest = timed[0]
        rows = [(fastest["peer"], fmt_ips(fastest["ips"]), "")]
        for r in timed[1:]:
            ratio = r["median_s"] / fastest["median_s"]
            rows.append(
                (
                    r["peer"],
                    fmt_ips(r["ips"]),
                    f"- {ratio:.2f}x slower +{fmt_time(r['median_s'] - fastest['median_s'])}",
                )
            )
        lines += ["", "Comparison (median times):", *_align(rows, right=(1,))]

        measured = sorted(
            (r for r in timed if r.get("memory_bytes") is not None), key=lambda r: r["memory_bytes"]
        )
        if len(measured) > 1:
            least = measured[0]
            rows = [(least["peer"], fmt_bytes(least["memory_bytes"]), "")]
            for r in measured[1:]:
                extra = r["memory_bytes"] - least["memory_bytes"]
                ratio = (
                    f"{r['memory_bytes'] / least['memory_bytes']:.2f}x"
                    if least["memory_bytes"]
                    else "∞x"
                )
                rows.append(
                    (
                        r["peer"],
                        fmt_bytes(r["memory_bytes"]),
                        f"- {ratio} memory usage +{fmt_bytes(extra)}" if extra else "- same",
                    )
                )
            lines += ["", "Memory usage:", *_align(rows, right=(1,))]

    notes = []
    for r in results.values():
        if r["status"] != "ok":
            notes.append(f"{r['peer']}: {r['status']} ({r.get('note', '')})")
        elif waited(r):
            notes.append(waited_note(r))
        elif r.get("check") and not r["check"]["agrees"]:
            diff = r["check"].get("max_rel_diff")
            notes.append(
                f"WARNING {r['peer']}: result differs from numfuse's "
                + (f"by {diff:.3g} (relative)" if diff is not None else r["check"].get("note", ""))
            )
    notes += case.get("notes", [])
    if notes:
        lines += [""] + [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"


def header(doc: dict) -> str:
    m, t, v = doc["machine"], doc["threads"], doc["versions"]
    memory = f"{m['memory_bytes'] / 2**30:.1f} GiB" if m.get("memory_bytes") else "?"
    cores = (
        f"{m['logical_cores']} logical / {m['physical_cores']} physical cores"
        if m.get("physical_cores")
        else f"{m['logical_cores']} cores"
    )
    threads = ", ".join(
        f"{k} {v}" for k, v in t.items() if k not in ("requested", "OMP_NUM_THREADS")
    )
    bw = doc["bandwidth"]
    lines = [
        "# numfuse-bench",
        "",
        f"Machine:    {m['cpu']}, {cores} ({m['usable_cores']} usable), {memory}, "
        f"flags {' '.join(m['cpu_flags']) or '?'}",
        f"numfuse:    level {m['numfuse_level']} (usable: {', '.join(m['numfuse_levels_usable'])})",
        f"Threads:    {t['requested']} requested -> {threads}",
        "Versions:   " + ", ".join(f"{k} {val}" for k, val in v.items() if val is not None),
        f"Bandwidth:  {bw['bytes_per_s'] / 1e9:.2f} GB/s ({bw['method']}); "
        "roofline = (bytes read + written) / median time / bandwidth",
        f"Budget:     {doc['options']['budget_s']} s of samples per library and case; "
        "memory = peak bytes allocated in one call (tracemalloc)",
        "Statistic:  the median time per call ranks and compares (ips = 1 / median)",
    ]
    skipped = [f"{name} ({p['note']})" for name, p in doc["peers"].items() if not p["available"]]
    if skipped:
        lines.append("Skipped:    " + ", ".join(skipped))
    load = m.get("load_average")
    busy = doc.get("busy_cores", {}).get("before")
    if load or busy is not None:
        lines.append(
            "Load:       "
            + (f"{' '.join(f'{x:.2f}' for x in load)} (1, 5, 15 min); " if load else "")
            + (f"other processes keep {busy:.2f} cores busy" if busy is not None else "")
        )
    warning = busy_warning(busy, m["usable_cores"])
    if warning:
        lines.append(f"WARNING:    {warning}")
    if t["requested"] > m["usable_cores"]:
        lines.append(
            f"WARNING:    {t['requested']} threads on {m['usable_cores']} usable cores: "
            "oversubscribed, threaded timings are distorted"
        )
    return "\n".join(lines) + "\n"


BUSY_LIMIT = 0.25  # cores used by other processes above which timings are flagged


def busy_warning(busy, cores):
    if busy is None or busy <= BUSY_LIMIT:
        return ""
    return (
        f"other processes kept {busy:.1f} of {cores} cores busy: threaded calls "
        "(numfuse, numexpr, torch) wait for their threads to be scheduled, so their "
        "timings are distorted; rerun on a quiet machine"
    )


def summary(doc: dict) -> str:
    """numfuse's speed-up over each peer per case (peer median time / numfuse median time)."""
    peers = [p for p in doc["peers"] if p != "numfuse"]
    rows = [("function", "dtype", "n", "numfuse", *peers, "roofline")]
    any_waited = False
    for case in doc["cases"]:
        mine = case["results"].get("numfuse", {})
        if mine.get("status") != "ok":
            continue
        cells = []
        for peer in peers:
            r = case["results"].get(peer, {})
            if r.get("status") == "ok" and waited(r):
                any_waited = True
                cells.append(f"waited{WAITED}")  # the ratio would rank the machine
            elif r.get("status") == "ok":
                cells.append(f"{r['numfuse_speedup']:.2f}x")
            else:
                cells.append(r.get("status", "-"))
        any_waited = any_waited or waited(mine)
        rows.append(
            (
                case["function"],
                case["dtype"],
                fmt_n(case["n"]),
                fmt_time(mine["median_s"]) + (WAITED if waited(mine) else ""),
                *cells,
                f"{mine['roofline']:.2f}",
            )
        )
    if len(rows) == 1:
        return ""
    text = _align(rows, right=range(2, len(rows[0])))
    after = doc.get("busy_cores", {}).get("after")
    warning = busy_warning(after, doc["machine"]["usable_cores"])
    return (
        "## Summary: numfuse's median time, and its speed-up over each library "
        "(their median time / numfuse's)\n\n"
        + "\n".join(text)
        + f"\n\n({doc.get('duration_s', 0):.1f} s)\n"
        + (
            f"{WAITED} waited for a core (CPU time < {100 * WAITED_SHARE:.0f}% of wall time: "
            "threads not scheduled on a busy machine): the time measures the machine, not the "
            "library, so no ratio is shown (the times are in --json)\n"
            if any_waited
            else ""
        )
        + (f"WARNING: at the end, {warning}\n" if warning else "")
    )


def quick_footer(doc: dict) -> str:
    """What a --quick run leaves out of the screen, and where to find it."""
    return (
        f"{len(doc['cases'])} cases; each case's report (ips, deviation, percentiles, memory, "
        "the comparison) is in --json FILE, or printed by a run without --quick\n"
    )


def full_report(doc: dict) -> str:
    threads = doc["threads"]["requested"]
    parts = [header(doc)] + [case_report(c, threads) for c in doc["cases"]] + [summary(doc)]
    return "\n".join(parts)
