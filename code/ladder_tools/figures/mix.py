"""Each chapter's K-loop body as a bar of instruction counts, stacked by
family ({ladder-mix-figure}).

The data: the SASS of each chapter binary in the build folder
(ladder_tools.analysis.mix), one MixBar per chapter (mix_bars): the chapter's own
kernel, as its --describe names it, not its variants' or other paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from ladder_tools.analysis.binaries import AnalysisError, chapter_binaries, describe, variant_of
from ladder_tools.analysis.kernels import variant_main_kernel
from ladder_tools.analysis.mix import kernel_mix, mix_categories
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import RC, THEMES, legend, style_axes, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

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


@dataclass(frozen=True)
class MixBar:
    """One chapter's K-loop: its label and its instructions by family."""

    label: str
    families: dict[str, int]


def mix_bars(binaries: list[tuple[str, Path]]) -> list[MixBar]:
    """A bar per chapter binary, given as (chapter slug, path), whose own
    kernel (its default variant's, which --describe names) has a loop."""
    bars = []
    for slug, path in binaries:
        variant = variant_of(describe(path), slug, path)
        kernel = variant_main_kernel(kernel_mix(path), variant)[0]
        if kernel["loop"]:
            bars.append(MixBar(slug.replace("-", " ", 1), mix_categories(kernel["loop"])))
    return bars


#: The phone's drawing (stacked=True) is as wide as by_size's: a phone's
#: column (390 px less the page's margins) without shrinking its text.
STACKED_WIDTH_IN = 3.75


def mix_figure(bars: list[MixBar], mode: str, stacked: bool = False) -> MplFigure:
    """The matplotlib figure of draw_mix (for the tests, which measure it);
    the caller closes it. `stacked`: the legend under the bars instead of
    beside them, narrow enough for a phone."""
    theme = THEMES[mode]
    height = 0.45 * len(bars) + 1.4
    figure, axes = plt.subplots(figsize=(STACKED_WIDTH_IN, height + 0.6) if stacked
                                else (9, height))
    positions = list(range(len(bars)))[::-1]
    left = [0] * len(bars)
    for family, colour in MIX_COLOURS.items():
        widths = [bar.families.get(family, 0) for bar in bars]
        axes.barh(positions, widths, left=left, color=colour, label=family, height=0.7)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    for position, total, bar in zip(positions, left, bars, strict=True):
        share = 100 * bar.families.get("FFMA", 0) / total if total else 0
        axes.text(total, position, f"  {total} ({share:.0f}% FFMA)", va="center",
                  fontsize="small", color=theme["ink"])
    style_axes(axes, theme)
    axes.grid(True, axis="x", color=theme["grid"], linewidth=0.6)
    axes.grid(False, axis="y")
    axes.set_yticks(positions)
    axes.set_yticklabels([bar.label for bar in bars])
    axes.set_xlabel("instructions in the K-loop body\n(static count)" if stacked
                    else "instructions in the K-loop body (static count)")
    # Room right of the longest bar for its count (a narrow axes needs more).
    axes.set_xlim(0, max(left, default=1) * (1.9 if stacked else 1.25))
    if stacked:
        axes.xaxis.set_major_locator(MaxNLocator(4))
        figure.tight_layout()
        legend(figure, theme, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncols=3,
               handlelength=1.2, columnspacing=1.0)
    else:
        legend(axes, theme, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
    return figure


def draw_mix(bars: list[MixBar], mode: str, stacked: bool = False) -> bytes:
    """Each chapter's K-loop body as a horizontal bar of instruction counts,
    stacked by family, the first chapter on top; `stacked`, the phone's
    drawing."""
    with plt.rc_context(RC):
        return svg(mix_figure(bars, mode, stacked))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """On a phone, a narrow drawing with the key under the bars."""
    found = chapter_binaries(context.repo_root, context.build_dir)
    bars = mix_bars(found)
    if not bars:
        raise AnalysisError(
            f"no chapter binary in {context.build_dir / 'bin'}: build the chapters first")
    return Drawn([Drawing(lambda mode: mix_figure(bars, mode),
                          "Instructions in each chapter's K-loop body, by kind",
                          "The K-loop body of each chapter's kernel, sm_90 SASS: instructions "
                          "by kind (static counts), and the FFMA share.", layout="column",
                          phone=lambda mode: mix_figure(bars, mode, True))],
                 read=[path for _, path in found])


FIGURE = Figure("mix-figure", "the K-loop mix of every chapter binary that is built", load)
