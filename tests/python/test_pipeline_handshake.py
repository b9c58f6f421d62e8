"""Chapter 16's handshake figure (code/ladder_tools/figures/handshake.py, drawn by
{ladder-pipeline} after the ring) and chapter 17's split figure
(code/ladder_tools/figures/split.py, {ladder-split}) say what the kernel does, computed here
from the variants' --describe constants and the rules of the kernel's code
(chapters/16-wgmma/kernel.cuh), not from the figures' modules:

- handshake: full[s] counts 1 arrival and COPY_FLOATS x 4 bytes, empty[s]
  CONSUMERS x WARPGROUP arrivals; every drawn completion of step k is pass
  k / STAGES of barrier[k mod STAGES] with parity pass & 1; the consumers
  wait for full[s] on (k / STAGES) & 1 and the producer for empty[s] on
  (k / STAGES + 1) & 1, the fresh empties' phase (parity 1) for its first
  STAGES steps; every wait comes after what it waits for, with an arrow
  from the one to the other;
- split: a stage's three tiles in the copies' order (A or A rounded, B,
  A's small part; no big_finite) with their bytes (BM x BK x 4 and
  BK x BN x 4), summing to COPY_FLOATS x 4; convert_a()'s parts (small, and
  big too where ROUNDED); each step's three wgmma, A's own tile (its big
  part) in the first and the last, and their accumulators; the sums'
  periods (SUM_STEPS, and CORRECTION_STAGES, kCorrectionStages as
  --describe reports it);
- both: text in the mode's ink, no two texts overlapping, at most the
  column's width, and at a phone's column (358 px) every text at least
  9 px tall;
- each check fails on a wrong input (the tests named *_is_caught).
"""

import os
import re
from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402  (after importorskip: skipped without matplotlib)
from matplotlib.colors import to_rgba  # noqa: E402

from ladder_tools.analysis.binaries import AnalysisError, describe  # noqa: E402
from ladder_tools.figures import handshake, split, style  # noqa: E402
from ladder_tools.figures.registry import Context, every_figure  # noqa: E402
from ladder_tools.figures.tiling import natural_width_px  # noqa: E402

BUILD = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
MODES = ("light", "dark")
COLUMN_PX = 736        # the book's column at its widest furo layout
PHONE_COLUMN_PX = 358  # a 390 px phone's column
SMALLEST_PX = 9
HANDSHAKE_SLUGS = ["16-wgmma", "16-wgmma-wide", "17-3xtf32-wgmma"]
SPLIT_SLUGS = ["17-3xtf32-wgmma", "17-3xtf32-wgmma-rounded", "17-3xtf32-wgmma-narrow"]


def variant_constants(slug: str) -> dict:
    chapter = "16-wgmma" if slug.startswith("16-") else "17-3xtf32-wgmma"
    binary = BUILD / "bin" / chapter
    if not binary.is_file():
        pytest.skip(f"{chapter} is not built in {BUILD}/bin")
    (variant,) = [v for v in describe(binary)["variants"] if v["slug"] == slug]
    return variant["constants"]


def made_up(stages: int, products: int, bm: int = 128, sum_steps: int = 4,
            rounded: int = 0) -> dict:
    """Constants of a made-up variant of chapter 16's Tiling (tiling.cuh's sums):
    on 3xTF32 a stage holds A's tile, B's and A's small part (A_TILES = 2)."""
    bn, bk = 128, 32
    a_tiles = 2 if products == 3 else 1
    copy = (a_tiles * bm + bn) * bk
    return {"BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "PRODUCTS": products,
            "CONSUMERS": 2, "WARPGROUP": 128, "A_TILES": a_tiles, "COPY_FLOATS": copy,
            "STAGE_FLOATS": copy, "SUM_STEPS": sum_steps, "ROUNDED": rounded,
            **({"CORRECTION_STAGES": 8} if products == 3 else {})}


# -- Measuring a drawn figure ---------------------------------------------------


def drawn(make):
    with plt.rc_context(style.RC):
        figure = make()
        figure.canvas.draw()
        return figure, figure.canvas.get_renderer()


def all_texts(figure) -> list:
    texts = list(figure.texts)
    for axes in figure.axes:
        texts += axes.texts
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def text_problems(figure, renderer, mode: str) -> list[str]:
    ink = to_rgba(style.THEMES[mode]["ink"])
    texts = all_texts(figure)
    problems = [f"{t.get_text()!r} is {t.get_color()}, not the {mode} ink"
                for t in texts if to_rgba(t.get_color()) != ink]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    problems += [f"{a!r} overlaps {b!r}" for (a, box_a), (b, box_b) in combinations(boxes, 2)
                 if overlaps(box_a, box_b)]
    # Each text inside the figure (none cut off by the drawing's edge).
    whole = figure.bbox
    problems += [f"{t!r} sticks out of the figure" for t, box in boxes
                 if box.x0 < whole.x0 - 1 or box.x1 > whole.x1 + 1]
    return problems


def phone_problems(figure, drawing: bytes) -> list[str]:
    """Wider than the column, or a text under 9 px at a phone's column."""
    width = natural_width_px(drawing)
    scale = min(1.0, PHONE_COLUMN_PX / width)
    problems = [f"{width} px wide, the column is {COLUMN_PX}"] if width > COLUMN_PX else []
    smallest = min(t.get_fontsize() for t in all_texts(figure))
    if smallest * 96 / 72 * scale < SMALLEST_PX:
        problems.append(f"{width} px wide: a {smallest} pt text is "
                        f"{smallest * 96 / 72 * scale:.1f} px on a phone")
    return problems


def texts_by_gid(figure) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for t in all_texts(figure):
        found.setdefault(t.get_gid() or "", []).append(t.get_text())
    return found


# -- The handshake --------------------------------------------------------------

LABEL = re.compile(r"^(full|empty)\[(\d+)\] pass (\d+), parity (\d+)$")
FRESH = re.compile(r"^empty\[0\u2013(\d+)\] fresh, parity 1$")


def handshake_problems(c: dict, figure) -> list[str]:
    """What the kernel's barriers say of the drawn handshake, for constants c."""
    stages = c["STAGES"]
    problems = []
    axes = [a for a in figure.axes if a.get_gid() == "handshake"]
    if len(axes) != 1:
        return ["no handshake panel"]
    (axes,) = axes
    words = " ".join(t.get_text() for t in all_texts(figure))
    # The counts, from the constants.
    full_bytes = c["COPY_FLOATS"] * 4
    arrivals = c["CONSUMERS"] * c["WARPGROUP"]
    if f"full[s]: 1 arrival (arrive.expect_tx) + {full_bytes:,} bytes" not in words:
        problems.append(f"full's count is not 1 arrival + {full_bytes:,} bytes")
    if f"= {arrivals} arrivals, after wait_all" not in words:
        problems.append(f"empty's count is not {arrivals} arrivals")
    if f"parity (k / {stages}) & 1" not in words or f"(k / {stages} + 1) & 1" not in words:
        problems.append("the rule of the waits' parities is not written")
    # Each completion: its row (the middle of its chip) and what it says.
    rows: dict[str, float] = {}
    for text in axes.texts:
        gid = text.get_gid() or ""
        if not gid.startswith("label-"):
            continue
        name = gid[len("label-"):]
        rows[name] = text.get_position()[1]
        if name == "fresh-empty":
            found = FRESH.match(text.get_text())
            if not found or int(found.group(1)) != stages - 1:
                problems.append(f"the fresh empties say {text.get_text()!r}")
            continue
        barrier, step = name.rsplit("-", 1)
        k = int(step)
        found = LABEL.match(text.get_text())
        expected = (barrier, k % stages, k // stages, (k // stages) & 1)
        if not found or (found.group(1), *map(int, found.groups()[1:])) != expected:
            problems.append(f"step {k}'s {barrier} says {text.get_text()!r}, not "
                            f"{barrier}[{expected[1]}] pass {expected[2]}, parity {expected[3]}")
    if len(set(rows.values())) != len(rows):
        problems.append("two completions share a row")
    boxes = {p.get_gid(): p for p in axes.patches if p.get_gid()}
    steps = sorted(int(g.split("-")[1]) for g in boxes if re.fullmatch(r"producer-\d+", g))
    if steps != list(range(len(steps))) or len(steps) <= stages:
        problems.append(f"steps {steps}: not 0 .. n - 1 with a refill (n > STAGES = {stages})")
    arrows = {a.get_gid(): a for a in axes.texts
              if a.get_gid() and getattr(a, "arrow_patch", None)}

    def ends(gid):
        arrow = arrows.get(gid)
        if arrow is None:
            problems.append(f"no arrow {gid}")
            return None
        return arrow.xyann[1], arrow.xy[1]  # (from, to) rows

    for k in steps:
        producer = boxes[f"producer-{k}"]
        top, foot = producer.get_y(), producer.get_y() + producer.get_height()
        # The producer waits for empty[k mod S] on (k / S + 1) & 1: the
        # completion of step k - S, or a fresh barrier's phase (parity 1).
        waited = "fresh-empty" if k < stages else f"empty-{k - stages}"
        parity = (k // stages + 1) & 1
        label = next((t.get_text() for t in axes.texts if t.get_gid() == f"label-{waited}"), "")
        if not label.endswith(f"parity {parity}"):
            problems.append(f"producer step {k} waits on parity {parity}; {waited} is {label!r}")
        span = ends(f"waits-producer-{k}")
        if span and (span[0] != pytest.approx(rows.get(waited, -1)) or not top <= span[1] <= foot):
            problems.append(f"the arrow into producer step {k} is not from {waited}")
        if waited in rows and rows[waited] > foot:
            problems.append(f"producer step {k} runs before {waited} completes")
        span = ends(f"lands-{k}")
        if span and span[1] != pytest.approx(rows.get(f"full-{k}", -1)):
            problems.append(f"copy {k} does not lead to full-{k}")
        if rows.get(f"full-{k}", -1) <= top:
            problems.append(f"full-{k} completes before its copy is issued")
        # Each consumer waits for full[k mod S] on (k / S) & 1, the
        # completion of step k's copy, then arrives on empty after wait_all.
        consumers = [boxes.get(f"consumer-{i + 1}-{k}") for i in range(c["CONSUMERS"])]
        if None in consumers:
            problems.append(f"step {k} has not {c['CONSUMERS']} consumer boxes")
            continue
        parity = (k // stages) & 1
        label = next((t.get_text() for t in axes.texts if t.get_gid() == f"label-full-{k}"), "")
        if not label.endswith(f"parity {parity}"):
            problems.append(f"consumers of step {k} wait on parity {parity}; full is {label!r}")
        start = min(b.get_y() for b in consumers)
        end = max(b.get_y() + b.get_height() for b in consumers)
        if rows.get(f"full-{k}", end) > start + 1:
            problems.append(f"consumers run step {k} before full-{k}")
        span = ends(f"waits-full-{k}")
        if span and (span[0] != pytest.approx(rows.get(f"full-{k}", -1))
                     or not start <= span[1] <= end):
            problems.append(f"the arrow from full-{k} does not reach step {k}'s consumers")
        if f"empty-{k}" in rows:
            if rows[f"empty-{k}"] < end - 1:
                problems.append(f"empty-{k} completes before the consumers' wait_all")
            span = ends(f"arrives-empty-{k}")
            if span and span[1] != pytest.approx(rows[f"empty-{k}"]):
                problems.append(f"step {k}'s arrivals do not lead to empty-{k}")
            for box in consumers:
                wait_all = boxes.get(f"wait-all-{box.get_gid()}")
                if wait_all is None or wait_all.get_y() + wait_all.get_height() < end - 0.2:
                    problems.append(f"{box.get_gid()}: no wait_all at its foot")
    # Each role takes the steps in order.
    for role in ["producer", *(f"consumer-{i + 1}" for i in range(c["CONSUMERS"]))]:
        order = [boxes[f"{role}-{k}"].get_y() for k in steps if f"{role}-{k}" in boxes]
        if order != sorted(order) or len(set(order)) != len(order):
            problems.append(f"{role} does not take the steps in order")
    return problems


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug", HANDSHAKE_SLUGS)
def test_the_handshake_is_the_kernels(slug, mode):
    c = variant_constants(slug)
    found, read = handshake.chapter_handshake(ROOT, BUILD, slug)
    assert (found.full_bytes, found.empty_arrivals) == (c["COPY_FLOATS"] * 4,
                                                        c["CONSUMERS"] * c["WARPGROUP"])
    if slug == "16-wgmma":
        assert (found.full_bytes, found.empty_arrivals) == (32_768, 256)
    figure, renderer = drawn(lambda: handshake.handshake_figure(found, mode))
    try:
        assert handshake_problems(c, figure) == []
        assert text_problems(figure, renderer, mode) == []
        assert phone_problems(figure, handshake.draw_handshake(found, mode)) == []
    finally:
        plt.close(figure)


@pytest.mark.parametrize("products", [1, 3])
@pytest.mark.parametrize("stages", [2, 3, 5])
def test_the_handshake_follows_made_up_constants(stages, products):
    c = made_up(stages, products)
    found = handshake.handshake_of("made-up", c)
    figure, renderer = drawn(lambda: handshake.handshake_figure(found, "light"))
    try:
        assert handshake_problems(c, figure) == []
        assert text_problems(figure, renderer, "light") == []
    finally:
        plt.close(figure)


@pytest.mark.parametrize("wrong", ["parity", "bytes", "arrivals", "stages"])
def test_a_wrong_handshake_is_caught(wrong, monkeypatch):
    # The figure drawn from one thing, checked against what the kernel says.
    c = made_up(3, 1)
    drawn_from = dict(c)
    if wrong == "parity":  # a producer that waits on the consumers' parity
        monkeypatch.setattr(handshake, "producer_wait_parity", lambda k, s: (k // s) & 1)
        monkeypatch.setattr(handshake, "completion_words",
                            lambda h, done: ("empty[0\u20132] fresh, parity 1" if done.fresh else
                                             f"{done.barrier}[{done.stage}] pass {done.pass_}, "
                                             f"parity {(done.pass_ + 1) & 1}"))
    elif wrong == "bytes":
        c = {**c, "COPY_FLOATS": c["COPY_FLOATS"] // 2}
    elif wrong == "arrivals":
        drawn_from = {**c, "WARPGROUP": 64}
    else:
        drawn_from = made_up(4, 1)
    found = handshake.handshake_of("made-up", drawn_from)
    figure, _ = drawn(lambda: handshake.handshake_figure(found, "light"))
    try:
        assert handshake_problems(c, figure) != []
    finally:
        plt.close(figure)


def test_a_handshake_whose_waits_come_too_early_is_caught(monkeypatch):
    # A producer that does not wait for empty: its refills start at once.
    real = handshake.schedule

    def early(h):
        plan = real(h)
        work = [handshake.Work(w.role, w.step, w.stage, w.step, w.rows, w.waits, w.parity)
                if w.role == "producer" else w for w in plan.work]
        return handshake.Schedule(plan.completions, work)

    monkeypatch.setattr(handshake, "schedule", early)
    c = made_up(2, 1)
    found = handshake.handshake_of("made-up", c)
    figure, _ = drawn(lambda: handshake.handshake_figure(found, "light"))
    try:
        assert any("before empty" in p for p in handshake_problems(c, figure))
    finally:
        plt.close(figure)


def test_the_overlap_and_phone_checks_can_fail():
    figure = plt.figure(figsize=(9, 2))
    figure.text(0.1, 0.5, "full[0] pass 0, parity 0", fontsize=6)
    figure.text(0.12, 0.5, "empty[0] pass 0, parity 0", fontsize=6)
    try:
        figure.canvas.draw()
        assert text_problems(figure, figure.canvas.get_renderer(), "light")
        assert phone_problems(figure, b'<svg width="648pt" height="144pt">')
    finally:
        plt.close(figure)


def test_the_pipeline_directive_draws_the_handshake_after_the_ring():
    variant_constants("16-wgmma")  # skips unless the chapter is built
    figure = every_figure()["pipeline"]
    drawn = figure.load(Context(ROOT, BUILD), figure.request(["16-wgmma"], {"handshake": True}))
    assert [d.name for d in drawn.drawings] == ["", "handshake"]
    page = (ROOT / "chapters" / "16-wgmma" / "chapter.md").read_text()
    assert "```{ladder-pipeline} 16-wgmma" in page


# -- The split --------------------------------------------------------------------

BYTES = re.compile(r"(\d+)\u00d7(\d+)\u00d74\n= ([\d,]+) B")


def split_problems(c: dict, figure) -> list[str]:
    """What the kernel says of the drawn split, for constants c."""
    problems = []
    texts = texts_by_gid(figure)
    (axes,) = [a for a in figure.axes if a.get_gid() == "split"]
    bm, bn, bk = c["BM"], c["BN"], c["BK"]
    # The stage's tiles, in the copies' order (sgemm_wgmma's producer): A's
    # (or big's), B's, then small's; A_TILES of them are A's.
    expected = [("A", bm, bk), ("B", bk, bn), ("small", bm, bk)]
    if c["A_TILES"] != 2:
        problems.append(f"A_TILES = {c['A_TILES']}: a stage holds A's tile and small's")
    tiles = sorted((p for p in axes.patches if (p.get_gid() or "").startswith("tile-")),
                   key=lambda p: p.get_x())
    if [p.get_gid() for p in tiles] != [f"tile-{key}" for key, _, _ in expected]:
        problems.append(f"the stage's tiles are {[p.get_gid() for p in tiles]}")
        return problems
    total = 0
    for key, rows, columns in expected:
        (words,) = texts.get(f"tile-{key}-words", [""])
        found = BYTES.search(words)
        size = rows * columns * 4
        total += size
        if not found or (int(found.group(1)), int(found.group(2)),
                         int(found.group(3).replace(",", ""))) != (rows, columns, size):
            problems.append(f"tile {key} says {words!r}, not {rows}\u00d7{columns}\u00d74 = "
                            f"{size:,} B")
    widths = [p.get_width() for p in tiles]
    floats = [r * col for _, r, col in expected]
    if any(abs(w / widths[1] - f / floats[1]) > 0.05 for w, f in zip(widths, floats, strict=True)):
        problems.append(f"the tiles' widths {widths} are not their floats {floats}")
    if total != c["COPY_FLOATS"] * 4:
        problems.append(f"the tiles make {total:,} bytes, the copies {c['COPY_FLOATS'] * 4:,}")
    if texts.get("head-stage") != [f"one stage in shared memory: {c['COPY_FLOATS'] * 4:,} bytes"]:
        problems.append(f"the stage's heading is {texts.get('head-stage')}")
    a_name = texts.get("tile-A-words", [""])[0].split("\n")[0]
    if (a_name == "A rounded") != bool(c["ROUNDED"]) or (
            not c["ROUNDED"] and a_name != "A"):
        problems.append(f"the stage's A tile is {a_name!r} with ROUNDED = {c['ROUNDED']}")
    # convert_a()'s parts: small, and big where ROUNDED (truncated, A itself
    # is big).
    written = sorted((p for p in axes.patches if (p.get_gid() or "").startswith("global-")
                      and p.get_gid() != "global-A"), key=lambda p: p.get_x())
    parts = [p.get_gid()[len("global-"):] for p in written]
    if parts != ["small", *(["big"] if c["ROUNDED"] else [])]:
        problems.append(f"convert_a() writes {parts}")
    if texts.get("convert-a-words") != ["convert_a()"]:
        problems.append(f"the pass over A is {texts.get('convert-a-words')}")
    if texts.get("small-words") != ["small = (A \u2212 big) \u00d7 2\u00b9\u2070, 0 where A is "
                                    "not finite"]:
        problems.append(f"small is {texts.get('small-words')}, not (A - big) x 2^10, 0 where "
                        "A is not finite")
    if any("big_finite" in t for words in texts.values() for t in words):
        problems.append("the figure still names big_finite")
    # B: a lane's fragment, split in registers.
    if not {"fragment", "big-B", "small-B"} <= {p.get_gid() for p in axes.patches}:
        problems.append("B's fragment and its split are not drawn")
    # consume_3xtf32's three wgmma a step of 8, and what each writes.
    products = [(texts.get(f"product-{i}-target", [""])[0], texts.get(f"product-{i}-b", [""])[0],
                 texts.get(f"product-{i}-a", [""])[0]) for i in range(3)]
    # A's own tile is A's big part: A rounded, or A as wgmma reads it.
    a_read = "A rounded: its big part" if c["ROUNDED"] else "A, read truncated: its big part"
    if products != [("corrections", "small_B", a_read), ("corrections", "big_B", "small"),
                    ("sum", "big_B", a_read)]:
        problems.append(f"the products are {products}")
    chips = [next((p.get_facecolor() for p in axes.patches
                   if p.get_gid() == f"product-{i}-a-tile"), None) for i in range(3)]
    tile_fills = {key: next((p.get_facecolor() for p in axes.patches
                             if p.get_gid() == f"tile-{key}"), None) for key in ("A", "small")}
    if chips != [tile_fills["A"], tile_fills["small"], tile_fills["A"]]:
        problems.append("the products' A chips are not filled as A's tile, small's, A's tile")
    steps = bk // 8
    if f"({steps} a K-step)" not in " ".join(texts.get("head-wgmma", [])):
        problems.append(f"a K-step is not {steps} steps of 8")
    if not " ".join(texts.get("sum-words", [])).startswith(f"every {c['SUM_STEPS']} steps "):
        problems.append(f"d += sum is not every SUM_STEPS = {c['SUM_STEPS']} steps")
    stages = c["CORRECTION_STAGES"]
    words = " ".join(texts.get("correction-words", []))
    if not words.startswith(f"every {stages} K-steps ({stages * bk} along K) and at the end") or (
            "d = fma(corrections, 2\u207b\u00b9\u2070, d)" not in words):
        problems.append(f"the corrections' FFMA says {words!r}, not every {stages} K-steps")
    return problems


def test_the_split_takes_the_kernels_correction_stages():
    # The figure draws the binary's CORRECTION_STAGES, and refuses constants
    # without it.
    for slug in SPLIT_SLUGS:
        c = variant_constants(slug)
        assert split.split_of(slug, c).correction_stages == c["CORRECTION_STAGES"]
    c = made_up(4, 3)
    assert split.split_of("made-up", {**c, "CORRECTION_STAGES": 4}).correction_stages == 4
    without = {k: v for k, v in c.items() if k != "CORRECTION_STAGES"}
    with pytest.raises(AnalysisError):
        split.split_of("made-up", without)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug", SPLIT_SLUGS)
def test_the_split_is_the_kernels(slug, mode):
    c = variant_constants(slug)
    found, _ = split.chapter_split(ROOT, BUILD, slug)
    figure, renderer = drawn(lambda: split.split_figure(found, mode))
    try:
        assert split_problems(c, figure) == []
        assert text_problems(figure, renderer, mode) == []
        assert phone_problems(figure, split.draw_split(found, mode)) == []
    finally:
        plt.close(figure)


@pytest.mark.parametrize("bm", [64, 128])
@pytest.mark.parametrize("rounded", [0, 1])
def test_the_split_follows_made_up_constants(bm, rounded):
    c = made_up(4, 3, bm=bm, sum_steps=2 if rounded else 4, rounded=rounded)
    found = split.split_of("made-up", c)
    figure, renderer = drawn(lambda: split.split_figure(found, "light"))
    try:
        assert split_problems(c, figure) == []
        assert text_problems(figure, renderer, "light") == []
    finally:
        plt.close(figure)


@pytest.mark.parametrize("wrong", [{"ROUNDED": 1}, {"SUM_STEPS": 2}, {"BM": 64},
                                   {"CORRECTION_STAGES": 4}, {"A_TILES": 3}])
def test_a_wrong_split_is_caught(wrong):
    # Drawn from the 128-row truncated split, checked against other constants
    # (A_TILES = 3: the old stage, with big_finite's tile too).
    c = made_up(4, 3)
    found = split.split_of("made-up", c)
    expected = {**c, **wrong}
    if "BM" in wrong or "A_TILES" in wrong:
        expected["COPY_FLOATS"] = expected["STAGE_FLOATS"] = (
            expected["A_TILES"] * expected["BM"] + 128) * 32
    figure, _ = drawn(lambda: split.split_figure(found, "light"))
    try:
        assert split_problems(expected, figure) != []
    finally:
        plt.close(figure)


def test_a_split_that_draws_big_finite_is_caught(monkeypatch):
    # A stage drawn with the old fourth tile, big_finite's, which the kernel
    # no longer copies.
    tiles, shapes = split.Split.tiles, split.Split.tile_shapes
    monkeypatch.setattr(split.Split, "tiles", lambda s: [
        *tiles(s), ("big_finite", "A big_finite", s.bm * s.bk)])
    monkeypatch.setattr(split.Split, "tile_shapes", lambda s: {
        **shapes(s), "big_finite": (s.bm, s.bk)})
    c = made_up(4, 3)
    figure, _ = drawn(lambda: split.split_figure(split.split_of("made-up", c), "light"))
    try:
        problems = split_problems(c, figure)
        assert any("the stage's tiles are" in p for p in problems), problems
    finally:
        plt.close(figure)


@pytest.mark.parametrize("broken", [{"PRODUCTS": 1, "A_TILES": 1, "COPY_FLOATS": 8192,
                                     "STAGE_FLOATS": 8192}, {"COPY_FLOATS": 1},
                                    {"SUM_STEPS": 3}, {"A_TILES": 3},
                                    {"A_TILES": 3, "COPY_FLOATS": 16384,
                                     "STAGE_FLOATS": 16384}])
def test_the_split_refuses_constants_that_are_not_a_3xtf32_kernels(broken):
    with pytest.raises(AnalysisError):
        split.split_of("made-up", {**made_up(4, 3), **broken})


def test_page_17_draws_the_split_after_convert_a():
    # The figure's pass over A, convert_a(), is the kernel the page shows
    # just before it (the [convert-a] snippet).
    code = (ROOT / "chapters" / "16-wgmma" / "sgemm_wgmma.cuh").read_text()
    snippet = code[code.index("// [convert-a]"):]
    snippet = snippet[:snippet.index("// [end]")]
    assert "__global__ void convert_a(" in snippet
    assert "big_finite" not in snippet
    page = (ROOT / "chapters" / "17-3xtf32-wgmma" / "chapter.md").read_text()
    after = page[page.index(":start-after: // [convert-a]"):]
    after = after[after.index("```\n") + 4:]
    lead, directive = after.split("```{ladder-split} 17-3xtf32-wgmma\n", 1)
    assert lead.strip().count("\n") == 0 and lead.strip().endswith(":"), lead
    assert every_figure()["split"].directive
