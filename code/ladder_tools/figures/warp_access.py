"""Which addresses one warp touches in one step ({ladder-warp-access}).

The data: the accesses of a chapter's figure as build/bin/warpmap reports
them (ladder_tools.analysis.warpmap.chapter_accesses), every lane's row, column, byte
address, 32-byte sector and 128-byte line computed by the chapter's own index
functions. Two drawings:

- chapters 01 and 02 (one column per chapter): for the load of A, the load of
  B and the store of C, the first 32 rows of the matrix, each row cut into
  its 32-byte sectors; the sectors the warp touches are filled and each
  lane's float is a dot, so 32 sectors stand against 4 or 1;
- chapter 07: one warp's float4 loads of the A tile in global memory, and
  where each lane's four floats land in the transposed As in shared memory,
  each lane in its own colour in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection
from matplotlib.colors import to_hex, to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.analysis.warpmap import (
    DEFAULT_K,
    DEFAULT_N,
    chapter_accesses,
    is_broadcast,
    sector_words,
)
from ladder_tools.figures.registry import (
    Context,
    Drawing,
    Drawn,
    Figure,
    Option,
    Request,
    positive_int,
)
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, svg

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

    class TitleStyle(TypedDict, total=False):
        """What _title passes on to the title's text besides its own."""

        fontweight: str

SECTOR_COLOUR = GPU_COLOURS[0]
LANE_COLOUR = GPU_COLOURS[1]
#: Text size in points: the figure is shown at its natural width where the
#: column allows (the size of the prose), shrunk to the column on a phone.
TEXT = 12.5
TIMES = "\u00d7"
DASH = "\u2013"
ARROW = "\u2192"

#: Heights and widths in inches.
LINE = 0.26
COLUMN_WIDTH = 2.45
COLUMN_GAP = 0.4
WIDE = 5.6


class WarpAccessError(AnalysisError):
    """The reports do not describe a figure this module can draw."""


def chapter_words(slug: str) -> str:
    """'Chapter 01' for '01-naive'."""
    return f"Chapter {slug.split('-', 1)[0]}"


def expression(report: dict) -> str:
    """The kernel's expression, from warpmap's description: 'A[row * K + k]'."""
    text = report["what"].split(": ", 1)[-1]
    return text.split(" (", 1)[0].replace(" = ...", "")


def lane_colours(count: int = 32) -> list[str]:
    """One colour per lane, from the first GPU colour to the second."""
    a, b = to_rgb(SECTOR_COLOUR), to_rgb(LANE_COLOUR)
    def between(x: float, y: float, i: int) -> float:
        return x + (y - x) * i / (count - 1)

    return [to_hex((between(a[0], b[0], i), between(a[1], b[1], i), between(a[2], b[2], i)))
            for i in range(count)]


def shown_rows(report: dict, at_least: int = 1) -> int:
    """Rows of the matrix the panel shows: through the last row a lane touches."""
    return max(at_least, max(lane["row"] for lane in report["lanes"]) + 1)


def access_words(report: dict) -> str:
    """The panel's second line: '32 sectors in 32 lines' or the broadcast."""
    if is_broadcast(report):
        return f"{sector_words(report)}, broadcast"
    return sector_words(report)


# -- Drawing ----------------------------------------------------------------------


def _frame(axes: Axes, rows: int, cols: int) -> None:
    axes.set_xlim(0, cols)
    axes.set_ylim(rows, 0)
    axes.set_aspect("equal")
    axes.set_axis_off()


def _lines(axes: Axes, segments: Sequence[Sequence[tuple[float, float]]], colour: str,
           width: float, gid: str) -> None:
    if segments:
        collection = LineCollection(segments, colors=colour, linewidths=width)
        collection.set_gid(gid)
        collection.set_clip_on(False)  # the edges at the panel's border, drawn whole
        axes.add_collection(collection)


def _grid(axes: Axes, theme: dict[str, str], rows: int, cols: int, step: int,
          line_every: int | None) -> None:
    """A row per matrix row, a cell per ``step`` floats (a sector); the
    128-byte line boundaries (every ``line_every`` floats) in ink."""
    _lines(axes, [[(0, r), (cols, r)] for r in range(rows + 1)], theme["grid"], 0.4, "rows")
    _lines(axes, [[(c, 0), (c, rows)] for c in range(0, cols + 1, step)
                  if not (line_every and c % line_every == 0)], theme["grid"], 0.6, "sectors")
    if line_every:
        _lines(axes, [[(c, 0), (c, rows)] for c in range(0, cols + 1, line_every)],
               theme["ink"], 1.1, "lines")


def _touched_sectors(axes: Axes, report: dict, rows: int) -> None:
    """The sectors the warp touches, filled, where they lie in the matrix."""
    per_sector = report["sector_bytes"] // 4
    for sector in report["sectors"]:
        row, col = divmod(sector * per_sector, report["row_floats"])
        if row < rows:
            patch = Rectangle((col, row), per_sector, 1, fc=SECTOR_COLOUR, alpha=0.55, ec="none")
            patch.set_gid("sector")
            axes.add_patch(patch)


def _global_panel(axes: Axes, theme: dict[str, str], report: dict, rows: int,
                  colours: list[str] | None = None) -> None:
    cols = report["row_floats"]
    line_floats = report["line_bytes"] // 4
    _grid(axes, theme, rows, cols, report["sector_bytes"] // 4,
          line_floats if cols % line_floats == 0 else None)
    _touched_sectors(axes, report, rows)
    floats = report["width_bytes"] // 4
    if floats == 1:
        spots = {(lane["col"] + 0.5, lane["row"] + 0.5) for lane in report["lanes"]}
        dots = axes.scatter([x for x, _ in spots], [y for _, y in spots], s=9,
                            color=LANE_COLOUR, zorder=3, linewidths=0)
        dots.set_gid("lane-floats")
    else:
        assert colours is not None, "a panel of float4 loads colours each lane"
        for lane in report["lanes"]:
            patch = Rectangle((lane["col"] + 0.1, lane["row"] + 0.15), floats - 0.2, 0.7,
                              fc=colours[lane["lane"]], ec="none", zorder=3)
            patch.set_gid("lane-float4")
            axes.add_patch(patch)
    _frame(axes, rows, cols)


def _add_axes(figure: MplFigure, width: float, height: float, left: float, top: float,
              gid: str) -> Axes:
    """Axes ``width`` x ``height`` inches, their top-left corner at (left, top)
    inches from the figure's top-left corner."""
    fw, fh = figure.get_size_inches()
    axes = figure.add_axes((left / fw, 1 - (top + height) / fh, width / fw, height / fh))
    axes.set_gid(gid)
    return axes


def _title(figure: MplFigure, x: float, top: float, text: str, ink: str,
           **style: Unpack[TitleStyle]) -> None:
    fw, fh = figure.get_size_inches()
    figure.text(x / fw, 1 - top / fh, text, ha="center", va="top", fontsize=TEXT, color=ink,
                linespacing=1.25, **style)


def coalescing_figure(columns: list[tuple[str, list[dict]]], mode: str) -> MplFigure:
    """Chapters 01 and 02: one column per chapter, a panel per access."""
    theme = THEMES[mode]
    ink = theme["ink"]
    first = columns[0][1]
    rows = max(shown_rows(r, 32) for _, reports in columns for r in reports)
    cols = first[0]["row_floats"]
    panel_h = COLUMN_WIDTH * rows / max(r["row_floats"] for r in first)
    header, title_h, gap = 0.4, 2 * LINE + 0.12, 0.22
    key_h = 3 * LINE + 0.3
    width = len(columns) * COLUMN_WIDTH + (len(columns) - 1) * COLUMN_GAP + 0.2
    height = header + len(first) * (title_h + panel_h + gap) + key_h
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(width, height))
        figure.set_gid("warp-access")
        for c, (slug, reports) in enumerate(columns):
            left = 0.1 + c * (COLUMN_WIDTH + COLUMN_GAP)
            centre = left + COLUMN_WIDTH / 2
            _title(figure, centre, 0.05, chapter_words(slug), ink, fontweight="bold")
            top = header
            for report in reports:
                _title(figure, centre, top, f"{expression(report)}\n{access_words(report)}", ink)
                top += title_h
                w = COLUMN_WIDTH * report["row_floats"] / cols
                axes = _add_axes(figure, w, panel_h, left + (COLUMN_WIDTH - w) / 2, top,
                                 f"panel-{report['name']}")
                _global_panel(axes, theme, report, rows)
                top += panel_h + gap
        k, n = first[0]["K"], first[0]["N"]
        legend(figure, theme,
               handles=[Patch(fc=SECTOR_COLOUR, alpha=0.55,
                              label="a 32-byte sector the warp touches"),
                        Line2D([], [], ls="none", marker="o", ms=4, color=LANE_COLOUR,
                               label="a lane's float"),
                        Line2D([], [], color=ink, lw=1.1, label="a 128-byte line's edge")],
               loc="upper center", bbox_to_anchor=(0.5, key_h / height), fontsize=TEXT,
               handlelength=1.4, ncol=1, borderaxespad=0)
        figure.text(0.5, 0.02 / height, f"Rows 0{DASH}{rows - 1} of each matrix; "
                    f"K = {k}, N = {n} floats per row", ha="center", va="bottom",
                    fontsize=TEXT, color=ink)
        return figure


def transposed_store_figure(report: dict, mode: str) -> MplFigure:
    """Chapter 07: one warp's float4 loads of the A tile and where their
    floats land in the transposed As."""
    theme = THEMES[mode]
    ink = theme["ink"]
    shared = report["shared"]
    colours = lane_colours(len(report["lanes"]))
    a_rows = shown_rows(report)
    a_cols = report["row_floats"]
    s_rows = shared["rows"]
    s_cols = min(shared["cols"], 2 * (max(s["col"] for s in shared["stores"]) + 1))
    panel_w = WIDE - 0.2
    a_h, s_h = panel_w * a_rows / a_cols, panel_w * s_rows / s_cols
    title_h, gap = 2 * LINE + 0.12, 0.35
    key_h = 2 * LINE + 0.35
    height = title_h + a_h + gap + title_h + s_h + key_h
    floats = report["width_bytes"] // 4
    first_row = min(lane["row"] for lane in report["lanes"])
    last_row = max(lane["row"] for lane in report["lanes"])
    k_last = max(lane["col"] for lane in report["lanes"]) + floats - 1
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(WIDE, height))
        figure.set_gid("warp-access")
        top = 0.0
        _title(figure, WIDE / 2, top,
               f"Global memory: A, rows {first_row}{DASH}{last_row}, k = 0{DASH}{k_last}, "
               f"one float4 per lane\n{sector_words(report)}, "
               f"{report['distinct_bytes']} bytes, every byte used", ink)
        top += title_h
        a_axes = _add_axes(figure, panel_w, a_h, 0.1, top, "panel-global")
        _global_panel(a_axes, theme, report, a_rows, colours)
        top += a_h + gap
        _title(figure, WIDE / 2, top,
               f"Shared memory: As, {shared['rows_name']} {TIMES} {shared['cols_name']} = "
               f"{s_rows} {TIMES} {shared['cols']} (columns 0{DASH}{s_cols - 1} shown)\n"
               f"row m of A's tile {ARROW} column m of As, k {ARROW} row k", ink)
        top += title_h
        s_axes = _add_axes(figure, panel_w, s_h, 0.1, top, "panel-shared")
        _lines(s_axes, [[(0, r), (s_cols, r)] for r in range(s_rows + 1)], theme["grid"], 0.6,
               "rows")
        _lines(s_axes, [[(c, 0), (c, s_rows)] for c in range(s_cols + 1)], theme["grid"], 0.6,
               "cols")
        for store in shared["stores"]:
            if store["col"] < s_cols:
                patch = Rectangle((store["col"] + 0.1, store["row"] + 0.1), 0.8, 0.8,
                                  fc=colours[store["lane"]], ec="none")
                patch.set_gid("stored-float")
                s_axes.add_patch(patch)
        _frame(s_axes, s_rows, s_cols)
        # The first and the last lane outlined: their float4 in A, and the
        # four floats of it down a column of As.
        for lane in (report["lanes"][0], report["lanes"][-1]):
            outline = Rectangle((lane["col"], lane["row"]), floats, 1, fc="none", ec=ink,
                                lw=1.6, zorder=4)
            outline.set_gid("outlined-float4")
            a_axes.add_patch(outline)
            mine = [s for s in shared["stores"] if s["lane"] == lane["lane"]]
            rows = [s["row"] for s in mine]
            outline = Rectangle((mine[0]["col"], min(rows)), 1, max(rows) - min(rows) + 1,
                                fc="none", ec=ink, lw=1.6, zorder=4)
            outline.set_gid("outlined-stores")
            s_axes.add_patch(outline)
        last = len(colours) - 1
        legend(figure, theme,
               handles=[Patch(fc=colours[0], label="lane 0"),
                        Patch(fc=colours[last // 2 + 1], label=f"lane {last // 2 + 1}"),
                        Patch(fc=colours[-1], label=f"lane {last}"),
                        Patch(fc="none", ec=ink, lw=1.6, label=f"lanes 0 and {last}")],
               loc="upper center", bbox_to_anchor=(0.5, (key_h - 0.2) / height), fontsize=TEXT,
               handlelength=1.2, ncol=4, borderaxespad=0, columnspacing=1.2)
        return figure


def warp_access_figure(columns: list[tuple[str, list[dict]]], mode: str) -> MplFigure:
    """The figure for the chapters ``columns`` ((slug, reports) each)."""
    if not columns:
        raise WarpAccessError("no chapter to draw")
    with_shared = [r for _, reports in columns for r in reports if "shared" in r]
    if with_shared:
        if len(columns) != 1 or len(columns[0][1]) != 1:
            raise WarpAccessError("the transposed-store figure draws one access of one chapter")
        return transposed_store_figure(with_shared[0], mode)
    return coalescing_figure(columns, mode)


def draw_warp_access(columns: list[tuple[str, list[dict]]], mode: str) -> bytes:
    """The figure as SVG for the page mode ``mode``."""
    with plt.rc_context(RC):
        return svg(warp_access_figure(columns, mode))


def alt_text(columns: list[tuple[str, list[dict]]]) -> str:
    """What the figure shows, with its numbers, for the image's alt text."""
    parts = []
    for slug, reports in columns:
        first = reports[0]
        words = [f"{expression(r)} touches {access_words(r)}" for r in reports]
        if "shared" in first:
            shared = first["shared"]
            parts.append(
                f"{chapter_words(slug)}, one warp's float4 loads of the A tile with K = "
                f"{first['K']}: {sector_words(first)}, {first['distinct_bytes']} bytes. "
                f"Each lane's four floats are stored down one column of As "
                f"({shared['rows']} {TIMES} {shared['cols']}), row m of the tile becoming "
                f"column m of As.")
        else:
            parts.append(f"{chapter_words(slug)}, warp 0 at k = 0 with K = {first['K']} and "
                         f"N = {first['N']}: " + "; ".join(words) + ".")
    return " ".join(parts)


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    tool = context.tool("warpmap")
    columns = [(slug, chapter_accesses(tool, slug, request.options["K"], request.options["N"]))
               for slug in request.arguments]
    caption = request.caption_or("The addresses one warp touches in one step, in 32-byte "
                                 "sectors.")
    return Drawn([Drawing(lambda mode: warp_access_figure(columns, mode), alt_text(columns),
                          caption)])


FIGURE = Figure("warp-access", "the addresses one warp touches in one step: chapters 01 and "
                "02, or 07", load, arguments=(1, 2),
                argument="01-naive and/or 02-coalescing, or 07-vectorized",
                options={"K": Option("floats per row of A", positive_int, DEFAULT_K),
                         "N": Option("floats per row of B and C", positive_int, DEFAULT_N)})
