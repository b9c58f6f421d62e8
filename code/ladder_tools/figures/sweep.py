"""Every configuration of an autotuning sweep as a point, fastest first
({ladder-sweep}).

The data: a sweep's results (ladder_tools.results.sweep_results) and the
configuration the chapter's kernel file commits to, as plain lists
(sweep_points).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt

from ladder_tools import results
from ladder_tools.analysis.binaries import find_variant
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg, thousands
from ladder_tools.formatting import format_size
from ladder_tools.results.sweep_results import Sweep, committed_config, load_sweep, sweep_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def sweep_points(sweep: Sweep, committed: dict | None
                 ) -> tuple[list[float], list[bool], int | None, float | None]:
    """The figure's data: each configuration's rate (0 when untimed) and
    whether it is correct and timed, the index of the ringed one (the
    committed configuration, else the sweep's winner) and the median rate
    of the correct ones."""
    rates = [c.get("gflops", 0.0) for c in sweep.configs]
    correct = [c["correct"] and "gflops" in c for c in sweep.configs]
    ringed = committed if committed is not None else sweep.winner
    index = next((i for i, c in enumerate(sweep.configs) if c is ringed), None)
    return rates, correct, index, sweep.median_gflops


#: The phone's drawing (stacked=True) is as wide as by_size's: a phone's
#: column (390 px less the page's margins) without shrinking its text.
STACKED_WIDTH_IN = 3.75


def sweep_figure(rates: list[float], correct: list[bool], winner: int | None,
                 median: float | None, mode: str, stacked: bool = False) -> MplFigure:
    """The matplotlib figure of draw_sweep (for the tests, which measure
    it); the caller closes it. `stacked`: the legend under the plot instead
    of beside it, narrow enough for a phone."""
    theme = THEMES[mode]
    order = sorted(range(len(rates)), key=lambda i: -rates[i])
    figure, axes = plt.subplots(figsize=(STACKED_WIDTH_IN, 3.2) if stacked else (9, 3.4))
    good = [(rank, rates[i]) for rank, i in enumerate(order) if correct[i]]
    # The y axis spans the correct configurations' rates, not 0 to the top:
    # their spread is what the figure is for. A configuration below it (an
    # untimed one, at 0) is drawn on the bottom edge.
    shown = [rate for _, rate in good] or [rate for rate in rates if rate > 0] or [0.0, 1.0]
    low, high = min(shown), max(shown)
    pad = (high - low) * 0.08 or max(high, 1.0) * 0.05
    bottom, top = max(0.0, low - pad), high + pad
    bad = [(rank, max(rates[i], bottom)) for rank, i in enumerate(order) if not correct[i]]
    if good:
        ranks, values = zip(*good, strict=True)
        axes.scatter(ranks, values, s=14, color=GPU_COLOURS[0], label="correct", zorder=3)
    if bad:
        ranks, values = zip(*bad, strict=True)
        axes.scatter(ranks, values, s=26, marker="x", color="#d64541", label="incorrect",
                     zorder=3, clip_on=False)
    if winner is not None:
        axes.scatter([order.index(winner)], [max(rates[winner], bottom)], s=140,
                     facecolors="none", edgecolors=GPU_COLOURS[1], linewidths=2,
                     label="committed", zorder=4, clip_on=False)
    if median is not None:
        axes.axhline(median, color=theme["ink"], linestyle="--", linewidth=1,
                     label="median of the correct")
    style_axes(axes, theme)
    axes.set_xlabel("configurations, fastest first")
    axes.set_ylabel("GFLOP/s")
    axes.yaxis.set_major_formatter(thousands)
    axes.set_ylim(bottom, top)
    # Room either side for the ring around the first and the last point (a
    # larger share of a narrower plot).
    room = 0.05 if stacked else 0.03
    axes.set_xlim(-room * len(rates) - 1, len(rates) * (1 + room))
    # The legend beside the plot (under it on a phone), never over a point.
    if stacked:
        figure.tight_layout()
        legend(figure, theme, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncols=2)
    else:
        legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
    return figure


def draw_sweep(rates: list[float], correct: list[bool], winner: int | None,
               median: float | None, mode: str, stacked: bool = False) -> bytes:
    """Every configuration of a sweep as a point, fastest first (a strip
    sorted by rate); incorrect ones as crosses (an untimed one on the bottom
    edge), the chosen one ringed, the median of the correct ones as a line.
    The y axis spans the correct rates, not from 0. `stacked`: the phone's
    drawing, the legend under the plot."""
    with plt.rc_context(RC):
        return svg(sweep_figure(rates, correct, winner, median, mode, stacked))


# -- The figure, as the book asks for it (registry.py) ------------------------


def sweep_drawing(sweep: Sweep, committed: dict | None, gpu_name: str) -> Drawing:
    """One GPU's sweep, the configuration the kernel commits to ringed (the
    fastest when it is not among them), as {ladder-sweep} shows it under
    the GPU's name (ladder_tools/sphinx/ladder_analysis.py, which adds the tables); on
    a phone, a narrow drawing with the key under the plot."""
    rates, correct, ringed, median = sweep_points(sweep, committed)
    size_text = format_size(sweep.size) if sweep.size else "one size"
    wrong = correct.count(False)
    caption = (f"{len(rates)} configurations at {size_text}, fastest first; the GFLOP/s "
               "axis spans the correct ones' rates, not from 0")
    if wrong:
        caption += (f"; {wrong} incorrect, failed or untimed (crosses; on the bottom edge "
                    "when untimed)")
    caption += ("; ringed: the configuration the chapter's kernel file commits to"
                if committed is not None else "; ringed: the fastest")
    caption += ", the median of the correct ones dashed."
    return Drawing(lambda mode: sweep_figure(rates, correct, ringed, median, mode),
                   f"GFLOP/s of every configuration of the sweep on {gpu_name}", caption,
                   layout="column",
                   phone=lambda mode: sweep_figure(rates, correct, ringed, median, mode, True),
                   name=gpu_name)


def load(context: Context, request: Request) -> Drawn:
    """The chapter's sweep on each GPU that has one (or on ``:gpu:``)."""
    chapter, root = request.arguments[0], context.results_root
    drawings, read = [], []
    for gpu in results.gpu_folders(root):
        if request.options["gpu"] not in (None, gpu):
            continue
        read.append(sweep_path(root, gpu, chapter))
        found = load_sweep(root, gpu, chapter)
        if found is None:
            continue
        binary, variant = find_variant(context.repo_root, context.build_dir, chapter)
        read.append(binary)
        name = (found.data.get("provenance") or {}).get("gpu", gpu)
        drawings.append(sweep_drawing(found, committed_config(found, variant.get("constants")),
                                      name))
    return Drawn(drawings, f"No GPU has a sweep for {chapter} yet.", read)


FIGURE = Figure("sweep", "a chapter's sweep, the committed configuration ringed", load,
                arguments=(1, 1), argument="a chapter folder's name, e.g. 09-autotuning",
                options={"gpu": Option("the GPU's folder under results/ (default: each that "
                                       "has a sweep)")},
                directive=False)
