"""GFLOP/s and % of cuBLAS by square size, one line per GPU ({ladder-plot}).

The data: each GPU's result for one chapter (ladder_tools.results), its
timed square sizes as three series (by_size_series). Sizes on the series
(multiples of SERIES_STEP) are joined by the line; the others (1000, 4097:
sizes no tile divides) are open markers off it, so that the line does not
spike between 4096 and 4097.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt

from ladder_tools import results as results_files
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Option, Request, choice
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg, thousands
from ladder_tools.results import ChapterResult, is_timed

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure


@dataclass(frozen=True)
class Series:
    """One GPU's line: its name and its values by square size."""

    label: str
    sizes: list[int]
    values: list[float]


#: A size on the line of the by-size figure: a multiple of this (256, 512,
#: 1024, 2048, 3072, ... 8192). The others (1000, 4097: sizes no tile
#: divides) are open markers off the line, so that the line does not spike
#: between 4096 and 4097.
SERIES_STEP = 256


def on_series(size: int) -> bool:
    """Whether a size is on the line (a multiple of SERIES_STEP)."""
    return size % SERIES_STEP == 0


def _by_size_axes(axes: Axes, sizes: list[int]) -> None:
    """A log2 axis labelled at the powers of two only (labels at 1000 and
    1024, or at 3072 to 8192, would run into each other); the other
    measured sizes get a tick without a label."""
    axes.set_xscale("log", base=2)
    powers = [size for size in sizes if size & (size - 1) == 0]
    if len(powers) < 2:  # too few powers of two to read the axis by
        powers = [sizes[0], sizes[-1]] if len(sizes) > 1 else sizes
    axes.set_xticks(powers)
    axes.set_xticklabels([str(size) for size in powers])
    axes.set_xticks([size for size in sizes if size not in powers], minor=True)
    axes.set_xticklabels([], minor=True)
    axes.tick_params(axis="x", which="minor", length=3)
    axes.grid(False, which="minor")
    axes.set_xlabel("M = N = K")


def _plot_sizes(axes: Axes, sizes: list[int], values: list[float], colour: str, label: str,
                **line: Any) -> None:
    """One series: a line through the sizes on the series, open markers
    (unlabelled in the legend) at the others."""
    joined = [(s, v) for s, v in zip(sizes, values, strict=True) if on_series(s)]
    apart = [(s, v) for s, v in zip(sizes, values, strict=True) if not on_series(s)]
    if joined:
        axes.plot(*zip(*joined, strict=True), color=colour, label=label, **line)
    if apart and line.get("marker"):
        axes.plot(*zip(*apart, strict=True), linestyle="none", marker="o", markerfacecolor="none",
                  markeredgewidth=1.5, color=colour)


#: What a plot measures a kernel against: cuBLAS SGEMM, or cuBLAS on TF32
#: (for the kernels that multiply TF32 inputs): the results' keys, and the
#: words the plot uses.
REFERENCES = {
    "sgemm": (("gflops", "cublas_gflops", "pct_cublas"), "cuBLAS"),
    "tf32": (("gflops", "cublas_tf32_gflops", "pct_cublas_tf32"), "cuBLAS on TF32"),
}


#: The stacked figure's width in inches: 3.75 in, 360 px, fits a phone's
#: column (390 px less the page's margins) without shrinking its text.
STACKED_WIDTH_IN = 3.75


def by_size_figure(gflops: list[Series], cublas: list[Series], pct: list[Series],
                   mode: str, reference: str = "sgemm", stacked: bool = False) -> MplFigure:
    """The matplotlib figure of draw_by_size (for the tests, which measure
    it); the caller closes it. `stacked` puts the % panel under the GFLOP/s
    one, narrow enough for a phone."""
    theme = THEMES[mode]
    name = REFERENCES[reference][1]
    if stacked:
        figure, (left, right) = plt.subplots(2, 1, figsize=(STACKED_WIDTH_IN, 7.4))
    else:
        figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    all_sizes = sorted({size for series in gflops for size in series.sizes})
    apart = [size for size in all_sizes if not on_series(size)]
    for index, (kernel, library, share) in enumerate(zip(gflops, cublas, pct, strict=True)):
        colour = GPU_COLOURS[index % len(GPU_COLOURS)]
        _plot_sizes(left, kernel.sizes, kernel.values, colour, kernel.label, marker="o")
        _plot_sizes(left, library.sizes, library.values, colour, f"{name}, {library.label}",
                    linestyle="--")
        _plot_sizes(right, share.sizes, share.values, colour, share.label, marker="o")
    if apart:
        # One legend entry says what the open markers are.
        left.plot([], [], linestyle="none", marker="o", markerfacecolor="none",
                  markeredgewidth=1.5, color=theme["ink"],
                  label=", ".join(str(size) for size in apart) + " (off the line)")
    for axes in (left, right):
        style_axes(axes, theme)
        _by_size_axes(axes, all_sizes)
    left.set_ylabel("GFLOP/s")
    left.yaxis.set_major_formatter(thousands)
    left.set_ylim(bottom=0)
    right.set_ylabel(f"% of {name}")
    right.set_ylim(0, max(105.0, *(max(s.values) * 1.05 for s in pct)))
    # Both legends sit below their plot, clear of the lines; one column
    # where the figure is narrow.
    for axes in (left, right):
        legend(axes, theme, loc="upper center", bbox_to_anchor=(0.5, -0.22),
               ncols=1 if stacked else 2)
    figure.tight_layout()
    return figure


def draw_by_size(gflops: list[Series], cublas: list[Series], pct: list[Series],
                 mode: str, reference: str = "sgemm", stacked: bool = False) -> bytes:
    """GFLOP/s (with each GPU's cuBLAS dashed) and % of cuBLAS, by size; the
    sizes that are not a multiple of SERIES_STEP as open markers off the
    line. `reference` names the cuBLAS they are measured against
    (REFERENCES); `stacked`, one panel above the other, for a phone."""
    with plt.rc_context(RC):
        return svg(by_size_figure(gflops, cublas, pct, mode, reference, stacked))


def square_series(result: ChapterResult, key: str) -> Series:
    """One value (an entry's ``key``) per timed square size of a result, in
    size order."""
    squares = sorted(
        (e for e in result.data["sizes"] if e["M"] == e["N"] == e["K"] and is_timed(e)),
        key=lambda e: e["M"],
    )
    return Series(result.provenance["gpu"], [e["M"] for e in squares],
                  [e[key] for e in squares])


def by_size_series(results: list[ChapterResult], reference: str = "sgemm"
                   ) -> tuple[list[Series], list[Series], list[Series]]:
    """The GFLOP/s, cuBLAS GFLOP/s and % of cuBLAS series of every result
    that has a timed square size, against the cuBLAS `reference` names."""
    shown = [r for r in results if square_series(r, "gflops").sizes]
    gflops, cublas, pct = ([square_series(r, key) for r in shown]
                           for key in REFERENCES[reference][0])
    return gflops, cublas, pct


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """Every GPU's result of the chapter; two panels side by side, and on a
    phone the same two stacked, narrow enough for the column at full size."""
    slug, root = request.arguments[0], context.results_root
    found = results_files.load_chapter_results(root, slug, context.repo_root)
    read = [results_files.chapter_result_path(root, gpu, slug)
            for gpu in results_files.gpu_folders(root)]
    read += [context.repo_root / r.provenance["source"] for r in found]
    shown = [r for r in found if square_series(r, "gflops").sizes]
    if not shown:
        return Drawn([], f"No GPU has a result for {slug}.", read, found)
    reference = request.options["reference"]
    name = REFERENCES[reference][1]
    gflops, cublas, pct = by_size_series(shown, reference)
    stale = [r.provenance["gpu"] for r in shown if r.stale]
    caption = (f"{shown[0].title}: GFLOP/s (left; {name} dashed) and % of "
               f"{name} (right) at each square size.")
    if any(not on_series(size) for series in gflops for size in series.sizes):
        caption += (f" Sizes that are not a multiple of {SERIES_STEP} are open "
                    "markers, off the line.")
    if stale:
        caption += f" Stale: {', '.join(stale)}."
    return Drawn([Drawing(
        lambda mode: by_size_figure(gflops, cublas, pct, mode, reference),
        f"GFLOP/s and percent of cuBLAS by matrix size for {slug}", caption, layout="column",
        phone=lambda mode: by_size_figure(gflops, cublas, pct, mode, reference, stacked=True))],
        read=read, used=found)


FIGURE = Figure("plot", "GFLOP/s and % of cuBLAS by size for one chapter, every GPU", load,
                arguments=(1, 1), argument="a chapter folder's name, e.g. 12-final",
                options={"reference": Option("the cuBLAS it is measured against: sgemm, or "
                                             "tf32 for a TF32 kernel",
                                             choice(*REFERENCES), "sgemm")})
