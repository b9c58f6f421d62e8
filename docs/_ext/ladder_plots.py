"""The book's measured figures, drawn with matplotlib as SVG.

Each figure is drawn twice, once for the light and once for the dark page
(furo shows an image with class ``only-light`` or ``only-dark`` in its own
mode). Backgrounds are transparent; the two drawings differ only in the
colour of text, axes and grid. The data comes in as plain lists from
ladder_data, so these functions know nothing of files or of Sphinx.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

#: Text, axis and grid colours of the two page modes.
THEMES = {
    "light": {"ink": "#303030", "grid": "#d0d0d0"},
    "dark": {"ink": "#d0d0d0", "grid": "#505050"},
}
#: One colour per GPU, in the order the GPUs are listed (the reference GPU
#: first); each is mid-contrast, readable on white and on near-black.
GPU_COLOURS = ["#3d7dd8", "#e0892b", "#3aa56b", "#c4508f", "#8a6fd1", "#9a8b3d"]


@dataclass(frozen=True)
class Series:
    """One GPU's line: its name and its values by square size."""

    label: str
    sizes: list[int]
    values: list[float]


@dataclass(frozen=True)
class LadderBars:
    """One GPU's bars in the ladder: GFLOP/s per chapter (None: not measured),
    and its reference lines (None: not measured)."""

    label: str
    gflops: list[float | None]
    cublas_gflops: float | None
    fma_peak_gflops: float | None


def _style(axes, theme: dict) -> None:
    axes.set_facecolor("none")
    axes.tick_params(colors=theme["ink"], which="both")
    for spine in axes.spines.values():
        spine.set_color(theme["grid"])
    axes.spines["top"].set_visible(False)
    axes.spines["right"].set_visible(False)
    axes.grid(True, color=theme["grid"], linewidth=0.6)
    axes.set_axisbelow(True)
    axes.xaxis.label.set_color(theme["ink"])
    axes.yaxis.label.set_color(theme["ink"])
    axes.title.set_color(theme["ink"])


def _legend(axes, theme: dict, **placement) -> None:
    legend = axes.legend(frameon=False, fontsize="small", **placement)
    for text in legend.get_texts():
        text.set_color(theme["ink"])


def _svg(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", transparent=True, bbox_inches="tight",
                   metadata={"Date": None})
    plt.close(figure)
    return buffer.getvalue()


#: The rc settings every figure is drawn with: text as text, stable ids.
RC = {"svg.fonttype": "none", "svg.hashsalt": "ladder"}

_thousands = FuncFormatter(lambda value, _: f"{value:,.0f}")


#: A size on the line of the by-size figure: a multiple of this (256, 512,
#: 1024, 2048, 3072, ... 8192). The others (1000, 4097: sizes no tile
#: divides) are open markers off the line, so that the line does not spike
#: between 4096 and 4097.
SERIES_STEP = 256


def on_series(size: int) -> bool:
    return size % SERIES_STEP == 0


def _by_size_axes(axes, sizes: list[int]) -> None:
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


def _plot_sizes(axes, sizes: list[int], values: list[float], colour: str, label: str,
                **line) -> None:
    """One series: a line through the sizes on the series, open markers
    (unlabelled in the legend) at the others."""
    joined = [(s, v) for s, v in zip(sizes, values) if on_series(s)]
    apart = [(s, v) for s, v in zip(sizes, values) if not on_series(s)]
    if joined:
        axes.plot(*zip(*joined), color=colour, label=label, **line)
    if apart and line.get("marker"):
        axes.plot(*zip(*apart), linestyle="none", marker="o", markerfacecolor="none",
                  markeredgewidth=1.5, color=colour)


def by_size_figure(gflops: list[Series], cublas: list[Series], pct: list[Series],
                   mode: str):
    """The matplotlib figure of draw_by_size (for the tests, which measure
    it); the caller closes it."""
    theme = THEMES[mode]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    all_sizes = sorted({size for series in gflops for size in series.sizes})
    apart = [size for size in all_sizes if not on_series(size)]
    for index, (kernel, library, share) in enumerate(zip(gflops, cublas, pct)):
        colour = GPU_COLOURS[index % len(GPU_COLOURS)]
        _plot_sizes(left, kernel.sizes, kernel.values, colour, kernel.label, marker="o")
        _plot_sizes(left, library.sizes, library.values, colour, f"cuBLAS, {library.label}",
                    linestyle="--")
        _plot_sizes(right, share.sizes, share.values, colour, share.label, marker="o")
    if apart:
        # One legend entry says what the open markers are.
        left.plot([], [], linestyle="none", marker="o", markerfacecolor="none",
                  markeredgewidth=1.5, color=theme["ink"],
                  label=", ".join(str(size) for size in apart) + " (off the line)")
    for axes in (left, right):
        _style(axes, theme)
        _by_size_axes(axes, all_sizes)
    left.set_ylabel("GFLOP/s")
    left.yaxis.set_major_formatter(_thousands)
    left.set_ylim(bottom=0)
    right.set_ylabel("% of cuBLAS")
    right.set_ylim(0, max(105.0, *(max(s.values) * 1.05 for s in pct)))
    # Both legends sit below their plot, clear of the lines.
    for axes in (left, right):
        _legend(axes, theme, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2)
    figure.tight_layout()
    return figure


def draw_by_size(gflops: list[Series], cublas: list[Series], pct: list[Series],
                 mode: str) -> bytes:
    """GFLOP/s (with each GPU's cuBLAS dashed) and % of cuBLAS, by size; the
    sizes that are not a multiple of SERIES_STEP as open markers off the
    line."""
    with plt.rc_context(RC):
        return _svg(by_size_figure(gflops, cublas, pct, mode))


def draw_ladder(chapter_labels: list[str], bars: list[LadderBars], mode: str) -> bytes:
    """GFLOP/s by chapter, one bar per GPU, with cuBLAS (dashed) and the FMA
    peak (dotted) of each GPU as horizontal lines."""
    theme = THEMES[mode]
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ladder"}):
        figure, axes = plt.subplots(figsize=(9, 4))
        width = 0.8 / max(1, len(bars))
        for index, gpu in enumerate(bars):
            colour = GPU_COLOURS[index % len(GPU_COLOURS)]
            offset = (index - (len(bars) - 1) / 2) * width
            positions = [i + offset for i, v in enumerate(gpu.gflops) if v is not None]
            heights = [v for v in gpu.gflops if v is not None]
            axes.bar(positions, heights, width=width, color=colour, label=gpu.label)
            if gpu.cublas_gflops is not None:
                axes.axhline(gpu.cublas_gflops, color=colour, linestyle="--",
                             linewidth=1.2, label=f"cuBLAS, {gpu.label}")
            if gpu.fma_peak_gflops is not None:
                axes.axhline(gpu.fma_peak_gflops, color=colour, linestyle=":",
                             linewidth=1.2, label=f"FP32 FMA peak, {gpu.label}")
        _style(axes, theme)
        axes.grid(True, axis="y", color=theme["grid"], linewidth=0.6)
        axes.grid(False, axis="x")
        axes.set_xticks(range(len(chapter_labels)))
        axes.set_xticklabels(chapter_labels, rotation=35, ha="right")
        axes.set_ylabel("GFLOP/s at 4096 \u00d7 4096 \u00d7 4096")
        axes.yaxis.set_major_formatter(_thousands)
        axes.set_ylim(bottom=0)
        _legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        return _svg(figure)
