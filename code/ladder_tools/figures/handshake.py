"""Chapter 16's producer/consumer handshake, barrier by barrier (drawn by
{ladder-pipeline} after the ring of stages, pipeline.py).

The data: the variant's ``--describe`` constants, checked by
ring.pipeline_of() (STAGES, COPY_FLOATS, CONSUMERS, WARPGROUP, ...),
turned by handshake_of() into a Handshake over STAGES + 2 K-steps, enough
for each barrier's second pass. What the kernel does (sgemm_wgmma,
consume_tf32, consume_3xtf32, init_stage_barriers):

- each stage s has two mbarriers. full[s] expects 1 arrival, the
  producer's arrive.expect_tx, and the COPY_FLOATS x 4 bytes its TMA copies
  bring; empty[s] expects CONSUMERS x WARPGROUP arrivals, one per consumer
  thread;
- for step k, in stage s = k mod STAGES, the producer's one thread waits for
  empty[s] on parity (k / STAGES + 1) & 1, arrives on full[s] with the bytes
  to expect and issues the copies; each consumer warpgroup waits for full[s]
  on parity (k / STAGES) & 1, issues its wgmma, waits for them
  (wgmma_wait_all) and then each of its 128 threads arrives on empty[s];
- a barrier's pass p (its p-th completion, from 0) ends the phase of parity
  p & 1, and a wait on a parity returns once that phase has completed. A
  fresh barrier counts as having completed the phase before its first
  (pass -1, parity 1): the producer's first wait on each empty returns at
  once.

schedule() puts these events in rows, in an order the barriers allow: the
producer issues as soon as its empty allows, the consumers take the steps in
order as their full allows, one barrier completion per row. The figure is
that order, not a timing: the producer on the left, the barriers'
completions in the middle, the two consumer warpgroups on the right, an
arrow from each completion to the work that waits on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Rectangle

from ladder_tools.analysis.binaries import describe, find_variant
from ladder_tools.figures import ring
from ladder_tools.figures.style import RC, THEMES, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation

TEXT = 10.5
TITLE = 11.5
BYTES_PER_FLOAT = 4
#: Rows a consumer's step takes: its wgmma, then its wgmma_wait_all.
CONSUMER_ROWS = 2
ROW = 0.36  # inches per row
COPY_COLOUR = ring.FILLS["copy"]
MMA_COLOUR = ring.FILLS["mma"]
LINE_STYLES = ring.LINE_STYLES
DASH = "\u2013"

# Where the lanes lie, in inches from the left.
PRODUCER = (0.0, 0.9)
GUTTER = (1.2, 3.3)
CONSUMER_LANES = ((3.6, 4.45), (4.45, 5.3))
WIDTH = CONSUMER_LANES[-1][1]


@dataclass(frozen=True)
class Handshake:
    chapter: str
    stages: int
    copy_floats: int
    consumers: int
    warpgroup: int
    steps: int  #: the K-steps drawn, 0 .. steps - 1

    @property
    def full_bytes(self) -> int:
        """The bytes full[s] expects besides its one arrival."""
        return self.copy_floats * BYTES_PER_FLOAT

    @property
    def empty_arrivals(self) -> int:
        return self.consumers * self.warpgroup


def handshake_of(chapter: str, constants: dict) -> Handshake:
    """The handshake of a variant's constants, which pipeline_of() checks."""
    p = ring.pipeline_of(chapter, constants)
    return Handshake(chapter, p.stages, p.copy_floats, constants["CONSUMERS"],
                     constants["WARPGROUP"], p.stages + 2)


def chapter_handshake(repo_root: Path, build: Path, slug: str) -> tuple[Handshake, list[Path]]:
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    return handshake_of(slug, variant["constants"]), [path, *sources]


# The kernel's waits: the parity a role waits on for step k.
def consumer_wait_parity(k: int, stages: int) -> int:
    """consume_tf32 / consume_3xtf32: mbarrier_wait(&full[s], (kt / STAGES) & 1)."""
    return (k // stages) & 1


def producer_wait_parity(k: int, stages: int) -> int:
    """sgemm_wgmma's producer: mbarrier_wait(&empty[s], (kt / STAGES + 1) & 1)."""
    return (k // stages + 1) & 1


@dataclass(frozen=True)
class Completion:
    """A barrier's completion: pass `pass_` of barrier[stage] (-1: the phase
    a fresh barrier counts as complete), drawn in its row of the middle
    column. `step` is the K-step whose copy (full) or multiply (empty)
    completes it; -1 for the fresh empties, one Completion for them all."""
    barrier: str
    stage: int
    pass_: int
    step: int
    row: int

    @property
    def parity(self) -> int:
        return self.pass_ & 1

    @property
    def fresh(self) -> bool:
        return self.pass_ < 0

    @property
    def gid(self) -> str:
        return "fresh-empty" if self.fresh else f"{self.barrier}-{self.step}"


@dataclass(frozen=True)
class Work:
    """The producer's step (wait for empty, expect_tx, copies) or a consumer
    warpgroup's (wait for full, wgmma, wgmma_wait_all, arrive on empty),
    from `row` for `rows` rows; it waits on `waits` with `parity`."""
    role: str      #: "producer", or "consumer-1", "consumer-2", ...
    step: int
    stage: int
    row: int
    rows: int
    waits: Completion
    parity: int    #: the parity its wait names, by the kernel's rule

    @property
    def end(self) -> int:
        return self.row + self.rows

    @property
    def gid(self) -> str:
        return f"{self.role}-{self.step}"


@dataclass(frozen=True)
class Schedule:
    completions: list[Completion]
    work: list[Work]

    @property
    def rows(self) -> int:
        return max(max(c.row + 1 for c in self.completions), max(w.end for w in self.work))


def schedule(h: Handshake) -> Schedule:
    """Row by row: one barrier completion per row (the readiest; an empty
    before a full when both have waited as long), then the producer's next
    step if its empty has completed, then the consumers' next step if its
    full has."""
    s = h.stages
    fresh = Completion("empty", -1, -1, -1, 0)
    full: dict[int, Completion] = {}
    empty: dict[int, Completion] = {}
    issued: dict[int, int] = {}   # step -> the producer's row
    started: dict[int, int] = {}  # step -> the consumers' first row
    ready: dict[tuple[str, int], int] = {}  # a completion that may be drawn, since which row
    work: list[Work] = []
    producer_next = consumer_next = 0
    producer_free = consumer_free = 0
    here = 0  # row 0: the fresh empties, and the producer's first step
    while len(empty) < h.steps or producer_next < h.steps:
        if here > 0:
            for k, at in issued.items():
                if k not in full and ("full", k) not in ready and at < here:
                    ready[("full", k)] = here
            for k, at in started.items():
                if k not in empty and ("empty", k) not in ready and at + CONSUMER_ROWS - 1 <= here:
                    ready[("empty", k)] = here
            if ready:
                kind, k = min(ready, key=lambda key: (ready[key], key[0] != "empty", key[1]))
                del ready[(kind, k)]
                done = Completion(kind, k % s, k // s, k, here)
                (full if kind == "full" else empty)[k] = done
        if producer_next < h.steps and producer_free <= here:
            k = producer_next
            waits = fresh if k < s else empty.get(k - s)
            if waits is not None:
                work.append(Work("producer", k, k % s, here, 1, waits, producer_wait_parity(k, s)))
                issued[k] = here
                producer_next, producer_free = k + 1, here + 1
        if consumer_next < h.steps and consumer_free <= here and consumer_next in full:
            k = consumer_next
            for c in range(h.consumers):
                work.append(Work(f"consumer-{c + 1}", k, k % s, here, CONSUMER_ROWS, full[k],
                                 consumer_wait_parity(k, s)))
            started[k] = here
            consumer_next, consumer_free = k + 1, here + CONSUMER_ROWS
        here += 1
    completions = [fresh] + sorted([*full.values(), *empty.values()], key=lambda c: c.row)
    return Schedule(completions, work)


def completion_words(h: Handshake, c: Completion) -> str:
    if c.fresh:
        return f"{c.barrier}[0{DASH}{h.stages - 1}] fresh, parity 1"
    return f"{c.barrier}[{c.stage}] pass {c.pass_}, parity {c.parity}"


def rule_words(h: Handshake) -> list[str]:
    s = h.stages
    return [f"full[s]: 1 arrival (arrive.expect_tx) + {h.full_bytes:,} bytes",
            f"empty[s]: {h.consumers} {ring.TIMES} {h.warpgroup} = {h.empty_arrivals} "
            "arrivals, after wait_all",
            f"step k in stage s = k mod {s}; pass k / {s}",
            f"consumers wait full[s] on parity (k / {s}) & 1",
            f"producer waits empty[s] on parity (k / {s} + 1) & 1"]


def title_words(h: Handshake) -> str:
    return (f"The handshake of STAGES = {h.stages} stages,\n"
            f"K-steps 0 to {h.steps - 1}, one barrier completion a row")


def alt_text(h: Handshake) -> str:
    s = h.stages
    return (f"The producer's thread and the {h.consumers} consumer warpgroups of "
            f"{h.warpgroup} threads over K-steps 0 to {h.steps - 1}, time running down. Each "
            f"stage s of {s} has a full and an empty barrier. The producer waits for empty[s] "
            f"on parity (k / {s} + 1) & 1 (a fresh barrier counts the phase of parity 1 as "
            f"complete, so its first {s} waits return at once), arrives on full[s] with "
            f"arrive.expect_tx and copies; full[s] completes on that 1 arrival and "
            f"{h.full_bytes:,} bytes. Each consumer waits for full[s] on parity (k / {s}) & 1, "
            "multiplies with wgmma, waits for them (wgmma_wait_all), then its threads arrive "
            f"on empty[s], which completes on {h.empty_arrivals} arrivals and lets the "
            "producer refill the stage. Each completion is labelled with its barrier, pass "
            "(k / STAGES) and parity (pass & 1). The order the code imposes, not measured time.")


def caption_words(h: Handshake) -> str:
    return (f"The barriers, step by step: full[s] completes on the producer's "
            f"arrival and {h.full_bytes:,} bytes, empty[s] on {h.empty_arrivals} consumer "
            f"threads; a wait names the parity of the pass it needs, so the producer's first "
            f"wait on each fresh empty (parity 1) returns at once.")


def handshake_figure(h: Handshake, mode: str) -> Figure:
    theme = THEMES[mode]
    ink = theme["ink"]
    plan = schedule(h)
    rows = plan.rows
    head, rules = 1.15, len(rule_words(h)) * 0.22 + 0.25
    lanes_h = rows * ROW
    total = head + lanes_h + rules
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(WIDTH + 0.1, total))
        figure.set_gid(f"handshake-{h.chapter}")
        axes = figure.add_axes((0.05 / (WIDTH + 0.1), rules / total, WIDTH / (WIDTH + 0.1),
                                lanes_h / total))
        axes.set_gid("handshake")
        axes.set_axis_off()
        axes.set_xlim(0, WIDTH)
        axes.set_ylim(rows, 0)
        # y in rows, x in inches: a row is ROW inches.

        def y_of(row: float) -> float:
            return row

        # The lanes' heads and their lines.
        consumers_x = (CONSUMER_LANES[0][0], CONSUMER_LANES[h.consumers - 1][1])
        heads = [(PRODUCER, "producer\n1 thread"), (GUTTER, "barrier completions"),
                 (consumers_x, f"{h.consumers} consumer\nwarpgroups,\n{h.warpgroup} threads each")]
        for (x0, x1), words in heads:
            axes.text((x0 + x1) / 2, -0.3, words, ha="center", va="bottom", fontsize=TEXT,
                      color=ink, linespacing=1.15, gid="lane-head")
        # As many lanes as the kernel has consumers (CONSUMER_LANES has room for more).
        names = [f"consumer-{i + 1}" for i in range(h.consumers)]
        lanes = dict(zip(names, CONSUMER_LANES, strict=False))
        lanes["producer"] = PRODUCER
        pad = 0.1
        # Each lane's line runs between its work, not through the boxes' words
        # (a box is translucent): broken (NaN) where a box stands.
        for role, (x0, x1) in lanes.items():
            ys, top = [], 0.0
            for w in sorted((w for w in plan.work if w.role == role), key=lambda w: w.row):
                ys += [top, w.row + pad, math.nan]
                top = w.end - pad
            ys += [top, rows]
            axes.plot([(x0 + x1) / 2] * len(ys), ys, color=theme["grid"], lw=0.8, zorder=0,
                      gid=f"lane-{role}")
        boxes: dict[str, tuple[float, float, float, float]] = {}
        for w in plan.work:
            x0, x1 = lanes[w.role]
            colour, alpha = COPY_COLOUR if w.role == "producer" else MMA_COLOUR
            y0, y1 = w.row + pad, w.end - pad
            gap = 0.03 if w.role != "producer" else 0
            patch = Rectangle((x0 + gap, y0), x1 - x0 - 2 * gap, y1 - y0, fc=colour,
                              alpha=alpha, ec="none")
            patch.set_gid(w.gid)
            axes.add_patch(patch)
            boxes[w.gid] = (x0, x1, y0, y1)
            if w.role == "producer":
                axes.text((x0 + x1) / 2, (y0 + y1) / 2, f"copy {w.step}", ha="center",
                          va="center", fontsize=TEXT, color=ink)
            else:
                axes.text((x0 + x1) / 2, w.row + 0.5, f"wgmma {w.step}", ha="center",
                          va="center", fontsize=TEXT, color=ink)
                # wgmma_wait_all ends at the box's foot, just before the arrivals.
                last = Rectangle((x0 + gap, w.end - 1), x1 - x0 - 2 * gap, 1 - pad, fc=colour,
                                 alpha=alpha / 2, ec="none")
                last.set_gid(f"wait-all-{w.gid}")
                axes.add_patch(last)
                axes.text((x0 + x1) / 2, w.end - 0.5 - pad / 2, "wait_all", ha="center",
                          va="center", fontsize=TEXT, color=ink, gid="wait-all")
        # The completions, a chip each in the middle column.
        chips: dict[str, float] = {}
        for c in plan.completions:
            x0, x1 = GUTTER
            chip = FancyBboxPatch((x0, c.row + 0.1), x1 - x0, 0.8,
                                  boxstyle="round,pad=0,rounding_size=0.12",
                                  fc="none", ec=ink, lw=1.4 if c.barrier == "full" else 1.1,
                                  ls=LINE_STYLES[c.barrier], mutation_aspect=1 / ROW)
            chip.set_gid(f"completion-{c.gid}")
            axes.add_patch(chip)
            axes.text((x0 + x1) / 2, c.row + 0.5, completion_words(h, c), ha="center",
                      va="center", fontsize=TEXT, color=ink, gid=f"label-{c.gid}")
            chips[c.gid] = c.row + 0.5

        def arrow(gid: str, start: tuple[float, float], end: tuple[float, float],
                  barrier: str) -> Annotation:
            drawn = axes.annotate("", xy=end, xytext=start, annotation_clip=False,
                                  arrowprops={"arrowstyle": "-|>", "color": ink, "lw": 1.1,
                                              "ls": LINE_STYLES[barrier], "shrinkA": 0,
                                              "shrinkB": 0, "mutation_scale": 10})
            drawn.set_gid(gid)
            return drawn

        for w in plan.work:
            if w.role != "producer":
                continue
            x0, x1, y0, y1 = boxes[w.gid]
            # What it waits on: an empty (or the fresh ones); what it completes: its full.
            arrow(f"waits-{w.gid}", (GUTTER[0], chips[w.waits.gid]), (x1, (y0 + y1) / 2), "empty")
            arrow(f"lands-{w.step}", (x1, (y0 + y1) / 2), (GUTTER[0], chips[f"full-{w.step}"]),
                  "full")
        for k in range(h.steps):
            consumers = [w for w in plan.work if w.role != "producer" and w.step == k]
            if not consumers:
                continue
            x0, _, y0, y1 = boxes[consumers[0].gid]
            # full -> the consumers (both warpgroups wait on it), into their first row.
            arrow(f"waits-full-{k}", (GUTTER[1], chips[f"full-{k}"]), (x0, y0 + 0.3), "full")
            # Their arrivals, after wait_all -> empty.
            if f"empty-{k}" in chips:
                arrow(f"arrives-empty-{k}", (x0, y1 - 0.3), (GUTTER[1], chips[f"empty-{k}"]),
                      "empty")
        figure.text(0.5, 1 - 0.06 / total, title_words(h), ha="center", va="top",
                    fontsize=TITLE, color=ink, linespacing=1.3)
        for i, words in enumerate(rule_words(h)):
            figure.text(0.03, (rules - 0.22 - 0.22 * i) / total, words, ha="left", va="top",
                        fontsize=TEXT, color=ink, gid="rule")
        return figure


def draw_handshake(h: Handshake, mode: str) -> bytes:
    with plt.rc_context(RC):
        return svg(handshake_figure(h, mode))
