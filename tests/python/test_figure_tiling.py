"""The tiling figure (code/ladder_tools/figures/tiling.py, {ladder-tiling}), drawn for every
chapter built, from its --describe constants, and measured: the rectangles
are to scale (the block's sides are BN / BM, a warp tile's WN / WM, a
thread's block TN / TM, in data units and on the drawn page), there are as
many of each as the constants say, the marked thread sits where the
kernel's thread map puts it, and the text is legible (the mode's ink, no two
labels on top of each other).
"""

import re

from figure_checks import (
    BUILD,
    MODES,
    ROOT,
    TILING_CHAPTERS,
    corner,
    drawn,
    drawn_texts,
    panel,
    patches,
    size,
    text_problems,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.colors
import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import ConnectionPatch

from ladder_tools.analysis.binaries import describe
from ladder_tools.analysis.fragmap import run_fragmap, tile
from ladder_tools.figures import style, tiling


def chapter16_column(c: dict, warp: int, g: int, half: int) -> int:
    """The column of C (of B) that lane group g of consumer warp ``warp``
    (0 to 7) holds in its accumulators d[r] with r / 2 = ``half``, written
    out from the [c-map] comment of chapters/16-wgmma/tiling.cuh, not from
    c_col(): in order (SPREAD 0), 16w + g + 8 half; spread, warps 2i and
    2i + 1 share copy box i of BOX_COLUMNS columns, lane g of warp w taking
    c = 32 (w / 2) + 8 (w % 2) + 16 (g / 4) + g % 4 and c + 4."""
    if not c.get("SPREAD", 1):
        return 16 * warp + g + 8 * half
    return c["BOX_COLUMNS"] * (warp // 2) + 8 * (warp % 2) + 16 * (g // 4) + g % 4 + 4 * half


def chapter16_columns(c: dict, warp: int) -> list[int]:
    """Every column of consumer warp ``warp``, in order."""
    return sorted({chapter16_column(c, warp, g, half) for g in range(8) for half in (0, 1)})


def columns_of(rectangles) -> list[int]:
    """The columns a set of Rectangles covers, in order, each once."""
    return sorted({col for p in rectangles
                   for col in range(round(p.get_x()), round(p.get_x() + p.get_width()))})


def check_tiling_figure(name: str, c: dict, figure, renderer, mode: str,
                        walk: str | None = None) -> list[str]:
    """What the figure of constants ``c`` must show; the expectations are
    computed here from the constants, not taken from code/ladder_tools/figures/tiling.py."""
    problems = text_problems(figure, renderer, mode)
    bm, bn = (c["BM"], c["BN"]) if "BM" in c else (c["BLOCK"], c["BLOCK"])
    tm, tn = c.get("TM", 1), c.get("TN", 1)
    if "MMA_M" in c:
        tm, tn = 1, 2  # the PTX ISA's C fragment: two neighbours of one row
    threads = c.get("NUM_THREADS", bm * bn // (tm * tn))
    block = panel(figure, "block-panel")
    # The block: BM x BN in data units, and BN / BM on the page.
    if sorted(block.get_xlim()) != [0, bn] or sorted(block.get_ylim()) != [0, bm]:
        problems.append(f"the block panel spans {block.get_xlim()} x {block.get_ylim()}, "
                        f"not {bn} x {bm}")
    box = block.get_window_extent(renderer)
    if abs(box.width / box.height - bn / bm) > 0.01 * bn / bm:
        problems.append(f"the block is drawn {box.width:.0f} x {box.height:.0f} px, "
                        f"not BN / BM = {bn} / {bm}")
    texts = {t.get_text() for t in drawn_texts(figure)}
    names = ("BM", "BN") if "BM" in c else ("BLOCK", "BLOCK")
    for label in (f"{names[0]} = {bm}", f"{names[1]} = {bn}"):
        if label not in texts:
            problems.append(f"no label {label!r}")
    tid = 32 + 9  # the marked thread: warp 1, lane 9
    if "WARPGROUP" in c:
        # Chapter 16: the producer's warps own none of C; the marked thread
        # is lane 9 of the second consumer warp. The PTX ISA's layout of a
        # wgmma.m64nNk8 accumulator D: warp w of the warpgroup holds rows
        # 16w + g and 16w + g + 8 of D, columns 8j + 2t and 8j + 2t + 1. The
        # kernel's D is C^T, so in C that is columns and rows swapped; which
        # column of C (of B) row g (+ 8) of the warp's D is, the chapter
        # chooses (chapter16_column(): spread, or in order where SPREAD is 0).
        warps_per_group = c["WARPGROUP"] // 32
        consumer_warps = c["CONSUMERS"] * warps_per_group
        idle = threads // 32 - consumer_warps
        tid = (idle + 1) * 32 + 9
        consumer_warp, lane = divmod(tid - idle * 32, 32)
        g, t = divmod(lane, 4)
        if patches(figure, "warp-tile"):
            problems.append("chapter 16's warps are drawn as warp tiles, not columns")
        block_names = [x for x in block.texts if re.fullmatch(r"warp \d+", x.get_text())]
        for w in range(consumer_warps):
            stripes = patches(figure, f"warp-columns-{idle + w}")
            if columns_of(stripes) != chapter16_columns(c, w):
                problems.append(f"warp {idle + w}'s columns are drawn at {columns_of(stripes)}, "
                                f"the chapter puts them at {chapter16_columns(c, w)}")
            problems += [f"a stripe of warp {idle + w} is {size(p)} at {corner(p)}, not all "
                         f"{bm} rows" for p in stripes if size(p)[0] != bm or corner(p)[0] != 0]
            named = [x for x in block_names if x.get_text() == f"warp {idle + w}"]
            if len(named) != len(stripes):
                problems.append(f"warp {idle + w} is named {len(named)} times, in "
                                f"{len(stripes)} stripes")
        # The zoom: the marked warp's columns and those of the warps it shares
        # them with (spread: its copy box; in order: its own 16), shaded where
        # they are its own.
        mine = chapter16_columns(c, consumer_warp)
        width = c["BOX_COLUMNS"] if c.get("SPREAD", 1) else len(mine)
        zoom = panel(figure, "warp-panel")
        if sorted(zoom.get_xlim()) != [0, width]:
            problems.append(f"the zoom spans columns {zoom.get_xlim()}, not {width}")
        left = mine[0] // width * width
        shaded = [left + col for col in columns_of(patches(figure, "warp-zoom"))]
        if shaded != mine:
            problems.append(f"the zoom shades columns {shaded}, the marked warp's are {mine}")
        expected = sorted((8 * j + 2 * t + r, chapter16_column(c, consumer_warp, g, h))
                          for j in range(bm // 8) for r in (0, 1) for h in (0, 1))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s elements are drawn at {in_block}, the PTX ISA "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != 8:
            problems.append(f"{len(zoomed)} elements of the thread in the first 16 rows, not 8")
    elif "MMA_M" in c:
        wm, wn, mma_m, mma_n = c["WM"], c["WN"], c["MMA_M"], c["MMA_N"]
        tiles = patches(figure, "warp-tile")
        if len(tiles) != (bm // wm) * (bn // wn):
            problems.append(f"{len(tiles)} warp tiles, not (BM/WM)*(BN/WN)")
        problems += [f"a warp tile is {size(t)}, not WM x WN = {wm} x {wn}"
                     for t in tiles if size(t) != (wm, wn)]
        subtiles = patches(figure, "subtile")
        if len(subtiles) != c["MI"] * c["NI"]:
            problems.append(f"{len(subtiles)} mma tiles, not MI*NI = {c['MI'] * c['NI']}")
        problems += [f"an mma tile is {size(s)}, not {mma_m} x {mma_n}"
                     for s in subtiles if size(s) != (mma_m, mma_n)]
        # The PTX ISA's layout of C for m16n8k8: lane 4g + t holds rows g and
        # g + 8, columns 2t and 2t + 1, of every mma tile of its warp.
        warp, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        warp_row, warp_col = divmod(warp, c["WARPS_N"])
        expected = sorted((warp_row * wm + i * mma_m + g + 8 * half,
                           warp_col * wn + j * mma_n + 2 * t)
                          for i in range(c["MI"]) for j in range(c["NI"]) for half in (0, 1))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s pieces are drawn at {in_block}, the PTX ISA "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != 2 * c["MI"] * c["NI"]:
            problems.append(f"{len(zoomed)} pieces of the thread in the warp tile")
    elif "WM" in c:
        wm, wn = c["WM"], c["WN"]
        tiles = patches(figure, "warp-tile")
        if len(tiles) != (bm // wm) * (bn // wn):
            problems.append(f"{len(tiles)} warp tiles, not (BM/WM)*(BN/WN) = "
                            f"{(bm // wm) * (bn // wn)}")
        problems += [f"a warp tile is {size(t)}, not WM x WN = {wm} x {wn}"
                     for t in tiles if size(t) != (wm, wn)]
        drawn_tile = tiles[0].get_window_extent(renderer)
        if abs(drawn_tile.width / drawn_tile.height - wn / wm) > 0.02 * wn / wm:
            problems.append("a warp tile is not drawn WN / WM wide")
        subtiles = patches(figure, "subtile")
        wmiter, wniter = c["WMITER"], c["WNITER"]
        if len(subtiles) != wmiter * wniter:
            problems.append(f"{len(subtiles)} sub-tiles, not WMITER*WNITER = {wmiter * wniter}")
        problems += [f"a sub-tile is {size(s)}, not {c['WSUBM']} x {c['WSUBN']}"
                     for s in subtiles if size(s) != (c["WSUBM"], c["WSUBN"])]
        # The marked thread, by the kernel's thread map (warp_row, lane_row, ...)
        # with the kernel's own WARPS_N, LANES_N, WSUBM and WSUBN.
        warp, lane = divmod(tid, 32)
        expected = sorted(
            ((warp // c["WARPS_N"]) * wm + i * c["WSUBM"] + (lane // c["LANES_N"]) * tm,
             (warp % c["WARPS_N"]) * wn + j * c["WSUBN"] + (lane % c["LANES_N"]) * tn)
            for i in range(wmiter) for j in range(wniter))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s blocks are drawn at {in_block}, the kernel "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != wmiter * wniter:
            problems.append(f"{len(zoomed)} blocks of the thread in the warp tile")
    else:
        warps = patches(figure, "warp")
        if len(warps) != threads // 32:
            problems.append(f"{len(warps)} warps, not NUM_THREADS / 32 = {threads // 32}")
        if sum(w.get_width() * w.get_height() for w in warps) != bm * bn:
            problems.append("the warps do not cover the block tile")
        # Warp 1: 32 threads of TM x TN, as a strip along the thread rows
        # (NUM_THREADS given: a flat index, row by row) or the lanes' walk.
        per_row = bn // tn
        strip = (max(1, 32 // per_row) * tm, min(32, per_row) * tn)
        if walk == "column":
            strip = strip[::-1]
        if size(warps[1]) != strip:
            problems.append(f"warp 1 is {size(warps[1])}, not {strip}")
        zoomed = patches(figure, "thread")
        row, col = divmod(tid, per_row) if walk != "column" else divmod(tid, bm // tm)[::-1]
        if [corner(p) for p in zoomed] != [(row * tm, col * tn)]:
            problems.append(f"thread {tid} is drawn at {[corner(p) for p in zoomed]}, "
                            f"not {(row * tm, col * tn)}")
    problems += [f"the thread's block is {size(p)}, not TM x TN = {tm} x {tn}"
                 for p in zoomed if size(p) != (tm, tn)]
    for p in zoomed[:1]:
        drawn_thread = p.get_window_extent(renderer)
        if abs(drawn_thread.width / drawn_thread.height - tn / tm) > 0.05 * tn / tm:
            problems.append("the thread's block is not drawn TN / TM wide")
    return [f"{name}, {mode}: {p}" for p in problems]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug,binary", TILING_CHAPTERS, ids=[s for s, _ in TILING_CHAPTERS])
def test_the_tiling_figure_is_the_chapters_tiling_to_scale(slug, binary, mode):
    tiling_found, _ = tiling.chapter_tiling(ROOT, BUILD, slug)
    constants = describe(binary)["variants"][0]["constants"]
    figure, renderer = drawn(lambda: tiling.tiling_figure(tiling_found, mode))
    try:
        problems = check_tiling_figure(slug, constants, figure, renderer, mode,
                                       tiling_found.walk)
        assert not problems, "\n".join(problems)
        assert tiling.draw_tiling(tiling_found, mode).startswith(b"<?xml")
    finally:
        plt.close(figure)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug,binary", TILING_CHAPTERS, ids=[s for s, _ in TILING_CHAPTERS])
def test_no_zoom_line_or_thread_cell_crosses_a_warp_name(slug, binary, mode):
    """Where a zoom line or a thread's cell overlaps a warp's name, the name
    is drawn over it on a patch of the page's colour, so nothing crosses the
    letters. Checked on the drawn figure: the name's box against each
    line's path and each cell's box, in pixels."""
    tiling_found, _ = tiling.chapter_tiling(ROOT, BUILD, slug)
    figure, renderer = drawn(lambda: tiling.tiling_figure(tiling_found, mode))
    try:
        block = panel(figure, "block-panel")
        names = [t for t in block.texts if re.fullmatch(r"warp \d+", t.get_text())]
        if not names:
            pytest.skip(f"{slug}'s figure names no warps")
        # A line drawn on the figure, not in the block's panel, is drawn after
        # the panel and so over every name it meets.
        lines = [a for a in (*figure.artists, *block.artists) if isinstance(a, ConnectionPatch)]
        cells = patches(figure, "thread-in-block")
        page = matplotlib.colors.to_hex(style.THEMES[mode]["page"])
        crossings = 0
        for name in names:
            box = name.get_window_extent(renderer)
            patch = name.get_bbox_patch()
            covered = (patch is not None and matplotlib.colors.to_hex(patch.get_facecolor())
                       == page and patch.get_alpha() in (None, 1))
            over = [line for line in lines
                    if line.get_path().transformed(line.get_transform()).intersects_bbox(box)]
            over += [cell for cell in cells if cell.get_window_extent(renderer).overlaps(box)]
            for artist in over:
                crossings += 1
                beneath = artist not in figure.artists and artist.get_zorder() < name.get_zorder()
                assert covered and beneath, (
                    f"{name.get_text()} is crossed by {type(artist).__name__} {artist.get_gid()}")
        # The drawing this guards: chapter 16's lines and cells do reach names.
        if tiling_found.wgmma:
            assert crossings > 0
    finally:
        plt.close(figure)


#: Chapter 16's and 17's wgmma tilings: the columns spread, and the variant
#: that keeps them in order.
WGMMA_SLUGS = ["16-wgmma", "16-wgmma-wide-spread", "17-3xtf32-wgmma"]


def wgmma_variant(slug: str) -> dict:
    """The --describe constants of a chapter 16 or 17 variant (skips the
    test when its binary or fragmap is not built)."""
    binary = BUILD / "bin" / ("16-wgmma" if slug.startswith("16-") else "17-3xtf32-wgmma")
    for needed in (binary, BUILD / "bin" / "fragmap"):
        if not needed.is_file():
            pytest.skip(f"{needed} is not built")
    [variant] = [v for v in describe(binary)["variants"] if v["slug"] == slug]
    return variant["constants"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug", WGMMA_SLUGS)
def test_the_wgmma_figure_draws_fragmaps_columns(slug, mode):
    """Each consumer warp's stripes are the columns that build/bin/fragmap
    (the chapter's own c_col(), tile "C16", or "C16.in-order" where SPREAD is
    0) gives the warp, and the marked thread's cells its lane's elements,
    repeated down the tile; spread, each warp's 16 columns are two stripes
    of 8 in its copy box, in order one of 16. The whole figure is checked
    too (check_tiling_figure()), against the chapter's comment."""
    c = wgmma_variant(slug)
    report = run_fragmap(BUILD / "bin" / "fragmap")
    found = tile(report, "C16" if c["SPREAD"] else "C16.in-order")
    consumer_warps = c["CONSUMERS"] * c["WARPGROUP"] // 32
    assert found["warps"] == consumer_warps and (found["rows"], found["cols"]) == (8, c["BN"])
    tiling_found, _ = tiling.chapter_tiling(ROOT, BUILD, slug)
    idle = tiling_found.idle_warps
    figure, renderer = drawn(lambda: tiling.tiling_figure(tiling_found, mode))
    try:
        for w in range(consumer_warps):
            from_fragmap = sorted({e["col"] for e in found["elements"] if e["warp"] == w})
            stripes = patches(figure, f"warp-columns-{idle + w}")
            assert columns_of(stripes) == from_fragmap, f"warp {idle + w}"
            # Spread: two stripes of 8 in the warp's copy box, the other
            # warp's two between and beside them.
            assert [(round(p.get_x()), round(p.get_width())) for p in stripes] == (
                [(from_fragmap[0], 8), (from_fragmap[0] + 16, 8)] if c["SPREAD"]
                else [(16 * w, 16)]), f"warp {idle + w}"
        cells = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        lane9 = [(e["row"], e["col"]) for e in found["elements"]
                 if e["warp"] == 1 and e["lane"] == 9]
        assert cells == sorted((8 * j + row, col) for j in range(c["BM"] // 8)
                               for row, col in lane9)
        problems = check_tiling_figure(slug, c, figure, renderer, mode)
        assert not problems, "\n".join(problems)
    finally:
        plt.close(figure)


def test_the_wgmma_columns_spread_and_in_order_differ():
    """fragmap's two maps of chapter 16's columns: the same warps' columns
    in order and spread, different ones; spread, warp 0 holds c_col's
    spread set (written out in chapter16_column()), in order 0 to 15."""
    c = wgmma_variant("16-wgmma-wide-spread")
    report = run_fragmap(BUILD / "bin" / "fragmap")
    spread, in_order = tile(report, "C16"), tile(report, "C16.in-order")
    by_warp = {name: {w: sorted({e["col"] for e in t["elements"] if e["warp"] == w})
                      for w in range(t["warps"])}
               for name, t in (("spread", spread), ("in order", in_order))}
    assert by_warp["spread"][0] == chapter16_columns(c, 0) == [*range(8), *range(16, 24)]
    assert by_warp["in order"][0] == list(range(16))
    for w in range(spread["warps"]):
        assert by_warp["in order"][w] == list(range(16 * w, 16 * w + 16))
        assert by_warp["spread"][w] == chapter16_columns(c, w)
    # Every element of the first 8 rows, once, either way.
    for t in (spread, in_order):
        assert sorted((e["row"], e["col"]) for e in t["elements"]) == [
            (r, col) for r in range(8) for col in range(c["BN"])]


def test_every_chapter_has_a_tiling_figure():
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    for slug, _ in TILING_CHAPTERS:
        text = (ROOT / "chapters" / slug / "chapter.md").read_text()
        assert f"```{{ladder-tiling}} {slug}" in text, f"{slug}'s page has no tiling figure"


def test_chapters_01_and_02_walk_c_in_different_directions():
    """The lanes' walk is warpmap's store to C, computed with the chapters'
    own index functions: down a column of C in chapter 01 (row from
    threadIdx.x), along a row in chapter 02."""
    tool = BUILD / "bin" / "warpmap"
    if not tool.is_file():
        pytest.skip(f"{tool} is not built")
    walks = {slug: tiling.chapter_walk(tool, slug) for slug in ("01-naive", "02-coalescing")}
    assert walks == {"01-naive": "column", "02-coalescing": "row"}


def test_the_walk_follows_the_lanes_of_the_store():
    column = {"lanes": [{"lane": i, "row": i, "col": 0} for i in range(32)]}
    row = {"lanes": [{"lane": i, "row": 0, "col": i} for i in range(32)]}
    assert (tiling.lane_walk(column), tiling.lane_walk(row)) == ("column", "row")


def test_one_element_per_thread_needs_the_walk():
    with pytest.raises(tiling.TilingError):
        tiling.tiling_of("made-up", {"BLOCK": 32}, 1024)


MADE_UP_TILINGS = [
    # Warp tiling unlike any chapter's: 2 x 2 sub-tiles per warp, square threads.
    {"BM": 32, "BN": 128, "WM": 16, "WN": 64, "WMITER": 2, "WNITER": 2, "TM": 2, "TN": 4,
     "NUM_THREADS": 128, "WARPS_N": 2, "WSUBM": 8, "WSUBN": 32, "LANES_N": 8},
    # Thread tiling with a warp two thread rows high and TN > TM.
    {"BM": 32, "BN": 64, "TM": 2, "TN": 4, "NUM_THREADS": 256},
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("constants", MADE_UP_TILINGS, ids=["warp-tiled", "thread-tiled"])
def test_the_tiling_figure_follows_made_up_constants(constants, mode):
    found = tiling.tiling_of("made-up", constants)
    figure, renderer = drawn(lambda: tiling.tiling_figure(found, mode))
    try:
        problems = check_tiling_figure("made-up", constants, figure, renderer, mode)
        assert not problems, "\n".join(problems)
    finally:
        plt.close(figure)


def test_constants_that_do_not_tile_the_block_are_refused():
    with pytest.raises(tiling.TilingError):
        tiling.tiling_of("made-up", {"BM": 64, "BN": 64, "TM": 8, "NUM_THREADS": 256})
