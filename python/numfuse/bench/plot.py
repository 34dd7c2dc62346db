"""Speed-up over NumPy against size, one panel per function (matplotlib, Agg).

Uses matplotlib's object API (Figure + the Agg canvas), never pyplot's global
state, so it works headless and inside notebooks alike.
"""

from __future__ import annotations

import math

COLORS = {
    "numfuse": "#d62728",
    "numpy": "#7f7f7f",
    "numexpr": "#1f77b4",
    "torch": "#ff7f0e",
    "scipy": "#2ca02c",
    "jax": "#9467bd",
    "numba": "#8c564b",
}
STYLES = {"float64": "-", "float32": "--"}


def _baseline(cases) -> str | None:
    """NumPy where it has the function; else SciPy (erf); else nothing to divide by."""
    for candidate in ("numpy", "scipy"):
        if any(c["results"].get(candidate, {}).get("status") == "ok" for c in cases):
            return candidate
    return None


def speedups(doc: dict) -> dict:
    """{function: {"baseline": peer, "series": {(peer, dtype): [(n, speed-up), ...]}}}

    speed-up = baseline's median time / the peer's median time."""
    by_function = {}
    for case in doc["cases"]:
        by_function.setdefault(case["function"], []).append(case)
    out = {}
    for function, cases in by_function.items():
        base = _baseline(cases)
        series = {}
        for case in sorted(cases, key=lambda c: c["n"]):
            ref = case["results"].get(base, {}) if base else {}
            if ref.get("status") != "ok":
                continue
            for peer, r in case["results"].items():
                if r.get("status") == "ok":
                    series.setdefault((peer, case["dtype"]), []).append(
                        (case["elements"], ref["median_s"] / r["median_s"])
                    )
        out[function] = {"baseline": base, "series": series}
    return out


def _peer_rank(peer: str) -> int:
    order = list(COLORS)
    return order.index(peer) if peer in order else len(order)


def _series_order(item):
    (peer, dtype), _ = item
    return (_peer_rank(peer), dtype)


def plot(doc: dict, path=None, columns: int = 3, dpi: int = 110):
    """Draw the speed-up panels; save to `path` (PNG) when given. Returns the Figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = speedups(doc)
    panels = len(data)
    if panels == 0:
        raise ValueError("nothing to plot: the run has no cases")
    columns = max(1, min(columns, panels))
    rows = math.ceil(panels / columns)
    fig = Figure(figsize=(4.2 * columns, 3.3 * rows), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    threads = doc["threads"]["requested"]
    fig.suptitle(
        f"Speed-up over NumPy (higher is better), {doc['machine']['cpu']}, {threads} threads",
        fontsize=10,
    )
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    seen_peers, seen_dtypes = [], []
    for index, (function, panel) in enumerate(data.items()):
        ax = fig.add_subplot(rows, columns, index + 1)
        for (peer, dtype), points in sorted(panel["series"].items(), key=_series_order):
            if peer == panel["baseline"] or not points:
                continue
            xs, ys = zip(*points)
            ax.plot(
                xs, ys, STYLES.get(dtype, ":"), marker="o", markersize=3, color=COLORS.get(peer)
            )
            seen_peers += [peer] if peer not in seen_peers else []
            seen_dtypes += [dtype] if dtype not in seen_dtypes else []
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        title = (
            function
            if panel["baseline"] in ("numpy", None)
            else f"{function} (vs {panel['baseline']}: NumPy has none)"
        )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("elements", fontsize=8)
        ax.set_ylabel(f"{panel['baseline'] or '?'} median / median", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", linewidth=0.3, alpha=0.6)
    handles = [
        Line2D([], [], color=COLORS.get(p), marker="o", markersize=3, label=p)
        for p in sorted(seen_peers, key=_peer_rank)
    ]
    handles += [
        Line2D([], [], color="gray", linestyle=STYLES.get(d, ":"), label=d)
        for d in sorted(seen_dtypes)
    ]
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    if path is not None:
        fig.savefig(path)
    return fig
