"""A square size's blocks in rounds across the SMs ({ladder-rounds}).

The data: the block tile BM x BN from the chapter's ``--describe``, the GPU's
SM count (the result's provenance ``sm_count``) and the blocks an SM holds at
once (the result's measured ``resources.blocks_per_sm``), for one N x N
output. rounds_of() counts: ceil(N / BM) * ceil(N / BN) blocks, SMs x blocks
per SM in each round, the full rounds and the blocks of the last one. The
figure draws each round as a bar over the SMs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_tools import results
from ladder_tools.analysis.binaries import AnalysisError, find_variant
from ladder_tools.figures.registry import (
    GPU,
    Context,
    Drawing,
    Drawn,
    Figure,
    Option,
    Request,
    positive_int,
)
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

FILL = GPU_COLOURS[0]
TEXT = 12.5
TITLE = 13
FIGURE_WIDTH = 5.2
TIMES = "\u00d7"


@dataclass(frozen=True)
class Rounds:
    chapter: str
    gpu: str
    size: int
    bm: int
    bn: int
    sms: int
    per_sm: int

    @property
    def grid(self) -> tuple[int, int]:
        return -(-self.size // self.bm), -(-self.size // self.bn)

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def per_round(self) -> int:
        return self.sms * self.per_sm

    @property
    def full(self) -> int:
        return self.blocks // self.per_round

    @property
    def last(self) -> int:
        """Blocks of the last, partial round (0 when every round is full)."""
        return self.blocks % self.per_round

    @property
    def rounds(self) -> int:
        return self.full + (1 if self.last else 0)

    @property
    def busy(self) -> float:
        return self.blocks / (self.rounds * self.per_round)

    def filled(self) -> list[int]:
        """Blocks in each round, first to last."""
        return [self.per_round] * self.full + ([self.last] if self.last else [])


def chapter_rounds(repo_root: Path, build: Path, slug: str, size: int,
                   gpu: str = results.REFERENCE_GPU
                   ) -> tuple[Rounds | None, list[Path], results.ChapterResult | None]:
    """The Rounds of ``slug`` at N = ``size`` on ``gpu``, the files read, and
    the result used (for its staleness); None for Rounds when the GPU has no
    result for it."""
    path, variant = find_variant(repo_root, build, slug)
    c = variant["constants"]
    if "BM" not in c or "BN" not in c:
        raise AnalysisError(f"{slug}: its --describe constants have no BM and BN")
    found = results.load_chapter_result(results.results_root(repo_root), gpu, slug, repo_root)
    if found is None:
        return None, [path], None
    sms = found.provenance.get("sm_count")
    per_sm = (found.data.get("resources") or {}).get("blocks_per_sm")
    if not sms or not per_sm:
        raise AnalysisError(f"{found.path}: no provenance sm_count or resources blocks_per_sm")
    return (Rounds(slug, found.provenance.get("gpu", gpu), size, c["BM"], c["BN"], sms, per_sm),
            [path, found.path], found)


def title_words(r: Rounds) -> str:
    m, n = r.grid
    return (f"N = {r.size}: \u2308N / {r.bm}\u2309 {TIMES} \u2308N / {r.bn}\u2309 = "
            f"{m} {TIMES} {n} = {r.blocks} blocks\n{r.sms} SMs {TIMES} {r.per_sm} "
            f"block{'s' if r.per_sm > 1 else ''} = {r.per_round} per round")


def alt_text(r: Rounds) -> str:
    last = f" and a last round of {r.last}" if r.last else ""
    return (f"{r.chapter} at {r.size}: {r.blocks} blocks on the {r.sms} SMs of the "
            f"{r.gpu}, {r.per_sm} per SM at a time: {r.full} full "
            f"round{'s' if r.full != 1 else ''} of "
            f"{r.per_round}{last}; the SMs are busy {r.busy:.0%} of the rounds.")


BAR = 0.34
GAP = 0.14


def rounds_figure(r: Rounds, mode: str) -> MplFigure:
    theme = THEMES[mode]
    ink, grid = theme["ink"], theme["grid"]
    filled = r.filled()
    label_w = 1.05
    head, foot = 0.85, 0.75
    body = len(filled) * BAR + (len(filled) - 1) * GAP
    total = head + body + foot
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(FIGURE_WIDTH, total))
        figure.set_gid(f"rounds-{r.chapter}-{r.size}")
        axes = figure.add_axes((label_w / FIGURE_WIDTH, foot / total,
                                (FIGURE_WIDTH - label_w - 0.15) / FIGURE_WIDTH, body / total))
        axes.set_gid("rounds")
        step = (BAR + GAP) / BAR
        axes.set_xlim(0, r.sms)
        axes.set_ylim((len(filled) - 1) * step + 1, 0)
        for spine in axes.spines.values():
            spine.set_visible(False)
        axes.spines["bottom"].set_visible(True)
        axes.spines["bottom"].set_color(grid)
        axes.set_yticks([])
        axes.set_xticks(sorted({0, r.sms // 2, r.sms}))
        axes.tick_params(colors=ink, labelsize=TEXT - 1)
        axes.set_xlabel("SMs", fontsize=TEXT, color=ink, labelpad=2)
        axes.set_facecolor("none")
        for i, blocks in enumerate(filled):
            y = i * step
            outline = Rectangle((0, y), r.sms, 1, fc="none", ec=grid, lw=1)
            outline.set_gid("round-outline")
            axes.add_patch(outline)
            bar = Rectangle((0, y), blocks / r.per_sm, 1, fc=FILL,
                            alpha=0.6 if blocks == r.per_round else 0.35, ec="none")
            bar.set_gid("round")
            axes.add_patch(bar)
            words = (f"{blocks}" if blocks == r.per_round
                     else f"{blocks} of {r.per_round}: {blocks / r.per_round:.0%}")
            inside = blocks / r.per_sm > r.sms * 0.45
            axes.text(blocks / r.per_sm / 2 if inside else blocks / r.per_sm + r.sms * 0.02,
                      y + 0.5, words, ha="center" if inside else "left", va="center",
                      fontsize=TEXT - 1, color=ink)
            axes.text(-r.sms * 0.03, y + 0.5, f"round {i + 1}", ha="right", va="center",
                      fontsize=TEXT - 1, color=ink)
        figure.text(0.5, 1 - 0.06 / total, title_words(r), ha="center", va="top",
                    fontsize=TITLE - 1, color=ink, linespacing=1.3)
        return figure


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    slug, gpu = request.arguments[0], request.options["gpu"]
    found, read, result = chapter_rounds(context.repo_root, context.build_dir, slug,
                                         request.options["size"], gpu)
    if found is None:
        return Drawn([], f"No rounds: {gpu} has no result for {slug}.", read)
    caption = request.caption_or(f"The blocks of {slug} at {found.size} in rounds over the SMs.")
    return Drawn([Drawing(lambda mode: rounds_figure(found, mode), alt_text(found), caption)],
                 read=read, used=[result] if result is not None else [])


FIGURE = Figure("rounds", "an N x N output's blocks in rounds across the GPU's SMs", load,
                arguments=(1, 1), argument="a chapter folder's name, e.g. 12-final",
                options={"size": Option("N of the N x N output", positive_int, 3072),
                         "gpu": GPU})
