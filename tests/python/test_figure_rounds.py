"""Chapter 12's rounds figure (code/ladder_tools/figures/rounds.py, {ladder-rounds}) counts the
blocks: the counts are computed here from --describe and the results file,
not by the figure's module.
"""

import json

from figure_checks import (
    BUILD,
    H200,
    MODES,
    ROOT,
    describe_constants,
    drawn,
    panel,
    patches,
    text_problems,
    texts_of,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.figures import rounds


def expected_rounds(size: int) -> tuple[int, int, int, int]:
    """Blocks, blocks per round, full rounds and the last round's blocks of
    12-final at N = size, from --describe and results/h200."""
    c = describe_constants("12-final")
    path = H200 / "chapters" / "12-final.json"
    if not path.is_file():
        pytest.skip("no 12-final result for the H200")
    data = json.loads(path.read_text())
    per_round = data["provenance"]["sm_count"] * data["resources"]["blocks_per_sm"]
    blocks = -(-size // c["BM"]) * -(-size // c["BN"])
    return blocks, per_round, blocks // per_round, blocks % per_round


@pytest.mark.parametrize("size", [3072, 4096])
@pytest.mark.parametrize("mode", MODES)
def test_the_rounds_figure_counts_the_blocks(size, mode):
    blocks, per_round, full, last = expected_rounds(size)
    found, _, _ = rounds.chapter_rounds(ROOT, BUILD, "12-final", size, "h200")
    figure, renderer = drawn(lambda: rounds.rounds_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"= {blocks} blocks" in words
        assert f"= {per_round} per round" in words
        bars = patches(figure, "round")
        assert len(bars) == full + (1 if last else 0)
        per_sm = per_round / panel(figure, "rounds").get_xlim()[1]
        filled = [round(b.get_width() * per_sm) for b in bars]
        assert filled == [per_round] * full + ([last] if last else [])
        if last:
            assert f"{last} of {per_round}" in words
    finally:
        plt.close(figure)
