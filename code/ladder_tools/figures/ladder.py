"""Every chapter's GFLOP/s at 4096 as bars, one per GPU, with cuBLAS and the
FP32 FMA peak of each GPU as lines ({ladder-ladder}).

Part I (the FMA units) and Part II (the tensor cores) are two panels side by
side, each with its own GFLOP/s axis from 0: Part II's chapters run at up to
several times cuBLAS's SGEMM rate, and on one axis with them Part I's bars
would be squeezed into the bottom third. Both panels draw cuBLAS SGEMM
(dashed) and the FMA peak (dotted); Part II's adds cuBLAS on TF32
(dash-dotted), which its chapters' runs time beside the kernel. A book with
no Part II chapter draws one panel.

The data: each GPU's chapter results and its baseline.json
(ladder_tools.results), as one LadderBars per GPU (ladder_bars).
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.container import BarContainer
from matplotlib.ticker import MaxNLocator

from ladder_tools import results as results_files
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg, thousands
from ladder_tools.formatting import format_size
from ladder_tools.results import ChapterResult, median_cublas_gflops

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

#: The first chapter of Part II, the tensor cores.
PART_II_FIRST = 14
#: Each part's panel title.
PART_TITLES = {1: "Part I: the FMA units", 2: "Part II: the tensor cores"}


def part_of(label: str) -> int:
    """The part (1 or 2) of a chapter, from its label's or slug's leading
    number: "14 tf32" is in Part II."""
    return 2 if int(label[:2]) >= PART_II_FIRST else 1


@dataclass(frozen=True)
class LadderBars:
    """One GPU's bars in the ladder: GFLOP/s per chapter (None: not measured),
    and its reference lines (None: not measured)."""

    label: str
    gflops: list[float | None]
    cublas_gflops: float | None
    fma_peak_gflops: float | None
    cublas_tf32_gflops: float | None = None


def median_cublas_tf32_gflops(results: list[ChapterResult],
                              size: tuple[int, int, int]) -> float | None:
    """cuBLAS on TF32 at ``size``, the median over the (Part II) chapters
    whose runs timed it."""
    entries = (result.timed_at(size) for result in results)
    rates = [entry["cublas_tf32_gflops"] for entry in entries
             if entry and isinstance(entry.get("cublas_tf32_gflops"), (int, float))]
    return statistics.median(rates) if rates else None


def ladder_bars(label: str, slugs: list[str], results: dict[str, ChapterResult],
                baseline: dict | None, size: tuple[int, int, int]) -> LadderBars:
    """One GPU's bars: the GFLOP/s at ``size`` of each chapter in ``slugs``
    (``results`` by slug; a chapter without a timed result there is None),
    the median cuBLAS rate of those results and the baseline's FMA peak."""
    entries = [results[slug].timed_at(size) if slug in results else None for slug in slugs]
    peak = (baseline or {}).get("fma_peak_gflops")
    return LadderBars(
        label=label,
        gflops=[entry["gflops"] if entry else None for entry in entries],
        cublas_gflops=median_cublas_gflops(list(results.values()), size),
        fma_peak_gflops=peak if isinstance(peak, (int, float)) else None,
        cublas_tf32_gflops=median_cublas_tf32_gflops(list(results.values()), size),
    )


def every_gpu_bars(results_root: str | os.PathLike, repo_root: str | os.PathLike,
                   slugs: list[str], size: tuple[int, int, int]) -> list[LadderBars]:
    """ladder_bars() for every GPU under results/ that has a result of any
    chapter in ``slugs``, labelled with the GPU's name."""
    bars = []
    for gpu in results_files.gpu_folders(results_root):
        found = {slug: result for slug in slugs
                 if (result := results_files.load_chapter_result(results_root, gpu, slug,
                                                                 repo_root))}
        if found:
            name = next(iter(found.values())).provenance["gpu"]
            bars.append(ladder_bars(name, slugs, found,
                                    results_files.load_baseline(results_root, gpu), size))
    return bars


def _panel(axes: Axes, chapters: list[int], labels: list[str], bars: list[LadderBars], part: int,
           theme: dict, across: bool = False) -> None:
    """One part's bars (the chapters at indices ``chapters``) and lines;
    ``across``: the bars lie along the GFLOP/s axis, the first chapter on
    top (the phone's drawing)."""
    width = 0.8 / max(1, len(bars))
    tops: list[float] = []
    for index, gpu in enumerate(bars):
        colour = GPU_COLOURS[index % len(GPU_COLOURS)]
        offset = (index - (len(bars) - 1) / 2) * width
        shown = [(place, rate) for place, c in enumerate(chapters)
                 if (rate := gpu.gflops[c]) is not None]
        if shown:
            draw = axes.barh if across else axes.bar
            draw([place + offset for place, _ in shown], [v for _, v in shown], width,
                 color=colour, label=gpu.label, gid=f"ladder-bars-{index}")
            tops += [v for _, v in shown]
        lines = [(gpu.cublas_gflops, "--", f"cuBLAS, {gpu.label}"),
                 (gpu.fma_peak_gflops, ":", f"FP32 FMA peak, {gpu.label}")]
        if part == 2:
            lines.append((gpu.cublas_tf32_gflops, "-.", f"cuBLAS on TF32, {gpu.label}"))
        for value, style, name in lines:
            if value is not None:
                (axes.axvline if across else axes.axhline)(
                    value, color=colour, linestyle=style, linewidth=1.2, label=name)
                tops.append(value)
    style_axes(axes, theme)
    value_axis, chapter_axis = (axes.xaxis, axes.yaxis) if across else (axes.yaxis, axes.xaxis)
    axes.grid(True, axis="x" if across else "y", color=theme["grid"], linewidth=0.6)
    axes.grid(False, axis="y" if across else "x")
    chapter_axis.set_ticks(range(len(chapters)))
    if across:
        chapter_axis.set_ticklabels([labels[c] for c in chapters])
        axes.set_ylim(len(chapters) - 0.4, -0.6)
        value_axis.set_major_locator(MaxNLocator(4))
        axes.set_xlim(0, max(tops, default=1.0) * 1.06)
    else:
        chapter_axis.set_ticklabels([labels[c] for c in chapters], rotation=35, ha="right")
        axes.set_xlim(-0.6, len(chapters) - 0.4)
        axes.set_ylim(0, max(tops, default=1.0) * 1.06)
    value_axis.set_major_formatter(thousands)
    axes.set_gid(f"ladder-part-{part}")


#: The phone's drawing (stacked=True) is as wide as by_size's: a phone's
#: column (390 px less the page's margins) without shrinking its text.
STACKED_WIDTH_IN = 3.75


def ladder_figure(chapter_labels: list[str], bars: list[LadderBars], mode: str,
                  stacked: bool = False) -> MplFigure:
    """The matplotlib figure of draw_ladder (the tests measure it); the caller
    closes it. Part I's panel has gid ``ladder-part-1``, Part II's
    ``ladder-part-2``. `stacked` puts Part II's panel under Part I's, and
    the legend in one column, narrow enough for a phone."""
    theme = THEMES[mode]
    parts = {part: [i for i, label in enumerate(chapter_labels) if part_of(label) == part]
             for part in (1, 2)}
    shown = [part for part in (1, 2) if parts[part]] or [1]
    if stacked:
        # A row per chapter, the bars across: the chapters' names read
        # level, and a part's panel is as tall as it has chapters.
        heights = [0.26 * len(parts[part]) * max(1, len(bars)) ** 0.5 + 0.4 for part in shown]
        figure, column = plt.subplots(len(shown), 1, squeeze=False,
                                      figsize=(STACKED_WIDTH_IN, sum(heights) + 1.2),
                                      gridspec_kw={"height_ratios": heights})
        panels = [[row[0] for row in column]]
    else:
        ratios = [len(parts[part]) + 1.2 for part in shown]
        figure, row = plt.subplots(1, len(shown), figsize=(9, 4), squeeze=False,
                                   gridspec_kw={"width_ratios": ratios})
        panels = [list(row[0])]
    for axes, part in zip(panels[0], shown, strict=True):
        _panel(axes, parts[part], chapter_labels, bars, part, theme, across=stacked)
        if len(shown) > 1:
            axes.set_title(PART_TITLES[part], fontsize="medium", color=theme["ink"])
    if stacked:
        panels[0][-1].set_xlabel("GFLOP/s at 4096 \u00d7 4096 \u00d7 4096")
    else:
        panels[0][0].set_ylabel("GFLOP/s at 4096 \u00d7 4096 \u00d7 4096")
    # One legend for both panels: each GPU's bars and every line, once.
    handles, names = {}, []
    for axes in panels[0]:
        for handle, name in zip(*axes.get_legend_handles_labels(), strict=True):
            if name not in handles:
                handles[name] = handle
                names.append(name)
    names.sort(key=lambda name: not isinstance(handles[name], BarContainer))  # bars first
    figure.tight_layout()
    # Below the panels, not beside them: the figure stays as narrow as its
    # bars, which a phone's column then shrinks less.
    legend(figure, theme, handles=[handles[n] for n in names], labels=names, loc="upper center",
           bbox_to_anchor=(0.5, 0.0), ncols=1 if stacked else 2)
    return figure


def draw_ladder(chapter_labels: list[str], bars: list[LadderBars], mode: str,
                stacked: bool = False) -> bytes:
    """GFLOP/s by chapter, one bar per GPU, with cuBLAS (dashed) and the FMA
    peak (dotted) of each GPU as horizontal lines; Part II's chapters in a
    panel of their own, with cuBLAS on TF32 (dash-dotted). `stacked`: the
    panels one above the other, for a phone."""
    with plt.rc_context(RC):
        return svg(ladder_figure(chapter_labels, bars, mode, stacked))


# -- The figure, as the book asks for it (registry.py) ------------------------


def ladder_drawing(slugs: list[str], bars: list[LadderBars]) -> Drawing:
    """The figure of {ladder-ladder} (ladder_tools/sphinx/ladder_results.py, which
    adds the table): on a phone, the two parts stacked and their bars across."""
    labels = [slug.replace("-", " ", 1) for slug in slugs]
    caption = (f"Every chapter at {format_size(results_files.HEADLINE_SIZE)}: GFLOP/s (bars), "
               "cuBLAS (dashed) and the FP32 FMA peak (dotted).")
    if any(part_of(slug) == 2 for slug in slugs):
        caption += (" Part II's chapters, on the tensor cores, have a panel and a scale "
                    "of their own, with cuBLAS on TF32 (dash-dotted).")
    return Drawing(lambda mode: ladder_figure(labels, bars, mode),
                   "GFLOP/s of every chapter at 4096, with cuBLAS and the FMA peak", caption,
                   layout="column",
                   phone=lambda mode: ladder_figure(labels, bars, mode, stacked=True))


def load(context: Context, request: Request) -> Drawn:
    slugs = results_files.chapter_slugs(context.repo_root)
    bars = every_gpu_bars(context.results_root, context.repo_root, slugs,
                          results_files.HEADLINE_SIZE)
    if not bars:
        return Drawn([], "No GPU has results for any chapter.")
    return Drawn([ladder_drawing(slugs, bars)])


FIGURE = Figure("ladder", "every chapter at the headline size, every GPU", load,
                directive=False)
