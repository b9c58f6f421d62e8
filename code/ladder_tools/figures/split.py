"""Chapter 17's split of A and B for 3xTF32 on wgmma ({ladder-split}).

The data: a 3xTF32 variant's ``--describe`` constants (BM, BN, BK,
COPY_FLOATS, PRODUCTS, A_TILES, SUM_STEPS, ROUNDED, CORRECTION_STAGES),
turned by split_of() into a Split. What the kernel does (chapters/16-wgmma:
convert_a, convert_four, truncated_small, sgemm_wgmma's producer,
consume_3xtf32):

- convert_a() passes over all of A once, before the product, and writes
  small (what A's big part leaves out, times 2^10; 0 where A is not
  finite); ROUNDED, it writes big too, A rounded to TF32, which the copies
  then bring in A's place. Truncated, A itself is big: wgmma drops the low
  13 bits of what it reads;
- a stage (A_TILES = 2 tiles of A) holds A's tile (BM x BK floats, or
  big's), B's (BK x BN), then small's tile of A, COPY_FLOATS floats in all;
- each consumer lane loads its fragment of B^T from B's tile and splits it
  in registers (chapter 14's split_tf32()) into big_B and small_B;
- per step of 8 along K, three wgmma: corrections += small_B * A,
  corrections += big_B * small, sum += big_B * A, where A's tile is A's big
  part (A truncated by wgmma, or A rounded). There is no big_finite: where
  A or B holds an infinity or NaN, big * big holds it too, so that sum is
  not finite, keeps no correction and is computed again in FP32;
- every SUM_STEPS steps an FP32 addition adds sum into d; every
  CORRECTION_STAGES K-steps, and at the end, an FFMA adds corrections
  times 2^-10.

CORRECTION_STAGES is kCorrectionStages (chapters/16-wgmma/pipeline.cuh), which
--describe reports for every 3xTF32 tiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from ladder_tools.analysis.binaries import AnalysisError, describe, find_variant
from ladder_tools.figures import ring
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.text import Text

TEXT = 10.5
TITLE = 11.5
BYTES_PER_FLOAT = 4
#: What small parts are scaled by (kSmallScale, 2^10), as an exponent.
SCALE_EXPONENT = 10
TIMES = "\u00d7"
DOT = "\u00b7"
NEEDED = ("BM", "BN", "BK", "COPY_FLOATS", "PRODUCTS", "A_TILES", "SUM_STEPS", "ROUNDED",
          "CORRECTION_STAGES")
WIDTH = 5.4  # inches
#: The fills of A's own tile (its big part), B's, and A's small part.
FILLS = {"A": (GPU_COLOURS[0], 0.55), "B": (GPU_COLOURS[1], 0.5),
         "small": (GPU_COLOURS[2], 0.5)}


@dataclass(frozen=True)
class Split:
    chapter: str
    bm: int
    bn: int
    bk: int
    copy_floats: int
    sum_steps: int
    rounded: bool
    correction_stages: int

    @property
    def steps(self) -> int:
        """Steps of 8 along K in one stage."""
        return self.bk // 8

    def tiles(self) -> list[tuple[str, str, int]]:
        """A stage's tiles in the order the copies put them: (key, name,
        floats)."""
        a = self.bm * self.bk
        return [("A", "A rounded" if self.rounded else "A", a),
                ("B", "B", self.bk * self.bn),
                ("small", f"A small {TIMES}2\u00b9\u2070", a)]

    def tile_shapes(self) -> dict[str, tuple[int, int]]:
        return {"A": (self.bm, self.bk), "B": (self.bk, self.bn),
                "small": (self.bm, self.bk)}

    @property
    def stage_bytes(self) -> int:
        return self.copy_floats * BYTES_PER_FLOAT

    @property
    def parts(self) -> list[str]:
        """The arrays convert_a() writes: A's small part, and A rounded (big)
        where rounded; truncated, A itself is big."""
        return ["small", *(["big"] if self.rounded else [])]

    def products(self) -> list[tuple[str, str, str]]:
        """Each step's three wgmma, in the kernel's order: (accumulator,
        B's part, A's tile). A's own tile is A's big part in the first and
        the last."""
        return [("corrections", "small_B", "A"),
                ("corrections", "big_B", "small"),
                ("sum", "big_B", "A")]


def split_of(chapter: str, constants: dict) -> Split:
    missing = [n for n in NEEDED if n not in constants]
    if missing:
        raise AnalysisError(f"{chapter}: its --describe constants have no {', '.join(missing)}")
    c = constants
    if c["PRODUCTS"] != 3:
        raise AnalysisError(f"{chapter}: PRODUCTS = {c['PRODUCTS']}; only 3xTF32 splits A")
    p = ring.pipeline_of(chapter, {**c, "STAGES": max(c.get("STAGES", 2), 2),
                                       "STAGE_FLOATS": c.get("STAGE_FLOATS", c["COPY_FLOATS"]),
                                       "CONSUMERS": c.get("CONSUMERS", 2),
                                       "WARPGROUP": c.get("WARPGROUP", 128)})
    if c["BK"] % 8 or (c["BK"] // 8) % c["SUM_STEPS"]:
        raise AnalysisError(f"{chapter}: SUM_STEPS = {c['SUM_STEPS']} does not divide a "
                            f"stage's {c['BK'] // 8} steps of 8")
    return Split(chapter, p.bm, p.bn, p.bk, p.copy_floats, c["SUM_STEPS"], bool(c["ROUNDED"]),
                 c["CORRECTION_STAGES"])


def chapter_split(repo_root: Path, build: Path, slug: str) -> tuple[Split, list[Path]]:
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    return split_of(slug, variant["constants"]), [path, *sources]


def tile_words(s: Split, key: str, floats: int) -> str:
    rows, columns = s.tile_shapes()[key]
    return f"{rows}{TIMES}{columns}{TIMES}4\n= {floats * BYTES_PER_FLOAT:,} B"


def sum_words(s: Split) -> str:
    per_stage = s.steps // s.sum_steps
    times = "once a K-step" if per_stage == 1 else f"{per_stage} times a K-step"
    return f"every {s.sum_steps} steps ({times}): d += sum, in FP32"


def correction_words(s: Split) -> str:
    return (f"every {s.correction_stages} K-steps ({s.correction_stages * s.bk} along K) and at "
            f"the end:\nd = fma(corrections, 2\u207b\u00b9\u2070, d)")


def title_words(s: Split) -> str:
    a = "A rounded and split" if s.rounded else "A split"
    return (f"{a} once, B in registers,\n"
            f"three wgmma a step of 8 along K")


def alt_text(s: Split) -> str:
    tiles = ", ".join(f"{name} ({floats * BYTES_PER_FLOAT:,} bytes)"
                      for _, name, floats in s.tiles())
    big = ("and A rounded to TF32 (big), which the copies bring in A's place" if s.rounded else
           "and nothing for A's big part: wgmma reads A itself and drops its low 13 bits")
    a_tile = "A rounded" if s.rounded else "A's tile, read truncated"
    return (f"Before the product, convert_a() passes over all of A in global memory once and "
            f"writes small, what A's big part leaves out times 2^{SCALE_EXPONENT} (0 where A "
            f"is not finite), {big}. One shared-memory stage of {s.stage_bytes:,} bytes holds, "
            f"in order, {tiles}. Each consumer lane loads its fragment of B transposed from "
            "B's tile into registers and splits it with split_tf32() into big_B and small_B. "
            f"Each of a stage's {s.steps} steps of 8 along K issues three wgmma: corrections "
            f"+= small_B times {a_tile} (A's big part), corrections += big_B times small, and "
            f"sum += big_B times {a_tile}. No big_finite part: where A or B holds an infinity "
            "or NaN, big times big holds it too, so that sum is not finite, keeps no "
            "correction and is computed again in FP32. "
            f"{sum_words(s)[0].upper()}{sum_words(s)[1:]}; "
            f"{correction_words(s).replace(chr(10), ' ')}.")


def caption_words(s: Split) -> str:
    return (f"The split: A's small part is written once in global memory, B is split in "
            f"registers; a stage of {s.stage_bytes:,} bytes, and the three wgmma of each step "
            "of 8 with the sums they write.")


def split_figure(s: Split, mode: str) -> MplFigure:
    theme = THEMES[mode]
    ink = theme["ink"]
    height = 8.25
    with plt.rc_context(RC):
        figure = plt.figure(figsize=(WIDTH, height))
        figure.set_gid(f"split-{s.chapter}")
        axes = figure.add_axes((0, 0, 1, 1))
        axes.set_gid("split")
        axes.set_axis_off()
        axes.set_xlim(0, WIDTH)
        axes.set_ylim(height, 0)  # inches, down

        def text(x: float, y: float, words: str, gid: str | None = None,
                 **options: Any) -> Text:
            drawn = axes.text(x, y, words, fontsize=options.pop("fontsize", TEXT), color=ink,
                              **{"ha": "center", "va": "center", "linespacing": 1.2, **options})
            if gid:
                drawn.set_gid(gid)
            return drawn

        def box(x0: float, y0: float, w: float, h: float, key: str, gid: str, words: str,
                fill: bool = True) -> Rectangle:
            colour, alpha = FILLS.get(key, (theme["grid"], 0.4))
            patch = Rectangle((x0, y0), w, h, fc=colour if fill else "none",
                              alpha=alpha if fill else 1, ec=ink if not fill else "none",
                              lw=0.8)
            patch.set_gid(gid)
            axes.add_patch(patch)
            text(x0 + w / 2, y0 + h / 2, words, gid=f"{gid}-words")
            return patch

        def arrow(gid: str, start: tuple[float, float], end: tuple[float, float],
                  words: str | None = None, side: str = "right") -> FancyArrowPatch:
            drawn = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, lw=1.1,
                                    color=ink, shrinkA=1, shrinkB=1)
            drawn.set_gid(gid)
            axes.add_patch(drawn)
            if words:
                mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
                text(mx + (0.08 if side == "right" else -0.08), my, words,
                     ha="left" if side == "right" else "right", gid=f"{gid}-words")
            return drawn

        def heading(y: float, words: str, gid: str) -> None:
            text(0.05, y, words, ha="left", va="bottom", fontweight="bold", gid=gid)
            axes.plot([0.05, WIDTH - 0.05], [y + 0.03, y + 0.03], color=theme["grid"], lw=0.8)

        text(WIDTH / 2, 0.08, title_words(s), va="top", fontsize=TITLE, gid="title")
        # 1. Global memory: what convert_a() writes of A, once.
        heading(0.95, "global memory, once before the product", "head-global")
        box(0.05, 1.1, 1.0, 0.4, "A", "global-A", f"A, M {TIMES} K")
        arrow("convert-a", (1.05, 1.3), (1.95, 1.3))
        text(1.5, 1.24, "convert_a()", va="bottom", gid="convert-a-words")
        part_keys = {"small": "small", "big": "A"}
        x = 2.0
        w = min((WIDTH - 0.05 - x) / len(s.parts) - 0.05, 1.6)
        for part in s.parts:
            box(x, 1.1, w, 0.4, part_keys[part], f"global-{part}", part)
            x += w + 0.05
        big = "rounded" if s.rounded else "truncated"
        text(0.15, 1.75, f"big = A {big} to TF32"
             + (": copied in A's place" if s.rounded else ": what wgmma reads of A itself"),
             ha="left", gid="big-words")
        text(0.15, 2.02, f"small = (A \u2212 big) {TIMES} 2\u00b9\u2070, 0 where A is not "
             "finite", ha="left", gid="small-words")
        # 2. One stage in shared memory, its tiles in the copies' order.
        heading(2.5, f"one stage in shared memory: {s.stage_bytes:,} bytes", "head-stage")
        tiles = s.tiles()
        total = sum(floats for _, _, floats in tiles)
        xs, x = {}, 0.05
        for key, name, floats in tiles:
            w = (WIDTH - 0.1) * floats / total
            xs[key] = (x, w)
            box(x + 0.02, 2.65, w - 0.04, 0.95, key, f"tile-{key}",
                f"{name}\n{tile_words(s, key, floats)}")
            x += w
        # 3. A lane's B fragment, split in registers.
        text(WIDTH - 0.05, 3.9, "registers, each consumer lane", ha="right", va="bottom",
             fontweight="bold", gid="head-registers")
        bx, bw = xs["B"]
        cx = bx + bw / 2
        arrow("loads-B", (cx, 3.6), (cx, 4.02))
        box(cx - 0.85, 4.04, 1.7, 0.4, "B", "fragment", "B\u1d40 fragment, 4 floats")
        arrow("split-b", (cx, 4.44), (cx, 4.86))
        text(cx + 0.08, 4.65, "split_tf32()", ha="left", gid="split-b-words")
        box(cx - 1.3, 4.88, 1.2, 0.4, "B", "big-B", "big_B")
        box(cx + 0.1, 4.88, 1.2, 0.4, "B", "small-B", f"small_B {TIMES}2\u00b9\u2070")
        # 4. Per step of 8 along K: three wgmma.
        heading(5.7, f"each step of 8 along K ({s.steps} a K-step): three wgmma", "head-wgmma")
        # A's own tile, in the first product and the last: A's big part.
        names = {"A": "A rounded: its big part" if s.rounded else "A, read truncated: its big part",
                 "small": "small"}
        for i, (target, b_part, a_tile) in enumerate(s.products()):
            y = 5.85 + 0.38 * i
            text(0.15, y + 0.16, target, ha="left", gid=f"product-{i}-target")
            text(1.3, y + 0.16, "+=", gid=f"product-{i}-op")
            text(1.5, y + 0.16, b_part, ha="left", gid=f"product-{i}-b")
            text(2.3, y + 0.16, DOT, gid=f"product-{i}-dot")
            colour, alpha = FILLS[a_tile]
            chip = Rectangle((2.42, y + 0.01), WIDTH - 0.05 - 2.42, 0.3, fc=colour,
                             alpha=alpha, ec="none")
            chip.set_gid(f"product-{i}-a-tile")
            axes.add_patch(chip)
            text(2.5, y + 0.16, names[a_tile], ha="left", gid=f"product-{i}-a")
        # 5. Into d.
        heading(7.3, "into the accumulators d", "head-d")
        text(0.15, 7.5, sum_words(s), ha="left", gid="sum-words")
        text(0.15, 7.84, correction_words(s), ha="left", gid="correction-words")
        return figure


def draw_split(s: Split, mode: str) -> bytes:
    with plt.rc_context(RC):
        return svg(split_figure(s, mode))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    found, read = chapter_split(context.repo_root, context.build_dir, request.arguments[0])
    return Drawn([Drawing(lambda mode: split_figure(found, mode), alt_text(found),
                          request.caption_or(caption_words(found)))], read=read)


FIGURE = Figure("split", "chapter 17's split of A and B and each step's three wgmma", load,
                arguments=(1, 1), argument="a 3xTF32 result name, e.g. 17-3xtf32-wgmma")
