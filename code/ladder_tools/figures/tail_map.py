"""Where a chapter wins: its % of cuBLAS over a grid of shapes ({ladder-tail-map}).

The data: the ``sizes`` of one GPU's result of a chapter (13-tail unless the
page names another; ladder_tools.results), each measured size's % of the
cuBLAS it is held against and that cuBLAS's GFLOP/s. The goal is the
chapter's own as the book's final kernels state it
(ladder_tools.results.random_problems.RANDOM_CHAPTERS: chapter 13 as fast as
cuBLAS's SGEMM, chapter 16 95% of cuBLAS on TF32, chapter 17 twice SGEMM;
another chapter, as fast as cuBLAS): ``pct_cublas`` and ``cublas_gflops``,
or against cuBLAS on TF32 ``pct_cublas_tf32`` and ``cublas_tf32_gflops``
(ladder_tools.results.goals.AGAINST). A cell is blue at or above the goal and
orange below. Two panels:

(a) a heat map over M (rows) and N (columns) at K = MAP_K, M and N each in
    MAP_SIDES: each cell the chapter's % of cuBLAS, and cuBLAS's GFLOP/s in
    small print under it; the cell blue at or above the goal and orange
    below, deeper the further from it (full depth SPAN points away);
(b) over K in SWEEP_KS at M = N = SWEEP_MN: % of cuBLAS, and under it
    cuBLAS's GFLOP/s, on one K axis.

A size the result does not hold, or holds untimed, is a grey cell with a
dash, or a gap in the lines; a note under the figure counts them. The sizes
are measured because the chapter's own-sizes and extra-sizes list them (a
test checks, for each chapter a page maps, that they list every one the
standard sizes do not cover).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch, Rectangle

from ladder_tools import results
from ladder_tools.figures.registry import GPU, Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg, thousands
from ladder_tools.formatting import DASH, format_gflops, format_percent
from ladder_tools.results.goals import AGAINST
from ladder_tools.results.random_problems import RANDOM_CHAPTERS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

CHAPTER = "13-tail"  #: the chapter a page's map is of unless it names another
#: M and N of the heat map's rows and columns, and its K.
MAP_SIDES = (256, 512, 1024, 2048, 4096, 8192)
MAP_K = 4096
#: K of the second panel, and its M = N.
SWEEP_KS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
SWEEP_MN = 4096

ABOVE = GPU_COLOURS[0]  #: blue: at or above cuBLAS
BELOW = GPU_COLOURS[1]  #: orange: below cuBLAS
#: Points of % of cuBLAS away from 100 at which a cell's colour is deepest.
SPAN = 30.0
TEXT = 11.5
SMALL = 8.5
FIGURE_WIDTH = 6.3
#: The phone's drawing (phone=True): a phone's column wide (3.75 in, 360
#: px, not shrunk), its text smaller in points but larger on the screen
#: than the shrunk desktop drawing's; its cells' shares without the % sign
#: (the title says they are %), which would not fit a 0.5 in cell.
PHONE_TEXT = 9
PHONE_SMALL = 7.5
PHONE_WIDTH = 3.75
PHONE_LABEL_W = 0.45
PHONE_RIGHT_W = 0.3
TIMES = "\u00d7"


@dataclass(frozen=True)
class Cell:
    """One size and what was measured there (None: not measured, or not timed)."""

    M: int
    N: int
    K: int
    pct: float | None
    cublas_gflops: float | None

    @property
    def measured(self) -> bool:
        return self.pct is not None


@dataclass(frozen=True)
class TailMap:
    gpu: str
    grid: tuple[tuple[Cell, ...], ...]  #: a row per M of MAP_SIDES, a cell per N
    sweep: tuple[Cell, ...]  #: a cell per K of SWEEP_KS
    chapter: str = CHAPTER
    against: str = "cuBLAS"  #: a key of ladder_tools.results.goals.AGAINST
    goal: float = 100.0  #: the % of it at and above which a cell is blue

    @property
    def tf32(self) -> bool:
        """Held against cuBLAS on TF32, not cuBLAS's SGEMM."""
        return AGAINST[self.against] == "cublas_tf32"

    @property
    def reference(self) -> str:
        """What the chapter is held against, in words: cuBLAS, cuBLAS on TF32."""
        return "cuBLAS on TF32" if self.tf32 else "cuBLAS"

    @property
    def as_fast(self) -> bool:
        """The goal is cuBLAS's SGEMM's own speed (chapter 13's)."""
        return self.goal == 100.0 and not self.tf32

    @property
    def chapter_words(self) -> str:
        return f"Chapter {int(self.chapter[:2])}"

    def cells(self) -> list[Cell]:
        return [cell for row in self.grid for cell in row] + list(self.sweep)

    def missing(self) -> list[Cell]:
        return [cell for cell in self.cells() if not cell.measured]


def map_sizes() -> list[tuple[int, int, int]]:
    """Every size the figure draws: the grid row by row, then the K sweep."""
    return ([(m, n, MAP_K) for m in MAP_SIDES for n in MAP_SIDES]
            + [(SWEEP_MN, SWEEP_MN, k) for k in SWEEP_KS])


def tail_map(gpu: str, entries: list[dict], chapter: str = CHAPTER, against: str = "cuBLAS",
             goal: float = 100.0) -> TailMap:
    """The map of a result's ``sizes`` entries (only timed ones count), held
    against ``against`` (a key of goals.AGAINST)."""
    prefix = AGAINST[against]
    timed = {(e["M"], e["N"], e["K"]): e for e in entries if results.is_timed(e)}

    def cell(m: int, n: int, k: int) -> Cell:
        e = timed.get((m, n, k))
        if e is None or f"{prefix}_gflops" not in e:
            return Cell(m, n, k, None, None)
        return Cell(m, n, k, e[f"pct_{prefix}"], e[f"{prefix}_gflops"])

    grid = tuple(tuple(cell(m, n, MAP_K) for n in MAP_SIDES) for m in MAP_SIDES)
    return TailMap(gpu, grid, tuple(cell(SWEEP_MN, SWEEP_MN, k) for k in SWEEP_KS), chapter,
                   against, goal)


def chapter_goal(chapter: str) -> tuple[str, float]:
    """What a chapter's map holds it against, and its goal: a final kernel's
    own (RANDOM_CHAPTERS), else as fast as cuBLAS."""
    goal = RANDOM_CHAPTERS.get(chapter)
    return (goal.against, goal.percent) if goal else ("cuBLAS", 100.0)


def chapter_tail_map(repo_root: Path, gpu: str = results.REFERENCE_GPU, chapter: str = CHAPTER
                     ) -> tuple[TailMap, results.ChapterResult] | tuple[None, None]:
    """The TailMap of ``gpu``'s result of ``chapter`` and that result; (None,
    None) when the GPU has none."""
    found = results.load_chapter_result(results.results_root(repo_root), gpu, chapter,
                                        repo_root)
    if found is None:
        return None, None
    return (tail_map(found.provenance.get("gpu", gpu), found.data["sizes"], chapter,
                     *chapter_goal(chapter)), found)


# -- Words ---------------------------------------------------------------------------


def missing_words(m: TailMap) -> str:
    """'' when every size is measured, else a sentence that counts the others."""
    missing, total = len(m.missing()), len(m.cells())
    if not missing:
        return ""
    verb = "is" if missing == 1 else "are"
    return (f"{missing} of the figure's {total} sizes {verb} not measured yet: grey cells, "
            "gaps in the lines.")


def _cell_words(cell: Cell) -> str:
    if cell.pct is None:
        return f"{cell.N} not measured"
    return f"{cell.N} {format_percent(cell.pct)}"


def alt_text(m: TailMap) -> str:
    rows = "; ".join(f"M = {row[0].M}: " + ", ".join(_cell_words(c) for c in row)
                     for row in m.grid)
    sweep = ", ".join(f"{c.K} " + (format_percent(c.pct) if c.pct is not None else "not measured")
                      for c in m.sweep)
    share = "cuBLAS's on TF32," if m.tf32 else "cuBLAS's"
    rate = "cuBLAS's GFLOP/s on TF32" if m.tf32 else "cuBLAS's GFLOP/s"
    return (f"{m.chapter_words}'s time as a share of {share} on the {m.gpu}"
            f"{goal_words(m)}. (a) At K = {MAP_K}, by M and then N: {rows}. (b) At M = N = "
            f"{SWEEP_MN}, by K: {sweep}. Each cell also gives {rate}. "
            f"{missing_words(m)}").strip()


def goal_words(m: TailMap) -> str:
    """'' when a cell is held against being as fast as cuBLAS, else the goal."""
    return "" if m.as_fast else f", against a goal of {m.goal:g}%"


def legend_words(m: TailMap) -> tuple[str, str]:
    """The legend's words for a cell at or above the goal, and below it."""
    if m.as_fast:
        return "at or above cuBLAS", "below cuBLAS"
    return f"at or above {m.goal:g}%", f"below {m.goal:g}%"


# -- Drawing -------------------------------------------------------------------------


def cell_colour(pct: float | None, grid: str,
                goal: float = 100.0) -> tuple[float, float, float, float]:
    """A cell's fill: blue at or above the goal, orange below, the more
    opaque the further from it (on the page's background: pale on white,
    dark on the dark page, so the mode's ink reads on both)."""
    if pct is None:
        return to_rgba(grid, 0.45)
    depth = min(1.0, abs(pct - goal) / SPAN)
    return to_rgba(ABOVE if pct >= goal else BELOW, 0.2 + 0.45 * depth)


LABEL_W = 0.85
RIGHT_W = 0.15
CELL_H = 0.56
LEGEND_H = 0.44
HEAD = 0.62
GAP = 0.75
PCT_H = 1.7
PANEL_GAP = 0.3
RATE_H = 0.95
FOOT = 0.62
NOTE_H = 0.34
#: What (b) moves right when its rates have six digits.
WIDE_RATE_W = 0.4


def tail_map_figure(m: TailMap, mode: str, phone: bool = False) -> MplFigure:
    """The matplotlib figure of draw_tail_map (for the tests, which measure
    it); the caller closes it. `phone`: the phone's drawing, narrow
    (PHONE_WIDTH), its cells as much shorter as they are narrower."""
    theme = THEMES[mode]
    ink, grid = theme["ink"], theme["grid"]
    text, small = (PHONE_TEXT, PHONE_SMALL) if phone else (TEXT, SMALL)
    figure_w, label_w, right_w = ((PHONE_WIDTH, PHONE_LABEL_W, PHONE_RIGHT_W) if phone
                                  else (FIGURE_WIDTH, LABEL_W, RIGHT_W))
    note = missing_words(m)
    if phone:
        note = "\n".join(textwrap.wrap(note, 52))
    cell_h = CELL_H * (0.8 if phone else 1.0)
    heat_h = len(MAP_SIDES) * cell_h
    note_h = NOTE_H * (note.count("\n") + 1) * text / TEXT if note else 0.0
    total = LEGEND_H + HEAD + heat_h + GAP + PCT_H + PANEL_GAP + RATE_H + FOOT + note_h
    width = (figure_w - label_w - right_w) / figure_w
    figure = plt.figure(figsize=(figure_w, total))
    figure.set_gid("tail-map")
    heat_y = total - LEGEND_H - HEAD - heat_h
    heat = figure.add_axes((label_w / figure_w, heat_y / total, width, heat_h / total))
    heat.set_gid("map-heat")
    _draw_heat(heat, m, ink, grid, text, small, phone)
    rate_words = "its" if m.tf32 else "cuBLAS's"
    titles = [(heat, f"(a) K = {MAP_K}: % of {m.reference}, and {rate_words} GFLOP/s",
               38 * text / TEXT)]
    pct_y = heat_y - GAP - PCT_H
    # (b)'s labels (a tick's GFLOP/s, the axis's name) need the desktop's
    # room left of the panel, which a phone's heat map does without.
    # A rate of six digits (the tensor cores') needs a wider margin for its label.
    sweep_left = LABEL_W + (WIDE_RATE_W if rate_top(m) >= 100_000 else 0.0)
    sweep_w = (figure_w - sweep_left - right_w) / figure_w
    pct = figure.add_axes((sweep_left / figure_w, pct_y / total, sweep_w, PCT_H / total))
    pct.set_gid("map-sweep")
    rate_y = pct_y - PANEL_GAP - RATE_H
    rate = figure.add_axes((sweep_left / figure_w, rate_y / total, sweep_w, RATE_H / total))
    rate.set_gid("map-sweep-rate")
    _draw_sweep(pct, rate, m, theme, text, phone)
    titles.append((pct, f"(b) M = N = {SWEEP_MN}, over K", 8))
    for axes, words, pad in titles:
        if phone:  # from the figure's left edge, over the labels, for room
            box = axes.get_position()
            left = -(box.x0 * figure_w - 0.05) / (box.width * figure_w)
            height = axes.get_position().height * total
            axes.text(left, 1 + pad / 72 / height, words, transform=axes.transAxes, color=ink,
                      fontsize=text, va="baseline", gid="map-title")
        else:
            axes.set_title(words, color=ink, fontsize=text, loc="left", pad=pad)
    above, below = legend_words(m)
    handles = [Patch(fc=cell_colour(m.goal + SPAN, grid, m.goal), label=above),
               Patch(fc=cell_colour(m.goal - SPAN, grid, m.goal), label=below)]
    if m.missing():
        handles.append(Patch(fc=cell_colour(None, grid), label="not measured yet"))
    anchor = 0.05 / figure_w if phone else label_w / figure_w - 0.01
    legend(figure, theme, handles=handles, loc="upper left", ncol=len(handles),
           fontsize=text - 1, handlelength=1.2, bbox_to_anchor=(anchor, 1.0),
           columnspacing=0.8 if phone else 2.0)
    if note:
        figure.text(0.05 / figure_w if phone else label_w / figure_w, 0.04 / total, note,
                    fontsize=text - 1.5, color=ink, va="bottom", gid="map-note")
    return figure


def _draw_heat(axes: Axes, m: TailMap, ink: str, grid: str, text: float = TEXT,
               small: float = SMALL, phone: bool = False) -> None:
    sides = len(MAP_SIDES)
    axes.set_xlim(0, sides)
    axes.set_ylim(sides, 0)
    axes.set_facecolor("none")
    for spine in axes.spines.values():
        spine.set_visible(False)
    for row, cells in enumerate(m.grid):
        for column, cell in enumerate(cells):
            box = Rectangle((column, row), 1, 1, fc=cell_colour(cell.pct, grid, m.goal), ec=grid,
                            lw=0.8)
            box.set_gid("map-cell" if cell.measured else "map-missing")
            axes.add_patch(box)
            # A measured cell has both rates (a timed entry: Cell).
            if cell.pct is None or cell.cublas_gflops is None:
                axes.text(column + 0.5, row + 0.5, DASH, ha="center", va="center",
                          fontsize=text, color=ink, gid="map-dash")
                continue
            share = format_percent(cell.pct)
            axes.text(column + 0.5, row + 0.42, share.removesuffix("%") if phone else share,
                      ha="center",
                      va="center", fontsize=text, color=ink, gid="map-pct")
            axes.text(column + 0.5, row + 0.78, format_gflops(cell.cublas_gflops),
                      ha="center", va="center", fontsize=small, color=ink, gid="map-cublas")
    centres = [i + 0.5 for i in range(sides)]
    axes.set_xticks(centres)
    axes.set_xticklabels([str(n) for n in MAP_SIDES])
    axes.xaxis.tick_top()
    axes.set_yticks(centres)
    axes.set_yticklabels([str(s) for s in MAP_SIDES])
    axes.tick_params(length=0, colors=ink, labelsize=text - 1)
    axes.set_xlabel("N", color=ink, fontsize=text, labelpad=4)
    axes.xaxis.set_label_position("top")
    if phone:  # above the rows' labels, beside N: no room left of them
        axes.annotate("M", xy=(0, 1), xycoords="axes fraction", xytext=(-6, 4),
                      textcoords="offset points", ha="right", va="bottom", color=ink,
                      fontsize=text)
    else:
        axes.set_ylabel("M", color=ink, fontsize=text, rotation=0, labelpad=14, va="center")


def _series(cells: Iterable[Cell], key: str) -> list[float]:
    return [getattr(c, key) if c.measured else math.nan for c in cells]


def _k_axis(axes: Axes, labelled: bool, text: float = TEXT, phone: bool = False) -> None:
    """The K axis of (b); on a phone every other K is labelled (256, 1024,
    4096, 16384), every K has its tick."""
    ks = list(SWEEP_KS)
    axes.set_xscale("log", base=2)
    axes.set_xticks(ks)
    shown = ks[1::2] if phone else ks
    axes.set_xticklabels([str(k) if k in shown else "" for k in ks] if labelled else [])
    axes.minorticks_off()
    axes.set_xlim(ks[0] / 1.3, ks[-1] * 1.3)
    axes.tick_params(labelsize=text - 1)


def _draw_sweep(pct: Axes, rate: Axes, m: TailMap, theme: dict[str, str], text: float = TEXT,
                phone: bool = False) -> None:
    """(b): % of cuBLAS over K above, cuBLAS's GFLOP/s over K below."""
    ink, grid = theme["ink"], theme["grid"]
    ks = list(SWEEP_KS)
    share = _series(m.sweep, "pct")
    for axes in (pct, rate):
        style_axes(axes, theme)
    pct.axhline(m.goal, color=grid, lw=1.2, ls="--", zorder=1)
    pct.plot(ks, share, color=ABOVE, marker="o", lw=1.8, gid="map-pct-line")
    rate.plot(ks, _series(m.sweep, "cublas_gflops"), color=ink, marker="s", ms=4, lw=1.2,
              gid="map-rate-line")
    measured = [v for v in share if not math.isnan(v)]
    pct_top = max([110.0, m.goal * 1.1] + [v * 1.08 for v in measured])
    pct.set_ylim(0, pct_top)
    step = 25 if pct_top <= 150 else 50
    pct.set_yticks([step * i for i in range(int(pct_top // step) + 1)])
    # Three labelled rates, 0 to a round top above the highest: no tick
    # outside the panel, where its label could meet the panel above.
    top = rate_top(m)
    rate.set_ylim(0, top)
    rate.set_yticks([0, top / 2, top])
    rate.yaxis.set_major_formatter(thousands)
    _k_axis(pct, labelled=False, text=text, phone=phone)
    _k_axis(rate, labelled=True, text=text, phone=phone)
    rate.set_xlabel("K", color=ink, fontsize=text)
    pct.set_ylabel("% of cuBLAS\non TF32" if m.tf32 else "% of cuBLAS",
                   color=ink, fontsize=text)
    rate.set_ylabel("cuBLAS TF32\nGFLOP/s" if m.tf32 else "cuBLAS\nGFLOP/s",
                    color=ink, fontsize=text)


def rate_top(m: TailMap) -> int:
    """The top of (b)'s rate axis: a round number above the highest rate."""
    rates = [c.cublas_gflops for c in m.sweep if c.cublas_gflops is not None]
    return 10_000 * math.ceil(max(rates, default=10_000) / 10_000)


def draw_tail_map(m: TailMap, mode: str, phone: bool = False) -> bytes:
    """The figure as SVG for the page mode ``mode``; `phone`, its narrow
    drawing for a phone's column."""
    with plt.rc_context(RC):
        return svg(tail_map_figure(m, mode, phone))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """The figure itself says how many sizes are not measured yet. Shrunk to
    a phone's column its text would be 8 px high: a phone has a narrow
    drawing of its own."""
    gpu = request.options["gpu"]
    chapter = request.arguments[0] if request.arguments else CHAPTER
    read = [results.chapter_result_path(context.results_root, gpu, chapter)]
    found, result = chapter_tail_map(context.repo_root, gpu, chapter)
    if found is None or result is None:  # the two are None together
        return Drawn([], f"No map: {gpu} has no result for {chapter}.", read)
    caption = (request.caption_or(f"{found.chapter_words}'s % of {found.reference} on the "
                                  f"{found.gpu}.")
               + (f" Stale: {found.gpu}." if result.stale else ""))
    return Drawn([Drawing(lambda mode: tail_map_figure(found, mode), alt_text(found), caption,
                          phone=lambda mode: tail_map_figure(found, mode, phone=True))],
                 read=read, used=[result], notes=[missing_words(found)] if found.missing() else [])


FIGURE = Figure("tail-map", "a chapter's % of cuBLAS over M x N and over K, beside cuBLAS's "
                "GFLOP/s, against its goal (chapter 13's unless the page names another)", load,
                arguments=(0, 1), argument="a result name, e.g. 16-wgmma (default 13-tail)",
                options={"gpu": GPU})
