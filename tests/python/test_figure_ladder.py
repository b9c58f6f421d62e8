"""The ladder (code/ladder_tools/figures/ladder.py, {ladder-ladder}) draws Part II in a panel
of its own, on its own scale, with cuBLAS on TF32; without Part II it is one
panel.
"""

from figure_checks import MODES, drawn, ink_problems, legend_problems

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import Rectangle

from ladder_tools.figures import ladder


def made_up_ladder() -> tuple[list[str], list[ladder.LadderBars]]:
    labels = [f"{n:02d} step" for n in range(1, 14)] + ["14 tf32", "15 3xtf32"]
    gflops = [400.0 + 4000.0 * n for n in range(13)] + [154_000.0, 44_500.0]
    gflops[4] = None  # a chapter not measured on this GPU
    return labels, [ladder.LadderBars("Made-up GPU", gflops, 51_000.0, 64_000.0, 380_000.0)]


@pytest.mark.parametrize("mode", MODES)
def test_the_ladder_draws_part_ii_in_a_panel_of_its_own(mode):
    labels, bars = made_up_ladder()
    figure, renderer = drawn(lambda: ladder.ladder_figure(labels, bars, mode))
    try:
        panels = {a.get_gid(): a for a in figure.axes}
        part_1, part_2 = panels["ladder-part-1"], panels["ladder-part-2"]
        heights = {1: [], 2: []}
        for part, axes in ((1, part_1), (2, part_2)):
            heights[part] = [p.get_height() for p in axes.patches if isinstance(p, Rectangle)
                             and p.get_height() > 0]
        measured = [g for g in bars[0].gflops if g is not None]
        assert heights[1] == pytest.approx(measured[:-2])
        assert heights[2] == pytest.approx([154_000.0, 44_500.0])
        assert [t.get_text() for t in part_2.get_xticklabels()] == ["14 tf32", "15 3xtf32"]
        # Part I keeps its own scale: its tallest line (the FMA peak) near the
        # top, not squeezed under Part II's cuBLAS on TF32.
        assert part_1.get_ylim()[1] < 1.2 * 64_000.0
        assert part_2.get_ylim()[1] >= 380_000.0
        part_2_lines = {line.get_linestyle() for line in part_2.get_lines()}
        part_1_lines = {line.get_linestyle() for line in part_1.get_lines()}
        assert "-." in part_2_lines and "-." not in part_1_lines
        problems = legend_problems(figure, renderer) + ink_problems(figure, mode)
        assert not problems, problems
    finally:
        plt.close(figure)


def test_the_ladder_without_part_ii_is_one_panel():
    labels, bars = made_up_ladder()
    part_1 = [ladder.LadderBars("Made-up GPU", bars[0].gflops[:13], 51_000.0, 64_000.0)]
    figure, _ = drawn(lambda: ladder.ladder_figure(labels[:13], part_1, "light"))
    try:
        assert [a.get_gid() for a in figure.axes] == ["ladder-part-1"]
    finally:
        plt.close(figure)


@pytest.mark.parametrize("mode", MODES)
def test_the_phones_ladder_draws_the_same_bars_across(mode):
    """The phone's drawing (stacked): Part II's panel under Part I's, each
    chapter's bar along the GFLOP/s axis, as long as the wide drawing's is
    tall, the first chapter on top."""
    labels, bars = made_up_ladder()
    figure, renderer = drawn(lambda: ladder.ladder_figure(labels, bars, mode, stacked=True))
    try:
        panels = {a.get_gid(): a for a in figure.axes}
        part_1, part_2 = panels["ladder-part-1"], panels["ladder-part-2"]
        assert part_1.get_position().y0 > part_2.get_position().y1  # one above the other
        measured = [g for g in bars[0].gflops if g is not None]
        for axes, expected in ((part_1, measured[:-2]), (part_2, [154_000.0, 44_500.0])):
            widths = [p.get_width() for p in axes.patches if isinstance(p, Rectangle)
                      and p.get_width() > 0]
            assert widths == pytest.approx(expected)
        names = [t.get_text() for t in part_1.get_yticklabels()]
        assert names[0] == "01 step" and part_1.yaxis_inverted()
        assert ink_problems(figure, mode) == []
    finally:
        plt.close(figure)
