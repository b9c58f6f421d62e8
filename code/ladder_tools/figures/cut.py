"""Chapter 17's last round, uncut and cut into slices, over the SMs in time
({ladder-cut}); with ``:tf32:``, chapter 16's TF32 kernel, uncut on its own
launcher's tile and cut on the variant "cut"'s.

The data: what ``build/bin/lastround`` prints for a size on the GPU's SMs
(the result's provenance ``sm_count``): every block's tile and K-steps,
from the chapter's own last_round(), uncut(), block_work() and, for TF32,
picked_rows(). place() puts the
blocks on the SMs in launch order, each on the SM that is free first (one
block per SM at a time), and the figure draws each block as a bar along K-steps.
The busiest SM's steps are the count the chapter derives by hand.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_tools import results
from ladder_tools.analysis.binaries import AnalysisError, tool_json
from ladder_tools.figures.registry import GPU, Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES
from ladder_tools.formatting import format_size, parse_size

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

WHOLE, SLICE = GPU_COLOURS[0], GPU_COLOURS[1]
TEXT = 12.5
FIGURE_WIDTH = 5.2
TIMES = "\u00d7"


@dataclass(frozen=True)
class Bar:
    sm: int
    start: int
    steps: int
    slice: bool


@dataclass(frozen=True)
class Plan:
    label: str
    bm: int
    tiles: int
    whole_tiles: int
    slices: int
    steps: int
    steps_per_slice: int
    bars: tuple[Bar, ...]

    @property
    def busiest(self) -> int:
        """The K-steps of the SM that finishes last."""
        return max(bar.start + bar.steps for bar in self.bars)

    @property
    def cut_tiles(self) -> int:
        return self.tiles - self.whole_tiles if self.slices > 1 else 0


@dataclass(frozen=True)
class Cut:
    chapter: str
    gpu: str
    size: tuple[int, int, int]
    sms: int
    bn: int
    uncut: Plan
    cut: Plan

    @property
    def size_words(self) -> str:
        """"N = 1536" for a cube, "256 × 256 × 65536" otherwise."""
        m, n, k = self.size
        return f"N = {m}" if m == n == k else format_size(self.size)

    @property
    def one_tile(self) -> bool:
        """Whether both plans use the same tile (3xTF32's 128 x 128)."""
        return self.uncut.bm == self.cut.bm


def place(blocks: list[list[int]], whole_tiles: int, slices: int, sms: int) -> tuple[Bar, ...]:
    """Each block ([tile, first_step, end_step], in launch order) on the SM
    that is free first, lowest SM on a tie."""
    free = [(0, sm) for sm in range(sms)]
    bars = []
    for tile, first, end in blocks:
        start, sm = heapq.heappop(free)
        bars.append(Bar(sm, start, end - first, slices > 1 and tile >= whole_tiles))
        heapq.heappush(free, (start + end - first, sm))
    return tuple(bars)


def runs(bars: tuple[Bar, ...]) -> list[tuple[Bar, int]]:
    """The bars as one rectangle per run of neighbouring SMs whose blocks
    start and end together: (the run's first bar, its SMs)."""
    merged: list[tuple[Bar, int]] = []
    for bar in sorted(bars, key=lambda b: (b.start, b.steps, b.slice, b.sm)):
        if merged:
            first, count = merged[-1]
            if ((first.start, first.steps, first.slice) == (bar.start, bar.steps, bar.slice)
                    and first.sm + count == bar.sm):
                merged[-1] = (first, count + 1)
                continue
        merged.append((bar, 1))
    return merged


def _plan(label: str, report: dict, sms: int) -> Plan:
    return Plan(label, report["bm"], report["tiles"], report["whole_tiles"], report["slices"],
                report["steps"],
                report["steps_per_slice"],
                place(report["blocks"], report["whole_tiles"], report["slices"], sms))


def chapter_cut(repo_root: Path, tool: Path, slug: str, size: str,
                gpu: str = results.REFERENCE_GPU, tf32: bool = False
                ) -> tuple[Cut | None, list[Path], results.ChapterResult | None]:
    """The Cut at ``size`` (N or MxNxK) on ``gpu``'s SMs (from ``slug``'s
    result), the files read, and the result used (for its staleness); None
    for the Cut when the GPU has no result for ``slug``. ``tf32``: chapter
    16's TF32 tiles, as its launcher and its variant "cut" pick them."""
    found = results.load_chapter_result(results.results_root(repo_root), gpu, slug, repo_root)
    if found is None:
        return None, [tool], None
    sms = found.provenance.get("sm_count")
    if not sms:
        raise AnalysisError(f"{found.path}: no provenance sm_count")
    report = tool_json(tool, ["--sms", str(sms), "--size", str(size),
                                *(["--tf32"] if tf32 else [])])
    cut = Cut(slug, found.provenance.get("gpu", gpu), parse_size(str(size)), sms, report["bn"],
              _plan("uncut", report["uncut"], sms), _plan("cut", report["cut"], sms))
    return cut, [tool, found.path], found


def title_words(c: Cut) -> str:
    if c.one_tile:
        return (f"{c.size_words}: {c.uncut.tiles} tiles of {c.uncut.bm} {TIMES} {c.bn}, "
                f"{c.uncut.steps} K-steps each,\non {c.sms} SMs, one block each at a time")
    return (f"{c.size_words}: {c.uncut.steps} K-steps a tile,\n"
            f"on {c.sms} SMs, one block each at a time")


def panel_words(p: Plan, c: Cut) -> str:
    if not c.one_tile:  # TF32: each plan names its tile
        tiles = f"{p.label}: {p.tiles} tiles of {p.bm} {TIMES} {c.bn}"
        if p.cut_tiles == 0:
            return f"{tiles}\nthe busiest SM runs {p.busiest} steps"
        which = "each" if p.cut_tiles == p.tiles else f"the last {p.cut_tiles}"
        return (f"{tiles}, {which} cut in {p.slices} slices\nof at most "
                f"{p.steps_per_slice} steps: the busiest SM runs {p.busiest}")
    if p.cut_tiles == 0:
        return f"{p.label}: the busiest SM runs {p.busiest} steps"
    whole = p.busiest - p.steps_per_slice
    return (f"{p.label}: the last {p.cut_tiles} tiles in {p.slices} slices of at most "
            f"{p.steps_per_slice}\nthe busiest SM runs {whole} + {p.steps_per_slice} = "
            f"{p.busiest} steps")


def alt_text(c: Cut) -> str:
    return (f"{c.chapter} at {format_size(c.size)} on the {c.sms} SMs of the {c.gpu}, K-steps "
            f"along the x-axis and SMs up the y-axis. Uncut, {c.uncut.tiles} tiles of "
            f"{c.uncut.bm} {TIMES} {c.bn} and {c.uncut.steps} steps: the busiest SM runs "
            f"{c.uncut.busiest} steps. Cut, {c.cut.tiles} tiles of {c.cut.bm} {TIMES} {c.bn}, "
            f"the last {c.cut.cut_tiles} run as {c.cut.slices} slices each of at most "
            f"{c.cut.steps_per_slice} steps: the busiest SM runs {c.cut.busiest}.")


def cut_figure(c: Cut, mode: str) -> MplFigure:
    theme = THEMES[mode]
    ink, grid = theme["ink"], theme["grid"]
    span = max(c.uncut.busiest, c.cut.busiest)
    with plt.rc_context(RC):
        figure, panels = plt.subplots(2, 1, figsize=(FIGURE_WIDTH, 5.4), sharex=True)
        figure.set_gid(f"cut-{c.chapter}-{'x'.join(map(str, c.size))}")
        figure.subplots_adjust(left=0.15, right=0.97, top=0.8, bottom=0.11, hspace=0.55)
        for axes, plan in zip(panels, (c.uncut, c.cut), strict=True):
            axes.set_gid(f"cut-{plan.label}")
            axes.set_xlim(0, span * 1.02)
            axes.set_ylim(0, c.sms)
            axes.set_facecolor("none")
            for side in ("top", "right"):
                axes.spines[side].set_visible(False)
            for side in ("left", "bottom"):
                axes.spines[side].set_color(grid)
            axes.tick_params(colors=ink, labelsize=TEXT - 2)
            axes.set_yticks([0, c.sms])
            axes.set_ylabel("SMs", fontsize=TEXT - 1, color=ink, labelpad=-8)
            for bar, sms in runs(plan.bars):
                patch = Rectangle((bar.start, bar.sm), bar.steps, sms, ec="none",
                                  fc=SLICE if bar.slice else WHOLE,
                                  alpha=0.85 if bar.slice else 0.55)
                patch.set_gid("slices" if bar.slice else "tiles")
                axes.add_patch(patch)
            axes.axvline(plan.busiest, color=ink, lw=1, ls="--")
            axes.text(0, 1.05, panel_words(plan, c), transform=axes.transAxes, ha="left",
                      va="bottom", fontsize=TEXT - 1.5, color=ink, linespacing=1.3)
        panels[-1].set_xlabel("K-steps", fontsize=TEXT - 1, color=ink)
        figure.text(0.5, 0.985, title_words(c), ha="center", va="top", fontsize=TEXT - 1,
                    color=ink, linespacing=1.3)
        return figure


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    slug, gpu = request.arguments[0], request.options["gpu"]
    found, read, result = chapter_cut(context.repo_root, context.tool("lastround"), slug,
                                      request.options["size"], gpu, request.options["tf32"])
    if found is None:
        return Drawn([], f"No slices: {gpu} has no result for {slug} to take its SMs from.",
                     read)
    caption = request.caption_or(
        f"The blocks of {slug} at {format_size(found.size)}, uncut and cut, over the SMs.")
    return Drawn([Drawing(lambda mode: cut_figure(found, mode), alt_text(found), caption)],
                 read=read, used=[result] if result is not None else [])


FIGURE = Figure("cut", "chapter 17's last round, uncut and cut into slices, over the SMs in "
                "K-steps", load, arguments=(1, 1),
                argument="the result whose GPU gives the SMs, e.g. 17-3xtf32-wgmma",
                options={"size": Option("the product: N (N x N x N) or MxNxK", str, "1536"),
                         "tf32": Option("chapter 16's TF32 tiles, as its launcher and its "
                                        "variant cut pick them", flag=True),
                         "gpu": GPU})
