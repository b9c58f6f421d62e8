"""Chapter 16's ring of stages between producer and consumers ({ladder-pipeline}).

The data: a variant's ``--describe`` constants (STAGES, BK, BM, BN,
A_TILES, COPY_FLOATS, STAGE_FLOATS, PRODUCTS, CONSUMERS, WARPGROUP), turned
by pipeline_of() into a Pipeline. schedule() is the order the kernel's
barriers impose on a product of 2 · STAGES K-steps (sgemm_wgmma,
consume_tf32, consume_3xtf32), each task one column long and started in
the first column that all it waits for allows:

- the producer's one thread copies step k into stage k mod STAGES with TMA,
  in order, once that stage is *empty* (the consumers have finished step
  k - STAGES; a fresh stage is free); the copy completes *full*. On 3xTF32
  (PRODUCTS = 3) it brings A's two parts too (A_TILES = 3), split before
  the product;
- after *full* the consumers multiply step k with wgmma, in order, then
  arrive on *empty*.

The figure draws that order as one lane per stage; it is a schematic, not
a timing.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from figures.registry import Context, Drawing, Drawn, Figure, Option, Request
from figures.stages import lanes
from figures.style import GPU_COLOURS, RC, THEMES, legend, svg
from ladder_tools.binaries import AnalysisError, describe, find_variant

#: What each kind of task is drawn with: colour and opacity.
FILLS = {"copy": (GPU_COLOURS[1], 0.4), "mma": (GPU_COLOURS[0], 0.6)}
#: The barrier each kind of task completes, and its line style.
COMPLETES = {"copy": "full", "mma": "empty"}
LINE_STYLES = {"full": "-", "empty": (0, (2.2, 1.4))}
TEXT = 12.5
TITLE = 13
TIMES = "\u00d7"
NEEDED = ("STAGES", "BK", "BM", "BN", "A_TILES", "COPY_FLOATS", "STAGE_FLOATS", "PRODUCTS",
          "CONSUMERS", "WARPGROUP")


@dataclass(frozen=True)
class Pipeline:
    chapter: str
    stages: int
    bk: int
    bm: int
    bn: int
    copy_floats: int   #: floats the copies bring per stage: A's tiles and B's
    stage_floats: int  #: floats of one stage: all the copies bring
    products: int      #: 1 (TF32) or 3 (3xTF32, whose copies bring A's parts too)
    consumer_threads: int  #: the arrivals that complete "empty"

    @property
    def split(self) -> bool:
        return self.products == 3

    @property
    def steps(self) -> int:
        """The K-steps drawn: each stage filled, emptied and refilled once."""
        return 2 * self.stages

    @property
    def part_floats(self) -> int:
        """The floats of A's two parts in a stage (3xTF32), 0 on TF32."""
        return self.copy_floats - (self.bm + self.bn) * self.bk


@dataclass(frozen=True)
class Task:
    kind: str    #: "copy" (TMA) or "mma" (wgmma)
    step: int    #: the K-step whose tiles it copies or multiplies
    stage: int
    start: int   #: its column; it ends where the next begins

    @property
    def end(self) -> int:
        return self.start + 1

    @property
    def barrier(self) -> str:
        """The barrier it completes, at its end."""
        return COMPLETES[self.kind]


def pipeline_of(chapter: str, constants: dict) -> Pipeline:
    missing = [n for n in NEEDED if n not in constants]
    if missing:
        raise AnalysisError(f"{chapter}: its --describe constants have no {', '.join(missing)}")
    c = constants
    if c["STAGES"] < 2:
        raise AnalysisError(f"{chapter}: STAGES = {c['STAGES']}, nothing overlaps")
    if c["PRODUCTS"] not in (1, 3):
        raise AnalysisError(f"{chapter}: PRODUCTS = {c['PRODUCTS']}, not 1 or 3")
    a_tiles = 3 if c["PRODUCTS"] == 3 else 1  # A's tile, and on 3xTF32 its two parts
    if c["A_TILES"] != a_tiles:
        raise AnalysisError(f"{chapter}: A_TILES = {c['A_TILES']}, not {a_tiles} for "
                            f"PRODUCTS = {c['PRODUCTS']}")
    if c["COPY_FLOATS"] != (a_tiles * c["BM"] + c["BN"]) * c["BK"]:
        raise AnalysisError(f"{chapter}: COPY_FLOATS = {c['COPY_FLOATS']} is not "
                            f"({a_tiles} BM + BN) {TIMES} BK, A's tiles and B's")
    if c["STAGE_FLOATS"] != c["COPY_FLOATS"]:
        raise AnalysisError(f"{chapter}: STAGE_FLOATS = {c['STAGE_FLOATS']} is not the "
                            f"copies' {c['COPY_FLOATS']} floats")
    return Pipeline(chapter, c["STAGES"], c["BK"], c["BM"], c["BN"], c["COPY_FLOATS"],
                    c["STAGE_FLOATS"], c["PRODUCTS"], c["CONSUMERS"] * c["WARPGROUP"])


def chapter_pipeline(repo_root: Path, build: Path, slug: str) -> tuple[Pipeline, list[Path]]:
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    return pipeline_of(slug, variant["constants"]), [path, *sources]


def schedule(p: Pipeline) -> list[Task]:
    """Each step's copy and multiply, each in the first column its
    barriers and its role's order allow."""
    tasks: list[Task] = []
    copies: dict[int, Task] = {}
    mmas: dict[int, Task] = {}
    for k in range(p.steps):
        stage = k % p.stages
        # The producer's thread issues the copies in order; it waits for
        # "empty" of the step the stage held (a fresh stage is free).
        start = copies[k - 1].start if k else 0
        if k >= p.stages:
            start = max(start, mmas[k - p.stages].end)
        copies[k] = Task("copy", k, stage, start)
        # The consumers wait for "full", one step after another.
        mmas[k] = Task("mma", k, stage, max(copies[k].end, mmas[k - 1].end if k else 0))
        tasks += [copies[k], mmas[k]]
    return tasks


def columns(tasks: list[Task]) -> int:
    return max(t.end for t in tasks)


def title_words(p: Pipeline) -> str:
    if p.split:
        floats = (f"A {p.bm} {TIMES} {p.bk} + B {p.bk} {TIMES} {p.bn} + A's parts "
                  f"{p.part_floats} = {p.stage_floats} floats")
    else:
        floats = f"A {p.bm} {TIMES} {p.bk} + B {p.bk} {TIMES} {p.bn} = {p.stage_floats} floats"
    return f"STAGES = {p.stages} stages of BK = {p.bk}, each\n{floats}"


def legend_words(p: Pipeline) -> tuple[dict[str, str], dict[str, str]]:
    """The legend's labels: of each task kind, and of each barrier."""
    tasks = {"copy": "TMA copy (producer)", "mma": "wgmma (consumers)"}
    barriers = {"full": "full: landed", "empty": f"empty: {p.consumer_threads} arrived"}
    return tasks, barriers


def alt_text(p: Pipeline) -> str:
    split = (" On 3xTF32 the copies bring A's two parts too, split once before the product."
             if p.split else "")
    return (f"{p.chapter}: {p.stages} shared-memory stages of {p.stage_floats} floats "
            f"(BK = {p.bk}) as lanes over {p.steps} K-steps, step k in stage k mod {p.stages}. "
            "One producer thread copies each step's tiles with TMA; when they land, the "
            f"stage's 'full' barrier completes.{split} The consumers multiply the step with "
            f"wgmma, then all {p.consumer_threads} of their threads arrive on 'empty', and "
            "only then does the producer refill that stage, while the consumers multiply the "
            "next. The order the code imposes, not measured time.")


def pipeline_figure(p: Pipeline, mode: str):
    theme = THEMES[mode]
    ink = theme["ink"]
    tasks = schedule(p)
    width = columns(tasks)
    task_words, barrier_words = legend_words(p)
    foot = 0.75 + 0.3 * len(task_words)
    with plt.rc_context(RC):
        drawn = lanes(f"pipeline-{p.chapter}", p.stages, width, 0.9, foot, -0.15, ink)
        figure, axes, height, total, top = (drawn.figure, drawn.axes, drawn.height,
                                            drawn.total, drawn.top)
        # Each task and the one after it on the same step (copy, multiply).
        following = {a: b for a, b in pairwise(tasks)
                     if a.step == b.step and a.kind != "mma"}
        for task in tasks:
            colour, alpha = FILLS[task.kind]
            y = top(task.stage)
            patch = Rectangle((task.start + 0.07, y + 0.06), 0.86, 0.88, fc=colour, alpha=alpha,
                              ec="none")
            patch.set_gid(f"{task.kind}-{task.step}")
            axes.add_patch(patch)
            axes.text(task.start + 0.5, y + 0.5, str(task.step), ha="center", va="center",
                      fontsize=TEXT, color=ink)
            line = axes.plot([task.end, task.end], [y, y + 1], color=ink, lw=2.2,
                             ls=LINE_STYLES[task.barrier], solid_capstyle="butt",
                             dash_capstyle="butt", clip_on=False)[0]
            line.set_gid(f"barrier-{task.barrier}-{task.step}")
            after = following.get(task)
            if after is not None and task.end < after.start:
                # The stage holds the step until the next role takes it.
                held = axes.plot([task.end + 0.12, after.start - 0.07], [y + 0.5, y + 0.5],
                                 color=ink, lw=1.2, ls=(0, (1, 2.5)))[0]
                held.set_gid(f"waits-{task.step}-{after.kind}")
        axes.annotate("", xy=(width, height + 0.3), xytext=(0, height + 0.3),
                      arrowprops={"arrowstyle": "->", "color": ink, "lw": 1.3},
                      annotation_clip=False)
        axes.text(width / 2, height + 0.38, "time", ha="center", va="top", fontsize=TEXT - 1,
                  color=ink)
        figure.text(0.5, 1 - 0.08 / total, title_words(p), ha="center", va="top",
                    fontsize=TITLE, color=ink, linespacing=1.3)
        handles: list[Artist] = [Patch(fc=FILLS[kind][0], alpha=FILLS[kind][1], label=label)
                                 for kind, label in task_words.items()]
        handles += [Line2D([], [], color=ink, lw=2.2, ls=LINE_STYLES[name], label=label)
                    for name, label in barrier_words.items()]
        legend(figure, theme, handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.01),
               ncol=2, fontsize=TEXT - 1, handlelength=1.8, columnspacing=1.2)
        return figure


def draw_pipeline(p: Pipeline, mode: str) -> bytes:
    with plt.rc_context(RC):
        return svg(pipeline_figure(p, mode))


# -- The figure, as the book asks for it (figures/registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """The ring; with ``:handshake:``, the handshake as a second figure."""
    # handshake.py draws on this module's schedule: imported here, not above.
    from figures import handshake

    slug = request.arguments[0]
    ring, read = chapter_pipeline(context.repo_root, context.build_dir, slug)
    drawings = [Drawing(lambda mode: pipeline_figure(ring, mode), alt_text(ring),
                        request.caption_or(f"The stages of {slug} between producer and "
                                           "consumers, in the order the code imposes."))]
    if request.options["handshake"]:
        found, _ = handshake.chapter_handshake(context.repo_root, context.build_dir, slug)
        drawings.append(Drawing(lambda mode: handshake.handshake_figure(found, mode),
                                handshake.alt_text(found), handshake.caption_words(found),
                                name="handshake"))
    return Drawn(drawings, read=read)


FIGURE = Figure("pipeline", "chapter 16's ring of stages between producer and consumers, in "
                "the code's order", load, arguments=(1, 1),
                argument="a result name of chapter 16 or 17, e.g. 16-wgmma",
                options={"handshake": Option("a second figure: the barriers each side waits "
                                             "on and arrives at", flag=True)})
