"""Chapter 13's blocks over the SMs, one panel per scheme ({ladder-tail-rounds}).

The data: ``tailplan --segments`` (ladder_tools.analysis.tailplan), the plan a
variant of chapter 13 runs at one size and every block's segments, computed
by the chapter's own functions. What this module adds is where and when the
blocks run, a drawing choice and not the chapter's count: the GPU starts
blocks in the order of their index, each in the first slot that is free (a
slot: one of the blocks an SM holds at once; slot s is on SM s mod SMs), and
a block runs its segments one after another, each as long as its K-steps.
With blocks of one length that is the count's rounds.

Each panel draws the blocks of a sample of the SMs, evenly spaced (8 of an
H200's 132), each SM as its slots, a bar per segment coloured by its turn
(turn 0 writes the tile, a later turn adds into it) or, for split-K in
slices, as a slice written to the workspace, then split-K's second pass
across every slot (as long as the count prices it: tailplan's
"second_pass"); bars are shaded by their tile's parity. Under it, the busy
slots of all the SMs over time. The panels share
one time scale: a panel's K-steps are its tiling's, each drawn as long as the
count's step of a full SM (a tiling of BM x BN at b blocks per SM: b * BM *
BN). The count prices an SM that holds fewer blocks than b a shorter step
(kFixedBlocks); the drawing does not.
"""

from __future__ import annotations

import heapq
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch, Rectangle

from ladder_tools import results
from ladder_tools.analysis import tailplan
from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures.registry import GPU, Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, svg

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

TEXT = 11.5
FIGURE_WIDTH = 7.0
LABEL_W = 1.0
#: The phone's drawing (phone=True): a phone's column wide (3.75 in, 360
#: px, not shrunk), its text smaller in points but larger on the screen
#: than the shrunk desktop drawing's, the titles wrapped.
PHONE_TEXT = 9.5
PHONE_WIDTH = 3.75
PHONE_LABEL_W = 0.8
PHONE_LINE = 48
SAMPLED = 8
TIMES = "\u00d7"
TURN_COLOURS = (GPU_COLOURS[0], GPU_COLOURS[1])
SLICE_COLOUR = GPU_COLOURS[2]  #: a split-K slice, written to the workspace
PASS_COLOUR = GPU_COLOURS[4]  #: split-K's second pass


@dataclass(frozen=True)
class Bar:
    """One segment where it runs: slot, start and length in K-steps."""

    block: int
    slot: int
    start: int
    steps: int
    tile: int
    turn: int
    turns: int


@dataclass(frozen=True)
class Panel:
    """One plan's blocks placed on the slots."""

    names: tuple[str, ...]  #: the schemes (variants) that run this plan
    plan: dict  #: tailplan's plan
    tiling: dict  #: BM, BN, BK, blocks_per_sm of the plan's tiling
    sms: int
    bars: tuple[Bar, ...]

    @property
    def per_sm(self) -> int:
        return self.tiling["blocks_per_sm"]

    @property
    def slots(self) -> int:
        return self.sms * self.per_sm

    @property
    def step_time(self) -> int:
        """The count's time of one K-step of this tiling (a slot's share)."""
        return self.per_sm * self.tiling["BM"] * self.tiling["BN"]

    @property
    def makespan(self) -> int:
        """When the last block ends, in K-steps."""
        return max(b.start + b.steps for b in self.bars)

    @property
    def split(self) -> bool:
        """Split-K in slices: its blocks write the workspace, a second pass follows."""
        return self.plan["scheme"] == "split-k"

    @property
    def second_pass(self) -> float:
        """The second pass's length in this tiling's K-steps (0 without one)."""
        return self.plan.get("second_pass", 0.0) / self.step_time

    @property
    def finish(self) -> float:
        """When the product is done: the last block, then any second pass."""
        return self.makespan + self.second_pass

    def block_ends(self) -> list[int]:
        ends: dict[int, int] = {}
        for b in self.bars:
            ends[b.block] = max(ends.get(b.block, 0), b.start + b.steps)
        return [ends[block] for block in sorted(ends)]

    def busy(self) -> list[tuple[int, int]]:
        """(time, busy slots from then on) at each change, over all SMs."""
        change: dict[int, int] = {}
        for b in self.bars:
            change[b.start] = change.get(b.start, 0) + 1
            change[b.start + b.steps] = change.get(b.start + b.steps, 0) - 1
        level, out = 0, []
        for time in sorted(change):
            level += change[time]
            out.append((time, level))
        return out

    def rounds(self) -> list[int]:
        """Blocks started in each round, when every block is as long (else [])."""
        lengths = {end - start
                   for end, start in zip(self.block_ends(), self.block_starts(), strict=True)}
        if len(lengths) != 1:
            return []
        blocks = len(self.block_ends())
        return [min(self.slots, blocks - i) for i in range(0, blocks, self.slots)]

    def block_starts(self) -> list[int]:
        starts: dict[int, int] = {}
        for b in self.bars:
            starts[b.block] = min(starts.get(b.block, b.start), b.start)
        return [starts[block] for block in sorted(starts)]


def place(report: dict) -> tuple[Bar, ...]:
    """The segments of ``tailplan --segments`` placed on the slots: blocks in
    index order, each in the slot that is free first (the lower slot on a
    tie), its segments one after another in the order it runs them."""
    tiling = report[report["plan"]["tiling"]]
    slots = report["sms"] * tiling["blocks_per_sm"]
    free = [(0, slot) for slot in range(slots)]
    bars = []
    for block in report["blocks"]:
        time, slot = heapq.heappop(free)
        for seg in block["segments"]:
            steps = seg["end_step"] - seg["first_step"]
            bars.append(Bar(block["block"], slot, time, steps, seg["tile"], seg["turn"],
                            seg["turns"]))
            time += steps
        heapq.heappush(free, (time, slot))
    return tuple(bars)


def same_plan(a: dict, b: dict) -> bool:
    keys = ("tiling", "scheme", "slices", "blocks", "tiles", "steps")
    return all(a[k] == b[k] for k in keys)


def tail_panels(reports: list[tuple[str, dict]]) -> list[Panel]:
    """A panel per distinct plan, in the order given; schemes that run the
    same plan share one."""
    panels: list[Panel] = []
    for name, report in reports:
        for i, panel in enumerate(panels):
            if same_plan(panel.plan, report["plan"]):
                panels[i] = Panel((*panel.names, name), panel.plan, panel.tiling, panel.sms,
                                  panel.bars)
                break
        else:
            panels.append(Panel((name,), report["plan"], report[report["plan"]["tiling"]],
                                report["sms"], place(report)))
    return panels


@dataclass(frozen=True)
class TailRounds:
    gpu: str
    size: tuple[int, int, int]
    panels: tuple[Panel, ...]

    @property
    def sms(self) -> int:
        return self.panels[0].sms

    def sampled(self) -> list[int]:
        count = min(SAMPLED, self.sms)
        return [i * self.sms // count for i in range(count)]

    @property
    def span(self) -> float:
        """The longest panel, in the count's time."""
        return max(p.finish * p.step_time for p in self.panels)


def chapter_tail_rounds(repo_root: Path, build: Path, tool: Path, size: tuple[int, int, int],
                        schemes: list[str], gpu: str = "h200"
                        ) -> tuple[TailRounds | None, list[Path], results.ChapterResult | None]:
    """The TailRounds of ``schemes`` at ``size`` on ``gpu``, the files read,
    and the 13-tail result (None when not measured); None for TailRounds
    when the GPU has no result to take its SMs from."""
    found, read, result = tailplan.tail_gpu(repo_root, build, gpu)
    if found is None:
        return None, read, None
    if not schemes:
        raise AnalysisError("no schemes to draw")
    reports = [(s, tailplan.run_segments(tool, found, s, size)) for s in schemes]
    return TailRounds(found.name, size, tuple(tail_panels(reports))), [*read, tool], result


# -- Words ---------------------------------------------------------------------------


def tiling_words(panel: Panel) -> str:
    t = panel.tiling
    name = tailplan.TILING_WORDS[panel.plan["tiling"]]
    return f"{name} {t['BM']} {TIMES} {t['BN']}, {panel.per_sm} per SM"


def schedule_words(panel: Panel) -> str:
    """'1,152 blocks in 3 rounds of 396, the last 360' or
    '396 blocks of 558\u2013559 K-steps'."""
    blocks = panel.plan["blocks"]
    rounds = panel.rounds()
    if panel.plan["scheme"] == "stream-k" or not rounds:
        lengths = [end - start
                   for end, start in zip(panel.block_ends(), panel.block_starts(), strict=True)]
        low, high = min(lengths), max(lengths)
        spread = f"{low}" if low == high else f"{low}\u2013{high}"
        return f"{blocks:,} blocks of {spread} K-steps"
    if len(rounds) == 1:
        return f"{blocks:,} blocks in 1 round: {blocks} of {panel.slots} slots"
    last = f", the last {rounds[-1]}" if rounds[-1] != panel.slots else ""
    return f"{blocks:,} blocks in {len(rounds)} rounds of {panel.slots}{last}"


def title_words(panel: Panel, line: int | None = None) -> str:
    """The panel's title; each of its two lines wrapped at ``line``
    characters when given (the phone's drawing)."""
    plan = panel.plan
    names = " = ".join(panel.names)
    lines = [f"{names}: {tiling_words(panel)}, {tailplan.scheme_words(plan)}",
             f"{schedule_words(panel)}, {plan['steps']} K-steps per tile"]
    if line is not None:
        lines = [wrapped for words in lines for wrapped in textwrap.wrap(words, line)]
    return "\n".join(lines)


def alt_text(r: TailRounds) -> str:
    sampled = r.sampled()
    parts = []
    for p in r.panels:
        busy = 100 * sum(b.steps for b in p.bars) / (p.makespan * p.slots)
        second = (f", then a second pass of {p.second_pass:.1f} K-steps"
                  if p.second_pass else "")
        parts.append(f"{' = '.join(p.names)}: {tiling_words(p)}, "
                     f"{tailplan.scheme_words(p.plan)}, {schedule_words(p)}, the blocks done "
                     f"after {p.makespan} of its K-steps, the slots busy {busy:.0f}% of that "
                     f"time{second}")
    return (f"The blocks of a {tailplan.size_text(r.size)} product on the {r.sms} SMs of the "
            f"{r.gpu}, one panel per plan, time across on one scale: "
            + "; ".join(parts) + f". Each panel draws {len(sampled)} of the {r.sms} SMs, "
            f"evenly spaced ({', '.join(map(str, sampled))}), each as its slots, a bar per "
            "segment (blue: a tile's "
            "first turn, orange: a later turn that adds into C, green: a split-K slice written "
            "to the workspace, purple: split-K's second pass), and under them the busy "
            f"slots of all {r.sms} SMs.")


# -- Drawing -------------------------------------------------------------------------

LANE = 0.06
SM_GAP = 0.03
BUSY = 0.38
HEAD = 0.5
FOOT = 0.42
PANEL_GAP = 0.2
STRIP_GAP = 0.1


def _panel_height(r: TailRounds, panel: Panel) -> float:
    return len(r.sampled()) * (panel.per_sm * LANE + SM_GAP) - SM_GAP


def tail_rounds_figure(r: TailRounds, mode: str, phone: bool = False) -> MplFigure:
    """The figure of draw_tail_rounds (the tests measure it); the caller
    closes it. `phone`: the phone's drawing, narrow (PHONE_WIDTH)."""
    theme = THEMES[mode]
    ink, grid = theme["ink"], theme["grid"]
    text = PHONE_TEXT if phone else TEXT
    figure_w, label_w = (PHONE_WIDTH, PHONE_LABEL_W) if phone else (FIGURE_WIDTH, LABEL_W)
    sampled = r.sampled()
    mixed = len({p.plan["tiling"] for p in r.panels}) > 1
    turns = any(b.turns > 1 for p in r.panels if not p.split for b in p.bars)
    split = any(p.split for p in r.panels)
    entries = any(not p.split for p in r.panels) + turns + 2 * split + 1  # the legend's
    columns = 2 if phone else 3
    legend_h = (0.1 + 0.2 * -(-entries // columns) if phone
                else 0.4 if entries <= 3 else 0.65)
    titles = [title_words(p, PHONE_LINE if phone else None) for p in r.panels]
    heads = [HEAD if not phone else 0.12 + 0.19 * (t.count("\n") + 1) for t in titles]
    note = ""
    if mixed:
        steps = [f"a {tailplan.TILING_WORDS[k]} step takes {v:,}"
                 for k, v in sorted({(p.plan['tiling'], p.step_time) for p in r.panels})]
        note = ("Each panel's K-steps are its tiling's, as long as a full SM's:\n"
                + "; ".join(steps) + " (blocks per SM \u00d7 BM \u00d7 BN).")
        if phone:
            note = "\n".join(textwrap.wrap(note.replace("\n", " "), PHONE_LINE + 4))
    note_h = 0.0 if not note else 0.06 + 0.16 * (note.count("\n") + 1) if phone else 0.42
    total = (legend_h + sum(head + _panel_height(r, p) + STRIP_GAP + BUSY + FOOT
                            for head, p in zip(heads, r.panels, strict=True))
             + (len(r.panels) - 1) * PANEL_GAP + note_h)
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(figure_w, total))
        figure.set_gid("tail-rounds")
        width = (figure_w - label_w - 0.2) / figure_w
        top = total - legend_h
        for index, (panel, head, words) in enumerate(zip(r.panels, heads, titles, strict=True)):
            limit = r.span / panel.step_time
            gantt_h = _panel_height(r, panel)
            y0 = top - head - gantt_h
            axes = figure.add_axes((label_w / figure_w, y0 / total, width, gantt_h / total))
            axes.set_gid(f"tail-panel-{index}")
            _draw_gantt(axes, panel, sampled, limit, ink, grid, text)
            # On a phone the title starts at the figure's left edge, over
            # the labels, for room.
            left = -(label_w - 0.05) / (width * figure_w) if phone else 0
            title = axes.text(left, 1, words, transform=axes.transAxes, va="bottom",
                              fontsize=text, color=ink, linespacing=1.3)
            title.set_gid("tail-title")
            title.set_y(1 + 0.07 / gantt_h)
            busy_y = y0 - STRIP_GAP - BUSY
            strip = figure.add_axes((label_w / figure_w, busy_y / total, width,
                                     BUSY / total))
            strip.set_gid(f"tail-busy-{index}")
            _draw_busy(strip, panel, limit, ink, grid, r.sms, text)
            top = busy_y - FOOT - PANEL_GAP
        handles = []
        if any(not p.split for p in r.panels):
            handles.append(Patch(fc=TURN_COLOURS[0], alpha=0.85, label="turn 0: writes its tile"))
        if turns:
            handles.append(Patch(fc=TURN_COLOURS[1], alpha=0.85,
                                 label="a later turn: adds into C"))
        if split:
            handles.append(Patch(fc=SLICE_COLOUR, alpha=0.85, label="a slice: to the workspace"))
            handles.append(Patch(fc=PASS_COLOUR, alpha=0.6, label="second pass"))
        handles.append(Patch(fc="none", ec=grid, label="idle"))
        anchor = 0.05 / figure_w if phone else label_w / figure_w - 0.01
        legend(figure, theme, handles=handles, loc="upper left", ncol=min(len(handles), columns),
               fontsize=text - 0.5, bbox_to_anchor=(anchor, 1.0), handlelength=1.2)
        if note:
            figure.text(0.05 / figure_w if phone else label_w / figure_w, 0.02 / total, note,
                        fontsize=text - 1.5, color=ink, va="bottom", linespacing=1.3)
        return figure


def _draw_gantt(axes: Axes, panel: Panel, sampled: list[int], limit: float, ink: str, grid: str,
                text: float = TEXT) -> None:
    row_of = {sm: i for i, sm in enumerate(sampled)}
    band = panel.per_sm * LANE
    pitch = band + SM_GAP
    axes.set_xlim(0, limit)
    axes.set_ylim(len(sampled) * pitch - SM_GAP, 0)
    axes.set_facecolor("none")
    for spine in axes.spines.values():
        spine.set_visible(False)
    for row in row_of.values():
        outline = Rectangle((0, row * pitch), panel.makespan, band, fc="none", ec=grid,
                            lw=0.6)
        outline.set_gid("tail-sm")
        axes.add_patch(outline)
        if panel.second_pass:
            second = Rectangle((panel.makespan, row * pitch), panel.second_pass, band,
                               fc=to_rgba(PASS_COLOUR, 0.6), ec=ink, lw=0.25)
            second.set_gid("tail-second-pass")
            axes.add_patch(second)
    for b in panel.bars:
        sm, slot_lane = b.slot % panel.sms, b.slot // panel.sms
        if sm not in row_of:
            continue
        colour = SLICE_COLOUR if panel.split else TURN_COLOURS[0 if b.turn == 0 else 1]
        bar = Rectangle((b.start, row_of[sm] * pitch + slot_lane * LANE), b.steps, LANE,
                        fc=to_rgba(colour, 0.85 if b.tile % 2 == 0 else 0.5), ec=ink, lw=0.25)
        bar.set_gid("tail-segment")
        axes.add_patch(bar)
    axes.set_xticks([])
    axes.set_yticks([band / 2, (len(sampled) - 1) * pitch + band / 2])
    axes.set_yticklabels([f"SM {sampled[0]}", f"SM {sampled[-1]}"])
    axes.tick_params(axis="y", length=0, colors=ink, labelsize=text - 1.5)


def _draw_busy(axes: Axes, panel: Panel, limit: float, ink: str, grid: str, sms: int,
               text: float = TEXT) -> None:
    steps = panel.busy()
    xs = [t for t, _ in steps]
    ys = [level for _, level in steps]
    axes.fill_between(xs, ys, step="post", color=TURN_COLOURS[0], alpha=0.45, lw=0,
                      gid="tail-busy")
    axes.step(xs, ys, where="post", color=TURN_COLOURS[0], lw=1)
    if panel.second_pass:
        axes.fill_between([panel.makespan, panel.finish], [panel.slots] * 2, step="post",
                          color=PASS_COLOUR, alpha=0.45, lw=0, gid="tail-busy-second-pass")
    axes.axhline(panel.slots, color=grid, lw=0.8, ls="--")
    axes.set_xlim(0, limit)
    axes.set_ylim(0, panel.slots * 1.05)
    axes.set_facecolor("none")
    for name, spine in axes.spines.items():
        spine.set_visible(name == "bottom")
        spine.set_color(grid)
    axes.set_yticks([0, panel.slots])
    axes.set_yticklabels(["0", f"{panel.slots}"])
    axes.tick_params(colors=ink, labelsize=text - 1.5)
    axes.set_ylabel(f"busy slots,\nall {sms} SMs", rotation=0, ha="right", va="center",
                    color=ink, fontsize=text - 1.5, labelpad=4)
    axes.set_xlabel(f"K-steps of {tailplan.TILING_WORDS[panel.plan['tiling']]}", color=ink,
                    fontsize=text - 1, labelpad=2)


def draw_tail_rounds(r: TailRounds, mode: str, phone: bool = False) -> bytes:
    """The figure as SVG for the page mode ``mode``; `phone`, its narrow
    drawing for a phone's column."""
    with plt.rc_context(RC):
        return svg(tail_rounds_figure(r, mode, phone))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """Shrunk to a phone's column its text would be 7 px high: a phone has
    a narrow drawing of its own."""
    size = tailplan.parse_size(request.arguments[0])
    gpu = request.options["gpu"]
    found, read, result = chapter_tail_rounds(
        context.repo_root, context.build_dir, context.tool("tailplan"), size,
        request.options["schemes"].split(), gpu)
    read = [*read, results.chapter_result_path(context.results_root, gpu, tailplan.CHAPTER)]
    if found is None:
        return Drawn([], f"No rounds: {gpu} has no result to take its SMs from.", read)
    caption = request.caption_or(
        f"The blocks of chapter 13 at {tailplan.size_text(size)} over the SMs.")
    return Drawn([Drawing(lambda mode: tail_rounds_figure(found, mode), alt_text(found),
                          caption,
                          phone=lambda mode: tail_rounds_figure(found, mode, phone=True))],
                 read=read, used=[result] if result is not None else [])


def _schemes(text: str) -> str:
    unknown = set(text.split()) - set(tailplan.SCHEMES)
    if unknown:
        raise ValueError(f"{', '.join(sorted(unknown))}: not among {', '.join(tailplan.SCHEMES)}")
    return text


FIGURE = Figure("tail-rounds", "chapter 13's blocks over the SMs at one size, a panel per "
                "scheme", load, arguments=(1, 1),
                argument="N or MxNxK, e.g. 3072 or 512x512x16384",
                options={"schemes": Option("the schemes, a panel each, separated by spaces",
                                           _schemes, "tiles split-k stream-k"),
                         "gpu": GPU})
