"""The roofline (code/ladder_tools/figures/roofline.py, {ladder-roofline}), drawn from the
committed H200 results and the built chapters: each chapter's point is where
its measured GFLOP/s at 4096 and the intensity of its own tile constants put
it (the intensity computed here, from --describe, not by
code/ladder_tools/figures/roofline.py), the ceilings are the baseline's, and no two texts
(labels, ceilings' names, ticks) overlap, in the light and the dark drawing.
"""

import json
from itertools import combinations
from pathlib import Path

from figure_checks import BUILD, H200, MODES, ROOT, TILING_CHAPTERS, drawn, drawn_texts, overlaps

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba
from matplotlib.text import Text

from ladder_tools.analysis.binaries import describe
from ladder_tools.figures import ladder, roofline, style

#: The roofline is the FMA units': Part II's chapters (the tensor cores) are not on it.
ROOFLINE_CHAPTERS = [(slug, binary) for slug, binary in TILING_CHAPTERS
                     if ladder.part_of(slug) == 1]


def roofline_or_skip():
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    if not (H200 / "baseline.json").is_file():
        pytest.skip("no H200 baseline in results/")
    found, _, _ = roofline.roofline_data(ROOT, BUILD, "h200")
    assert found is not None
    return found


def expected_intensity(slug: str, binary: Path) -> float:
    """FLOP per byte of global loads from the chapter's --describe constants:
    a block tile BM x BN with K-step BK loads (BM + BN) * BK floats per
    BM * BN * BK multiply-adds; BLOCK with a __shared__ tile is BM = BN = BK
    = BLOCK; BLOCK without one (chapters 01 to 03) loads two floats per
    multiply-add."""
    c = describe(binary)["variants"][0]["constants"]
    source = (ROOT / "chapters" / slug / "kernel.cuh").read_text()
    if "BK" in c:
        bm, bn, bk = c["BM"], c["BN"], c["BK"]
    elif "__shared__" in source:
        bm = bn = bk = c["BLOCK"]
    else:
        return 2 / 8
    return (2 * bm * bn * bk) / (4 * (bm + bn) * bk)


def measured_at_4096(slug: str) -> float:
    data = json.loads((H200 / "chapters" / f"{slug}.json").read_text())
    (entry,) = [e for e in data["sizes"] if (e["M"], e["N"], e["K"]) == (4096, 4096, 4096)]
    return entry["gflops"]


def every_axes(figure) -> list:
    """The figure's axes and the panels inset in them."""
    return [a for axes in figure.axes for a in (axes, *axes.child_axes)]


def roofline_texts(figure) -> list:
    texts = list(drawn_texts(figure))
    for axes in figure.axes:
        for inset in axes.child_axes:
            texts += [t for t in inset.texts if t.get_visible()]
    return [t for t in texts if t.get_text().strip()]


def text_box(text, renderer):
    """A text's own box (an annotation's without its leader line)."""
    return Text.get_window_extent(text, renderer)


@pytest.mark.parametrize("mode", MODES)
def test_the_roofline_is_legible(mode):
    found = roofline_or_skip()
    figure, renderer = drawn(lambda: roofline.roofline_figure(found, mode))
    try:
        ink = to_rgba(style.THEMES[mode]["ink"])
        texts = roofline_texts(figure)
        problems = [f"{t.get_text()!r} is {t.get_color()}, not the {mode} ink"
                    for t in texts if to_rgba(t.get_color()) != ink]
        boxes = [(t.get_text(), text_box(t, renderer)) for t in texts]
        problems += [f"{a!r} overlaps {b!r}" for (a, box_a), (b, box_b)
                     in combinations(boxes, 2) if overlaps(box_a, box_b)]
        labelled = {part for t in texts if (t.get_gid() or "").startswith("label-")
                    for part in t.get_text().split(", ")}
        problems += [f"{slug} has no label" for slug, _ in ROOFLINE_CHAPTERS
                     if slug.split("-")[0] not in labelled]
        assert not problems, "\n".join(problems)
        assert roofline.draw_roofline(found, mode).startswith(b"<?xml")
    finally:
        plt.close(figure)


def test_each_chapter_sits_at_its_tiles_intensity_and_its_measured_rate():
    found = roofline_or_skip()
    figure, _ = drawn(lambda: roofline.roofline_figure(found, "light"))
    try:
        (main,) = [a for a in figure.axes if a.get_gid() == "roofline-axes"]
        (dots,) = [c for c in main.collections if c.get_gid() == "chapters"]
        drawn_points = [tuple(p) for p in dots.get_offsets()]
        assert len(drawn_points) == len(ROOFLINE_CHAPTERS)
        for slug, binary in ROOFLINE_CHAPTERS:
            x, y = expected_intensity(slug, binary), measured_at_4096(slug)
            assert any(abs(px - x) < 1e-9 * x and abs(py - y) < 1e-6 * y
                       for px, py in drawn_points), f"{slug} is not drawn at ({x}, {y})"
        # The chapters near the roof are drawn again, magnified, at the same place.
        insets = [a for a in every_axes(figure) if a.get_gid() == "roofline-magnified"]
        for inset in insets:
            (near,) = [c for c in inset.collections if c.get_gid() == "chapters-magnified"]
            assert {tuple(p) for p in near.get_offsets()} <= set(drawn_points)
    finally:
        plt.close(figure)


def test_the_roofline_leaves_out_part_ii(tmp_path, monkeypatch):
    """A tensor-core chapter's result is above the FMA roof, not under it:
    the roofline draws Part I's chapters only."""
    if not (BUILD / "bin" / "12-final").is_file() or not (H200 / "baseline.json").is_file():
        pytest.skip("needs build/bin/12-final and the H200's baseline")
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    (tmp_path / "h200" / "baseline.json").write_text((H200 / "baseline.json").read_text())
    (folder / "12-final.json").write_text((H200 / "chapters" / "12-final.json").read_text())
    part_ii = json.loads((H200 / "chapters" / "12-final.json").read_text())
    part_ii["chapter"] = "14-tf32"
    for entry in part_ii["sizes"]:
        entry["gflops"] *= 3
    (folder / "14-tf32.json").write_text(json.dumps(part_ii))
    monkeypatch.setenv("LADDER_RESULTS_DIR", str(tmp_path))
    found, _, used = roofline.roofline_data(ROOT, BUILD, "h200")
    assert [p.slug for p in found.points] == ["12-final"]
    assert [r.data["chapter"] for r in used] == ["12-final"]


def test_the_chapters_intensities_are_the_tilings():
    """The numbers the book's reader can check by hand: 0.25 FLOP/byte for
    chapters 01 to 03, BLOCK / 4 for chapter 04, 2 BM BN / (4 (BM + BN))."""
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    got = {slug: round(expected_intensity(slug, binary), 2) for slug, binary in TILING_CHAPTERS}
    assert got["01-naive"] == got["02-coalescing"] == got["03-flat-block"] == 0.25
    assert got["04-smem-tiling"] == 8.0


def test_the_ceilings_are_the_baselines():
    found = roofline_or_skip()
    baseline = json.loads((H200 / "baseline.json").read_text())
    peak, bandwidth = baseline["fma_peak_gflops"], baseline["copy_bandwidth_gbs"]
    p = baseline["provenance"]
    theoretical = p["sm_count"] * 128 * 2 * p["sm_clock_mhz"] / 1000  # sm_90: 128 FP32 lanes
    figure, _ = drawn(lambda: roofline.roofline_figure(found, "dark"))
    try:
        assert len(every_axes(figure)) == 2  # the roofline and its magnified panel
        for axes in every_axes(figure):
            lines = {line.get_gid(): line.get_xydata() for line in axes.get_lines()}
            roof = lines["ceiling-measured"]
            for x, y in roof:
                assert y == pytest.approx(min(peak, bandwidth * x), rel=1e-9)
            assert roof[1][0] == pytest.approx(peak / bandwidth)
            assert max(y for _, y in roof) == pytest.approx(peak)
            assert all(y == pytest.approx(theoretical) for _, y in lines["ceiling-theoretical"])
    finally:
        plt.close(figure)
