"""Chapter 17's cut last round (code/ladder_tools/figures/cut.py, {ladder-cut}): the busiest
SM's K-steps, uncut and cut, computed here from the page's rule (at most
SMs / tiles-left slices a tile, at most one a K-step, none under 2), against
what build/bin/lastround gives from the chapter's own last_round() and
block_work(), and what the figure draws of it.
"""

from itertools import pairwise

from figure_checks import BUILD, MODES, ROOT, drawn, patches, text_problems, texts_of

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.figures import cut


def expected_cut(size: int, sms: int) -> tuple[int, int, int, int]:
    """The uncut and the cut busiest SM's K-steps, the cut tiles and their
    slices of 17-3xtf32-wgmma's 128 x 128 tile at N = size."""
    tiles, steps = (-(-size // 128)) ** 2, -(-size // 32)
    uncut = -(-tiles // sms) * steps
    left = tiles % sms
    most = min(sms // left, steps) if left else 1
    if most < 2:
        return uncut, uncut, 0, 1
    per = -(-steps // most)
    return uncut, tiles // sms * steps + per, left, -(-steps // per)


@pytest.mark.parametrize("size", [1536, 2560, 4096])
@pytest.mark.parametrize("mode", MODES)
def test_the_cut_figure_is_the_count(size, mode):
    tool = BUILD / "bin" / "lastround"
    if not tool.is_file():
        pytest.skip(f"lastround is not built in {BUILD}/bin")
    # The GPU chapter 17's page draws it for (its {ladder-cut} :gpu:): the
    # H200 has no result of chapter 17.
    found, _, _ = cut.chapter_cut(ROOT, tool, "17-3xtf32-wgmma", size, "h100-80gb-hbm3")
    if found is None:
        pytest.skip("no 17-3xtf32-wgmma result for the H100")
    uncut, busiest, cut_tiles, slices = expected_cut(size, found.sms)
    assert (found.uncut.busiest, found.cut.busiest) == (uncut, busiest)
    assert (found.cut.cut_tiles, found.cut.slices) == (cut_tiles, slices)
    for plan in (found.uncut, found.cut):  # an SM runs one block at a time
        by_sm: dict[int, list] = {}
        for bar in plan.bars:
            by_sm.setdefault(bar.sm, []).append((bar.start, bar.start + bar.steps))
        for spans in by_sm.values():
            spans.sort()
            assert all(a[1] <= b[0] for a, b in pairwise(spans))
    figure, renderer = drawn(lambda: cut.cut_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"the busiest SM runs {uncut} steps" in words
        if cut_tiles:
            assert f"= {busiest} steps" in words
        # The slices' rectangles cover cut_tiles * slices SMs in all.
        assert round(sum(p.get_height() for p in patches(figure, "slices"))) == (
            cut_tiles * slices)
    finally:
        plt.close(figure)


@pytest.mark.parametrize("mode", MODES)
def test_the_tf32_cut_figure_is_the_pages_count(mode):
    """Chapter 17's page on TF32 at 256 x 256 x 65536: uncut, chapter 16's
    launcher runs 8 tiles of 64 x 128 through all 2048 K-steps; cut, the
    variant "cut" runs the 2 tiles of 256 x 128 as 64 slices of 32 steps."""
    tool = BUILD / "bin" / "lastround"
    if not tool.is_file():
        pytest.skip(f"lastround is not built in {BUILD}/bin")
    found, _, _ = cut.chapter_cut(ROOT, tool, "16-wgmma", "256x256x65536", "h100-80gb-hbm3",
                                  tf32=True)
    if found is None:
        pytest.skip("no 16-wgmma result for the H100")
    assert (found.uncut.bm, found.uncut.tiles, found.uncut.busiest) == (64, 8, 2048)
    assert (found.cut.bm, found.cut.tiles, found.cut.slices) == (256, 2, 64)
    assert found.cut.busiest == 32 and len(found.cut.bars) == 128
    figure, renderer = drawn(lambda: cut.cut_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert "8 tiles of 64 \u00d7 128" in words and "2 tiles of 256 \u00d7 128" in words
        assert "the busiest SM runs 32" in words
    finally:
        plt.close(figure)
