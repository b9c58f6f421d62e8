"""The analysis figures, drawn with matplotlib as SVG, light and dark.

Same conventions as ladder_plots (whose themes and helpers these reuse): a
transparent background, text and grid in the page mode's colours, data as
plain values, no files and no Sphinx.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_plots import GPU_COLOURS, THEMES, _legend, _style, _svg, _thousands

#: The K-loop mix's families, in drawing order, with a colour each (readable
#: on white and near-black; FFMA, the useful work, the strongest).
MIX_COLOURS = {
    "FFMA": "#3d7dd8",
    "shared loads": "#e0892b",
    "shared stores": "#c4508f",
    "global loads": "#3aa56b",
    "barriers": "#d64541",
    "other": "#9a9a9a",
}
_RC = {"svg.fonttype": "none", "svg.hashsalt": "ladder"}


@dataclass(frozen=True)
class MixBar:
    """One chapter's K-loop: its label and its instructions by family."""

    label: str
    families: dict[str, int]


def draw_mix(bars: list[MixBar], mode: str) -> bytes:
    """Each chapter's K-loop body as a horizontal bar of instruction counts,
    stacked by family, the first chapter on top."""
    theme = THEMES[mode]
    with plt.rc_context(_RC):
        figure, axes = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.4))
        positions = list(range(len(bars)))[::-1]
        left = [0] * len(bars)
        for family, colour in MIX_COLOURS.items():
            widths = [bar.families.get(family, 0) for bar in bars]
            axes.barh(positions, widths, left=left, color=colour, label=family, height=0.7)
            left = [a + b for a, b in zip(left, widths)]
        for position, total, bar in zip(positions, left, bars):
            share = 100 * bar.families.get("FFMA", 0) / total if total else 0
            axes.text(total, position, f"  {total} ({share:.0f}% FFMA)", va="center",
                      fontsize="small", color=theme["ink"])
        _style(axes, theme)
        axes.grid(True, axis="x", color=theme["grid"], linewidth=0.6)
        axes.grid(False, axis="y")
        axes.set_yticks(positions)
        axes.set_yticklabels([bar.label for bar in bars])
        axes.set_xlabel("instructions in the K-loop body (static count)")
        axes.set_xlim(0, max(left, default=1) * 1.25)
        _legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        return _svg(figure)


def draw_bankmap(report: dict, mode: str) -> bytes:
    """One warp-wide access: a row per lane, a column per bank, a mark at the
    bank(s) each lane reads; lanes that share a phase (16 for 8-byte, 8 for
    16-byte accesses) sit in one band, labelled with its wavefronts."""
    theme = THEMES[mode]
    banks_per_lane = max(1, report["width_bytes"] // 4)
    with plt.rc_context(_RC):
        figure, axes = plt.subplots(figsize=(6.4, 6.4))
        for index, phase in enumerate(report["phases"]):
            first, count = phase["first_lane"], phase["lanes"]
            if len(report["phases"]) > 1 and index % 2 == 0:
                axes.add_patch(Rectangle((-0.5, first - 0.5), 32, count, color=theme["grid"],
                                         alpha=0.35, linewidth=0))
            axes.text(31.8, first + (count - 1) / 2,
                      f"  {phase['wavefronts']} wavefront{'s' if phase['wavefronts'] != 1 else ''}",
                      va="center", fontsize="small", color=theme["ink"])
        for lane in report["lanes"]:
            if not lane["active"]:
                continue
            banks = range(lane["bank"], lane["bank"] + banks_per_lane)
            axes.scatter(list(banks), [lane["lane"]] * banks_per_lane, s=22,
                         color=GPU_COLOURS[0], zorder=3)
            if banks_per_lane > 1:
                axes.plot([banks[0], banks[-1]], [lane["lane"]] * 2, color=GPU_COLOURS[0],
                          linewidth=2, zorder=2)
        _style(axes, theme)
        axes.set_xlim(-0.5, 31.5)
        axes.set_ylim(31.5, -0.5)
        axes.set_xticks(range(0, 32, 4))
        axes.set_yticks(range(0, 32, 4))
        axes.set_xlabel("bank")
        axes.set_ylabel("lane")
        axes.set_aspect("equal")
        figure.tight_layout()
        return _svg(figure)


def sweep_figure(rates: list[float], correct: list[bool], winner: int | None,
                 median: float | None, mode: str):
    """The matplotlib figure of draw_sweep (for the tests, which measure
    it); the caller closes it."""
    theme = THEMES[mode]
    order = sorted(range(len(rates)), key=lambda i: -rates[i])
    figure, axes = plt.subplots(figsize=(9, 3.4))
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
        axes.scatter(*zip(*good), s=14, color=GPU_COLOURS[0], label="correct", zorder=3)
    if bad:
        axes.scatter(*zip(*bad), s=26, marker="x", color="#d64541", label="incorrect",
                     zorder=3, clip_on=False)
    if winner is not None:
        axes.scatter([order.index(winner)], [max(rates[winner], bottom)], s=140,
                     facecolors="none", edgecolors=GPU_COLOURS[1], linewidths=2,
                     label="committed", zorder=4, clip_on=False)
    if median is not None:
        axes.axhline(median, color=theme["ink"], linestyle="--", linewidth=1,
                     label="median of the correct")
    _style(axes, theme)
    axes.set_xlabel("configurations, fastest first")
    axes.set_ylabel("GFLOP/s")
    axes.yaxis.set_major_formatter(_thousands)
    axes.set_ylim(bottom, top)
    # Room either side for the ring around the first and the last point.
    axes.set_xlim(-0.03 * len(rates) - 1, len(rates) * 1.03)
    # The legend beside the plot, never over a point.
    _legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    return figure


def draw_sweep(rates: list[float], correct: list[bool], winner: int | None,
               median: float | None, mode: str) -> bytes:
    """Every configuration of a sweep as a point, fastest first (a strip
    sorted by rate); incorrect ones as crosses (an untimed one on the bottom
    edge), the chosen one ringed, the median of the correct ones as a line.
    The y axis spans the correct rates, not from 0."""
    with plt.rc_context(_RC):
        return _svg(sweep_figure(rates, correct, winner, median, mode))
