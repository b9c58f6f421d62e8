"""Every chapter's GFLOP/s at 4096 as bars, one per GPU, with cuBLAS and the
FP32 FMA peak of each GPU as lines ({ladder-ladder}).

The data: each GPU's chapter results and its baseline.json
(ladder_tools.results), as one LadderBars per GPU (ladder_bars).
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt

from figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg, thousands
from ladder_tools.results import ChapterResult, median_cublas_gflops


@dataclass(frozen=True)
class LadderBars:
    """One GPU's bars in the ladder: GFLOP/s per chapter (None: not measured),
    and its reference lines (None: not measured)."""

    label: str
    gflops: list[float | None]
    cublas_gflops: float | None
    fma_peak_gflops: float | None


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
    )


def draw_ladder(chapter_labels: list[str], bars: list[LadderBars], mode: str) -> bytes:
    """GFLOP/s by chapter, one bar per GPU, with cuBLAS (dashed) and the FMA
    peak (dotted) of each GPU as horizontal lines."""
    theme = THEMES[mode]
    with plt.rc_context(RC):
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
        style_axes(axes, theme)
        axes.grid(True, axis="y", color=theme["grid"], linewidth=0.6)
        axes.grid(False, axis="x")
        axes.set_xticks(range(len(chapter_labels)))
        axes.set_xticklabels(chapter_labels, rotation=35, ha="right")
        axes.set_ylabel("GFLOP/s at 4096 \u00d7 4096 \u00d7 4096")
        axes.yaxis.set_major_formatter(thousands)
        axes.set_ylim(bottom=0)
        legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        return svg(figure)
