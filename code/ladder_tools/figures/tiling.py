"""Which part of C a block, a warp and a thread own ({ladder-tiling}).

The data: a chapter's tile constants as its binary's ``--describe`` reports
them (ladder_tools.analysis.binaries), turned by tiling_of() into a Tiling: the block
tile of C, and for each thread the rectangles of it that the thread computes,
by the same arithmetic as the kernel's thread-map functions. What is drawn
follows from which constants the chapter has:

- WM and WN (warp tiling): the block tile in warp tiles, and one warp tile
  magnified, in its WMITER x WNITER sub-tiles of WSUBM x WSUBN, each cut in
  the lanes' TM x TN blocks; one thread's blocks (one per sub-tile) marked;
- WM, WN and MMA_M, MMA_N (the tensor cores, Part II): the same, the
  sub-tiles being the MI x NI mma tiles of MMA_M x MMA_N, in which each lane
  holds the elements of C that its accumulators hold: which, the chapter's
  own c_frag_row and c_frag_col say, through build/bin/fragmap;
- WARPGROUP and CONSUMERS (Hopper's wgmma, chapter 16): the block tile in
  the consumer warps' columns (the producer's warps own none of C), each
  warp's columns where the chapter's c_col puts them (build/bin/fragmap's
  tile "C16", or "C16.in-order" where the constants say SPREAD 0): spread,
  warps 2i and 2i + 1 share a copy box in stripes; in order, each warp's 16
  columns side by side. The columns the marked warp shares with the warps
  beside it (its copy box, or its own 16) magnified for their first 16 rows,
  in the 8-row pieces its accumulators repeat in, each lane's elements as
  c_row and c_col put them;
- BM, BN and TM (TN, or 1): the block tile in the threads' TM x TN results,
  the warps (32 consecutive threads) outlined;
- BLOCK only: one element per thread, and the way a warp's 32 lanes walk C:
  down a column or along a row, as build/bin/warpmap computes the warp's
  store to C with the chapter's own index functions (``chNN.c-store``),
  since that is the coalescing lesson of chapters 01 and 02.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection
from matplotlib.patches import ConnectionPatch, Patch, Rectangle

from ladder_tools.analysis.binaries import AnalysisError, describe, find_variant, require_binary
from ladder_tools.analysis.fragmap import run_fragmap, tile
from ladder_tools.analysis.warpmap import run_warpmap
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, svg

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

#: The warp and thread that are marked: warp 1, and its lane 9 (thread 41),
#: which is off the block's first row and column in every chapter.
MARKED_WARP = 1
MARKED_LANE = 9

WARP_COLOUR = GPU_COLOURS[0]
THREAD_COLOUR = GPU_COLOURS[1]
#: Text sizes in points. The page shows the figure at its natural width
#: (natural_width_px) where the column is wide enough, so the text is the size
#: of the prose; a phone shrinks it to the column (about 0.7 times at 390 px),
#: and the figure is narrow (5.2 in) so that it stays readable there.
TEXT = 12.5
TITLE = 13
FIGURE_WIDTH = 5.2


class TilingError(ValueError):
    """The constants do not describe a tiling this figure can draw."""


Rect = tuple[int, int, int, int]  # first row, first column, rows, columns
#: Each lane's (row, column) elements of an mma tile of C (c_fragment()).
Fragment = Sequence[Sequence[tuple[int, int]]]
#: A run of neighbouring columns: first column, columns.
Run = tuple[int, int]


@dataclass(frozen=True)
class Tiling:
    """One chapter's split of C, in elements of C, inside one block tile."""

    chapter: str
    bm: int
    bn: int
    tm: int
    tn: int
    threads: int
    #: The names of the block tile's sides in the chapter's constants.
    names: tuple[str, str] = ("BM", "BN")
    warp_size: int = 32
    #: Warp tiling: (WM, WN, WMITER, WNITER); None without.
    warp_tile: tuple[int, int, int, int] | None = None
    #: Without warp tiling, whether consecutive threads walk along a row of
    #: the block tile ("row") or down a column ("column").
    walk: str = "row"
    constants: dict = field(default_factory=dict)
    #: The tensor cores: (MMA_M, MMA_N), the shape of one mma tile of C, and
    #: for each lane the (row, column) of the tile that its accumulators
    #: hold; None for the FMA chapters.
    mma: tuple[int, int] | None = None
    fragment: tuple[tuple[tuple[int, int], ...], ...] | None = None
    #: Warps before the first that computes C (chapter 16's producer
    #: warpgroup), and whether the mma tiles are pieces of wgmma's
    #: accumulators rather than mma.sync tiles.
    idle_warps: int = 0
    wgmma: bool = False
    #: wgmma: for each warp that computes C, each lane's (row, column)
    #: elements of the block tile's first mma[0] rows, which its
    #: accumulators repeat down the tile (fragment is the marked warp's).
    warp_fragments: tuple[tuple[tuple[tuple[int, int], ...], ...], ...] | None = None

    @property
    def warps(self) -> int:
        return self.threads // self.warp_size

    @property
    def marked_warp(self) -> int:
        """The warp drawn marked: warp MARKED_WARP of those that compute C."""
        return self.idle_warps + MARKED_WARP

    @property
    def marked_thread(self) -> int:
        return self.marked_warp * self.warp_size + MARKED_LANE

    @property
    def computing_warps(self) -> range:
        """The warps that compute elements of C."""
        return range(self.idle_warps, self.warps)

    @property
    def lanes_n(self) -> int:
        """Lanes side by side across a sub-tile (warp tiling)."""
        assert self.warp_tile is not None
        wm, wn, wmiter, wniter = self.warp_tile
        return (wn // wniter) // self.tn

    def owned(self, tid: int) -> list[Rect]:
        """The rectangles of the block tile that thread ``tid`` computes, by
        the kernel's thread map (thread_row / thread_col, lane_row /
        lane_col) (chapter 16: c_row and c_col, through warp_fragments)."""
        if self.wgmma:
            assert self.warp_fragments is not None and self.mma is not None
            warp, lane = divmod(tid, self.warp_size)
            warp -= self.idle_warps
            if warp < 0:
                return []
            return [(i * self.mma[0] + row, col, rows, cols)
                    for i in range(self.bm // self.mma[0])
                    for row, col, rows, cols in _runs(self.warp_fragments[warp][lane])]
        if self.mma is not None:
            # A tensor-core tiling has its warp tile and its lanes' fragment.
            assert self.warp_tile is not None and self.fragment is not None
            wm, wn, mi_count, ni_count = self.warp_tile
            warp, lane = divmod(tid, self.warp_size)
            warp -= self.idle_warps
            if warp < 0:
                return []
            warp_row, warp_col = divmod(warp, self.bn // wn)
            return [(warp_row * wm + mi * self.mma[0] + row, warp_col * wn + ni * self.mma[1]
                     + col, rows, cols)
                    for mi in range(mi_count) for ni in range(ni_count)
                    for row, col, rows, cols in _runs(self.fragment[lane])]
        if self.warp_tile is not None:
            wm, wn, wmiter, wniter = self.warp_tile
            warp, lane = divmod(tid, self.warp_size)
            warp_row, warp_col = divmod(warp, self.bn // wn)
            lane_row, lane_col = divmod(lane, self.lanes_n)
            return [(warp_row * wm + i * (wm // wmiter) + lane_row * self.tm,
                     warp_col * wn + j * (wn // wniter) + lane_col * self.tn, self.tm, self.tn)
                    for i in range(wmiter) for j in range(wniter)]
        if self.walk == "column":
            col, row = divmod(tid, self.bm // self.tm)
        else:
            row, col = divmod(tid, self.bn // self.tn)
        return [(row * self.tm, col * self.tn, self.tm, self.tn)]

    def warp_rect(self, warp: int) -> Rect:
        """The rectangle that bounds warp ``warp``'s threads' results."""
        rects = [r for lane in range(self.warp_size)
                 for r in self.owned(warp * self.warp_size + lane)]
        top, left = min(r[0] for r in rects), min(r[1] for r in rects)
        bottom, right = max(r[0] + r[2] for r in rects), max(r[1] + r[3] for r in rects)
        return top, left, bottom - top, right - left

    def warp_columns(self, warp: int) -> list[Run]:
        """The runs of neighbouring columns that warp ``warp``'s threads'
        results fill (all of them, for all BM rows, on a wgmma tiling)."""
        columns = sorted({c for lane in range(self.warp_size)
                          for _, col, _, cols in self.owned(warp * self.warp_size + lane)
                          for c in range(col, col + cols)})
        runs: list[Run] = []
        for c in columns:
            if runs and sum(runs[-1]) == c:
                runs[-1] = (runs[-1][0], runs[-1][1] + 1)
            else:
                runs.append((c, 1))
        return runs

    def zoom_columns(self) -> Run:
        """The columns magnified on a wgmma tiling: the fewest neighbouring
        columns that hold the marked warp's and are whole warps' columns (its
        own 16 in order; spread, the copy box it shares with its partner)."""
        runs = {warp: self.warp_columns(warp) for warp in self.computing_warps}
        first = min(c for c, _ in runs[self.marked_warp])
        end = max(c + n for c, n in runs[self.marked_warp])
        grown = True
        while grown:
            grown = False
            for warp_runs in runs.values():
                lo, hi = min(c for c, _ in warp_runs), max(c + n for c, n in warp_runs)
                if lo < end and hi > first and (lo < first or hi > end):
                    first, end, grown = min(first, lo), max(end, hi), True
        return first, end - first

    def zoomed_runs(self) -> list[tuple[int, Run]]:
        """(warp, run) of each warp's columns inside zoom_columns(), left to
        right."""
        first, width = self.zoom_columns()
        return sorted(((warp, run) for warp in self.computing_warps
                       for run in self.warp_columns(warp)
                       if first <= run[0] < first + width), key=lambda found: found[1])

    def check(self) -> None:
        """Every element of the block tile is computed by exactly one thread,
        and each warp's results fill its bounding rectangle."""
        owners: dict[tuple[int, int], int] = {}
        for tid in range(self.threads):
            for row, col, rows, cols in self.owned(tid):
                for r in range(row, row + rows):
                    for c in range(col, col + cols):
                        if not (0 <= r < self.bm and 0 <= c < self.bn):
                            raise TilingError(f"{self.chapter}: thread {tid} owns ({r}, {c}), "
                                              f"outside the {self.bm} x {self.bn} block tile")
                        if (r, c) in owners:
                            raise TilingError(f"{self.chapter}: threads {owners[(r, c)]} and "
                                              f"{tid} both own ({r}, {c})")
                        owners[(r, c)] = tid
        if len(owners) != self.bm * self.bn:
            raise TilingError(f"{self.chapter}: {self.threads} threads of {self.tm} x {self.tn} "
                              f"leave part of the {self.bm} x {self.bn} block tile to no one")
        if self.warp_tile is None:
            for warp in range(self.warps):
                _, _, rows, cols = self.warp_rect(warp)
                if rows * cols != self.warp_size * self.tm * self.tn:
                    raise TilingError(f"{self.chapter}: warp {warp}'s results are not a "
                                      "rectangle")


def _runs(elements: Iterable[tuple[int, int]]) -> list[Rect]:
    """A lane's elements of an mma tile as rectangles: each run of
    neighbouring columns in one row ((2, 2), (2, 3) -> (2, 2, 1, 2))."""
    rects: list[Rect] = []
    for row, col in sorted(elements):
        if rects and rects[-1][0] == row and rects[-1][1] + rects[-1][3] == col:
            rects[-1] = (row, rects[-1][1], 1, rects[-1][3] + 1)
        else:
            rects.append((row, col, 1, 1))
    return rects


def lane_walk(store: dict) -> str:
    """How the lanes of a warp walk the block tile, from warpmap's report of
    the warp's store to C: "column" when its 32 lanes write one column
    (chapter 01), "row" when they move along a row."""
    lanes = store["lanes"]
    if len({lane["col"] for lane in lanes}) == 1 and len({lane["row"] for lane in lanes}) > 1:
        return "column"
    return "row"


def chapter_walk(tool: Path, chapter: str) -> str:
    """lane_walk() of the chapter's store to C (warpmap's ``chNN.c-store``)."""
    [store] = run_warpmap(tool, [f"ch{chapter[:2]}.c-store"])
    return lane_walk(store)


def needs_walk(constants: dict) -> bool:
    """Whether tiling_of() needs the lanes' walk: a block of one element per
    thread with no flat thread index (NUM_THREADS) or warp tile."""
    return not ("BM" in constants or "WM" in constants or "NUM_THREADS" in constants)


def tiling_of(chapter: str, constants: dict, threads_per_block: int | None = None,
              walk: str | None = None, fragment: Fragment | None = None,
              warp_fragments: Sequence[Fragment] | None = None) -> Tiling:
    """The Tiling that a chapter's --describe constants describe (``walk``,
    lane_walk()'s "row" or "column", is needed only where needs_walk();
    ``fragment``, each lane's elements of an mma tile of C, only for a
    chapter with MMA_M and MMA_N; ``warp_fragments``, each consumer warp's
    lanes' elements of the block tile's first rows, only for one with
    WARPGROUP and CONSUMERS)."""
    c = constants
    if "BM" in c and "BN" in c:
        bm, bn, names = c["BM"], c["BN"], ("BM", "BN")
    elif "BLOCK" in c:
        bm = bn = c["BLOCK"]
        names = ("BLOCK", "BLOCK")
    else:
        raise TilingError(f"{chapter}: its constants have neither BM and BN nor BLOCK: "
                          f"{sorted(c)}")
    tm, tn = c.get("TM", 1), c.get("TN", 1)
    threads = c.get("NUM_THREADS") or threads_per_block
    if not threads:
        raise TilingError(f"{chapter}: no NUM_THREADS and no threads per block")
    warp_size = c.get("WARP_SIZE", 32)
    if "WARPGROUP" in c and "CONSUMERS" in c:
        return _wgmma_tiling(chapter, c, bm, bn, names, threads, warp_size, warp_fragments)
    if "MMA_M" in c and "MMA_N" in c and "WM" in c and "WN" in c:
        if fragment is None or len(fragment) != warp_size:
            raise TilingError(f"{chapter}: an mma tiling needs each lane's elements of C")
        shapes = {(rows, cols) for lane in fragment for _, _, rows, cols in _runs(lane)}
        if len(shapes) != 1:
            raise TilingError(f"{chapter}: the lanes' pieces of an mma tile differ in shape")
        (tm, tn), = shapes
        mma = (c["MMA_M"], c["MMA_N"])
        tiling = Tiling(chapter, bm, bn, tm, tn, threads, names, warp_size,
                        (c["WM"], c["WN"], c["WM"] // mma[0], c["WN"] // mma[1]), "row",
                        dict(c), mma, tuple(tuple(lane) for lane in fragment))
        tiling.check()
        return tiling
    warp_tile = None
    if "WM" in c and "WN" in c:
        wniter = c.get("WNITER", 1)
        wmiter = c.get("WMITER") or (c["WM"] * c["WN"]) // (warp_size * tm * tn * wniter)
        warp_tile = (c["WM"], c["WN"], wmiter, wniter)
    if not needs_walk(c):
        walk = "row"
    elif walk is None:
        raise TilingError(f"{chapter}: one element per thread: which way do its lanes walk C?")
    tiling = Tiling(chapter, bm, bn, tm, tn, threads, names, warp_size, warp_tile, walk,
                    dict(c))
    tiling.check()
    return tiling


def _wgmma_tiling(chapter: str, c: dict, bm: int, bn: int, names: tuple[str, str],
                  threads: int, warp_size: int,
                  warp_fragments: Sequence[Fragment] | None) -> Tiling:
    """Chapter 16's tiling: the consumer warps across the block tile, each
    owning bn / (consumer warps) columns for all bm rows, wherever
    ``warp_fragments`` (each consumer warp's lanes' elements of the tile's
    first rows, in the block's columns) puts them; those rows are the piece
    that the accumulators repeat down the tile."""
    consumer_warps = c["CONSUMERS"] * c["WARPGROUP"] // warp_size
    if (warp_fragments is None or len(warp_fragments) != consumer_warps
            or any(len(lanes) != warp_size for lanes in warp_fragments)):
        raise TilingError(f"{chapter}: a wgmma tiling needs each consumer warp's lanes' "
                          "accumulator elements")
    wn = bn // consumer_warps
    rows = max(r for lanes in warp_fragments for lane in lanes for r, _ in lane) + 1
    shapes = {(m, n) for lanes in warp_fragments for lane in lanes
              for _, _, m, n in _runs(lane)}
    if (len(shapes) != 1 or bm % rows
            or any(len({col for lane in lanes for _, col in lane}) != wn
                   for lanes in warp_fragments)):
        raise TilingError(f"{chapter}: the accumulator pieces do not give each consumer "
                          f"warp {wn} columns of {bm} rows")
    (tm, tn), = shapes
    idle = threads // warp_size - consumer_warps
    fragments = tuple(tuple(tuple(lane) for lane in lanes) for lanes in warp_fragments)
    tiling = Tiling(chapter, bm, bn, tm, tn, threads, names, warp_size,
                    (bm, wn, bm // rows, 1), "row", dict(c), (rows, wn),
                    fragments[MARKED_WARP], idle_warps=idle, wgmma=True,
                    warp_fragments=fragments)
    tiling.check()
    return tiling


def chapter_tiling(repo_root: Path, build: Path, slug: str) -> tuple[Tiling, list[Path]]:
    """The Tiling of result ``slug`` (a chapter, or one of its variants) from
    its binary's --describe, and the files it was read from (the binary and
    the kernel's sources), for a directive to track."""
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    fragment, fragments, walk, read = None, None, None, [path, *sources]
    if needs_walk(variant["constants"]):
        tool = require_binary(build, "warpmap")
        walk = chapter_walk(tool, slug)
        read.append(tool)
    if "MMA_M" in variant["constants"] or "WARPGROUP" in variant["constants"]:
        tool = require_binary(build, "fragmap")
        if "WARPGROUP" in variant["constants"]:
            # The columns as the variant's c_col() takes them: spread or in order.
            name = "C16" if variant["constants"].get("SPREAD", 1) else "C16.in-order"
            fragments = c_fragments(run_fragmap(tool), name)
        else:
            fragment = c_fragment(run_fragmap(tool), "C")
        read.append(tool)
    try:
        tiling = tiling_of(slug, variant["constants"],
                           (variant.get("kernel") or {}).get("threads_per_block"), walk,
                           fragment, fragments)
    except TilingError as error:
        raise AnalysisError(str(error)) from error
    return tiling, read


def c_fragments(report: dict, name: str) -> list[list[list[tuple[int, int]]]]:
    """Each warp's lanes' elements of the tile ``name`` of a fragmap report:
    chapter 14's "C" (one warp), or chapter 16's "C16" or "C16.in-order",
    the block tile's first rows in each consumer warp's accumulators."""
    found = tile(report, name)
    warps: list[list[list[tuple[int, int]]]] = [
        [[] for _ in range(32)] for _ in range(found.get("warps", 1))]
    for element in found["elements"]:
        warps[element.get("warp", 0)][element["lane"]].append((element["row"], element["col"]))
    return warps


def c_fragment(report: dict, name: str = "C") -> list[list[tuple[int, int]]]:
    """Each lane's elements of a one-warp C tile (chapter 14's), from a
    fragmap report."""
    [lanes] = c_fragments(report, name)
    return lanes


# -- Words ----------------------------------------------------------------------

TIMES = "\u00d7"


def _pair(a: str, b: str, x: int, y: int) -> str:
    return f"{a} {TIMES} {b} = {x} {TIMES} {y}"


def block_words(t: Tiling) -> str:
    a, b = t.names
    sides = f"BLOCK {TIMES} BLOCK = {t.bm} {TIMES} {t.bn}" if a == b else _pair(a, b, t.bm, t.bn)
    return f"block tile of C, {sides}"


def thread_words(t: Tiling) -> str:
    if t.tm == t.tn == 1:
        return "one element"
    if t.tn == 1:
        return f"TM {TIMES} 1 = {t.tm} {TIMES} 1"
    return _pair("TM", "TN", t.tm, t.tn)


def mma_words(t: Tiling) -> str:
    """What the marked lane holds of each mma tile: 'lane 9 holds rows 2 and
    10, columns 2-3, of each' (chapter 16, in the block's columns: 'rows 2
    and 3, columns 10 and 14')."""
    assert t.fragment is not None
    pieces = _runs(t.fragment[MARKED_LANE])

    def spans(pairs: Iterable[tuple[int, int]]) -> list[str]:
        return [f"{a}\u2013{b}" if b > a else str(a) for a, b in sorted(set(pairs))]

    rows = spans((row, row + m - 1) for row, _, m, _ in pieces)
    cols = spans((col, col + n - 1) for _, col, _, n in pieces)
    def plural(words: list[str]) -> str:
        return "s" if len(words) > 1 or "\u2013" in words[0] else ""

    return (f"lane {MARKED_LANE} holds row{plural(rows)} {' and '.join(rows)}, "
            f"column{plural(cols)} {', '.join(cols) if len(cols) > 2 else ' and '.join(cols)}, "
            "of each")


def walk_words(t: Tiling) -> str:
    """How warp MARKED_WARP's lanes walk C, for one-element threads."""
    (row, col, _, _), = t.owned(t.marked_thread - MARKED_LANE)
    if t.walk == "column":
        return (f"lanes 0\u219231 of warp {MARKED_WARP} walk down column {col}: "
                f"32 rows of C, N floats apart")
    return (f"lanes 0\u219231 of warp {MARKED_WARP} walk along row {row}: "
            "32 neighbouring floats of C")


def alt_text(t: Tiling) -> str:
    """What the figure shows, with its numbers, for the image's alt text."""
    tid = t.marked_thread
    words = f"{t.chapter}: the {block_words(t)}"
    if t.wgmma:
        assert t.warp_tile is not None and t.mma is not None
        wm, wn, mi, _ = t.warp_tile
        consumers = len(t.computing_warps)
        zoomed = t.zoomed_runs()
        if len(zoomed) == 1:
            words += (f", split into {consumers} columns of {wm} {TIMES} {wn}, one per "
                      f"consumer warp (warps {t.idle_warps} to {t.warps - 1}; warps 0 to "
                      f"{t.idle_warps - 1} produce and own none of C). Warp {t.marked_warp}'s "
                      f"first {2 * t.mma[0]} rows, magnified, are pieces of {t.mma[0]} {TIMES} "
                      f"{t.mma[1]} that its wgmma accumulators repeat in, {mi} down its column; "
                      f"{mma_words(t)}.")
            return words
        stripes = _and([str(n) for n in sorted({n for warp in t.computing_warps
                                                for _, n in t.warp_columns(warp)})])
        mine = _and([f"{c}\u2013{c + n - 1}" for c, n in t.warp_columns(t.marked_warp)])
        first, width = t.zoom_columns()
        sharing = _and([str(w) for w in sorted({w for w, _ in zoomed})])
        words += (f", split among {consumers} consumer warps (warps {t.idle_warps} to "
                  f"{t.warps - 1}; warps 0 to {t.idle_warps - 1} produce and own none of C), "
                  f"each owning {wn} columns of all {wm} rows, in stripes of {stripes} "
                  f"columns: warp {t.marked_warp} owns columns {mine}. Columns {first} to "
                  f"{first + width - 1}, which warps {sharing} share, are magnified for their "
                  f"first {2 * t.mma[0]} rows: warp {t.marked_warp}'s pieces of {t.mma[0]} "
                  f"rows, which its wgmma accumulators repeat in, {mi} down its stripes; "
                  f"{mma_words(t)}.")
        return words
    if t.mma is not None:
        assert t.warp_tile is not None
        wm, wn, mi, ni = t.warp_tile
        words += (f", split into {t.bm // wm} {TIMES} {t.bn // wn} warp tiles of WM {TIMES} WN "
                  f"= {wm} {TIMES} {wn}, one per warp. Warp {MARKED_WARP}'s tile, magnified, "
                  f"is {mi} {TIMES} {ni} mma tiles of {t.mma[0]} {TIMES} {t.mma[1]}; "
                  f"{mma_words(t)}.")
        return words
    if t.warp_tile is not None:
        wm, wn, wmiter, wniter = t.warp_tile
        words += (f", split into {t.bm // wm} {TIMES} {t.bn // wn} warp tiles of WM {TIMES} WN "
                  f"= {wm} {TIMES} {wn}, one per warp. Warp {MARKED_WARP}'s tile, magnified, "
                  f"is split into {wmiter} {TIMES} {wniter} sub-tiles of {wm // wmiter} {TIMES} "
                  f"{wn // wniter}, each cut into the {t.warp_size} lanes' blocks of "
                  f"{t.tm} {TIMES} {t.tn} ({(wm // wmiter) // t.tm} rows of {t.lanes_n} lanes); "
                  f"thread {tid} (lane {MARKED_LANE}) computes one {t.tm} {TIMES} {t.tn} block "
                  f"in each sub-tile, {wmiter * wniter * t.tm * t.tn} elements in all.")
    else:
        (row, col, _, _), = t.owned(tid)
        warp = t.warp_rect(MARKED_WARP)
        words += (f", split among {t.threads} threads, each computing {thread_words(t)} "
                  f"element{'s' if t.tm * t.tn > 1 else ''}; warp {MARKED_WARP} (threads "
                  f"{MARKED_WARP * 32} to {MARKED_WARP * 32 + 31}) owns a {warp[2]} {TIMES} "
                  f"{warp[3]} strip and thread {tid} the result at row {row}, column {col}.")
        if t.tm == t.tn == 1:
            words += f" The {walk_words(t)}."
    return words


# -- Drawing ----------------------------------------------------------------------


def _rect(axes: Axes, r: Rect, gid: str, **style: Any) -> Rectangle:
    row, col, rows, cols = r
    patch = Rectangle((col, row), cols, rows, **style)
    patch.set_gid(gid)
    axes.add_patch(patch)
    return patch


def _grid(axes: Axes, top: int, left: int, rows: int, cols: int, step_m: int, step_n: int,
          colour: str, width: float, gid: str) -> None:
    """Lines every step_m rows and step_n columns inside a rectangle."""
    lines = [[(left + c, top), (left + c, top + rows)] for c in range(step_n, cols, step_n)]
    lines += [[(left, top + r), (left + cols, top + r)] for r in range(step_m, rows, step_m)]
    if lines:
        collection = LineCollection(lines, colors=colour, linewidths=width)
        collection.set_gid(gid)
        axes.add_collection(collection)


def _frame(axes: Axes, rows: int, cols: int) -> None:
    axes.set_xlim(0, cols)
    axes.set_ylim(rows, 0)
    axes.set_aspect("equal")
    axes.set_axis_off()


def _sides(axes: Axes, theme: dict, rows: int, cols: int, row_name: str,
           col_name: str | None) -> None:
    """'BN = 128' over the top edge (unless col_name is None), 'BM = 64' up
    the left edge."""
    if col_name is not None:
        axes.annotate(f"{col_name} = {cols}", xy=(cols / 2, 0), xytext=(0, 4),
                      textcoords="offset points", ha="center", va="bottom", fontsize=TEXT,
                      color=theme["ink"], annotation_clip=False)
    axes.annotate(f"{row_name} = {rows}", xy=(0, rows / 2), xytext=(-4, 0),
                  textcoords="offset points", ha="right", va="center", rotation=90,
                  fontsize=TEXT, color=theme["ink"], annotation_clip=False)


def _words_below(figure: MplFigure, axes: Axes, y: float, text: str, ink: str) -> None:
    """Centred lines of text under a panel, top at figure height ``y``."""
    box = axes.get_position()
    figure.text((box.x0 + box.x1) / 2, y, text, ha="center", va="top", fontsize=TEXT,
                color=ink, linespacing=1.3)


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _stripe_names(axes: Axes, theme: dict, runs: Sequence[tuple[int, Run]], left: int,
                  marked: int) -> None:
    """'warp 4' over each of a wgmma zoom's stripes, the marked warp's bold."""
    for warp, (col, cols) in runs:
        axes.annotate(f"warp {warp}", xy=(col - left + cols / 2, 0), xytext=(0, 4),
                      textcoords="offset points", ha="center", va="bottom", fontsize=TEXT,
                      color=theme["ink"], fontweight="bold" if warp == marked else "normal",
                      annotation_clip=False, gid=f"zoom-warp-{warp}")


def _and(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


#: The least width, in points, of a stripe of a warp's columns that carries
#: the warp's name up it (the name's text and its patch of the page).
NAME_POINTS = 20

#: Heights in inches of the figure's parts.
LINE = 0.26
TOP = 2 * LINE + 0.45          # a panel's two-line title and its top size label
BELOW_GAP = 0.12


def tiling_figure(t: Tiling, mode: str) -> MplFigure:
    """The drawn figure (matplotlib), for draw_tiling and the tests."""
    theme = THEMES[mode]
    ink, grid = theme["ink"], theme["grid"]
    warp_tiled = t.warp_tile is not None
    tensor = t.mma is not None
    tid = t.marked_thread
    mine = t.owned(tid)

    # What goes where, top to bottom, in inches: the block panel (its title
    # above, perhaps the lanes' walk below), then the magnified warp tile
    # (its words below), then the key.
    def width_of(rows: int, cols: int) -> float:
        return FIGURE_WIDTH * (0.92 if cols >= 2 * rows else 0.66)

    block_w = width_of(t.bm, t.bn)
    if t.wgmma:
        # Each stripe of a warp's columns carries the warp's name up it: the
        # block is drawn wide enough for a name to fit the narrowest stripe.
        narrowest = min(n for warp in t.computing_warps for _, n in t.warp_columns(warp))
        if block_w * 72 * narrowest / t.bn < NAME_POINTS:
            block_w = FIGURE_WIDTH * 0.92
    panels = [("block", block_w, block_w * t.bm / t.bn)]
    block_title = f"The {block_words(t)}:\n"
    if warp_tiled:
        assert t.warp_tile is not None
        wm, wn, wmiter, wniter = t.warp_tile
        sub_m, sub_n = wm // wmiter, wn // wniter
        # Chapter 16's warp tile is a tall column: the zoom shows its top,
        # and the columns it shares with the warps beside it (zoom_columns()).
        shown_m = min(wm, 2 * sub_m) if t.wgmma else wm
        zoom_left, zoom_n = t.zoom_columns() if t.wgmma else (0, wn)
        zoomed = t.zoomed_runs() if t.wgmma else []
        stripes = ({n for warp in t.computing_warps for _, n in t.warp_columns(warp)}
                   if t.wgmma else set())
        if t.wgmma and stripes != {wn}:
            block_title += (f"{len(t.computing_warps)} consumer warps' {wn} columns, in "
                            f"stripes of {_and([str(n) for n in sorted(stripes)])}")
        elif t.wgmma:
            block_title += (f"{len(t.computing_warps)} consumer warps' columns of "
                            f"{wm} {TIMES} {wn}")
        else:
            block_title += (f"{t.bm // wm} {TIMES} {t.bn // wn} warp tiles of WM {TIMES} WN = "
                            f"{wm} {TIMES} {wn}")
        below_block = None
        zoom_w = width_of(shown_m, zoom_n)
        panels.append(("warp", zoom_w, zoom_w * shown_m / zoom_n))
        if t.wgmma:
            assert t.fragment is not None
            if len(zoomed) > 1:
                # Spread: the columns the marked warp shares, in stripes.
                sharing = _and([str(w) for w in sorted({w for w, _ in zoomed})])
                below_zoom = (f"Columns {zoom_left}\u2013{zoom_left + zoom_n - 1} (warps "
                              f"{sharing}), first {shown_m} rows, magnified:\n"
                              f"warp {t.marked_warp}'s pieces of {sub_m} rows, {wmiter} down "
                              f"its stripes;\n{mma_words(t)}")
            else:
                below_zoom = (f"Warp {t.marked_warp}'s first {shown_m} rows, magnified:\n"
                              f"pieces of {sub_m} {TIMES} {sub_n}, {wmiter} down its column;\n"
                              f"{mma_words(t)}")
            thread_label = (f"thread {tid} (lane {MARKED_LANE}): "
                            f"{len(t.fragment[MARKED_LANE])} elements\nin each of the "
                            f"{wmiter} pieces")
        elif tensor:
            assert t.fragment is not None
            below_zoom = (f"Warp {MARKED_WARP}'s tile, magnified: MI {TIMES} NI = "
                          f"{wmiter} {TIMES} {wniter}\nmma tiles of MMA_M {TIMES} MMA_N = "
                          f"{sub_m} {TIMES} {sub_n};\n{mma_words(t)}")
            per_tile = len(_runs(t.fragment[MARKED_LANE]))
            thread_label = (f"thread {tid} (lane {MARKED_LANE}): {per_tile} pieces of "
                            f"{t.tm} {TIMES} {t.tn}\nin each of the {wmiter * wniter} mma tiles")
        else:
            below_zoom = (f"Warp {MARKED_WARP}'s tile, magnified: WMITER {TIMES} WNITER = "
                          f"{wmiter} {TIMES} {wniter}\nsub-tile"
                          f"{'s' if wmiter * wniter > 1 else ''} of WSUBM {TIMES} WSUBN = "
                          f"{sub_m} {TIMES} {sub_n}, each cut\nin {sub_m // t.tm} {TIMES} "
                          f"{t.lanes_n} lanes' blocks of {thread_words(t)}")
            thread_label = (f"thread {tid} (lane {MARKED_LANE}): {wmiter * wniter} "
                            f"block{'s' if wmiter * wniter > 1 else ''} of {thread_words(t)}")
    else:
        block_title += f"{t.threads} threads of {thread_words(t)}"
        below_block = walk_words(t).replace(": ", ":\n", 1) if t.tm * t.tn == 1 else None
        thread_label = f"thread {tid}: {thread_words(t)}"
    warp_label = (f"warp {t.marked_warp} (threads {t.marked_warp * t.warp_size}\u2013"
                  f"{t.marked_warp * t.warp_size + t.warp_size - 1})")

    heights = [TOP + panels[0][2]]
    if below_block:
        heights.append(BELOW_GAP + _lines(below_block) * LINE)
    if warp_tiled:
        heights.append(0.75 + panels[1][2] + BELOW_GAP + _lines(below_zoom) * LINE)
    heights.append(0.15 + (3 if tensor else 2) * LINE + 0.1)   # the key
    total = sum(heights)

    with plt.rc_context(RC):
        figure = plt.figure(figsize=(FIGURE_WIDTH, total))
        figure.set_gid(f"tiling-{t.chapter}")

        def add_panel(top: float, width: float, height: float, gid: str) -> Axes:
            axes = figure.add_axes(((1 - width / FIGURE_WIDTH) / 2 + 0.02,
                                    (total - top - height) / total,
                                    width / FIGURE_WIDTH, height / total))
            axes.set_gid(gid)
            return axes

        y = TOP
        block = add_panel(y, block_w, panels[0][2], "block-panel")
        _frame(block, t.bm, t.bn)
        block.set_title(block_title, fontsize=TITLE, color=ink, pad=24, linespacing=1.3)
        y += panels[0][2]
        if warp_tiled:
            for warp in t.computing_warps:
                marked = warp == t.marked_warp
                # Chapter 16's warps own stripes of columns, each named.
                owned = ([(0, col, t.bm, cols) for col, cols in t.warp_columns(warp)]
                         if t.wgmma else [t.warp_rect(warp)])
                for r in owned:
                    _rect(block, r, f"warp-columns-{warp}" if t.wgmma else "warp-tile",
                          fc=WARP_COLOUR if marked else "none", alpha=0.45 if marked else 1,
                          ec="none" if marked else ink, lw=0 if marked else 1.2)
                    # Chapter 16's warps own narrow columns: their names run up
                    # them. Each name sits on a patch of the page's colour,
                    # above the zoom lines and the thread's cells, so that none
                    # crosses it.
                    block.text(r[1] + r[3] / 2, r[0] + r[2] * (0.5 if t.wgmma else 0.72),
                               f"warp {warp}", ha="center", va="center", fontsize=TEXT,
                               color=ink, rotation=90 if t.wgmma else 0,
                               fontweight="bold" if marked else "normal", zorder=4,
                               bbox=dict(boxstyle="square,pad=0.15", fc=theme["page"],
                                         ec="none"),
                               gid=f"warp-label-{warp}")
            if t.wgmma:
                # The stripes' edges, the marked warp's too, and the block's.
                cuts = sorted({col for warp in t.computing_warps
                               for col, _ in t.warp_columns(warp)} | {t.bn})
                lines = [[(col, 0), (col, t.bm)] for col in cuts]
                lines += [[(0, row), (t.bn, row)] for row in (0, t.bm)]
                collection = LineCollection(lines, colors=ink, linewidths=1.2)
                collection.set_gid("warp-lines")
                block.add_collection(collection)
            else:
                _grid(block, 0, 0, t.bm, t.bn, wm, wn, ink, 1.2, "warp-lines")
            for r in mine:
                _rect(block, r, "thread-in-block", fc=THREAD_COLOUR, ec="none")
        else:
            _grid(block, 0, 0, t.bm, t.bn, t.tm, t.tn, grid, 0.5, "thread-lines")
            for warp in range(t.warps):
                marked = warp == MARKED_WARP
                _rect(block, t.warp_rect(warp), "warp",
                      fc=WARP_COLOUR if marked else "none", alpha=0.45 if marked else 1,
                      ec="none", lw=0)
            # The warps' outlines, over the fill, in one collection.
            edges = [[(c, r), (c + w, r), (c + w, r + h), (c, r + h), (c, r)]
                     for r, c, h, w in (t.warp_rect(i) for i in range(t.warps))]
            outlines = LineCollection(edges, colors=ink, linewidths=0.8)
            outlines.set_gid("warp-outlines")
            block.add_collection(outlines)
            _rect(block, mine[0], "thread", fc=THREAD_COLOUR, ec="none")
            if t.tm * t.tn == 1:
                # The lanes' walk: an arrow along warp MARKED_WARP, lane 0 to 31.
                (r0, c0, _, _), = t.owned(MARKED_WARP * t.warp_size)
                (r1, c1, _, _), = t.owned(MARKED_WARP * t.warp_size + t.warp_size - 1)
                block.annotate("", xy=(c1 + 0.5, r1 + 0.5), xytext=(c0 + 0.5, r0 + 0.5),
                               arrowprops=dict(arrowstyle="-|>", color=ink, lw=1.6))
        _frame(block, t.bm, t.bn)
        _sides(block, theme, t.bm, t.bn, *t.names)
        if below_block:
            y += BELOW_GAP
            _words_below(figure, block, 1 - y / total, below_block, ink)
            y += _lines(below_block) * LINE

        if warp_tiled:
            y += 0.75
            zoom = add_panel(y, zoom_w, panels[1][2], "warp-panel")
            top, left, _, _ = t.warp_rect(t.marked_warp)
            if t.wgmma:
                top, left = 0, zoom_left
                for warp, (col, cols) in zoomed:
                    if warp == t.marked_warp:
                        _rect(zoom, (0, col - left, shown_m, cols), "warp-zoom", fc=WARP_COLOUR,
                              alpha=0.25, ec="none")
                # A lane holds pairs of rows: lines every 2 rows and every column.
                _grid(zoom, 0, 0, shown_m, zoom_n, 2, 1, grid, 0.6, "lane-lines")
            else:
                _rect(zoom, (0, 0, shown_m, wn), "warp-zoom", fc=WARP_COLOUR, alpha=0.25,
                      ec="none")
                if tensor:
                    # Lines between the halves of each mma tile (rows g and g + 8).
                    _grid(zoom, 0, 0, wm, wn, sub_m // 2, sub_n, grid, 0.6, "lane-lines")
                else:
                    _grid(zoom, 0, 0, wm, wn, t.tm, t.tn, grid, 0.6, "lane-lines")
            for i in range(shown_m // sub_m):
                # Chapter 16: each warp's stripes in the zoom, piece by piece.
                for _, (col, cols) in zoomed:
                    _rect(zoom, (i * sub_m, col - left, sub_m, cols), "subtile", fc="none",
                          ec=ink, lw=1.6)
                for j in range(0 if t.wgmma else wniter):
                    _rect(zoom, (i * sub_m, j * sub_n, sub_m, sub_n), "subtile", fc="none",
                          ec=ink, lw=1.6)
            for row, col, rows, cols in mine:
                if row - top < shown_m:
                    _rect(zoom, (row - top, col - left, rows, cols), "thread", fc=THREAD_COLOUR,
                          ec="none")
            row, col, rows, cols = mine[0]
            _grid(zoom, row - top, col - left, rows, cols, 1, 1, ink, 0.4, "thread-cells")
            _frame(zoom, shown_m, zoom_n)
            if t.wgmma and len(zoomed) > 1:
                _sides(zoom, theme, shown_m, zoom_n, "rows", None)
                _stripe_names(zoom, theme, zoomed, left, t.marked_warp)
            elif t.wgmma:
                _sides(zoom, theme, shown_m, zoom_n, "rows", "columns")
            else:
                _sides(zoom, theme, wm, wn, "WM", "WN")
            # The zoom lines belong to the block's panel, beneath its labels.
            for x in (0, zoom_n):
                line = ConnectionPatch(
                    xyA=(left + x, top + shown_m), coordsA=block.transData,
                    xyB=(x, 0), coordsB=zoom.transData, color=ink, lw=0.8, ls=(0, (3, 3)),
                    zorder=3)
                block.add_artist(line)
                line.set_clip_on(False)
                line.set_gid(f"zoom-line-{x}")
            y += panels[1][2] + BELOW_GAP
            _words_below(figure, zoom, 1 - y / total, below_zoom, ink)
            y += _lines(below_zoom) * LINE

        legend(figure, theme,
               handles=[Patch(fc=WARP_COLOUR, alpha=0.45, label=warp_label),
                        Patch(fc=THREAD_COLOUR, label=thread_label)],
               loc="upper center", bbox_to_anchor=(0.5, 1 - (y + 0.1) / total), fontsize=TEXT,
               handlelength=1.4)
        return figure


def natural_width_px(drawing: bytes) -> int:
    """The CSS width of an SVG drawing at 96 px per inch, from its width
    attribute (in pt, as matplotlib writes it)."""
    found = re.search(rb'<svg[^>]*\bwidth="([0-9.]+)pt"', drawing)
    if not found:
        raise TilingError("the SVG has no width in pt")
    return round(float(found.group(1)) * 96 / 72)


def draw_tiling(t: Tiling, mode: str) -> bytes:
    """The figure as SVG for the page mode ``mode``."""
    with plt.rc_context(RC):
        return svg(tiling_figure(t, mode))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    slug = request.arguments[0]
    found, read = chapter_tiling(context.repo_root, context.build_dir, slug)
    caption = request.caption_or(
        f"What a block, a warp and a thread of {slug} compute of C, to scale.")
    return Drawn([Drawing(lambda mode: tiling_figure(found, mode), alt_text(found), caption)],
                 read=read)


FIGURE = Figure("tiling", "what a block, a warp and a thread of a chapter own of C, to scale",
                load, arguments=(1, 1),
                argument="a chapter folder's name, e.g. 12-final, or a variant's result name")
