"""One warp-wide shared-memory access: which bank each lane reads
({ladder-bankmap} with :figure:).

The data: one access as build/bin/bankmap reports it
(ladder_tools.analysis.bankmap.run_bankmap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_tools.analysis.bankmap import bank_summary, run_bankmap
from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures.registry import (
    Context,
    Drawing,
    Drawn,
    Figure,
    Option,
    Request,
    positive_int,
)
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, style_axes, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


def bankmap_figure(report: dict, mode: str) -> MplFigure:
    """The matplotlib figure of draw_bankmap (for the tests, which measure
    it); the caller closes it."""
    theme = THEMES[mode]
    banks_per_lane = max(1, report["width_bytes"] // 4)
    # 4.4 in: shrunk to a phone's column (the directive's figure is as wide
    # as the column) its text stays 9 px high.
    figure, axes = plt.subplots(figsize=(4.4, 4.4))
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
        axes.scatter(list(banks), [lane["lane"]] * banks_per_lane, s=12,
                     color=GPU_COLOURS[0], zorder=3)
        if banks_per_lane > 1:
            axes.plot([banks[0], banks[-1]], [lane["lane"]] * 2, color=GPU_COLOURS[0],
                      linewidth=1.5, zorder=2)
    style_axes(axes, theme)
    axes.set_xlim(-0.5, 31.5)
    axes.set_ylim(31.5, -0.5)
    axes.set_xticks(range(0, 32, 4))
    axes.set_yticks(range(0, 32, 4))
    axes.set_xlabel("bank")
    axes.set_ylabel("lane")
    axes.set_aspect("equal")
    figure.tight_layout()
    return figure


def draw_bankmap(report: dict, mode: str) -> bytes:
    """One warp-wide access: a row per lane, a column per bank, a mark at the
    bank(s) each lane reads; lanes that share a phase (16 for 8-byte, 8 for
    16-byte accesses) sit in one band, labelled with its wavefronts."""
    with plt.rc_context(RC):
        return svg(bankmap_figure(report, mode))


# -- The figure, as the book asks for it (registry.py) ------------------------


def bankmap_drawing(report: dict) -> Drawing:
    """The figure that {ladder-bankmap} :figure: adds under its table
    (ladder_tools/sphinx/ladder_analysis.py)."""
    summary = bank_summary(report)
    return Drawing(lambda mode: bankmap_figure(report, mode),
                   f"Lane-to-bank map of {report['what']}",
                   f"{report['what']}: the bank each lane of a warp accesses; {summary}.",
                   layout="column")


def load(context: Context, request: Request) -> Drawn:
    """A named access, or lanes striding through a tile."""
    name = request.arguments[0] if request.arguments else None
    stride = request.options["stride"]
    if (name is None) == (stride is None):
        raise AnalysisError("give an access name (bankmap --list) or :stride: S [:width: W], "
                            "not both")
    return Drawn([bankmap_drawing(run_bankmap(context.tool("bankmap"), name, stride,
                                              request.options["width"]))])


FIGURE = Figure("bankmap", "one access of bankmap: a named one, or lanes striding through a "
                "tile", load, arguments=(0, 1), argument="an access name (bankmap --list)",
                options={"stride": Option("lane i reads word i * STRIDE", int),
                         "width": Option("bytes per lane: 4, 8 or 16", positive_int, 4)},
                directive=False)
