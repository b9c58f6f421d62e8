"""Chapter 11's stages figure (code/ladder_tools/figures/stages.py, {ladder-stages}) is the
code's order: the counts are computed here from --describe, not by the
figure's module.
"""

from figure_checks import (
    BUILD,
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

from ladder_tools.figures import stages


@pytest.mark.parametrize("mode", MODES)
def test_the_stages_figure_is_the_codes_order(mode):
    c = describe_constants("11-double-buffering")
    found, _ = stages.chapter_stages(ROOT, BUILD, "11-double-buffering")
    figure, renderer = drawn(lambda: stages.stages_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"STAGES = {c['STAGES']}" in words and f"BK = {c['BK']}" in words
        assert (f"As {c['A_STAGE_FLOATS']} + Bs {c['STAGE_FLOATS'] - c['A_STAGE_FLOATS']} = "
                f"{c['STAGE_FLOATS']} floats") in words
        lanes = panel(figure, "lanes")
        lane_height = lanes.get_ylim()[0] / c["STAGES"]

        def cells(gid):
            # (column, lane) of each box, and its text (the step).
            found_cells = {}
            for p in patches(figure, gid):
                column = int(p.get_x())
                lane = int(p.get_y() // lane_height)
                found_cells[column] = lane
            return found_cells

        fmas, loads = cells("fma"), cells("load")
        steps = len(fmas)
        assert steps >= 3
        # Step k (column k + 1) reads stage k mod STAGES and fills the other.
        assert fmas == {k + 1: k % c["STAGES"] for k in range(steps)}
        assert loads == {0: 0, **{k + 1: (k + 1) % c["STAGES"] for k in range(steps)}}
        # One barrier closes the prologue and each step.
        barriers = [line for line in lanes.get_lines() if line.get_gid() == "barrier"]
        assert sorted(line.get_xdata()[0] for line in barriers) == list(range(1, steps + 2))
    finally:
        plt.close(figure)
