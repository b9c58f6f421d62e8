"""Chapter 16's ring of stages between producer and consumers ({ladder-pipeline}),
drawn from the schedule ring.py computes: one lane per stage, each
step's TMA copy and its wgmma in the order the barriers impose. It is a
schematic, not a timing. With ``:handshake:`` the barriers' handshake
(handshake.py) follows as a second figure.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ladder_tools.figures import handshake
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.ring import (
    FILLS,
    LINE_STYLES,
    TIMES,
    Pipeline,
    chapter_pipeline,
    columns,
    schedule,
)
from ladder_tools.figures.stages import lanes
from ladder_tools.figures.style import RC, THEMES, legend, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

TEXT = 12.5
TITLE = 13


def title_words(p: Pipeline) -> str:
    if p.split:
        floats = (f"A {p.bm} {TIMES} {p.bk} + B {p.bk} {TIMES} {p.bn} + A's small part "
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
    split = (" On 3xTF32 the copies bring A's small part too, written once before the "
             "product (convert_a())." if p.split else "")
    return (f"{p.chapter}: {p.stages} shared-memory stages of {p.stage_floats} floats "
            f"(BK = {p.bk}) as lanes over {p.steps} K-steps, step k in stage k mod {p.stages}. "
            "One producer thread copies each step's tiles with TMA; when they land, the "
            f"stage's 'full' barrier completes.{split} The consumers multiply the step with "
            f"wgmma, then all {p.consumer_threads} of their threads arrive on 'empty', and "
            "only then does the producer refill that stage, while the consumers multiply the "
            "next. The order the code imposes, not measured time.")


def pipeline_figure(p: Pipeline, mode: str) -> MplFigure:
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


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """The ring; with ``:handshake:``, the handshake as a second figure."""
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
