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


_thousands = FuncFormatter(lambda value, _: f"{value:,.0f}")


def _by_size_axes(axes, sizes: list[int]) -> None:
    axes.set_xscale("log", base=2)
    axes.set_xticks(sizes)
    axes.set_xticklabels([str(size) for size in sizes])
    axes.minorticks_off()
    axes.set_xlabel("M = N = K")


def draw_by_size(gflops: list[Series], cublas: list[Series], pct: list[Series],
                 mode: str) -> bytes:
    """GFLOP/s (with each GPU's cuBLAS dashed) and % of cuBLAS, by size."""
    theme = THEMES[mode]
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ladder"}):
        figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
        all_sizes = sorted({size for series in gflops for size in series.sizes})
        for index, (kernel, library, share) in enumerate(zip(gflops, cublas, pct)):
            colour = GPU_COLOURS[index % len(GPU_COLOURS)]
            left.plot(kernel.sizes, kernel.values, marker="o", color=colour,
                      label=kernel.label)
            left.plot(library.sizes, library.values, linestyle="--", color=colour,
                      label=f"cuBLAS, {library.label}")
            right.plot(share.sizes, share.values, marker="o", color=colour,
                       label=share.label)
        for axes in (left, right):
            _style(axes, theme)
            _by_size_axes(axes, all_sizes)
        left.set_ylabel("GFLOP/s")
        left.yaxis.set_major_formatter(_thousands)
        left.set_ylim(bottom=0)
        right.set_ylabel("% of cuBLAS")
        right.set_ylim(0, max(105.0, *(max(s.values) * 1.05 for s in pct)))
        _legend(left, theme)
        _legend(right, theme)
        figure.tight_layout()
        return _svg(figure)


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
